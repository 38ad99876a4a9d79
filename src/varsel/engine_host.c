/* engine_host.c - the plain C engine: each particle's residual y - X_T beta and its largest
 * |X_i^T R| outside the model, in double over the values the device holds, and the chosen
 * variable's inner products (products.c): the reference the device engine (engine_device.c,
 * kernels/varsel/pass.cl) is judged by. */
#include "varsel_internal.h"

#include <math.h>
#include <stdlib.h>

struct host_state {
    double *r, *columns; /* n; 2 n */
    unsigned char *in;   /* p */
};

static int32_t argmax(struct pass_engine *e, const int32_t *ij, int32_t k, const double *bj)
{
    const struct pass_data *d = e->d;
    const size_t n = d->n, p = d->p;
    struct host_state *st = e->state;
    double *r = st->r;
    for (size_t t = 0; t < n; t++) {
        double fit = 0;
        for (int32_t m = 0; m < k; m++) fit += d->xs[(size_t)ij[m] * n + t] * bj[m];
        r[t] = d->ys[t] - fit;
    }
    for (int32_t m = 0; m < k; m++) st->in[ij[m]] = 1;
    int32_t arg = -1;
    double top = -1;
    for (size_t i = 0; i < p; i++) {
        if (st->in[i]) continue;
        double s = 0;
        for (size_t t = 0; t < n; t++) s += d->xs[i * n + t] * r[t];
        if (fabs(s) > top) top = fabs(s), arg = (int32_t)i;
    }
    for (int32_t m = 0; m < k; m++) st->in[ij[m]] = 0;
    return arg;
}

static int step(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                const double *beta, const int32_t *want, int32_t *add, double *gram)
{
    struct host_state *st = e->state;
    const size_t cap = e->cap;
    for (size_t j = 0; j < e->k_particles; j++) {
        if (want[j] == PASS_NONE) continue;
        const int32_t *ij = idx + j * cap;
        add[j] = want[j] == PASS_ARGMAX ? argmax(e, ij, size[j], beta + j * cap) : want[j];
        if (add[j] >= 0)
            clstats__pass_gram(e->d, ij, (size_t)size[j], (size_t)add[j],
                               gram + j * PASS_GRAM(cap), st->columns);
    }
    return CLSTATS_OK;
}

static void release(struct pass_engine *e)
{
    struct host_state *st = e->state;
    if (st) free(st->r), free(st->columns), free(st->in);
    free(st);
    e->state = NULL;
}

int clstats__engine_host(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                         size_t cap, struct pass_engine *e)
{
    *e = (struct pass_engine){.step = step, .release = release, .ctx = ctx, .d = d,
                              .k_particles = k_particles, .cap = cap};
    struct host_state *st = calloc(1, sizeof *st);
    e->state = st;
    if (st) {
        st->r = malloc(d->n * sizeof *st->r);
        st->columns = malloc(2 * d->n * sizeof *st->columns);
        st->in = calloc(d->p ? d->p : 1, 1);
    }
    if (!st || !st->r || !st->columns || !st->in)
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    return CLSTATS_OK;
}
