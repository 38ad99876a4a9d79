/* engine_device.c - the device engine of PaSS: X (n x p, row-major, the data's dtype) goes up
 * once; each iteration the particles' coefficients and model indices go up, the residuals of
 * all particles are formed on the device (kernels/varsel/pass.cl), E = R^T X by one GEMM
 * through src/linalg (CLBlast), the argmax outside each model on the device, and K indices come
 * back. The layout E = R^T X (K x p) rather than X^T R makes each particle's scan read
 * contiguous memory. */
#include "varsel_internal.h"

#include "../linalg/linalg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct device_state {
    cl_mem x, y, idx, beta, size, r, e, best;
    cl_kernel residuals, argmax;
    size_t wg;
    void *beta_host; /* the coefficients in the dtype */
};

#define ARG(k, i, v)                                                                               \
    do {                                                                                           \
        const cl_int err_ = clSetKernelArg((k), (i), sizeof(v), &(v));                             \
        if (err_ != CL_SUCCESS) return clstats__cl_check(ctx, err_, "clSetKernelArg(PaSS)");       \
    } while (0)

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

static int argmax(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                  const double *beta, int32_t *best)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const size_t K = e->k_particles, cap = e->cap, es = d->f64 ? 8 : 4;
    const cl_uint n = (cl_uint)d->n, p = (cl_uint)d->p, kk = (cl_uint)K;
    for (size_t i = 0; i < K * cap; i++) {
        if (d->f64) ((double *)st->beta_host)[i] = beta[i];
        else ((float *)st->beta_host)[i] = (float)beta[i];
    }
    int status;
    if ((status = put(ctx, st->idx, K * cap * sizeof *idx, idx)) ||
        (status = put(ctx, st->size, K * sizeof *size, size)) ||
        (status = put(ctx, st->beta, K * cap * es, st->beta_host)))
        return status;
    ARG(st->residuals, 0, st->x);
    ARG(st->residuals, 1, n);
    ARG(st->residuals, 2, p);
    ARG(st->residuals, 3, st->y);
    ARG(st->residuals, 4, st->idx);
    ARG(st->residuals, 5, st->beta);
    ARG(st->residuals, 6, st->size);
    ARG(st->residuals, 7, kk);
    ARG(st->residuals, 8, st->r);
    const size_t global[2] = {K, d->n};
    if ((status = clstats__launch(ctx, st->residuals, 2, NULL, global, NULL, "pass_residuals")))
        return status;
    const struct clstats__mat r = {st->r, 0, K}, x = {st->x, 0, d->p}, ee = {st->e, 0, d->p};
    if ((status = clstats__gemm(ctx, d->f64, true, false, K, d->p, d->n, 1, r, x, 0, ee)))
        return status;
    ARG(st->argmax, 0, st->e);
    ARG(st->argmax, 1, p);
    ARG(st->argmax, 2, st->idx);
    ARG(st->argmax, 3, st->size);
    ARG(st->argmax, 4, st->best);
    const size_t g = K * st->wg;
    if ((status = clstats__launch(ctx, st->argmax, 1, NULL, &g, &st->wg, "pass_argmax")))
        return status;
    return clstats__cl_check(ctx,
                             clEnqueueReadBuffer(ctx->queue, st->best, CL_TRUE, 0,
                                                 K * sizeof *best, best, 0, NULL, NULL),
                             "clEnqueueReadBuffer(PaSS)");
}

static void release(struct pass_engine *e)
{
    struct device_state *st = e->state;
    if (!st) return;
    cl_mem *bufs[] = {&st->x, &st->y, &st->idx, &st->beta, &st->size, &st->r, &st->e, &st->best};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (*bufs[i]) clReleaseMemObject(*bufs[i]);
    free(st->beta_host);
    free(st);
    e->state = NULL;
}

/* X row-major and y in the dtype, from the host's column-major doubles (already rounded). */
static void *packed(const struct pass_data *d, bool y)
{
    const size_t n = d->n, p = y ? 1 : d->p, es = d->f64 ? 8 : 4;
    char *out = malloc(n * p * es);
    if (!out) return NULL;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < p; i++) {
            const double v = y ? d->ys[t] : d->xs[i * n + t];
            if (d->f64) ((double *)out)[t * p + i] = v;
            else ((float *)out)[t * p + i] = (float)v;
        }
    return out;
}

int clstats__engine_device(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                           size_t cap, struct pass_engine *e)
{
    *e = (struct pass_engine){.argmax = argmax, .release = release, .ctx = ctx, .d = d,
                              .k_particles = k_particles, .cap = cap};
    if (d->f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "float64 needs a device with fp64");
    struct device_state *st = calloc(1, sizeof *st);
    if (!st) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    e->state = st;
    const size_t es = d->f64 ? 8 : 4, K = k_particles;
    st->wg = 1;
    while (st->wg * 2 <= 256 && st->wg * 2 <= ctx->max_work_group) st->wg *= 2;
    char options[96];
    snprintf(options, sizeof options, "%s -DWG=%zu -DCAP=%zu", d->f64 ? "-DUSE_DOUBLE" : "",
             st->wg, cap);
    cl_program prog;
    int status = clstats__program(ctx, "pass.cl", options, &prog);
    if (status || (status = clstats__kernel(ctx, prog, "pass_residuals", &st->residuals)) ||
        (status = clstats__kernel(ctx, prog, "pass_argmax", &st->argmax)))
        return status;
    st->beta_host = malloc(K * cap * es);
    void *xh = packed(d, false), *yh = packed(d, true);
    if (!st->beta_host || !xh || !yh) {
        free(xh), free(yh);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    }
    status = buffer(ctx, d->n * d->p * es, xh, &st->x);
    if (!status) status = buffer(ctx, d->n * es, yh, &st->y);
    free(xh), free(yh);
    if (status || (status = buffer(ctx, K * cap * 4, NULL, &st->idx)) ||
        (status = buffer(ctx, K * cap * es, NULL, &st->beta)) ||
        (status = buffer(ctx, K * 4, NULL, &st->size)) ||
        (status = buffer(ctx, d->n * K * es, NULL, &st->r)) ||
        (status = buffer(ctx, K * d->p * es, NULL, &st->e)) ||
        (status = buffer(ctx, K * 4, NULL, &st->best)))
        return status;
    return CLSTATS_OK;
}
