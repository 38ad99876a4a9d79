/* engine_host.c - the plain C engine: every particle's residual y - X_T beta and its largest
 * |X_i^T R| outside the model, in double over the values the device holds: the reference the
 * device engine (engine_device.c, kernels/varsel/pass.cl) is judged by. */
#include "varsel_internal.h"

#include <math.h>
#include <stdlib.h>

static int argmax(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                  const double *beta, int32_t *best)
{
    const struct pass_data *d = e->d;
    const size_t n = d->n, p = d->p;
    double *r = e->state;
    unsigned char *in = (unsigned char *)(r + n);
    for (size_t j = 0; j < e->k_particles; j++) {
        const int32_t *ij = idx + j * e->cap;
        const double *bj = beta + j * e->cap;
        for (size_t t = 0; t < n; t++) {
            double fit = 0;
            for (int32_t m = 0; m < size[j]; m++) fit += d->xs[(size_t)ij[m] * n + t] * bj[m];
            r[t] = d->ys[t] - fit;
        }
        for (int32_t m = 0; m < size[j]; m++) in[ij[m]] = 1;
        int32_t arg = -1;
        double top = -1;
        for (size_t i = 0; i < p; i++) {
            if (in[i]) continue;
            double s = 0;
            for (size_t t = 0; t < n; t++) s += d->xs[i * n + t] * r[t];
            if (fabs(s) > top) top = fabs(s), arg = (int32_t)i;
        }
        for (int32_t m = 0; m < size[j]; m++) in[ij[m]] = 0;
        best[j] = arg;
    }
    return CLSTATS_OK;
}

static void release(struct pass_engine *e)
{
    free(e->state);
    e->state = NULL;
}

int clstats__engine_host(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                         size_t cap, struct pass_engine *e)
{
    *e = (struct pass_engine){.argmax = argmax, .release = release, .ctx = ctx, .d = d,
                              .k_particles = k_particles, .cap = cap};
    e->state = calloc(1, d->n * sizeof(double) + d->p);
    return e->state ? CLSTATS_OK : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
}
