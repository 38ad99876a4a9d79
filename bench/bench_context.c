/* bench_context.c - see bench_context.h. */
#include "bench_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_line(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "clstats: %s\n", line);
}

clstats_ctx *bench_context(const char *device)
{
    clstats_ctx *ctx = NULL;
    int status = clstats_ctx_create(&ctx, device);
    if (status != CLSTATS_OK) {
        fprintf(stderr, "no context: %s: %s\n", clstats_strerror(status),
                clstats_ctx_message(NULL));
        return NULL;
    }
    const char *log = getenv("CLSTATS_LOG");
    if (log && strcmp(log, "0") != 0) clstats_ctx_set_log(ctx, print_line, NULL);
    const char *tune = getenv("CLSTATS_TUNE");
    char *list = tune ? strdup(tune) : NULL;
    for (char *item = list, *next; item && *item; item = next) {
        next = strchr(item, ',');
        if (next) *next++ = '\0';
        char *eq = strchr(item, '=');
        if (eq) *eq++ = '\0';
        if (!eq || clstats_ctx_tune(ctx, item, eq) != CLSTATS_OK) {
            fprintf(stderr, "CLSTATS_TUNE: %s: %s\n", item, clstats_ctx_message(ctx));
            clstats_ctx_destroy(ctx);
            free(list);
            return NULL;
        }
    }
    free(list);
    return ctx;
}
