/* cross.c - the correlations of a block of new points with the design (prediction's r, n x m,
 * one column a new point). Every correlation here is a product over the columns of one
 * factor a column (exp(-theta |h|^p), or Matern's polynomial times exp(-t)), so where the new
 * points share few distinct values a column (a pixel grid: one y a row of pixels), each
 * factor is computed once a distinct value and design row and r is only their products;
 * otherwise each correlation directly, its powers and exp a pair (kernels/gp/gp.cl). */
#include "gp_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct keyed {
    double value;
    uint32_t point;
};

static int by_value(const void *a, const void *b)
{
    const double x = ((const struct keyed *)a)->value, y = ((const struct keyed *)b)->value;
    return (x > y) - (x < y);
}

/* Each column's distinct values, ascending, concatenated (values; column k's from starts[k]
 * to starts[k + 1]), and for each point and column the index of its value there (index,
 * m x d); *total the values' count, stopping (with *total > limit) once past limit. */
static int distinct(clstats_ctx *ctx, const double *xnew, size_t m, size_t d, size_t limit,
                    double *values, uint32_t *index, uint32_t *starts, size_t *total)
{
    struct keyed *keys = malloc(m * sizeof *keys);
    if (!keys) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: new points' values");
    *total = 0;
    for (size_t k = 0; k < d && *total <= limit; k++) {
        starts[k] = (uint32_t)*total;
        for (size_t c = 0; c < m; c++) keys[c] = (struct keyed){xnew[c * d + k], (uint32_t)c};
        qsort(keys, m, sizeof *keys, by_value);
        for (size_t c = 0; c < m && *total <= limit; c++) {
            if (c == 0 || keys[c].value != keys[c - 1].value) values[(*total)++] = keys[c].value;
            index[(size_t)keys[c].point * d + k] = (uint32_t)(*total - 1);
        }
    }
    starts[d] = (uint32_t)*total;
    free(keys);
    return CLSTATS_OK;
}

/* The factors' way: a quarter of the direct way's evaluations or fewer. */
static int by_factors(struct gp_job *job, cl_mem thetas, const double *values,
                      const uint32_t *index, const uint32_t *starts, size_t total, size_t m,
                      cl_mem r)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n, d = job->d;
    cl_mem vb = NULL, ib = NULL, sb = NULL, fb;
    cl_kernel k;
    int status = clstats__upload(ctx, values, total * sizeof *values, "gp values", &vb);
    if (status == CLSTATS_OK)
        status = clstats__upload(ctx, starts, (d + 1) * sizeof *starts, "gp value starts", &sb);
    if (status == CLSTATS_OK)
        status = clstats__upload(ctx, index, m * d * sizeof *index, "gp value index", &ib);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.factors", total * n * 8, &fb);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "corr_factors", &k);
    if (status != CLSTATS_OK) goto fail;
    const cl_uint n32 = (cl_uint)n, m32 = (cl_uint)m, t32 = (cl_uint)total;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp corr_factors)", KERNEL_ARG(job->xbuf),
                              KERNEL_ARG(n32), KERNEL_ARG(vb), KERNEL_ARG(t32), KERNEL_ARG(sb),
                              KERNEL_ARG(thetas), KERNEL_ARG(fb));
    if (status != CLSTATS_OK) goto fail;
    const size_t g1[2] = {total, n};
    status = clstats__launch(ctx, k, 2, NULL, g1, NULL, "gp corr_factors");
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "cross_corr_factors", &k);
    if (status != CLSTATS_OK) goto fail;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp cross_corr_factors)", KERNEL_ARG(fb),
                              KERNEL_ARG(n32), KERNEL_ARG(ib), KERNEL_ARG(m32), KERNEL_ARG(r));
    if (status != CLSTATS_OK) goto fail;
    const size_t g2[2] = {m, n};
    status = clstats__launch(ctx, k, 2, NULL, g2, NULL, "gp cross_corr_factors");
fail:
    if (vb) clReleaseMemObject(vb);
    if (ib) clReleaseMemObject(ib);
    if (sb) clReleaseMemObject(sb);
    return status;
}

static int direct(struct gp_job *job, cl_mem thetas, const double *xnew, size_t m, cl_mem r)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = job->n;
    cl_mem xb = NULL;
    cl_kernel k;
    int status = clstats__upload(ctx, xnew, m * job->d * sizeof *xnew, "gp xnew", &xb);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, job->prog, "cross_corr", &k);
    if (status != CLSTATS_OK) goto fail;
    const cl_uint n32 = (cl_uint)n, m32 = (cl_uint)m;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(gp cross_corr)", KERNEL_ARG(job->xbuf),
                              KERNEL_ARG(n32), KERNEL_ARG(xb), KERNEL_ARG(m32), KERNEL_ARG(thetas),
                              KERNEL_ARG(r));
    if (status != CLSTATS_OK) goto fail;
    const size_t g2[2] = {m, n};
    status = clstats__launch(ctx, k, 2, NULL, g2, NULL, "gp cross_corr");
fail:
    if (xb) clReleaseMemObject(xb);
    return status;
}

int clstats__gp_cross(struct gp_job *job, cl_mem thetas, const double *xnew, size_t m, cl_mem r)
{
    const size_t d = job->d, limit = m / 4;
    double *values = malloc((limit + 1) * sizeof *values);
    uint32_t *index = malloc(m * d * sizeof *index), *starts = malloc((d + 1) * sizeof *starts);
    size_t total = 0;
    int status = values && index && starts
                     ? distinct(job->ctx, xnew, m, d, limit, values, index, starts, &total)
                     : clstats__fail(job->ctx, CLSTATS_ERR_NOMEM, "gp: new points");
    if (status == CLSTATS_OK)
        status = total <= limit ? by_factors(job, thetas, values, index, starts, total, m, r)
                                : direct(job, thetas, xnew, m, r);
    /* CPU devices read the uploaded values and index in place (clstats__upload). */
    if (total <= limit) clFinish(job->ctx->queue);
    free(values);
    free(index);
    free(starts);
    return status;
}
