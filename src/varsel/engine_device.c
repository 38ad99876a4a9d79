/* engine_device.c - the device engine of PaSS: X (n x p, row-major, the data's dtype) goes up
 * once, as the caller gave it, and is standardised there (devices with fp64; else the host's
 * standardised copy goes up). Each iteration the particles' model indices and wishes (and, where
 * some take the argmax, their coefficients) go up; the residuals of the particles that take the
 * argmax are formed on the device (kernels/varsel/pass.cl), E = R^T X by one GEMM through
 * src/linalg (CLBlast), their argmaxes outside each model and the chosen variables' inner
 * products (in double) on the device, and only the chosen indices and those products come back,
 * in one wait. The layout E = R^T X (m x p) rather than X^T R makes each particle's scan read
 * contiguous memory. On a device without fp64 the inner products are the host's (products.c),
 * from the same values. */
#include "varsel_internal.h"

#include "../linalg/linalg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct device_state {
    cl_mem x, y, y64, idx, beta, size, want, rows_dev, r, e, best, add, gram;
    cl_kernel residuals, argmax, grams, standardise; /* the last two NULL without fp64 */
    size_t wg;
    void *beta_host;     /* the coefficients in the dtype */
    int32_t *rows;       /* the particles that take the argmax */
    double *columns;     /* 2 n: the host's inner products without fp64 */
};

/* A kernel's arguments in order, each its size and where its value is. */
struct arg {
    size_t size;
    const void *value;
};
#define ARG(v) {sizeof(v), &(v)}
#define LOCAL_ARG(bytes) {(bytes), NULL} /* a work-group's own local memory */

static int set_args(clstats_ctx *ctx, cl_kernel k, const struct arg *args, size_t count)
{
    int status = CLSTATS_OK;
    for (cl_uint i = 0; i < count && !status; i++)
        status = clstats__cl_check(ctx, clSetKernelArg(k, i, args[i].size, args[i].value),
                                   "clSetKernelArg(PaSS)");
    return status;
}

#define SET_ARGS(ctx, k, ...)                                                                      \
    set_args(ctx, k, (const struct arg[]){__VA_ARGS__},                                            \
             sizeof((const struct arg[]){__VA_ARGS__}) / sizeof(struct arg))

static int buffer(clstats_ctx *ctx, size_t bytes, void *host, cl_mem *out)
{
    cl_int err;
    *out = clCreateBuffer(ctx->context, host ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR
                                             : CL_MEM_READ_WRITE,
                          bytes ? bytes : 1, host, &err);
    return clstats__cl_check(ctx, err, "clCreateBuffer(PaSS)");
}

static int put(clstats_ctx *ctx, cl_mem buf, size_t bytes, const void *host)
{
    return clstats__cl_check(
        ctx, clEnqueueWriteBuffer(ctx->queue, buf, CL_FALSE, 0, bytes, host, 0, NULL, NULL),
        "clEnqueueWriteBuffer(PaSS)");
}

/* The residuals, E and the argmaxes of the particles that take one (only those: the GEMM is
 * the iteration's largest cost), into best[j]. */
static int argmaxes(struct pass_engine *e, const double *beta, const int32_t *want)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const size_t K = e->k_particles, cap = e->cap, es = d->f64 ? 8 : 4;
    size_t m = 0;
    for (size_t j = 0; j < K; j++)
        if (want[j] == PASS_ARGMAX) st->rows[m++] = (int32_t)j;
    const cl_uint n = (cl_uint)d->n, p = (cl_uint)d->p, mm = (cl_uint)m;
    for (size_t i = 0; i < K * cap; i++) {
        if (d->f64) ((double *)st->beta_host)[i] = beta[i];
        else ((float *)st->beta_host)[i] = (float)beta[i];
    }
    int status;
    if ((status = put(ctx, st->beta, K * cap * es, st->beta_host)) ||
        (status = put(ctx, st->rows_dev, m * sizeof *st->rows, st->rows)))
        return status;
    if ((status = SET_ARGS(ctx, st->residuals, ARG(st->x), ARG(n), ARG(p), ARG(st->y), ARG(st->idx),
                           ARG(st->beta), ARG(st->size), ARG(st->rows_dev), ARG(mm), ARG(st->r))))
        return status;
    const size_t global[2] = {m, d->n};
    if ((status = clstats__launch(ctx, st->residuals, 2, NULL, global, NULL, "pass_residuals")))
        return status;
    const struct clstats__mat r = {st->r, 0, m}, x = {st->x, 0, d->p}, ee = {st->e, 0, d->p};
    if ((status = clstats__gemm(ctx, d->f64, true, false, m, d->p, d->n, 1, r, x, 0, ee)))
        return status;
    if ((status = SET_ARGS(ctx, st->argmax, ARG(st->e), ARG(p), ARG(st->idx), ARG(st->size),
                           ARG(st->rows_dev), ARG(st->best), LOCAL_ARG(cap * sizeof(cl_int)),
                           LOCAL_ARG(st->wg * es), LOCAL_ARG(st->wg * sizeof(cl_int)))))
        return status;
    const size_t g = m * st->wg;
    return clstats__launch(ctx, st->argmax, 1, NULL, &g, &st->wg, "pass_argmax");
}

static int grams(struct pass_engine *e)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const cl_uint n = (cl_uint)e->d->n, p = (cl_uint)e->d->p;
    const int status = SET_ARGS(ctx, st->grams, ARG(st->x), ARG(n), ARG(p), ARG(st->y64),
                                ARG(st->idx), ARG(st->size), ARG(st->want), ARG(st->best),
                                ARG(st->add), ARG(st->gram),
                                LOCAL_ARG(PASS_LANES * sizeof(cl_double)));
    if (status) return status;
    const size_t lanes = PASS_LANES, g = e->k_particles * lanes;
    return clstats__launch(ctx, st->grams, 1, NULL, &g, &lanes, "pass_grams");
}

static int read(clstats_ctx *ctx, cl_mem buf, size_t bytes, void *host, bool wait)
{
    return clstats__cl_check(ctx,
                             clEnqueueReadBuffer(ctx->queue, buf, wait ? CL_TRUE : CL_FALSE, 0,
                                                 bytes, host, 0, NULL, NULL),
                             "clEnqueueReadBuffer(PaSS)");
}

static int step(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                const double *beta, const int32_t *want, int32_t *add, double *gram)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const size_t K = e->k_particles, cap = e->cap;
    bool any_argmax = false;
    for (size_t j = 0; j < K; j++) any_argmax |= want[j] == PASS_ARGMAX;
    int status;
    if ((status = put(ctx, st->idx, K * cap * sizeof *idx, idx)) ||
        (status = put(ctx, st->size, K * sizeof *size, size)) ||
        (any_argmax && (status = argmaxes(e, beta, want))))
        return status;
    if (!st->grams) { /* no fp64: the indices only, then the products here */
        if (any_argmax && (status = read(ctx, st->best, K * sizeof *add, add, true))) return status;
        for (size_t j = 0; j < K; j++) {
            if (want[j] == PASS_NONE) continue;
            if (want[j] != PASS_ARGMAX) add[j] = want[j];
            if (add[j] >= 0)
                clstats__pass_gram(e->d, idx + j * cap, (size_t)size[j], (size_t)add[j],
                                   gram + j * PASS_GRAM(cap), st->columns);
        }
        return CLSTATS_OK;
    }
    if ((status = put(ctx, st->want, K * sizeof *want, want)) || (status = grams(e)) ||
        (status = read(ctx, st->add, K * sizeof *add, add, false)))
        return status;
    return read(ctx, st->gram, K * PASS_GRAM(cap) * sizeof *gram, gram, true);
}

static void release(struct pass_engine *e)
{
    struct device_state *st = e->state;
    if (!st) return;
    cl_mem *bufs[] = {&st->x,    &st->y,        &st->y64, &st->idx, &st->beta,
                      &st->size, &st->want,     &st->r,   &st->e,   &st->best,
                      &st->add,  &st->rows_dev, &st->gram};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (*bufs[i]) clReleaseMemObject(*bufs[i]);
    free(st->beta_host), free(st->columns), free(st->rows);
    free(st);
    e->state = NULL;
}

int clstats__engine_device_load(struct pass_engine *e, const struct clstats_array *x,
                                double *mean, double *scale, int32_t *first_bad)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const size_t p = e->d->p;
    if (!st->standardise)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "standardising on the device needs fp64");
    const size_t es = e->d->f64 ? 8 : 4;
    bool owned;
    cl_mem raw = NULL, m = NULL, sc = NULL, bad = NULL;
    /* raw may be the caller's own memory (CPU devices), read-only: the result goes apart. */
    int status = clstats__array_in(ctx, x, true, &raw, NULL, &owned);
    if (status) return status;
    if ((status = buffer(ctx, e->d->n * p * es, NULL, &st->x)) ||
        (status = buffer(ctx, p * 8, NULL, &m)) || (status = buffer(ctx, p * 8, NULL, &sc)) ||
        (status = buffer(ctx, p * 4, NULL, &bad)))
        goto exit;
    const cl_uint n32 = (cl_uint)e->d->n, p32 = (cl_uint)p;
    if ((status = SET_ARGS(ctx, st->standardise, ARG(raw), ARG(st->x), ARG(n32), ARG(p32), ARG(m),
                           ARG(sc), ARG(bad))))
        goto exit;
    if ((status = clstats__launch(ctx, st->standardise, 1, NULL, &p, NULL, "pass_standardise")) ||
        (status = read(ctx, m, p * 8, mean, false)) ||
        (status = read(ctx, sc, p * 8, scale, false)))
        goto exit;
    status = read(ctx, bad, p * 4, first_bad, true);
exit:
    if (raw && owned) clReleaseMemObject(raw);
    if (m) clReleaseMemObject(m);
    if (sc) clReleaseMemObject(sc);
    if (bad) clReleaseMemObject(bad);
    return status;
}

/* y in the dtype, from the host's centred doubles. */
static void *y_in_dtype(const struct pass_data *d)
{
    char *out = malloc(d->n * (d->f64 ? 8 : 4));
    for (size_t t = 0; out && t < d->n; t++)
        if (d->f64) ((double *)out)[t] = d->ys[t];
        else ((float *)out)[t] = (float)d->ys[t];
    return out;
}

int clstats__engine_device(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                           size_t cap, struct pass_engine *e)
{
    *e = (struct pass_engine){.step = step, .release = release, .ctx = ctx, .d = d,
                              .k_particles = k_particles, .cap = cap};
    if (d->f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "float64 needs a device with fp64");
    struct device_state *st = calloc(1, sizeof *st);
    if (!st) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    e->state = st;
    const size_t es = d->f64 ? 8 : 4, K = k_particles;
    st->wg = 1;
    while (st->wg * 2 <= 256 && st->wg * 2 <= ctx->max_work_group) st->wg *= 2;
    char options[128];
    snprintf(options, sizeof options, "%s%s -DWG=%zu -DCAP=%zu", d->f64 ? "-DUSE_DOUBLE" : "",
             ctx->has_fp64 ? " -DPASS_GRAMS" : "", st->wg, cap);
    cl_program prog;
    int status = clstats__program(ctx, "pass.cl", options, &prog);
    if (status || (status = clstats__kernel(ctx, prog, "pass_residuals", &st->residuals)) ||
        (status = clstats__kernel(ctx, prog, "pass_argmax", &st->argmax)) ||
        (ctx->has_fp64 && (status = clstats__kernel(ctx, prog, "pass_grams", &st->grams))) ||
        (ctx->has_fp64 &&
         (status = clstats__kernel(ctx, prog, "pass_standardise", &st->standardise))))
        return status;
    st->beta_host = malloc(K * cap * es);
    st->columns = malloc(2 * d->n * sizeof *st->columns);
    st->rows = malloc(K * sizeof *st->rows);
    void *yh = y_in_dtype(d);
    if (!st->beta_host || !st->columns || !st->rows || !yh) {
        free(yh);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    }
    status = d->xr ? buffer(ctx, d->n * d->p * es, (void *)d->xr, &st->x) : CLSTATS_OK;
    if (!status) status = buffer(ctx, d->n * es, yh, &st->y);
    free(yh);
    if (status || (status = buffer(ctx, d->n * 8, (void *)d->ys, &st->y64)) ||
        (status = buffer(ctx, K * cap * 4, NULL, &st->idx)) ||
        (status = buffer(ctx, K * cap * es, NULL, &st->beta)) ||
        (status = buffer(ctx, K * 4, NULL, &st->size)) ||
        (status = buffer(ctx, K * 4, NULL, &st->want)) ||
        (status = buffer(ctx, K * 4, NULL, &st->rows_dev)) ||
        (status = buffer(ctx, d->n * K * es, NULL, &st->r)) ||
        (status = buffer(ctx, K * d->p * es, NULL, &st->e)) ||
        (status = buffer(ctx, K * 4, NULL, &st->best)) ||
        (status = buffer(ctx, K * 4, NULL, &st->add)) ||
        (status = buffer(ctx, K * PASS_GRAM(cap) * 8, NULL, &st->gram)))
        return status;
    return CLSTATS_OK;
}
