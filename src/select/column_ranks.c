/* column_ranks.c - batched selection: the k-th smallest valid value of every column of a matrix,
 * a rank of its own per column, and the sum of the k smallest by section VI's multiplicity rule
 * (kernels/select/column_ranks.cl). clstats_column_smallest is the public form; the regression
 * module runs clstats__column_ranks on the rows of its residual matrices. */
#include "internal.h"
#include "select_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Rows of a block of the sums' order (kernels/select/rank_keys.cl), and of a split column's
 * work-group: fixed, not tuned, as the sums' bits depend on it. */
#define COLUMN_BLOCK 4096

#define ARG(k, i, v) CL_TRY(ctx, clSetKernelArg((k), (i), sizeof(v), &(v)), "clSetKernelArg")

/* The split design (kernels/select/column_ranks_split.cl), with the one-group design's
 * arguments: its passes run on the device, the walk's state between them kept there. */
static int split_columns(clstats_ctx *ctx, cl_program program, bool f64, long wg, cl_mem buf,
                         size_t off, size_t cstep, size_t rstep, size_t rows, size_t cols,
                         cl_mem ranks, cl_mem stats, cl_mem sums)
{
    const size_t blocks = (rows + COLUMN_BLOCK - 1) / COLUMN_BLOCK;
    /* Blocks a work-group takes: enough groups for 8 a compute unit over all the columns, as
     * a group's start costs more than its few thousand rows on CPU devices. */
    size_t per = blocks * cols / (8 * (size_t)ctx->compute_units);
    if (per < 1) per = 1;
    if (per > blocks) per = blocks;
    const size_t groups = (blocks + per - 1) / per, parts = groups * cols;
    cl_kernel kr, ks, kh, kp, kb, kf;
    cl_mem range, nans, hist, state, counts, bsums;
    int status;
    if ((status = clstats__kernel(ctx, program, "split_range", &kr)) ||
        (status = clstats__kernel(ctx, program, "split_start", &ks)) ||
        (status = clstats__kernel(ctx, program, "split_hist", &kh)) ||
        (status = clstats__kernel(ctx, program, "split_pick", &kp)) ||
        (status = clstats__kernel(ctx, program, "split_below", &kb)) ||
        (status = clstats__kernel(ctx, program, "split_finish", &kf)) ||
        (status = clstats__scratch(ctx, "columns.split_range", parts * 16, &range)) ||
        (status = clstats__scratch(ctx, "columns.split_nans", parts * 4, &nans)) ||
        (status = clstats__scratch(ctx, "columns.split_hist", cols * 256 * 4, &hist)) ||
        (status = clstats__scratch(ctx, "columns.split_state", cols * 32, &state)) ||
        (status = clstats__scratch(ctx, "columns.split_counts", parts * 8, &counts)) ||
        (status = clstats__scratch(ctx, "columns.split_sums", blocks * cols * 8, &bsums)))
        return status;
    const cl_ulong o = off, cs = cstep, rs = rstep;
    const cl_uint nrows = (cl_uint)rows, ncols = (cl_uint)cols, nblocks = (cl_uint)blocks;
    const cl_uint ngroups = (cl_uint)groups, nper = (cl_uint)per;
    cl_kernel with_rows[] = {kr, kh, kb};
    for (int i = 0; i < 3; i++) {
        ARG(with_rows[i], 0, buf);
        ARG(with_rows[i], 1, o);
        ARG(with_rows[i], 2, cs);
        ARG(with_rows[i], 3, rs);
        ARG(with_rows[i], 4, nrows);
        ARG(with_rows[i], 5, nper);
    }
    ARG(kr, 6, range);
    ARG(kr, 7, nans);
    ARG(ks, 0, range);
    ARG(ks, 1, nans);
    ARG(ks, 2, ngroups);
    ARG(ks, 3, nrows);
    ARG(ks, 4, ncols);
    ARG(ks, 5, ranks);
    ARG(ks, 6, state);
    ARG(ks, 7, hist);
    ARG(kh, 6, state);
    ARG(kh, 8, hist);
    ARG(kp, 0, hist);
    ARG(kp, 2, state);
    ARG(kb, 6, state);
    ARG(kb, 7, nblocks);
    ARG(kb, 8, counts);
    ARG(kb, 9, bsums);
    ARG(kf, 0, state);
    ARG(kf, 1, counts);
    ARG(kf, 2, bsums);
    ARG(kf, 3, ngroups);
    ARG(kf, 4, nblocks);
    ARG(kf, 5, ncols);
    ARG(kf, 6, stats);
    ARG(kf, 7, sums);
    const size_t local[2] = {(size_t)wg, 1}, global[2] = {groups * (size_t)wg, cols};
    const size_t one = 64, per_col = (cols + 63) / 64 * 64, bins = 256, pick = cols * 256;
    if ((status = clstats__launch(ctx, kr, 2, NULL, global, local, "split_range")) ||
        (status = clstats__launch(ctx, ks, 1, NULL, &per_col, &one, "split_start")))
        return status;
    /* Every pass a key may need; a column's walk ends earlier where its keys share high bits,
     * and the passes after it return at once. */
    for (cl_uint pass = 0; pass < (f64 ? 64u : 32u) / 8; pass++) {
        ARG(kh, 7, pass);
        ARG(kp, 1, pass);
        if ((status = clstats__launch(ctx, kh, 2, NULL, global, local, "split_hist")) ||
            (status = clstats__launch(ctx, kp, 1, NULL, &pick, &bins, "split_pick")))
            return status;
    }
    if ((status = clstats__launch(ctx, kb, 2, NULL, global, local, "split_below")) ||
        (status = clstats__launch(ctx, kf, 1, NULL, &per_col, &one, "split_finish")))
        return status;
fail:
    return status;
}

int clstats__column_ranks(clstats_ctx *ctx, bool f64, cl_mem buf, size_t off, size_t cstep,
                          size_t rstep, size_t rows, size_t cols, cl_mem ranks, cl_mem stats,
                          cl_mem sums)
{
    if (f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the device has no float64");
    if (rows > UINT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "columns of %zu rows are too long", rows);
    /* columns.wg: one work-item a column on CPU devices, several on GPUs (src/core/tuning.c);
     * at most 256, as the kernel's local arrays hold one entry per item and its sum lanes
     * (256) must be a multiple of the work-group size. */
    long wg = clstats__tuned(ctx, P_COLUMNS_WG);
    if (wg > 256) wg = 256;
    if ((size_t)wg > ctx->max_work_group) wg = (long)ctx->max_work_group;
    if (wg < 1 || (wg & (wg - 1))) return clstats__fail(ctx, CLSTATS_ERR_ARG, "bad columns.wg");
    /* columns.split: auto splits columns of several blocks on GPUs when there are too few of
     * them to give every compute unit a few work-groups; not on CPU devices, where its twenty
     * launches a selection cost more than the one work-item a column loses (RESULTS "LTS
     * regression (issue 21): split columns"). Both designs give the same bits. */
    const long split = clstats__tuned(ctx, P_COLUMNS_SPLIT);
    const bool split_them = split == SWITCH_ON ||
                            (split == AUTO && !ctx->is_cpu && rows >= 2 * COLUMN_BLOCK &&
                             cols < 4 * (size_t)ctx->compute_units);
    char options[128];
    /* -D ORDERED_SUMS on CPU devices: see block_below in kernels/select/rank_keys.cl. */
    snprintf(options, sizeof options, "-D REAL=%s%s -D WG=%ld -D BLOCK=%d%s",
             f64 ? "double" : "float", f64 ? " -D CLSTATS_FP64" : "", wg, COLUMN_BLOCK,
             ctx->is_cpu ? " -D ORDERED_SUMS" : "");
    cl_program program;
    cl_kernel k;
    int status = clstats__program(
        ctx, split_them ? "column_ranks_split.cl" : "column_ranks.cl", options, &program);
    if (status == CLSTATS_OK && split_them)
        return split_columns(ctx, program, f64, wg, buf, off, cstep, rstep, rows, cols, ranks,
                             stats, sums);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, program, "column_ranks", &k);
    if (status != CLSTATS_OK) return status;
    const cl_ulong o = off, cs = cstep, rs = rstep;
    const cl_uint nrows = (cl_uint)rows;
    ARG(k, 0, buf);
    ARG(k, 1, o);
    ARG(k, 2, cs);
    ARG(k, 3, rs);
    ARG(k, 4, nrows);
    ARG(k, 5, ranks);
    ARG(k, 6, stats);
    ARG(k, 7, sums);
    const size_t local = (size_t)wg, global = cols * local;
    status = clstats__launch(ctx, k, 1, NULL, &global, &local, "column_ranks");
fail:
    return status;
}

double clstats__smallest_sum(const uint64_t *stats, double sum_below, uint64_t k, bool f64)
{
    const double t = clstats__value_of_key(stats[0], f64);
    /* The k smallest: every value below t, and k - (their count) copies of t. */
    return sum_below + (double)(k - stats[2]) * t;
}

int clstats_column_smallest(clstats_ctx *ctx, const struct clstats_array *m, const uint64_t *k,
                            const struct clstats_select_options *opts, double *kth, double *sum)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    if (!m || !k || !kth) return clstats__fail(ctx, CLSTATS_ERR_ARG, "m, k or kth is NULL");
    const struct clstats_select_options o = opts ? *opts : (struct clstats_select_options){0};
    const bool f64 = m->dtype == CLSTATS_FLOAT64;
    const size_t cols = m->nx, rows = m->ny;
    int status = clstats__array_check(ctx, m, "the matrix", NULL);
    if (status != CLSTATS_OK) return status;
    for (size_t c = 0; c < cols; c++)
        if (k[c] == 0 || k[c] > rows)
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "k[%zu] = %llu is not in [1, %zu]", c,
                                 (unsigned long long)k[c], rows);
    const size_t es = f64 ? 8 : 4;
    uint64_t *stats = malloc(cols * 4 * sizeof *stats);
    uint64_t *ranks = malloc(cols * sizeof *ranks);
    void *sums = malloc(cols * es);
    if (!stats || !ranks || !sums) {
        free(stats), free(ranks), free(sums);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "column results");
    }
    for (size_t c = 0; c < cols; c++) ranks[c] = k[c] - 1;
    cl_mem buf = NULL, rbuf, sbuf, ubuf;
    size_t off = 0;
    bool owned = false;
    clstats__begin(ctx);
    status = clstats__array_in(ctx, m, false, &buf, &off, &owned);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "columns.ranks", cols * sizeof *ranks, &rbuf);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "columns.rank_stats", cols * 4 * sizeof *stats, &sbuf);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "columns.rank_sums", cols * es, &ubuf);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueWriteBuffer(ctx->queue, rbuf, CL_FALSE, 0,
                                                        cols * sizeof *ranks, ranks, 0, NULL,
                                                        NULL),
                                   "uploading the ranks");
    if (status == CLSTATS_OK)
        status = clstats__column_ranks(ctx, f64, buf, off, 1, clstats__array_stride(m), rows, cols,
                                       rbuf, sbuf, ubuf);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, sbuf, CL_FALSE, 0,
                                                       cols * 4 * sizeof *stats, stats, 0, NULL,
                                                       NULL),
                                   "reading the results");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(
            ctx, clEnqueueReadBuffer(ctx->queue, ubuf, CL_TRUE, 0, cols * es, sums, 0, NULL, NULL),
            "reading the sums");
    status = clstats__end(ctx, status);
    if (owned) clReleaseMemObject(buf);
    uint64_t nan = 0, short_cols = 0;
    for (size_t c = 0; status == CLSTATS_OK && c < cols; c++) {
        const uint64_t *s = stats + 4 * c;
        nan += s[1];
        if (s[1] && o.nan_policy == CLSTATS_NAN_ERROR) continue;
        const bool none = f64 ? s[0] == UINT64_MAX : s[0] == UINT32_MAX;
        if (none) { /* fewer valid values than k: NaN, counted */
            short_cols++;
            kth[c] = NAN;
            if (sum) sum[c] = NAN;
            continue;
        }
        kth[c] = clstats__plus_zero(clstats__value_of_key(s[0], f64));
        if (sum)
            sum[c] = clstats__smallest_sum(s, f64 ? ((double *)sums)[c] : ((float *)sums)[c], k[c],
                                           f64);
    }
    if (o.nan_count) *o.nan_count = nan;
    if (status == CLSTATS_OK && nan && o.nan_policy == CLSTATS_NAN_ERROR)
        status = clstats__fail(ctx, CLSTATS_ERR_NAN, "%llu NaN values in the matrix",
                               (unsigned long long)nan);
    else if (status == CLSTATS_OK && short_cols)
        status = clstats__fail(ctx, CLSTATS_ERR_EMPTY,
                               "%llu columns have fewer valid values than their k (NaN there)",
                               (unsigned long long)short_cols);
    free(stats), free(ranks), free(sums);
    return status;
}
