/* columns.c - column medians and the batched selections (a rank of its own per column, the sum
 * of the k smallest) of a matrix whose rows are spread over MPI ranks (include/clstats/mpi.h).
 * All columns are selected at once by src/select/column_ranks.c's batched selection on the
 * rank's rows through select_internal.h (clstats__column_ranks_parts), its NaN counts and
 * histograms summed over the ranks through the call's link (link.c), so every answer is the
 * one-device answer. The sums below
 * the k-th values follow the one-device order (select.h: clstats_column_smallest), which runs
 * along the rows: the ranks take it in turn, each handing the next the column's running sum and
 * its open block's lanes, so no sum is ever split in an order the one-device call would not
 * take. */
#include "../select/select_internal.h"
#include "mpi_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The one-device order of a column's sum below t (kernels/select/rank_keys.cl; fixed, not
 * tuned): blocks of SUM_BLOCK rows, row r in lane r mod SUM_LANES. */
#define SUM_BLOCK COLUMN_BLOCK
#define SUM_LANES 256

/* A column's sum below its k-th value as the rank hands it on: the rows taken so far, the sum
 * of their closed blocks, the count below and the open block's lanes (doubles: every float32
 * partial is exactly one). */
enum { SUM_ROW, SUM_CLOSED, SUM_BELOW, SUM_LANE0, SUM_WORDS = SUM_LANE0 + SUM_LANES };

struct column_call {
    const struct clstats_array *m;
    bool kth;          /* the k-th values (and sums), else the medians */
    const uint64_t *k; /* one a column, 1-based */
    double *out, *sum;
};

/* A rank's own checks, before any message. */
static int check_part(clstats_ctx *ctx, const struct column_call *cc,
                      const struct clstats_select_options *opts)
{
    if (!ctx) return CLSTATS_ERR_ARG;
    const struct clstats_array *m = cc->m;
    if (!m || !cc->out || (cc->kth && !cc->k))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the matrix, k or out is NULL");
    const int status = clstats__mpi_check_part(ctx, m, opts);
    if (status != CLSTATS_OK) return status;
    if (m->nx && m->ny) return clstats__array_check(ctx, m, "the part", NULL);
    return CLSTATS_OK;
}

/* Rows first .. first + count of the part in host memory, *ld elements apart (*copy to free,
 * or NULL where the caller's are used; *rows NULL where count is 0). */
static int rows_on_host(clstats_ctx *ctx, const struct clstats_array *m, size_t first,
                        size_t count, const void **rows, size_t *ld, void **copy)
{
    const size_t es = m->dtype == CLSTATS_FLOAT64 ? 8 : 4;
    *copy = NULL;
    *rows = NULL;
    *ld = clstats__array_stride(m);
    if (!count) return CLSTATS_OK;
    if (m->host) {
        *rows = (const char *)m->host + first * *ld * es;
        return CLSTATS_OK;
    }
    const size_t bytes = ((count - 1) * *ld + m->nx) * es;
    if (!(*copy = malloc(bytes))) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the part's rows");
    *rows = *copy;
    return clstats__cl_check(ctx,
                             clEnqueueReadBuffer(ctx->queue, m->buffer, CL_TRUE,
                                                 (m->offset + first * *ld) * es, bytes, *copy, 0,
                                                 NULL, NULL),
                             "reading the part");
}

static uint64_t key_of(const void *rows, size_t i, bool f64, bool *nan)
{
    uint64_t b;
    if (f64) {
        memcpy(&b, (const double *)rows + i, 8);
        *nan = (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
        return (b >> 63) ? ~b : b | 0x8000000000000000ull;
    }
    uint32_t w;
    memcpy(&w, (const float *)rows + i, 4);
    *nan = (w & 0x7fffffffu) > 0x7f800000u;
    return (w >> 31) ? (uint32_t)~w : (w | 0x80000000u);
}

/* The lanes of a block added in lane order, then to the closed blocks: the one-device sums,
 * in float where the data is float32. */
static void close_block(double *s, bool f64)
{
    if (f64) {
        double block = s[SUM_LANE0];
        for (int j = 1; j < SUM_LANES; j++)
            block += s[SUM_LANE0 + j];
        s[SUM_CLOSED] += block;
    } else {
        float block = (float)s[SUM_LANE0];
        for (int j = 1; j < SUM_LANES; j++)
            block += (float)s[SUM_LANE0 + j];
        s[SUM_CLOSED] = (double)((float)s[SUM_CLOSED] + block);
    }
    for (int j = 0; j < SUM_LANES; j++)
        s[SUM_LANE0 + j] = 0;
}

/* This rank's rows added to every column's state (cols x SUM_WORDS, the rows before them
 * already in): values below the column's t key (a column whose tkey is ~0, without a k-th
 * value, is left as it is: its sum is NaN). Row by row, as the rows lie in memory (a column at a
 * time strides through the whole part once per column); each column's own additions keep
 * their order, so its sum is the same. */
static void add_rows(double *state, const void *rows, size_t nrows, size_t cols, size_t ld,
                     const uint64_t *tkey, bool f64)
{
    const uint64_t g0 = cols ? (uint64_t)state[SUM_ROW] : 0; /* the same in every column */
    for (size_t r = 0; r < nrows; r++) {
        const uint64_t g = g0 + r;
        for (size_t c = 0; c < cols; c++) {
            double *s = state + c * SUM_WORDS;
            if (tkey[c] == ~0ull) continue;
            if (g % SUM_BLOCK == 0 && g) close_block(s, f64);
            bool nan;
            const uint64_t key = key_of(rows, r * ld + c, f64, &nan);
            if (nan || key >= tkey[c]) continue;
            double *lane = &s[SUM_LANE0 + g % SUM_LANES];
            if (f64)
                *lane += ((const double *)rows)[r * ld + c];
            else
                *lane = (double)((float)*lane + ((const float *)rows)[r * ld + c]);
            s[SUM_BELOW] += 1;
        }
    }
    for (size_t c = 0; c < cols; c++) /* every column, so that g0 is any column's */
        state[c * SUM_WORDS + SUM_ROW] = (double)(g0 + nrows);
}

/* The part's whole blocks, whose sums the device gave (bs), added to every column's state
 * after the rows before them: the block before closed (as add_rows closes it at the first
 * block's first row), the blocks' sums added in block order, and the last left open with its
 * sum in lane 0, so that closing it (the lanes added in lane order: that sum, then zeros) adds
 * that sum, as the one-device order does. */
static void add_blocks(double *state, const struct column_block_sums *bs, size_t cols,
                       const uint64_t *tkey, bool f64)
{
    const uint64_t g0 = cols ? (uint64_t)state[SUM_ROW] : 0; /* a multiple of SUM_BLOCK */
    for (size_t c = 0; c < cols; c++) {
        double *s = state + c * SUM_WORDS;
        s[SUM_ROW] = (double)(g0 + bs->blocks * SUM_BLOCK);
        if (tkey[c] == ~0ull) continue;
        if (g0) close_block(s, f64);
        const double *block = bs->sums + c * bs->blocks;
        for (size_t b = 0; b + 1 < bs->blocks; b++)
            s[SUM_CLOSED] = f64 ? s[SUM_CLOSED] + block[b]
                                : (double)((float)s[SUM_CLOSED] + (float)block[b]);
        s[SUM_LANE0] = block[bs->blocks - 1];
        s[SUM_BELOW] += (double)bs->below[c];
    }
}

/* The sums below each column's t key, in the one-device order: rank 0's rows first, each rank
 * continuing from the state the one before hands it (its rows before its first whole block,
 * the whole blocks' sums from its device, bs, and its rows after them), the last closing the
 * open blocks and telling every rank the sums and counts (below[c], sums[c]). */
static int sums_along_ranks(struct mpi_link *link, const struct clstats_array *m, size_t cols,
                            const uint64_t *tkey, const struct column_block_sums *bs,
                            double *sums, uint64_t *below)
{
    clstats_ctx *ctx = link->ctx;
    const bool f64 = m->dtype == CLSTATS_FLOAT64;
    const size_t words = cols * SUM_WORDS;
    const size_t nrows = m->nx ? m->ny : 0, after = bs->head + bs->blocks * SUM_BLOCK;
    double *state = calloc(words + 2 * cols + 1, sizeof *state), *result = state + words;
    const void *head = NULL, *tail = NULL;
    void *head_copy = NULL, *tail_copy = NULL;
    size_t ld = 0;
    int status = state ? rows_on_host(ctx, m, 0, bs->head, &head, &ld, &head_copy)
                       : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the sums' state");
    if (status == CLSTATS_OK)
        status = rows_on_host(ctx, m, after, nrows - after, &tail, &ld, &tail_copy);
    /* Whether every rank can take its turn (after this no rank fails), in a count message, the
     * kind a rank that failed after the selections' last message sends. */
    status = clstats__mpi_sum_counts(link, NULL, 0, status);
    if (status == CLSTATS_OK && words) {
        if (link->rank > 0) {
            MPI_Recv(state, (int)words, MPI_DOUBLE, link->rank - 1, 0, link->comm,
                     MPI_STATUS_IGNORE);
        }
        add_rows(state, head, bs->head, cols, ld, tkey, f64);
        if (bs->blocks) add_blocks(state, bs, cols, tkey, f64);
        add_rows(state, tail, nrows - after, cols, ld, tkey, f64);
        if (link->rank + 1 < link->size) {
            MPI_Send(state, (int)words, MPI_DOUBLE, link->rank + 1, 0, link->comm);
            clstats__mpi_count(link, words * sizeof *state);
        }
        if (link->rank == link->size - 1)
            for (size_t c = 0; c < cols; c++) {
                double *s = state + c * SUM_WORDS;
                if (s[SUM_ROW] > 0) close_block(s, f64);
                result[2 * c] = s[SUM_CLOSED];
                result[2 * c + 1] = s[SUM_BELOW];
            }
        MPI_Bcast(result, (int)(2 * cols), MPI_DOUBLE, link->size - 1, link->comm);
        clstats__mpi_count(link, link->rank == link->size - 1 ? 2 * cols * sizeof *result : 0);
        for (size_t c = 0; c < cols; c++) {
            sums[c] = result[2 * c];
            below[c] = (uint64_t)result[2 * c + 1];
        }
    }
    free(head_copy);
    free(tail_copy);
    free(state);
    return status;
}

/* The median of a column from the keys of its middles, as clstats_column_medians (float32)
 * and clstats_median_f64 (float64) give it. */
static double median_of(uint64_t ka, uint64_t kb, bool f64, enum clstats_even even)
{
    const double a = clstats__value_of_key(ka, f64), b = clstats__value_of_key(kb, f64);
    double m = ka == kb || even == CLSTATS_EVEN_LOWER ? a
               : even == CLSTATS_EVEN_UPPER           ? b
               : f64                                  ? clstats__mean_f64(a, b)
                     : (double)clstats__mean_f32((float)a, (float)b);
    return f64 ? clstats__plus_zero(m) : (double)(float)clstats__plus_zero(m);
}

static int distributed(clstats_ctx *ctx, MPI_Comm comm, const struct column_call *cc,
                       const struct clstats_select_options *opts,
                       struct clstats_mpi_traffic *traffic)
{
    const struct clstats_array *m = cc->m;
    const size_t cols = m ? m->nx : 0;
    for (size_t c = 0; cc->out && c < cols; c++)
        cc->out[c] = NAN;
    for (size_t c = 0; cc->sum && c < cols; c++)
        cc->sum[c] = NAN;
    int status = check_part(ctx, cc, opts);
    const bool f64 = m && m->dtype == CLSTATS_FLOAT64;
    const enum clstats_even even = opts ? opts->even : CLSTATS_EVEN_MEAN;
    /* Every rank names the same columns (their low 24 bits here) and dtype. */
    const uint32_t same = (uint32_t)(cols & 0xffffff) << 1 | f64;
    /* the keys of the k-th values (or the lower middles), of the upper middles, the NaNs, the
     * ranks, the sums and counts below */
    uint64_t *tkey = malloc((cols ? cols : 1) * 6 * sizeof *tkey), *hkey = tkey + cols,
             *nans = hkey + cols, *ranks = nans + cols, *below = ranks + cols;
    /* the sums of the rank's whole blocks, below the k-th values, from its device */
    struct column_block_sums bs = {.below = below + cols};
    double *sums = malloc((cols ? cols : 1) * sizeof *sums);
    if ((!tkey || !sums) && status == CLSTATS_OK)
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the columns' keys");
    struct mpi_link link;
    uint64_t rows_total = 0;
    /* A message holds an unused first count and a count a column (the NaNs) or a histogram of
     * 256 a column (a pass). */
    status =
        clstats__mpi_open(&link, ctx, comm, 1 + 256 * cols, 0, status,
                          status == CLSTATS_OK && cols ? m->ny : 0, same, false, &rows_total, NULL);
    if (status == CLSTATS_OK && cc->sum) { /* where the rank's rows start among all */
        uint64_t mine = cols ? m->ny : 0, before = 0;
        MPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
        clstats__mpi_count(&link, sizeof mine);
        bs.row0 = link.rank ? before : 0; /* rank 0's result is undefined */
    }
    for (size_t c = 0; status == CLSTATS_OK && cc->kth && c < cols; c++) {
        if (cc->k[c] == 0 || cc->k[c] > rows_total)
            status = clstats__fail(ctx, CLSTATS_ERR_ARG, "k[%zu] = %llu is not in [1, %llu]", c,
                                   (unsigned long long)cc->k[c], (unsigned long long)rows_total);
        else
            ranks[c] = cc->k[c] - 1;
    }
    /* Every column at once, radix over the ranks (src/select/column_ranks.c's split design);
     * the median's middles in two walks (one where the even rule takes one). */
    const struct select_parts parts = {
        clstats__mpi_sum_counts, &link, rows_total, false, link.rank, link.size, false, NULL};
    if (status == CLSTATS_OK && cols) {
        if (cc->kth)
            status = clstats__column_ranks_parts(ctx, m, &parts, ranks, 0, tkey, nans,
                                                 cc->sum ? &bs : NULL);
        else if (even != CLSTATS_EVEN_UPPER)
            status = clstats__column_ranks_parts(ctx, m, &parts, NULL, 1, tkey, nans, NULL);
        if (status == CLSTATS_OK && !cc->kth && even != CLSTATS_EVEN_LOWER)
            status = clstats__column_ranks_parts(ctx, m, &parts, NULL, 2, hkey, nans, NULL);
        /* a rank that failed between messages tells the others in their next one */
        status = clstats__mpi_sum_counts(&link, NULL, 0, status);
    }
    const uint64_t none = f64 ? ~0ull : 0xffffffffull;
    uint64_t nan = 0, short_cols = 0;
    for (size_t c = 0; status == CLSTATS_OK && c < cols; c++) {
        nan += nans[c];
        if (!cc->kth) {
            if (nans[c] < rows_total)
                cc->out[c] = median_of(even == CLSTATS_EVEN_UPPER ? hkey[c] : tkey[c],
                                       even == CLSTATS_EVEN_LOWER ? tkey[c] : hkey[c], f64, even);
            continue;
        }
        if (tkey[c] == none) {
            short_cols++;
            tkey[c] = ~0ull; /* no k-th value: the sum stays NaN */
            continue;
        }
        cc->out[c] = clstats__plus_zero(clstats__value_of_key(tkey[c], f64));
    }
    if (status == CLSTATS_OK && cc->sum) {
        status = sums_along_ranks(&link, m, cols, tkey, &bs, sums, below);
        for (size_t c = 0; status == CLSTATS_OK && c < cols; c++) {
            if (tkey[c] == ~0ull) continue;
            const uint64_t stats[4] = {tkey[c], 0, below[c], 0};
            cc->sum[c] = clstats__smallest_sum(stats, sums[c], cc->k[c], f64);
        }
    }
    if (status == CLSTATS_OK && opts && opts->nan_count) *opts->nan_count = nan;
    if (status == CLSTATS_OK)
        status = clstats__columns_status(ctx, nan, opts ? opts->nan_policy : CLSTATS_NAN_OMIT,
                                         short_cols);
    status = clstats__mpi_close(&link, status, traffic);
    free(bs.sums);
    free(tkey);
    free(sums);
    return status;
}

int clstats_mpi_column_medians(clstats_ctx *ctx, MPI_Comm comm, const struct clstats_array *part,
                               const struct clstats_select_options *opts, double *out,
                               struct clstats_mpi_traffic *traffic)
{
    const struct column_call cc = {part, false, NULL, out, NULL};
    return distributed(ctx, comm, &cc, opts, traffic);
}

int clstats_mpi_column_smallest(clstats_ctx *ctx, MPI_Comm comm, const struct clstats_array *part,
                                const uint64_t *k, const struct clstats_select_options *opts,
                                double *kth, double *sum, struct clstats_mpi_traffic *traffic)
{
    const struct column_call cc = {part, true, k, kth, sum};
    return distributed(ctx, comm, &cc, opts, traffic);
}
