/* predict.c - GPfit's predictor at new points (predict.GP): the mean mu + r' S^-1 (y - 1 mu)
 * and the MSE sigma2 (1 - r'S^-1 r + (1 - 1'S^-1 r)^2 / 1'S^-1 1), from one factor S = L L'
 * inverted once (L^-1), so that each block of new points costs a few launches: their
 * correlations r (n x block, cross.c), z = L^-1 r by one GEMM, z's three sums a point. */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>

/* Bytes of correlations of a block of new points (n x block doubles, and as much for z). */
#define BLOCK_BYTES ((size_t)64 << 20)

static int block(struct gp_job *job, cl_mem linv, cl_mem thetas, cl_mem ubuf, cl_mem wbuf,
                 const double *xnew, size_t m, double *sums)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n;
    cl_mem r, z, out;
    cl_kernel k;
    int status = clstats__scratch(ctx, "gp.cross", n * m * 8, &r);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.z", n * m * 8, &z);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.sums", 3 * m * 8, &out);
    if (status == CLSTATS_OK) status = clstats__gp_cross(job, thetas, xnew, m, r);
    const cl_uint n32 = (cl_uint)n, m32 = (cl_uint)m;
    /* z = L^-1 r as a product with the inverse: a GEMM (the zeros above L^-1's diagonal
     * multiplied too), where a triangular solve is a chain of small steps. */
    const struct clstats__mat im = {linv, 0, n}, rm = {r, 0, m}, zm = {z, 0, m};
    if (status == CLSTATS_OK)
        status = clstats__gemm(ctx, true, false, false, n, m, n, 1.0, im, rm, 0.0, zm);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "predict_sums", &k);
    if (status != CLSTATS_OK) goto fail;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp predict_sums)", KERNEL_ARG(z),
                              KERNEL_ARG(n32), KERNEL_ARG(m32), KERNEL_ARG(ubuf), KERNEL_ARG(wbuf),
                              KERNEL_ARG(out));
    if (status != CLSTATS_OK) goto fail;
    status = clstats__launch(ctx, k, 1, NULL, &m, NULL, "gp predict_sums");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0,
                                                            3 * m * 8, sums, 0, NULL, NULL),
                                   "clEnqueueReadBuffer(gp sums)");
fail:
    return status;
}

int clstats_gp_predict(clstats_ctx *ctx, const struct clstats_gp_model *model, const double *x,
                       const double *y, size_t n, size_t d, const double *beta, double nugget,
                       const double *xnew, size_t m, double *mean, double *mse)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "gp: NULL context");
    clstats__begin(ctx);
    struct gp_job job = {0};
    double *u = NULL, *w = NULL, *sums = NULL, *theta = NULL, mu, q, delta;
    cl_mem l, linv, ubuf = NULL, wbuf = NULL, thetas;
    size_t cols = BLOCK_BYTES / (8 * (n ? n : 1));
    if (cols < 1) cols = 1;
    if (cols > m) cols = m;
    int status = beta && xnew && mean ? clstats__gp_open(ctx, model, x, y, n, d, &job)
                                      : clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: NULL argument");
    for (size_t i = 0; status == CLSTATS_OK && i < m * d; i++)
        if (!isfinite(xnew[i]))
            status = clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: xnew[%zu] is not finite", i);
    for (size_t k = 0; status == CLSTATS_OK && k < d; k++)
        if (!isfinite(beta[k]))
            status = clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: beta[%zu] is not finite", k);
    if (status != CLSTATS_OK) goto fail;
    u = malloc((n + 1) * sizeof *u);
    w = malloc(n * sizeof *w);
    theta = malloc(d * sizeof *theta);
    sums = malloc(3 * cols * sizeof *sums + 1);
    if (!u || !w || !sums || !theta) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: prediction");
        goto fail;
    }
    status = clstats__gp_factor(&job, beta, nugget, false, u, w, &mu, &q, &delta, &l);
    clstats__gp_theta(beta, d, theta);
    if (status == CLSTATS_OK) status = clstats__gp_factor_inverse(&job, l, &linv);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, u, n * 8, "gp u", &ubuf);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, w, n * 8, "gp w", &wbuf);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, theta, d * 8, "gp theta", &thetas);
    if (status != CLSTATS_OK) goto fail;
    double uu = 0;
    for (size_t i = 0; i < n; i++) uu += u[i] * u[i];
    const double sigma2 = q / (double)n;
    for (size_t at = 0; at < m && status == CLSTATS_OK; at += cols) {
        const size_t c = m - at < cols ? m - at : cols;
        status = block(&job, linv, thetas, ubuf, wbuf, xnew + at * d, c, sums);
        for (size_t i = 0; status == CLSTATS_OK && i < c; i++) {
            const double ss = sums[3 * i], su = sums[3 * i + 1], sw = sums[3 * i + 2];
            mean[at + i] = mu + sw;
            if (mse) {
                const double v = sigma2 * (1 - ss + (1 - su) * (1 - su) / uu);
                mse[at + i] = v > 0 ? v : 0; /* rounding at design points */
            }
        }
    }
    clReleaseMemObject(thetas);
fail:
    if (ubuf) clReleaseMemObject(ubuf);
    if (wbuf) clReleaseMemObject(wbuf);
    clstats__gp_close(&job);
    free(u);
    free(w);
    free(sums);
    free(theta);
    return clstats__end(ctx, status);
}
