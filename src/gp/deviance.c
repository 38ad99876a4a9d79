/* deviance.c - GPfit's deviance log|S| + n log Q (S = R + delta I, Q = (y - 1 mu)' S^-1 (y -
 * 1 mu), mu = 1'S^-1 y / 1'S^-1 1; the seed's eq. 3-4) on the device: a population of
 * parameter vectors (or one) in one pass of the blocked Cholesky for all its matrices, 1' and
 * y' carried below each so that the factor ends with L^-1 1 and L^-1 y; the gradient from one
 * factor that also carries the identity into L^-T, and its lauum. */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of correlation matrices held at once by a population's pass (at most the device's
 * largest buffer): on GPUs at n = 4064 eight matrices a pass, whose diagonal blocks and panels
 * then share the launches and the steps' latency; CPU devices, whose cores one matrix's
 * update already fills, hold a quarter of that in their host memory. */
#define BATCH_BYTES ((size_t)1 << 30)
#define BATCH_BYTES_CPU ((size_t)256 << 20)
/* The largest distance table kept (n = 4064, d = 6 takes 396 MB). */
#define TABLE_BYTES ((size_t)1 << 30)

static int write(clstats_ctx *ctx, cl_mem buf, const void *host, size_t bytes)
{
    return clstats__cl_check(ctx, clEnqueueWriteBuffer(ctx->queue, buf, CL_TRUE, 0, bytes, host,
                                                       0, NULL, NULL),
                             "clEnqueueWriteBuffer(gp)");
}

static int read(clstats_ctx *ctx, cl_mem buf, void *host, size_t bytes)
{
    return clstats__cl_check(ctx, clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, bytes, host,
                                                      0, NULL, NULL),
                             "clEnqueueReadBuffer(gp)");
}

/* The power exponential's table of |x_ik - x_jk|^p for the job's design (kernels/gp/gp.cl
 * distance_table), built once a job evaluates more than one matrix (a population, or a second
 * call) and kept for its later evaluations; none (and *table NULL) for one matrix alone, for
 * other correlations, or where it would take more than TABLE_BYTES or a quarter of the
 * device's largest buffer. */
static int distance_table(struct gp_job *job, size_t count, cl_mem *table)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n, bytes = job->d * (n * (n - 1) / 2) * sizeof(double);
    *table = job->table;
    if (job->table || job->no_table) return CLSTATS_OK;
    if (count < 2 && !job->built) {
        job->built = true; /* the next matrix will find a table worth building */
        return CLSTATS_OK;
    }
    if (job->model.corr != CLSTATS_GP_POWER_EXPONENTIAL || bytes > TABLE_BYTES ||
        bytes > ctx->max_alloc / 4) {
        job->no_table = true;
        return CLSTATS_OK;
    }
    cl_int err;
    cl_kernel k;
    job->table = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    int status = clstats__cl_check(ctx, err, "clCreateBuffer(gp distance table)");
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "distance_table", &k);
    if (status != CLSTATS_OK) return status;
    const cl_uint n32 = (cl_uint)n;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp distance_table)", KERNEL_ARG(job->xbuf),
                              KERNEL_ARG(n32), KERNEL_ARG(job->table));
    if (status != CLSTATS_OK) goto fail;
    const size_t global[2] = {n, n};
    status = clstats__launch(ctx, k, 2, NULL, global, NULL, "gp distance_table");
    *table = job->table;
fail:
    return status;
}

/* count correlation matrices at thetas (count x d, already on the device) into r (matrix m at
 * m mat_step), each with its nugget: the given one, or GPfit's rule from its eigenvalues on
 * the device (delta: count values). */
static int build(struct gp_job *job, cl_mem thetas, size_t count, size_t mat_step, cl_mem r,
                 double *delta)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n;
    const cl_uint n32 = (cl_uint)n, full = isnan(job->model.nugget);
    const cl_ulong step = mat_step;
    cl_kernel k;
    cl_mem dbuf = NULL, table;
    int status = distance_table(job, count, &table);
    if (status == CLSTATS_OK)
        status = clstats__kernel(ctx, job->prog, table ? "corr_matrix_table" : "corr_matrix", &k);
    if (status != CLSTATS_OK) return status;
    if (table)
        CL_ARG(k, 0, table);
    else
        CL_ARG(k, 0, job->xbuf);
    CL_ARG(k, 1, n32);
    CL_ARG(k, 2, thetas);
    CL_ARG(k, 3, r);
    CL_ARG(k, 4, step);
    CL_ARG(k, 5, full);
    const size_t global[3] = {n, n, count};
    status = clstats__launch(ctx, k, 3, NULL, global, NULL, "gp corr_matrix");
    if (status != CLSTATS_OK) goto fail;
    if (isnan(job->model.nugget)) {
        status = clstats__gp_nugget(ctx, r, mat_step, n, count, job->model.nug_thres, delta);
    } else {
        for (size_t m = 0; m < count; m++) delta[m] = job->model.nugget;
    }
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "gp.delta", count * sizeof *delta, &dbuf);
    if (status == CLSTATS_OK) status = write(ctx, dbuf, delta, count * sizeof *delta);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "add_diagonal", &k);
    if (status != CLSTATS_OK) goto fail;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp add_diagonal)", KERNEL_ARG(r),
                              KERNEL_ARG(n32), KERNEL_ARG(step), KERNEL_ARG(dbuf));
    if (status != CLSTATS_OK) goto fail;
    const size_t g2[2] = {n, count};
    status = clstats__launch(ctx, k, 2, NULL, g2, NULL, "gp add_diagonal");
fail:
    return status;
}

/* Rows 1' and y' below each of the count n x n matrices in r (clstats__potrf's extra rows). */
static int augment(struct gp_job *job, cl_mem r, size_t mat_step, size_t count)
{
    clstats_ctx *ctx = job->ctx;
    cl_kernel k;
    int status = clstats__kernel(ctx, job->prog, "augment", &k);
    if (status != CLSTATS_OK) return status;
    const cl_uint n32 = (cl_uint)job->n;
    const cl_ulong step = mat_step;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp augment)", KERNEL_ARG(r), KERNEL_ARG(n32),
                              KERNEL_ARG(step), KERNEL_ARG(job->ybuf));
    if (status != CLSTATS_OK) goto fail;
    const size_t global[2] = {job->n, count};
    status = clstats__launch(ctx, k, 2, NULL, global, NULL, "gp augment");
fail:
    return status;
}

static int upload_thetas(struct gp_job *job, const double *beta, size_t count, cl_mem *out)
{
    const size_t d = job->d;
    double *theta = malloc(count * d * sizeof *theta);
    if (!theta) return clstats__fail(job->ctx, CLSTATS_ERR_NOMEM, "gp: thetas");
    for (size_t m = 0; m < count; m++) clstats__gp_theta(beta + m * d, d, theta + m * d);
    int status = clstats__scratch(job->ctx, "gp.theta", count * d * sizeof *theta, out);
    if (status == CLSTATS_OK) status = write(job->ctx, *out, theta, count * d * sizeof *theta);
    free(theta);
    return status;
}

/* count deviances in one pass (a chunk that fits BATCH_BYTES): the matrices with their rows 1'
 * and y' below them, factored together (clstats__potrf_many, two or three launches a
 * 64-row step whatever the count), then one kernel's sums a matrix. */
static int eval_many(struct gp_job *job, const double *beta, size_t count,
                     const struct clstats_gp_eval *out, bool lenient)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n, step = (n + 2) * n, blocks = clstats__potrf_blocks(n);
    cl_mem thetas, r, info, parts, res;
    cl_kernel k;
    double *delta = malloc(count * sizeof *delta), *sums = malloc(3 * count * sizeof *sums);
    int32_t *bad = malloc(count * sizeof *bad);
    int status = delta && sums && bad ? CLSTATS_OK
                                      : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: batch");
    if (status == CLSTATS_OK) status = upload_thetas(job, beta, count, &thetas);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.r", count * step * 8, &r);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.info", count * 4, &info);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "gp.logdet", count * blocks * 8, &parts);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.sums", count * 3 * 8, &res);
    if (status == CLSTATS_OK) status = build(job, thetas, count, step, r, delta);
    if (status == CLSTATS_OK) status = augment(job, r, step, count);
    const struct clstats__mat a = {r, 0, n};
    if (status == CLSTATS_OK)
        status = clstats__potrf_many(ctx, true, a, step, n, 2, count, info, parts);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "deviance_sums", &k);
    if (status != CLSTATS_OK) goto fail;
    const cl_uint n32 = (cl_uint)n, c32 = (cl_uint)count, b32 = (cl_uint)blocks;
    const cl_ulong step64 = step;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp deviance_sums)", KERNEL_ARG(r),
                              KERNEL_ARG(n32), KERNEL_ARG(step64), KERNEL_ARG(c32),
                              KERNEL_ARG(info), KERNEL_ARG(parts), KERNEL_ARG(b32),
                              KERNEL_ARG(res));
    if (status != CLSTATS_OK) goto fail;
    /* A work-group of 64 a matrix (kernels/gp/gp.cl SUM_ITEMS). */
    const size_t sum_local = 64, sum_global = count * sum_local;
    status = clstats__launch(ctx, k, 1, NULL, &sum_global, &sum_local, "gp deviance_sums");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clEnqueueReadBuffer(ctx->queue, info, CL_FALSE, 0,
                                                            count * sizeof *bad, bad, 0, NULL,
                                                            NULL),
                                   "clEnqueueReadBuffer(gp info)");
    if (status == CLSTATS_OK) status = read(ctx, res, sums, 3 * count * sizeof *sums);
    if (status != CLSTATS_OK) goto fail;
    for (size_t m = 0; m < count; m++) {
        if (bad[m] && !lenient) {
            status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR,
                                   "gp: R + %g I is not positive definite at row %d (duplicate "
                                   "design points need a nugget)",
                                   delta[m], bad[m] - 1);
            goto fail;
        }
        if (out->deviance) out->deviance[m] = sums[3 * m];
        if (out->mu) out->mu[m] = sums[3 * m + 1];
        if (out->sigma2) out->sigma2[m] = sums[3 * m + 2] / (double)n;
        if (out->nugget) out->nugget[m] = delta[m];
    }
fail:
    free(delta);
    free(sums);
    free(bad);
    return status;
}

/* Rows n + 2 .. 2 n + 1 below the matrix at l (n columns) set to the identity. */
static int identity_rows(struct gp_job *job, cl_mem l)
{
    clstats_ctx *ctx = job->ctx;
    cl_kernel k;
    int status = clstats__kernel(ctx, job->prog, "identity_rows", &k);
    if (status != CLSTATS_OK) return status;
    const cl_uint n32 = (cl_uint)job->n, first = (cl_uint)job->n + 2;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp identity_rows)", KERNEL_ARG(l),
                              KERNEL_ARG(n32), KERNEL_ARG(first));
    if (status != CLSTATS_OK) goto fail;
    const size_t global[2] = {job->n, job->n};
    status = clstats__launch(ctx, k, 2, NULL, global, NULL, "gp identity_rows");
fail:
    return status;
}

int clstats__gp_factor(struct gp_job *job, const double *beta, double nugget, bool inverse,
                       double *u, double *w, double *mu, double *q, double *delta, cl_mem *l)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n, extra = inverse ? n + 2 : 2;
    cl_mem thetas;
    double *pair = malloc(2 * n * sizeof *pair), logdet = NAN;
    int bad = 0;
    const double kept = job->model.nugget;
    job->model.nugget = nugget;
    int status = pair ? upload_thetas(job, beta, 1, &thetas)
                      : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: right-hand sides");
    /* R, then 1' and y' as two more rows: the factorisation carries them along as u' = (L^-1 1)'
     * and v' = (L^-1 y)' (clstats__potrf's extra rows), so no solve follows it; with `inverse`
     * the identity's n rows too, which end as L^-T. */
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.r", (n + extra) * n * 8, l);
    if (status == CLSTATS_OK) status = build(job, thetas, 1, (n + extra) * n, *l, delta);
    if (status == CLSTATS_OK) status = augment(job, *l, (n + extra) * n, 1);
    if (status == CLSTATS_OK && inverse) status = identity_rows(job, *l);
    const struct clstats__mat a = {*l, 0, n};
    if (status == CLSTATS_OK) status = clstats__potrf(ctx, true, a, n, extra, &bad, &logdet);
    if (status == CLSTATS_OK && bad)
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR,
                               "gp: R + %g I is not positive definite at row %d (duplicate "
                               "design points need a nugget)",
                               *delta, bad - 1);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clEnqueueReadBuffer(ctx->queue, *l, CL_TRUE,
                                                            n * n * sizeof *pair,
                                                            2 * n * sizeof *pair, pair, 0, NULL,
                                                            NULL),
                                   "clEnqueueReadBuffer(gp u, v)");
    if (status != CLSTATS_OK) goto fail;
    /* pair: u then v, n values each. */
    double uu = 0, uv = 0;
    for (size_t i = 0; i < n; i++) {
        uu += pair[i] * pair[i];
        uv += pair[i] * pair[n + i];
    }
    *mu = uv / uu;
    *q = 0;
    for (size_t i = 0; i < n; i++) {
        u[i] = pair[i];
        w[i] = pair[n + i] - *mu * u[i];
        *q += w[i] * w[i];
    }
    u[n] = logdet;
fail:
    job->model.nugget = kept;
    free(pair);
    return status;
}

int clstats__gp_factor_inverse(struct gp_job *job, cl_mem l, cl_mem *inv)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n;
    const double zero = 0, unit = 1;
    cl_mem one;
    cl_kernel k;
    /* The identity: zeros, then add_diagonal's 1 on each row; then L^-1 I by a TRSM. */
    int status = clstats__scratch(ctx, "gp.inv", n * n * 8, inv);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.one", 8, &one);
    if (status == CLSTATS_OK) status = write(ctx, one, &unit, 8);
    if (status != CLSTATS_OK) return status;
    CL_TRY(ctx, clEnqueueFillBuffer(ctx->queue, *inv, &zero, sizeof zero, 0, n * n * 8, 0, NULL,
                                    NULL),
           "clEnqueueFillBuffer(gp inv)");
    status = clstats__kernel(ctx, job->prog, "add_diagonal", &k);
    if (status != CLSTATS_OK) goto fail;
    const cl_uint n32 = (cl_uint)n;
    const cl_ulong step = n * n;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp identity)", KERNEL_ARG(*inv),
                              KERNEL_ARG(n32), KERNEL_ARG(step), KERNEL_ARG(one));
    if (status != CLSTATS_OK) goto fail;
    const size_t g2[2] = {n, 1};
    status = clstats__launch(ctx, k, 2, NULL, g2, NULL, "gp identity");
    const struct clstats__mat lm = {l, 0, n}, im = {*inv, 0, n};
    if (status == CLSTATS_OK) status = clstats__trsm(ctx, true, false, false, n, n, 1.0, lm, im);
fail:
    return status;
}

/* d deviance / d beta at the factor in "gp.r" (clstats__gp_factor's with `inverse`: L^-T in the
 * rows below u' and v'): alpha = L^-T w, S^-1 = L^-T L^-1 (lauum), then the kernel's row
 * sums. No CLBlast: its TRSM of the identity cost tens of launches and the host's work a call. */
static int gradient(struct gp_job *job, const double *beta, const double *w, double q, cl_mem l,
                    double *grad)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n, d = job->d, inv_off = (n + 2) * n;
    cl_mem wbuf, alpha, sinv, thetas, part;
    cl_kernel k;
    double *partial = malloc(n * d * sizeof *partial);
    int status = partial ? upload_thetas(job, beta, 1, &thetas)
                         : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: gradient");
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.w", n * 8, &wbuf);
    if (status == CLSTATS_OK) status = write(ctx, wbuf, w, n * 8);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.alpha", n * 8, &alpha);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "upper_times", &k);
    if (status != CLSTATS_OK) goto fail;
    const cl_ulong off64 = inv_off;
    const cl_uint n32 = (cl_uint)n;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp upper_times)", KERNEL_ARG(l),
                              KERNEL_ARG(off64), KERNEL_ARG(n32), KERNEL_ARG(wbuf),
                              KERNEL_ARG(alpha));
    if (status != CLSTATS_OK) goto fail;
    /* A work-group of 64 a row (kernels/gp/gp.cl GRAD_ITEMS), here and in gradient_rows. */
    const size_t local = 64, global = n * local;
    status = clstats__launch(ctx, k, 1, NULL, &global, &local, "gp upper_times");
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.sinv", n * n * 8, &sinv);
    const struct clstats__mat um = {l, inv_off, n}, sm = {sinv, 0, n};
    if (status == CLSTATS_OK) status = clstats__lauum(ctx, true, um, n, sm);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.partial", n * d * 8, &part);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "gradient_rows", &k);
    if (status != CLSTATS_OK) goto fail;
    const double scale = (double)n / q;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp gradient_rows)", KERNEL_ARG(job->xbuf),
                              KERNEL_ARG(n32), KERNEL_ARG(thetas), KERNEL_ARG(sinv),
                              KERNEL_ARG(alpha), KERNEL_ARG(scale), KERNEL_ARG(part));
    if (status != CLSTATS_OK) goto fail;
    status = clstats__launch(ctx, k, 1, NULL, &global, &local, "gp gradient_rows");
    if (status == CLSTATS_OK) status = read(ctx, part, partial, n * d * 8);
    if (status != CLSTATS_OK) goto fail;
    for (size_t c = 0; c < d; c++) grad[c] = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < d; c++) grad[c] += partial[i * d + c];
fail:
    free(partial);
    return status;
}

static int eval_one(struct gp_job *job, const double *beta, const struct clstats_gp_eval *out,
                    bool lenient)
{
    const size_t n = job->n;
    double *u = malloc((n + 1) * sizeof *u), *w = malloc(n * sizeof *w), mu, q, delta;
    cl_mem l;
    int status = u && w ? clstats__gp_factor(job, beta, job->model.nugget, out->gradient != NULL,
                                             u, w, &mu, &q, &delta, &l)
                        : clstats__fail(job->ctx, CLSTATS_ERR_NOMEM, "gp: solves");
    if (status == CLSTATS_ERR_SINGULAR && lenient) {
        if (out->deviance) out->deviance[0] = NAN;
        status = CLSTATS_OK;
        goto fail;
    }
    if (status == CLSTATS_OK && out->gradient)
        status = gradient(job, beta, w, q, l, out->gradient);
    if (status != CLSTATS_OK) goto fail;
    if (out->deviance) out->deviance[0] = u[n] + (double)n * log(q);
    if (out->mu) out->mu[0] = mu;
    if (out->sigma2) out->sigma2[0] = q / (double)n;
    if (out->nugget) out->nugget[0] = delta;
fail:
    free(u);
    free(w);
    return status;
}

int clstats__gp_eval(struct gp_job *job, const double *beta, size_t count,
                     const struct clstats_gp_eval *out, bool lenient)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n, d = job->d;
    for (size_t i = 0; i < count * d; i++)
        if (!isfinite(beta[i]))
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: beta[%zu] is %g, not finite", i,
                                 beta[i]);
    if (out->gradient && count != 1)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: a gradient is for one beta, not %zu",
                             count);
    job->evaluations += count;
    if (out->gradient) return eval_one(job, beta, out, lenient);
    const size_t most = ctx->device_class == CLASS_CPU ? BATCH_BYTES_CPU : BATCH_BYTES;
    const size_t bytes = most < ctx->max_alloc ? most : (size_t)ctx->max_alloc;
    size_t chunk = bytes / ((n + 2) * n * 8);
    if (chunk < 1) chunk = 1;
    int status = CLSTATS_OK;
    for (size_t at = 0; at < count && status == CLSTATS_OK; at += chunk) {
        const size_t c = count - at < chunk ? count - at : chunk;
        const struct clstats_gp_eval part = {
            out->deviance ? out->deviance + at : NULL, NULL, out->nugget ? out->nugget + at : NULL,
            out->mu ? out->mu + at : NULL, out->sigma2 ? out->sigma2 + at : NULL};
        status = eval_many(job, beta + at * d, c, &part, lenient);
    }
    return status;
}

int clstats_gp_deviance(clstats_ctx *ctx, const struct clstats_gp_model *model, const double *x,
                        const double *y, size_t n, size_t d, const double *beta, size_t count,
                        const struct clstats_gp_eval *out)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "gp: NULL context");
    clstats__begin(ctx);
    struct gp_job job;
    int status = beta && out ? clstats__gp_open(ctx, model, x, y, n, d, &job)
                             : clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: NULL argument");
    if (status == CLSTATS_OK) status = clstats__gp_eval(&job, beta, count, out, false);
    if (beta && out) clstats__gp_close(&job);
    return clstats__end(ctx, status);
}
