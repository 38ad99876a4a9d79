/* warm.c - see warm.h. */
#include "warm.h"

#include <string.h>

/* Small, so that the warm-up costs little beyond what the first call would spend anyway; rows
 * enough that the strip is a strip and not a special case of a window taller than the image. */
#define WARM_NX 64
#define WARM_NY 64

static int zeros(void *user, size_t plane, size_t row0, size_t rows, float *dst)
{
    (void)user, (void)plane, (void)row0;
    memset(dst, 0, rows * WARM_NX * sizeof *dst);
    return 0;
}

static int zeros_f64(void *user, size_t plane, size_t row0, size_t rows, double *dst)
{
    (void)user, (void)plane, (void)row0;
    memset(dst, 0, rows * WARM_NX * sizeof *dst);
    return 0;
}

static int discard(void *user, const struct clstats_strip *strip)
{
    (void)user, (void)strip;
    return 0;
}

void warm_filter(clstats_ctx *ctx, void *arg)
{
    const struct warm_request *w = arg;
    struct clstats_rows_job job = {
        .nx = WARM_NX,
        .ny = WARM_NY,
        .planes = 1,
        .params = w->params,
        .maps = w->maps,
        .height = WARM_NY,
        .read = w->f64 ? NULL : zeros,
        .read_f64 = w->f64 ? zeros_f64 : NULL,
        .write = discard,
    };
    job.params.progress = NULL;
    clstats_filter_rows(ctx, &job);
}
