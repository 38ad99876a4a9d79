/* column_ranks.c - batched selection: the k-th smallest valid value of every column of a matrix,
 * a rank of its own per column, and the sum of the k smallest by section VI's multiplicity rule
 * (kernels/select/column_ranks.cl). clstats_column_smallest is the public form; the regression
 * module runs clstats__column_ranks on the rows of its residual matrices. */
#include "internal.h"
#include "select_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* COLUMN_BLOCK (select_internal.h): rows of a block of the sums' order
 * (kernels/select/rank_keys.cl), and of a split column's work-group: fixed, not tuned, as the
 * sums' bits depend on it. */

/* The split design over parts (clstats__column_ranks_parts): the parts, every part's rows, the
 * ranks (host, or NULL: the median's, 1 its lower, 2 its upper middle), and the results. */
struct split_parts {
    const struct select_parts *parts;
    uint64_t rows_total;
    const uint64_t *ranks;
    int median;
    uint64_t *keys, *nans;
    struct column_block_sums *bs;
};

/* Over parts, after split_range: every column's NaNs summed over the parts (one message of a
 * count a column), the walk started from the whole key width on every part alike (group 0's
 * range all keys, the others' none), and the ranks, the median's from the valid values. */
static int parts_start(clstats_ctx *ctx, const struct split_parts *sp, bool f64, size_t groups,
                       size_t cols, cl_mem range, cl_mem nans, cl_mem ranks)
{
    const size_t n = groups * cols;
    cl_uint *nan = malloc(n * sizeof *nan);
    cl_ulong *rg = malloc(2 * n * sizeof *rg), *rk = malloc(cols * sizeof *rk);
    uint64_t *counts = calloc(1 + cols, sizeof *counts);
    int status = nan && rg && rk && counts ? CLSTATS_OK
                                           : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the columns");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, nans, CL_TRUE, 0,
                                                       n * sizeof *nan, nan, 0, NULL, NULL),
                                   "reading the NaN counts");
    for (size_t c = 0; status == CLSTATS_OK && c < cols; c++)
        for (size_t g = 0; g < groups; g++) counts[1 + c] += nan[c * groups + g];
    /* a part that failed says so here: every part's next message is this one */
    status = sp->parts->sum_counts(sp->parts->user, status == CLSTATS_OK ? counts : NULL, 1 + cols,
                                   status);
    const cl_ulong all = f64 ? ~(cl_ulong)0 : 0xffffffffu;
    for (size_t c = 0; status == CLSTATS_OK && c < cols; c++) {
        sp->nans[c] = counts[1 + c];
        const uint64_t nv = sp->rows_total - counts[1 + c];
        rk[c] = sp->ranks ? sp->ranks[c] : sp->median == 1 ? (nv ? (nv - 1) / 2 : 0) : nv / 2;
        for (size_t g = 0; g < groups; g++) {
            const size_t at = c * groups + g;
            rg[2 * at] = g ? all : 0, rg[2 * at + 1] = g ? 0 : all;
            nan[at] = g ? 0 : (cl_uint)counts[1 + c];
        }
    }
    /* Blocking writes, each: the host arrays are freed below, and a blocking write waits only
     * for its own data to be copied, not for the writes before it (Intel's CPU runtime returns
     * before those ran; src/select/select.c, struct run). */
    if (status == CLSTATS_OK)
        status = clstats__cl_check(
            ctx,
            clEnqueueWriteBuffer(ctx->queue, nans, CL_TRUE, 0, n * sizeof *nan, nan, 0, NULL, NULL),
            "writing the NaN counts");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueWriteBuffer(ctx->queue, range, CL_TRUE, 0,
                                                        2 * n * sizeof *rg, rg, 0, NULL, NULL),
                                   "writing the ranges");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(
            ctx, clEnqueueWriteBuffer(ctx->queue, ranks, CL_TRUE, 0, cols * sizeof *rk, rk, 0,
                                      NULL, NULL),
            "writing the ranks");
    free(nan), free(rg), free(rk), free(counts);
    return status;
}

/* Over parts, after a pass's split_hist: every column's histogram summed over the parts (one
 * message of 256 counts a column). */
static int parts_hist(clstats_ctx *ctx, const struct split_parts *sp, size_t cols, cl_mem hist)
{
    const size_t n = cols * 256;
    cl_uint *h = malloc(n * sizeof *h);
    uint64_t *counts = calloc(1 + n, sizeof *counts);
    int status = h && counts ? CLSTATS_OK : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "a histogram");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, hist, CL_TRUE, 0, n * sizeof *h,
                                                       h, 0, NULL, NULL),
                                   "reading the histograms");
    for (size_t i = 0; status == CLSTATS_OK && i < n; i++) counts[1 + i] = h[i];
    status = sp->parts->sum_counts(sp->parts->user, status == CLSTATS_OK ? counts : NULL, 1 + n,
                                   status);
    for (size_t i = 0; status == CLSTATS_OK && i < n; i++) h[i] = (cl_uint)counts[1 + i];
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueWriteBuffer(ctx->queue, hist, CL_TRUE, 0,
                                                        n * sizeof *h, h, 0, NULL, NULL),
                                   "writing the histograms");
    free(h), free(counts);
    return status;
}

/* Over parts, once the walk has found every column's key (the state on the device): the sums
 * below it of the part's whole blocks (struct column_block_sums) by split_below on those rows
 * alone, whose blocks then start where the one-device call's do. */
static int parts_block_sums(clstats_ctx *ctx, cl_kernel kb, bool f64, long wg, cl_mem buf,
                            size_t off, size_t cstep, size_t rstep, size_t rows, size_t cols,
                            cl_mem state, struct column_block_sums *bs)
{
    const size_t into = (size_t)(bs->row0 % COLUMN_BLOCK);
    bs->head = into ? COLUMN_BLOCK - into : 0;
    if (bs->head > rows) bs->head = rows;
    bs->blocks = (rows - bs->head) / COLUMN_BLOCK;
    bs->sums = NULL;
    for (size_t c = 0; c < cols; c++) bs->below[c] = 0;
    if (!bs->blocks || !cols) return CLSTATS_OK;
    const size_t blocks = bs->blocks, es = f64 ? 8 : 4;
    size_t per = blocks * cols / (8 * (size_t)ctx->compute_units);
    if (per < 1) per = 1;
    if (per > blocks) per = blocks;
    const size_t groups = (blocks + per - 1) / per;
    cl_mem counts, bsums;
    cl_uint *cnt = malloc(groups * cols * 2 * sizeof *cnt);
    void *raw = malloc(blocks * cols * es);
    bs->sums = malloc(blocks * cols * sizeof *bs->sums);
    int status = cnt && raw && bs->sums ? CLSTATS_OK
                                        : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the block sums");
    if (status == CLSTATS_OK &&
        !(status = clstats__scratch(ctx, "columns.parts_counts", groups * cols * 8, &counts)) &&
        !(status = clstats__scratch(ctx, "columns.parts_sums", blocks * cols * es, &bsums))) {
        const cl_ulong o = off + bs->head * rstep, cs = cstep, rs = rstep;
        const cl_uint nrows = (cl_uint)(blocks * COLUMN_BLOCK), nper = (cl_uint)per,
                      nblocks = (cl_uint)blocks;
        const size_t local[2] = {(size_t)wg, 1}, global[2] = {groups * (size_t)wg, cols};
        if ((status = CLSTATS_SET_ARGS(ctx, kb, "clSetKernelArg(split_below)", KERNEL_ARG(buf),
                                       KERNEL_ARG(o), KERNEL_ARG(cs), KERNEL_ARG(rs),
                                       KERNEL_ARG(nrows), KERNEL_ARG(nper), KERNEL_ARG(state),
                                       KERNEL_ARG(nblocks), KERNEL_ARG(counts),
                                       KERNEL_ARG(bsums))) ||
            (status = clstats__launch(ctx, kb, 2, NULL, global, local, "split_below")))
            goto fail;
        CL_TRY(ctx,
               clEnqueueReadBuffer(ctx->queue, counts, CL_FALSE, 0, groups * cols * 2 * sizeof *cnt,
                                   cnt, 0, NULL, NULL),
               "reading the block counts");
        CL_TRY(ctx,
               clEnqueueReadBuffer(ctx->queue, bsums, CL_TRUE, 0, blocks * cols * es, raw, 0, NULL,
                                   NULL),
               "reading the block sums");
        for (size_t c = 0; c < cols; c++)
            for (size_t g = 0; g < groups; g++) bs->below[c] += cnt[2 * (c * groups + g)];
        for (size_t i = 0; i < blocks * cols; i++)
            bs->sums[i] = f64 ? ((const double *)raw)[i] : (double)((const float *)raw)[i];
    }
fail:
    if (status != CLSTATS_OK) {
        free(bs->sums);
        bs->sums = NULL;
    }
    free(cnt), free(raw);
    return status;
}

/* The split design (kernels/select/column_ranks_split.cl), with the one-group design's
 * arguments: its passes run on the device, the walk's state between them kept there. Over
 * parts (sp), the NaN counts and every pass's histograms are summed over the parts, and the
 * k-th keys and NaN counts come back to the host (sp->keys, sp->nans); the counts and sums
 * below them are the caller's. */
static int split_columns(clstats_ctx *ctx, cl_program program, bool f64, long wg, cl_mem buf,
                         size_t off, size_t cstep, size_t rstep, size_t rows, size_t cols,
                         cl_mem ranks, cl_mem stats, cl_mem sums, const struct split_parts *sp)
{
    const size_t blocks = rows ? (rows + COLUMN_BLOCK - 1) / COLUMN_BLOCK : 1;
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
    /* the walk's `done` counts all parts' rows */
    const cl_uint start_rows = sp ? (cl_uint)sp->rows_total : nrows;
    cl_kernel with_rows[] = {kr, kh, kb};
    for (int i = 0; i < 3; i++) {
        status = CLSTATS_SET_ARGS(ctx, with_rows[i], "clSetKernelArg(split's rows)",
                                  KERNEL_ARG(buf), KERNEL_ARG(o), KERNEL_ARG(cs), KERNEL_ARG(rs),
                                  KERNEL_ARG(nrows), KERNEL_ARG(nper));
        if (status != CLSTATS_OK) goto fail;
    }
    CL_ARG(kr, 6, range);
    CL_ARG(kr, 7, nans);
    status = CLSTATS_SET_ARGS(ctx, ks, "clSetKernelArg(split_start)", KERNEL_ARG(range),
                              KERNEL_ARG(nans), KERNEL_ARG(ngroups), KERNEL_ARG(start_rows),
                              KERNEL_ARG(ncols), KERNEL_ARG(ranks), KERNEL_ARG(state),
                              KERNEL_ARG(hist));
    if (status != CLSTATS_OK) goto fail;
    CL_ARG(kh, 6, state);
    CL_ARG(kh, 8, hist);
    CL_ARG(kp, 0, hist);
    CL_ARG(kp, 2, state);
    CL_ARG(kb, 6, state);
    CL_ARG(kb, 7, nblocks);
    CL_ARG(kb, 8, counts);
    CL_ARG(kb, 9, bsums);
    status = CLSTATS_SET_ARGS(ctx, kf, "clSetKernelArg(split_finish)", KERNEL_ARG(state),
                              KERNEL_ARG(counts), KERNEL_ARG(bsums), KERNEL_ARG(ngroups),
                              KERNEL_ARG(nblocks), KERNEL_ARG(ncols), KERNEL_ARG(stats),
                              KERNEL_ARG(sums));
    if (status != CLSTATS_OK) goto fail;
    const size_t local[2] = {(size_t)wg, 1}, global[2] = {groups * (size_t)wg, cols};
    const size_t one = 64, per_col = (cols + 63) / 64 * 64, bins = 256, pick = cols * 256;
    if ((status = clstats__launch(ctx, kr, 2, NULL, global, local, "split_range")) ||
        (sp && (status = parts_start(ctx, sp, f64, groups, cols, range, nans, ranks))) ||
        (status = clstats__launch(ctx, ks, 1, NULL, &per_col, &one, "split_start")))
        return status;
    /* Every pass a key may need; a column's walk ends earlier where its keys share high bits,
     * and the passes after it return at once. */
    for (cl_uint pass = 0; pass < (f64 ? 64u : 32u) / 8; pass++) {
        CL_ARG(kh, 7, pass);
        CL_ARG(kp, 1, pass);
        if ((status = clstats__launch(ctx, kh, 2, NULL, global, local, "split_hist")) ||
            (sp && (status = parts_hist(ctx, sp, cols, hist))) ||
            (status = clstats__launch(ctx, kp, 1, NULL, &pick, &bins, "split_pick")))
            return status;
    }
    if (sp) {
        cl_ulong *st = malloc(cols * 4 * sizeof *st);
        if (!st) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the columns' state");
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, state, CL_TRUE, 0,
                                                       cols * 4 * sizeof *st, st, 0, NULL, NULL),
                                   "reading the columns' state");
        const uint64_t none = f64 ? ~0ull : 0xffffffffu;
        for (size_t c = 0; status == CLSTATS_OK && c < cols; c++)
            sp->keys[c] = (st[4 * c + 3] >> 8) ? none : st[4 * c];
        free(st);
        if (status == CLSTATS_OK && sp->bs)
            status = parts_block_sums(ctx, kb, f64, wg, buf, off, cstep, rstep, rows, cols, state,
                                      sp->bs);
        return status;
    }
    if ((status = clstats__launch(ctx, kb, 2, NULL, global, local, "split_below")) ||
        (status = clstats__launch(ctx, kf, 1, NULL, &per_col, &one, "split_finish")))
        return status;
fail:
    return status;
}

/* columns.wg: one work-item a column on CPU devices, several on GPUs (src/core/tuning.c);
 * at most 256, as the kernel's local arrays hold one entry per item and its sum lanes (256)
 * must be a multiple of the work-group size. */
static int column_wg(clstats_ctx *ctx, long *out)
{
    long wg = clstats__tuned(ctx, P_COLUMNS_WG);
    if (wg > 256) wg = 256;
    if ((size_t)wg > ctx->max_work_group) wg = (long)ctx->max_work_group;
    if (wg < 1 || (wg & (wg - 1))) return clstats__fail(ctx, CLSTATS_ERR_ARG, "bad columns.wg");
    *out = wg;
    return CLSTATS_OK;
}

/* The program of one design, split or not, for the dtype and work-group size. */
static int column_program(clstats_ctx *ctx, bool f64, bool split, long wg, cl_program *program)
{
    char options[128];
    /* -D ORDERED_SUMS on CPU devices: see block_below in kernels/select/rank_keys.cl. */
    snprintf(options, sizeof options, "-D REAL=%s%s -D WG=%ld -D BLOCK=%d%s",
             f64 ? "double" : "float", f64 ? " -D CLSTATS_FP64" : "", wg, COLUMN_BLOCK,
             ctx->is_cpu ? " -D ORDERED_SUMS" : "");
    return clstats__program(ctx, split ? "column_ranks_split.cl" : "column_ranks.cl", options,
                            program);
}

int clstats__column_ranks(clstats_ctx *ctx, bool f64, cl_mem buf, size_t off, size_t cstep,
                          size_t rstep, size_t rows, size_t cols, cl_mem ranks, cl_mem stats,
                          cl_mem sums)
{
    if (f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the device has no float64");
    if (rows > UINT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "columns of %zu rows are too long", rows);
    long wg = 1;
    int wst = column_wg(ctx, &wg);
    if (wst != CLSTATS_OK) return wst;
    /* columns.split: auto splits columns of several blocks on GPUs when there are too few of
     * them to give every compute unit a few work-groups; not on CPU devices, where its twenty
     * launches a selection cost more than the one work-item a column loses (RESULTS "LTS
     * regression (issue 21): split columns"). Both designs give the same bits. */
    const long split = clstats__tuned(ctx, P_COLUMNS_SPLIT);
    const bool split_them = split == SWITCH_ON ||
                            (split == AUTO && !ctx->is_cpu && rows >= 2 * COLUMN_BLOCK &&
                             cols < 4 * (size_t)ctx->compute_units);
    cl_program program;
    cl_kernel k;
    int status = column_program(ctx, f64, split_them, wg, &program);
    if (status == CLSTATS_OK && split_them)
        return split_columns(ctx, program, f64, wg, buf, off, cstep, rstep, rows, cols, ranks,
                             stats, sums, NULL);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, program, "column_ranks", &k);
    if (status != CLSTATS_OK) return status;
    const cl_ulong o = off, cs = cstep, rs = rstep;
    const cl_uint nrows = (cl_uint)rows;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(column_ranks)", KERNEL_ARG(buf),
                              KERNEL_ARG(o), KERNEL_ARG(cs), KERNEL_ARG(rs), KERNEL_ARG(nrows),
                              KERNEL_ARG(ranks), KERNEL_ARG(stats), KERNEL_ARG(sums));
    if (status != CLSTATS_OK) goto fail;
    const size_t local = (size_t)wg, global = cols * local;
    status = clstats__launch(ctx, k, 1, NULL, &global, &local, "column_ranks");
fail:
    return status;
}

int clstats__columns_status(clstats_ctx *ctx, uint64_t nan, enum clstats_nan_policy policy,
                            uint64_t short_cols)
{
    if (nan && policy == CLSTATS_NAN_ERROR)
        return clstats__fail(ctx, CLSTATS_ERR_NAN, "%llu NaN values in the matrix",
                             (unsigned long long)nan);
    if (short_cols)
        return clstats__fail(ctx, CLSTATS_ERR_EMPTY,
                             "%llu columns have fewer valid values than their k (NaN there)",
                             (unsigned long long)short_cols);
    return CLSTATS_OK;
}

int clstats__column_ranks_parts(clstats_ctx *ctx, const struct clstats_array *part,
                                const struct select_parts *parts, const uint64_t *ranks,
                                int median, uint64_t *keys, uint64_t *nans,
                                struct column_block_sums *bs)
{
    const bool f64 = part->dtype == CLSTATS_FLOAT64;
    const size_t cols = part->nx, rows = part->nx ? part->ny : 0;
    const struct split_parts sp = {parts, parts->n_total, ranks, median, keys, nans, bs};
    if (f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the device has no float64");
    if (parts->n_total > UINT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "columns of %llu rows are too long",
                             (unsigned long long)parts->n_total);
    long wg = 1;
    cl_program program;
    cl_mem buf = NULL, rbuf, sbuf, ubuf;
    size_t off = 0;
    bool owned = false;
    clstats__begin(ctx);
    int status = column_wg(ctx, &wg);
    if (status == CLSTATS_OK) status = column_program(ctx, f64, true, wg, &program);
    if (status == CLSTATS_OK)
        status = rows ? clstats__array_in(ctx, part, false, &buf, &off, &owned)
                      : clstats__scratch(ctx, "columns.no_rows", 8, &buf);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "columns.ranks", cols * sizeof(cl_ulong), &rbuf);
    /* the split design's counts and sums below, which parts leave to the caller */
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "columns.rank_stats", cols * 4 * sizeof(cl_ulong), &sbuf);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "columns.rank_sums", cols * (f64 ? 8 : 4), &ubuf);
    if (status == CLSTATS_OK)
        status = split_columns(ctx, program, f64, wg, buf, off, 1, clstats__array_stride(part),
                               rows, cols, rbuf, sbuf, ubuf, &sp);
    status = clstats__end(ctx, status);
    if (owned) clReleaseMemObject(buf);
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
    if (status == CLSTATS_OK) status = clstats__columns_status(ctx, nan, o.nan_policy, short_cols);
    free(stats), free(ranks), free(sums);
    return status;
}
