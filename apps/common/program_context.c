/* program_context.c - the library's context as madfilter and imstats need it: made with the
 * signal dispositions the programs rely on kept as they were. Intel's OpenCL CPU runtime installs
 * handlers of its own when a context is made (a crash reporter that also takes SIGXFSZ), which
 * replaced an inherited SIG_IGN: a file-size limit then printed Intel's bug-report banner before
 * madfilter's own error line. */
#include "program_context.h"

#include "atomic_file.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Interrupts and hangups: madfilter's clean-up of temporaries, or an inherited SIG_IGN (nohup).
 * SIGPIPE and SIGXFSZ: a write that fails must fail as a write, with its reason. */
static const int kept[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
enum { KEPT = sizeof kept / sizeof kept[0] };

int program_context_create(clstats_ctx **ctx, const char *device)
{
    struct sigaction before[KEPT];
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], NULL, &before[i]);
    const int status = clstats_ctx_create(ctx, device);
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], &before[i], NULL);
    return status;
}

static void *make_context(void *arg)
{
    struct pending_context *p = arg;
    p->status = clstats_ctx_create(&p->ctx, p->device);
    if (p->status != CLSTATS_OK)
        snprintf(p->message, sizeof p->message, "%s", clstats_ctx_message(NULL));
    else
        clstats_ctx_prepare_transfers(p->ctx); /* a failure here is the first call's to report */
    return NULL;
}

void program_context_start(struct pending_context *p, const char *device)
{
    memset(p, 0, sizeof *p);
    p->device = device;
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], NULL, &p->before[i]);
    p->started = pthread_create(&p->thread, NULL, make_context, p) == 0;
}

int program_context_finish(struct pending_context *p, clstats_ctx **ctx)
{
    if (!p->started) {
        const int status = program_context_create(ctx, p->device);
        if (status != CLSTATS_OK)
            snprintf(p->message, sizeof p->message, "%s", clstats_ctx_message(NULL));
        return status;
    }
    pthread_join(p->thread, NULL);
    p->started = false;
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], &p->before[i], NULL);
    atomic_signals_reset();
    *ctx = p->ctx;
    return p->status;
}
