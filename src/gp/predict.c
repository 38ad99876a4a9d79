/* predict.c - GPfit's predictor at new points (predict.GP): the mean mu + r' S^-1 (y - 1 mu)
 * and the MSE sigma2 (1 - r'S^-1 r + (1 - 1'S^-1 r)^2 / 1'S^-1 1), from one factor S = L L',
 * the new points' correlations r solved with L in blocks of columns. */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>

#define ARG(k, i, v) CL_TRY(ctx, clSetKernelArg((k), (i), sizeof(v), &(v)), "clSetKernelArg")

/* New points a block: n x BLOCK_COLS doubles of correlations at once. */
#define BLOCK_COLS 1024

static int block(struct gp_job *job, cl_mem l, cl_mem thetas, cl_mem ubuf, cl_mem wbuf,
                 const double *xnew, size_t m, double *sums)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n;
    cl_mem xb = NULL, s, out;
    cl_kernel k;
    int status = clstats__upload(ctx, xnew, m * job->d * sizeof *xnew, "gp xnew", &xb);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.cross", n * m * 8, &s);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.sums", 3 * m * 8, &out);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "cross_corr", &k);
    if (status != CLSTATS_OK) goto fail;
    const cl_uint n32 = (cl_uint)n, m32 = (cl_uint)m;
    ARG(k, 0, job->xbuf);
    ARG(k, 1, n32);
    ARG(k, 2, xb);
    ARG(k, 3, m32);
    ARG(k, 4, thetas);
    ARG(k, 5, s);
    const size_t g2[2] = {m, n};
    status = clstats__launch(ctx, k, 2, NULL, g2, NULL, "gp cross_corr");
    const struct clstats__mat lm = {l, 0, n}, sm = {s, 0, m};
    if (status == CLSTATS_OK) status = clstats__trsm(ctx, true, false, false, n, m, 1.0, lm, sm);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "predict_sums", &k);
    if (status != CLSTATS_OK) goto fail;
    ARG(k, 0, s);
    ARG(k, 1, n32);
    ARG(k, 2, m32);
    ARG(k, 3, ubuf);
    ARG(k, 4, wbuf);
    ARG(k, 5, out);
    status = clstats__launch(ctx, k, 1, NULL, &m, NULL, "gp predict_sums");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0,
                                                            3 * m * 8, sums, 0, NULL, NULL),
                                   "clEnqueueReadBuffer(gp sums)");
fail:
    if (xb) clReleaseMemObject(xb);
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
    cl_mem l, ubuf = NULL, wbuf = NULL, thetas;
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
    sums = malloc(3 * (m < BLOCK_COLS ? m : BLOCK_COLS) * sizeof *sums + 1);
    if (!u || !w || !sums || !theta) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: prediction");
        goto fail;
    }
    status = clstats__gp_factor(&job, beta, nugget, u, w, &mu, &q, &delta, &l);
    clstats__gp_theta(beta, d, theta);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, u, n * 8, "gp u", &ubuf);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, w, n * 8, "gp w", &wbuf);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, theta, d * 8, "gp theta", &thetas);
    if (status != CLSTATS_OK) goto fail;
    double uu = 0;
    for (size_t i = 0; i < n; i++) uu += u[i] * u[i];
    const double sigma2 = q / (double)n;
    for (size_t at = 0; at < m && status == CLSTATS_OK; at += BLOCK_COLS) {
        const size_t c = m - at < BLOCK_COLS ? m - at : BLOCK_COLS;
        status = block(&job, l, thetas, ubuf, wbuf, xnew + at * d, c, sums);
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
