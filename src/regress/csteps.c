/* csteps.c - FAST-LTS's concentration steps on the device for a batch of candidate fits: their
 * squared residuals, each one's h-th smallest by batched selection (src/select/column_ranks.c)
 * and its LTS objective by section VI's multiplicity rule, then the LS refits of all their
 * h-subsets at once: the sums of the column products over each subset, by chunks of rows, give
 * every candidate's normal equations, which our batched Cholesky solves. Only the candidates'
 * coefficients and objectives cross to the host.
 *
 * Not CLBlast's GEMM: the products are (candidates x n) by (n x q + 1) with few candidates and
 * long n on the full data, one tile of outputs over 10^5 inner terms and more, which leaves the
 * device idle; chunked sums keep every compute unit busy and need no n x (q + 1)(q + 2) / 2
 * matrix of products. */
#include "regress_internal.h"

#include "../linalg/linalg_internal.h"
#include "../select/select_internal.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int buffer(clstats_ctx *ctx, size_t bytes, cl_mem *out)
{
    cl_int err;
    *out = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &err);
    return clstats__cl_check(ctx, err, "clCreateBuffer(regression)");
}

/* CPU devices build the sums' accumulators volatile (kernels/regress/csteps.cl): Intel's CPU
 * compiler otherwise vectorised a loop's sum, reordering its additions. */
#define ORDERED "-D ORDERED_SUMS"

static int kernel(clstats_ctx *ctx, const char *name, cl_kernel *k)
{
    cl_program prog;
    if (!ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "the regression needs a device with float64");
    int status = clstats__program(ctx, "csteps.cl", ctx->is_cpu ? ORDERED : "", &prog);
    return status ? status : clstats__kernel(ctx, prog, name, k);
}

/* The same for the kernels built for q + 1 columns (-D WIDTH). */
static int kernel_q(clstats_ctx *ctx, const char *name, size_t q, cl_kernel *k)
{
    cl_program prog;
    char options[64];
    snprintf(options, sizeof options, "-D WIDTH=%zu%s", q + 1, ctx->is_cpu ? " " ORDERED : "");
    int status = clstats__program(ctx, "csteps.cl", options, &prog);
    return status ? status : clstats__kernel(ctx, prog, name, k);
}

static size_t pairs(size_t q)
{
    return (q + 1) * (q + 2) / 2;
}

/* Rows a work-item sums in subset_products: fixed, not tuned, so that the sums round alike on
 * every device; long enough to cost little in sum_chunks, short enough to fill a GPU at 10^5
 * rows. */
#define CHUNK 1024

static size_t chunks(size_t n)
{
    return (n + CHUNK - 1) / CHUNK;
}

static int to_device(clstats_ctx *ctx, cl_mem buf, const void *host, size_t bytes, cl_bool wait);
static int from_device(clstats_ctx *ctx, cl_mem buf, void *host, size_t bytes, cl_bool wait);

/* The buffers for d->cap candidates beside d->z. */
static int work_buffers(clstats_ctx *ctx, struct data_set *d)
{
    const size_t n = d->n, q = d->q, cap = d->cap, np = pairs(q);
    int status;
    if ((status = buffer(ctx, cap * chunks(n) * np * 8, &d->part)) ||
        (status = buffer(ctx, cap * q * 8, &d->coef)) ||
        (status = buffer(ctx, cap * n * 8, &d->resid)) ||
        (status = buffer(ctx, cap * n * 8, &d->weights)) ||
        (status = buffer(ctx, cap * np * 8, &d->gram)) ||
        (status = buffer(ctx, cap * q * q * 8, &d->a)) ||
        (status = buffer(ctx, cap * q * 8, &d->b)) || (status = buffer(ctx, cap * 8, &d->t)) ||
        (status = buffer(ctx, cap * 4, &d->flags)) || (status = buffer(ctx, cap * 4, &d->places)) ||
        (status = buffer(ctx, cap * 8, &d->ranks)) ||
        (status = buffer(ctx, cap * 32, &d->stats)) || (status = buffer(ctx, cap * 8, &d->sums)) ||
        (status = buffer(ctx, cap * 4, &d->info)) || (status = buffer(ctx, cap * 8, &d->logdet)) ||
        (status = buffer(ctx, cap * 16, &d->objs)))
        return status;
    if (!(d->rank_values = malloc(cap * sizeof *d->rank_values)))
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "ranks");
    return CLSTATS_OK;
}

int clstats__data_set(clstats_ctx *ctx, const double *z, size_t n, size_t q, size_t cap,
                      struct data_set *d)
{
    memset(d, 0, sizeof *d);
    d->n = n, d->q = q, d->cap = cap;
    int status = clstats__upload(ctx, z, n * (q + 1) * sizeof *z, "uploading the data", &d->z);
    if (status) return status;
    /* The upload's host copy must stay until it is read: the caller keeps z. */
    if ((status = work_buffers(ctx, d))) return status;
    return clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish");
}

int clstats__data_set_design(clstats_ctx *ctx, const struct clstats_array *x,
                             const struct clstats_array *y, bool intercept, size_t cap,
                             struct data_set *d, size_t *nan_rows)
{
    memset(d, 0, sizeof *d);
    const size_t n = x->ny, p = x->nx, q = p + intercept;
    d->n = n, d->q = q, d->cap = cap;
    const size_t ldx = clstats__array_stride(x), ystep = y->nx == 1 ? clstats__array_stride(y) : 1;
    const size_t xes = clstats__dtype_size(x->dtype), yes = clstats__dtype_size(y->dtype);
    static const char *const names[2][2] = {{"design_rows_ff", "design_rows_fd"},
                                            {"design_rows_df", "design_rows_dd"}};
    const char *name = names[x->dtype == CLSTATS_FLOAT64][y->dtype == CLSTATS_FLOAT64];
    cl_mem xb = NULL, yb = NULL, count = NULL;
    cl_kernel k;
    cl_uint nan32 = 0;
    int status;
    if ((status = clstats__upload(ctx, x->host, ((n - 1) * ldx + p) * xes, "uploading x", &xb)) ||
        (status = clstats__upload(ctx, y->host, ((n - 1) * ystep + 1) * yes, "uploading y",
                                  &yb)) ||
        (status = buffer(ctx, n * (q + 1) * 8, &d->z)) || (status = buffer(ctx, 4, &count)) ||
        (status = to_device(ctx, count, &nan32, 4, CL_TRUE)) || (status = kernel(ctx, name, &k)))
        goto fail;
    const cl_uint n32 = (cl_uint)n, p32 = (cl_uint)p, i32 = intercept;
    const cl_ulong ldx64 = ldx, ystep64 = ystep;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(design_rows)", KERNEL_ARG(xb), KERNEL_ARG(yb),
                              KERNEL_ARG(n32), KERNEL_ARG(p32), KERNEL_ARG(ldx64),
                              KERNEL_ARG(ystep64), KERNEL_ARG(i32), KERNEL_ARG(d->z),
                              KERNEL_ARG(count));
    if (status != CLSTATS_OK) goto fail;
    const size_t local = 64, global = (n + 63) / 64 * 64;
    if ((status = clstats__launch(ctx, k, 1, NULL, &global, &local, "design_rows")) ||
        (status = work_buffers(ctx, d)) || (status = from_device(ctx, count, &nan32, 4, CL_TRUE)))
        goto fail;
    *nan_rows = nan32;
fail:
    if (xb) clReleaseMemObject(xb);
    if (yb) clReleaseMemObject(yb);
    if (count) clReleaseMemObject(count);
    return status;
}

void clstats__data_set_free(struct data_set *d)
{
    cl_mem *all[] = {&d->z,     &d->part,  &d->coef,  &d->resid, &d->weights, &d->gram,
                     &d->a,     &d->b,     &d->t,     &d->flags, &d->places,  &d->ranks,
                     &d->stats, &d->sums,  &d->info,  &d->logdet, &d->objs};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i]) clReleaseMemObject(*all[i]), *all[i] = NULL;
    free(d->rank_values);
    d->rank_values = NULL;
}

/* Squared residuals of m candidates (d->coef) into d->resid. */
static int residuals(clstats_ctx *ctx, struct data_set *d, size_t m)
{
    const size_t n = d->n, q = d->q;
    cl_kernel k;
    int status = kernel(ctx, "squared_residuals", &k);
    if (status) return status;
    const cl_uint n32 = (cl_uint)n, q32 = (cl_uint)q, m32 = (cl_uint)m;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(squared_residuals)", KERNEL_ARG(d->z),
                              KERNEL_ARG(d->coef), KERNEL_ARG(n32), KERNEL_ARG(q32),
                              KERNEL_ARG(m32), KERNEL_ARG(d->resid));
    if (status != CLSTATS_OK) goto fail;
    const size_t local[2] = {64, 1}, global[2] = {(n + 63) / 64 * 64, m};
    status = clstats__launch(ctx, k, 2, NULL, global, local, "squared_residuals");
fail:
    return status;
}

/* Copies between the host and the device; without `wait` only enqueued, the host data then to
 * stay until the next waited-for copy, which every caller ends with (the queue is in order). */
static int to_device(clstats_ctx *ctx, cl_mem buf, const void *host, size_t bytes, cl_bool wait)
{
    return clstats__cl_check(
        ctx, clEnqueueWriteBuffer(ctx->queue, buf, wait, 0, bytes, host, 0, NULL, NULL),
        "clEnqueueWriteBuffer(regression)");
}

static int from_device(clstats_ctx *ctx, cl_mem buf, void *host, size_t bytes, cl_bool wait)
{
    return clstats__cl_check(
        ctx, clEnqueueReadBuffer(ctx->queue, buf, wait, 0, bytes, host, 0, NULL, NULL),
        "clEnqueueReadBuffer(regression)");
}

/* The sums of the column products over the subsets weighted by d->weights of m candidates, into
 * d->gram (np a candidate, packed pairs), in chunk order whatever the kernel. */
static int subset_sums(clstats_ctx *ctx, struct data_set *d, size_t m)
{
    const size_t n = d->n, q = d->q, np = pairs(q), nc = chunks(n);
    /* regress.products: auto (0) is a chunk a work-item on CPU devices, a pair on GPUs; both
     * kernels take the same arguments */
    const long path = clstats__tuned(ctx, P_REGRESS_PRODUCTS);
    const bool rows = path == 2 || (path == 0 && ctx->is_cpu);
    const char *name = rows ? "subset_products_rows" : "subset_products";
    cl_kernel kp, ks;
    int status;
    if ((status = rows ? kernel_q(ctx, name, q, &kp) : kernel(ctx, name, &kp)) ||
        (status = kernel(ctx, "sum_chunks", &ks)))
        return status;
    const cl_uint n32 = (cl_uint)n, q32 = (cl_uint)q, m32 = (cl_uint)m, chunk32 = CHUNK;
    const cl_uint np32 = (cl_uint)np, nc32 = (cl_uint)nc;
    status = CLSTATS_SET_ARGS(ctx, kp, "clSetKernelArg(subset_products)", KERNEL_ARG(d->z),
                              KERNEL_ARG(d->weights), KERNEL_ARG(n32), KERNEL_ARG(q32),
                              KERNEL_ARG(m32), KERNEL_ARG(chunk32), KERNEL_ARG(d->part));
    if (status != CLSTATS_OK) goto fail;
    status = CLSTATS_SET_ARGS(ctx, ks, "clSetKernelArg(sum_chunks)", KERNEL_ARG(d->part),
                              KERNEL_ARG(np32), KERNEL_ARG(nc32), KERNEL_ARG(m32),
                              KERNEL_ARG(d->gram));
    if (status != CLSTATS_OK) goto fail;
    const size_t lp[3] = {64, 1, 1}, gp[3] = {(np + 63) / 64 * 64, nc, m};
    const size_t lr[2] = {1, 1}, gr[2] = {nc, m};
    const size_t ls[2] = {64, 1}, gs[2] = {(np + 63) / 64 * 64, m};
    if ((status = rows ? clstats__launch(ctx, kp, 2, NULL, gr, lr, name)
                       : clstats__launch(ctx, kp, 3, NULL, gp, lp, name)))
        return status;
    status = clstats__launch(ctx, ks, 2, NULL, gs, ls, "sum_chunks");
fail:
    return status;
}

/* The LS fits of the subsets weighted by d->weights, into d->b; d->info per candidate. */
static int solve_weighted(clstats_ctx *ctx, struct data_set *d, size_t m)
{
    const size_t q = d->q;
    cl_kernel k;
    int status;
    if ((status = subset_sums(ctx, d, m)) || (status = kernel(ctx, "normal_equations", &k)))
        return status;
    const cl_uint q32 = (cl_uint)q, m32 = (cl_uint)m;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(normal_equations)", KERNEL_ARG(d->gram),
                              KERNEL_ARG(q32), KERNEL_ARG(m32), KERNEL_ARG(d->a), KERNEL_ARG(d->b));
    if (status != CLSTATS_OK) goto fail;
    const size_t local = 1, global = m;
    if ((status = clstats__launch(ctx, k, 1, NULL, &global, &local, "normal_equations")) ||
        (status = clstats__potrf_batched(ctx, true, (struct clstats__mat){d->a, 0, q}, q * q, q,
                                         m, d->info, d->logdet)) ||
        (status = clstats__potrs_batched(ctx, true, (struct clstats__mat){d->a, 0, q}, q * q, q,
                                         (struct clstats__mat){d->b, 0, 1}, q, 1, m)))
        return status;
fail:
    return status;
}

/* One step for m candidates is enqueued whole and waited for once: residuals, selection, the
 * subset rule, weights and refits run back to back on the device. */
int clstats__evaluate(clstats_ctx *ctx, struct data_set *d, double *coef, size_t m, size_t h,
                      bool refit, double *obj, double *kth, bool *singular)
{
    const size_t n = d->n, q = d->q;
    double *objs = malloc(m * 16), *b = malloc(m * q * 8);
    cl_int *info = malloc(m * 4);
    int status = CLSTATS_OK;
    if (!objs || !b || !info) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "candidates");
        goto done;
    }
    if (d->ranks_h != h || d->ranks_m < m) { /* the same h - 1 for every candidate */
        for (size_t c = 0; c < m; c++) d->rank_values[c] = h - 1;
        if ((status = to_device(ctx, d->ranks, d->rank_values, m * 8, CL_FALSE))) goto done;
        d->ranks_h = h, d->ranks_m = m;
    }
    cl_kernel kr, kw, kt;
    if ((status = to_device(ctx, d->coef, coef, m * q * 8, CL_FALSE)) ||
        (status = residuals(ctx, d, m)) ||
        (status = clstats__column_ranks(ctx, true, d->resid, 0, n, 1, n, m, d->ranks, d->stats,
                                        d->sums)) ||
        (status = kernel(ctx, "subset_rule", &kr)))
        goto done;
    const cl_ulong h64 = h;
    const cl_uint n32 = (cl_uint)n, m32 = (cl_uint)m;
    status = CLSTATS_SET_ARGS(ctx, kr, "clSetKernelArg(subset_rule)", KERNEL_ARG(d->stats),
                              KERNEL_ARG(d->sums), KERNEL_ARG(h64), KERNEL_ARG(m32),
                              KERNEL_ARG(d->t), KERNEL_ARG(d->flags), KERNEL_ARG(d->places),
                              KERNEL_ARG(d->objs));
    if (status != CLSTATS_OK) goto fail;
    const size_t one = 1;
    if ((status = clstats__launch(ctx, kr, 1, NULL, &m, &one, "subset_rule")) ||
        (status = from_device(ctx, d->objs, objs, m * 16, !refit)))
        goto done;
    if (refit) {
        if ((status = kernel(ctx, "subset_weights", &kw)) ||
            (status = kernel(ctx, "subset_ties", &kt)))
            goto done;
        status = CLSTATS_SET_ARGS(ctx, kw, "clSetKernelArg(subset_weights)", KERNEL_ARG(d->resid),
                                  KERNEL_ARG(d->t), KERNEL_ARG(d->flags), KERNEL_ARG(n32),
                                  KERNEL_ARG(m32), KERNEL_ARG(d->weights));
        if (status != CLSTATS_OK) goto fail;
        status = CLSTATS_SET_ARGS(ctx, kt, "clSetKernelArg(subset_ties)", KERNEL_ARG(d->resid),
                                  KERNEL_ARG(d->t), KERNEL_ARG(d->places), KERNEL_ARG(n32),
                                  KERNEL_ARG(m32), KERNEL_ARG(d->weights));
        if (status != CLSTATS_OK) goto fail;
        const size_t local[2] = {64, 1}, global[2] = {(n + 63) / 64 * 64, m};
        if ((status = clstats__launch(ctx, kw, 2, NULL, global, local, "subset_weights")) ||
            (status = clstats__launch(ctx, kt, 1, NULL, &m, &one, "subset_ties")) ||
            (status = solve_weighted(ctx, d, m)) ||
            (status = from_device(ctx, d->info, info, m * sizeof *info, CL_FALSE)) ||
            (status = from_device(ctx, d->b, b, m * q * 8, CL_TRUE)))
            goto done;
    }
    for (size_t c = 0; c < m; c++) {
        obj[c] = objs[c];
        if (kth) kth[c] = objs[m + c];
        if (!refit) continue;
        if (singular) singular[c] = info[c] != 0;
        if (info[c] == 0 && isfinite(obj[c])) memcpy(coef + c * q, b + c * q, q * 8);
    }
fail:
done:
    free(objs), free(b), free(info);
    return status;
}

int clstats__subset(clstats_ctx *ctx, struct data_set *d, unsigned char *in)
{
    cl_kernel k;
    cl_mem bytes;
    int status;
    if ((status = kernel(ctx, "subset_bytes", &k)) ||
        (status = clstats__scratch(ctx, "regress.bytes", d->n, &bytes)))
        return status;
    const cl_uint n32 = (cl_uint)d->n;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(subset_bytes)", KERNEL_ARG(d->weights),
                              KERNEL_ARG(n32), KERNEL_ARG(bytes));
    if (status != CLSTATS_OK) goto fail;
    const size_t local = 64, global = (d->n + 63) / 64 * 64;
    if (!(status = clstats__launch(ctx, k, 1, NULL, &global, &local, "subset_bytes")))
        status = from_device(ctx, bytes, in, d->n, CL_TRUE);
fail:
    return status;
}

int clstats__fit_of_weights(clstats_ctx *ctx, struct data_set *d, bool sum, double *coef)
{
    double g[64 * 65 / 2 + 64 + 1];
    int status = sum ? subset_sums(ctx, d, 1) : CLSTATS_OK;
    if (!status) status = from_device(ctx, d->gram, g, pairs(d->q) * 8, CL_TRUE);
    if (!status && !clstats__solve_packed(g, d->q, coef))
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR,
                               "the weighted rows do not determine the fit");
    return status;
}

int clstats__all_rows(clstats_ctx *ctx, struct data_set *d)
{
    const double one = 1;
    return clstats__cl_check(ctx,
                             clEnqueueFillBuffer(ctx->queue, d->weights, &one, sizeof one, 0,
                                                 d->n * sizeof one, 0, NULL, NULL),
                             "clEnqueueFillBuffer(weights)");
}

int clstats__fit_residuals(clstats_ctx *ctx, struct data_set *d, const double *coef)
{
    int status = to_device(ctx, d->coef, coef, d->q * 8, CL_TRUE);
    return status ? status : residuals(ctx, d, 1);
}

int clstats__cutoff(clstats_ctx *ctx, struct data_set *d, double s, double cutoff,
                    unsigned char *flags)
{
    const size_t n = d->n;
    cl_kernel k;
    cl_mem bytes;
    int status;
    if ((status = kernel(ctx, "cutoff_weights", &k)) ||
        (status = clstats__scratch(ctx, "regress.bytes", n, &bytes)))
        return status;
    const cl_uint n32 = (cl_uint)n;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(cutoff_weights)", KERNEL_ARG(d->resid),
                              KERNEL_ARG(s), KERNEL_ARG(cutoff), KERNEL_ARG(n32),
                              KERNEL_ARG(d->weights), KERNEL_ARG(bytes));
    if (status != CLSTATS_OK) goto fail;
    const size_t local = 64, global = (n + 63) / 64 * 64;
    status = clstats__launch(ctx, k, 1, NULL, &global, &local, "cutoff_weights");
    if (!status && flags) status = from_device(ctx, bytes, flags, n, CL_TRUE);
fail:
    return status;
}

int clstats__residual_sums(clstats_ctx *ctx, struct data_set *d, double *sum_w, double *sum_wr2)
{
    const size_t nc = chunks(d->n);
    cl_kernel kw, ks;
    int status;
    if ((status = kernel(ctx, "weighted_r2_chunks", &kw)) ||
        (status = kernel(ctx, "sum_chunks", &ks)))
        return status;
    const cl_uint n32 = (cl_uint)d->n, chunk32 = CHUNK, two = 2, nc32 = (cl_uint)nc, one32 = 1;
    double sums[2];
    status = CLSTATS_SET_ARGS(ctx, kw, "clSetKernelArg(weighted_r2_chunks)", KERNEL_ARG(d->resid),
                              KERNEL_ARG(d->weights), KERNEL_ARG(n32), KERNEL_ARG(chunk32),
                              KERNEL_ARG(d->part));
    if (status != CLSTATS_OK) goto fail;
    status = CLSTATS_SET_ARGS(ctx, ks, "clSetKernelArg(sum_chunks)", KERNEL_ARG(d->part),
                              KERNEL_ARG(two), KERNEL_ARG(nc32), KERNEL_ARG(one32),
                              KERNEL_ARG(d->gram));
    if (status != CLSTATS_OK) goto fail;
    const size_t one = 1, g2 = 2;
    if ((status = clstats__launch(ctx, kw, 1, NULL, &nc, &one, "weighted_r2_chunks")) ||
        (status = clstats__launch(ctx, ks, 1, NULL, &g2, &g2, "sum_chunks")) ||
        (status = from_device(ctx, d->gram, sums, sizeof sums, CL_TRUE)))
        return status;
    *sum_w = sums[0], *sum_wr2 = sums[1];
fail:
    return status;
}
