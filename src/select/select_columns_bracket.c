/* select_columns_bracket.c - column medians on GPUs through a sample bracket per column
 * (kernels/column_bracket.cl): one coalesced read of the matrix where the radix kernel needs a
 * transposed copy and four dependent passes. Columns whose bracket misses are reported, and
 * the caller (src/select/select_columns.c) takes theirs from the radix kernel. */
#include "internal.h"
#include "select_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernels get these as build options. */
#define BRACKET_SIGMAS 5.0
#define COLS_PER_GROUP 32
#define NCOUNT 5 /* counts per column and slice (kernels/column_bracket.cl, the enum) */
#define MAX_SLICES 256

/* How the kernels are built and launched for one matrix shape. */
struct bracket_shape {
    long sample, sample_wg, cells, row_lanes, chunk_rows, finish_wg, finish_cap, groups;
    size_t nslices, slice_rows, room;
};

/* The defaults (the tuning table's bracket.*, src/core/tuning.c) are for the long columns GPUs take
 * this path for (H100 sweeps at 32768 and 10^5 rows, bench/RESULTS.md): a sample of 2048
 * keeps about 11% of a column, in 256 cells of some 45 keys; count groups of 8 lanes by 32
 * columns copying every 256 rows, about four thousand of them. Tests force the path on small
 * matrices with small samples. */
static int bracket_shape(clstats_ctx *ctx, size_t rows, size_t cols, struct bracket_shape *s)
{
    long sample = 2048; /* at most a quarter of the rows, and at least 32 */
    while (sample > 32 && (size_t)sample > rows / 4)
        sample /= 2;
    s->sample = clstats__tuned(ctx, P_BRACKET_SAMPLE) ? clstats__tuned(ctx, P_BRACKET_SAMPLE)
                                                       : sample;
    s->sample_wg = clstats__tuned(ctx, P_BRACKET_SAMPLE_WG);
    if (!s->sample_wg) s->sample_wg = s->sample / 2 < 256 ? s->sample / 2 : 256;
    s->cells = clstats__tuned(ctx, P_BRACKET_CELLS);
    s->row_lanes = clstats__tuned(ctx, P_BRACKET_LANES);
    s->chunk_rows = clstats__tuned(ctx, P_BRACKET_CHUNK);
    s->finish_wg = clstats__tuned(ctx, P_BRACKET_FINISH_WG);
    s->finish_cap = clstats__tuned(ctx, P_BRACKET_FINISH_CAP);
    s->groups = clstats__tuned(ctx, P_BRACKET_GROUPS); /* of column_count */
#define POW2(x) ((x) > 0 && !((x) & ((x)-1)))
    if (!POW2(s->sample) || s->sample < 32 || !POW2(s->sample_wg) || s->sample_wg > s->sample / 2 ||
        (size_t)s->sample_wg > ctx->max_work_group || s->cells < 1 || s->cells > 1024 ||
        s->row_lanes < 1 || (size_t)(s->row_lanes * COLS_PER_GROUP) > ctx->max_work_group ||
        s->chunk_rows < s->row_lanes || s->chunk_rows % s->row_lanes || s->finish_wg < 4 ||
        (size_t)s->finish_wg > ctx->max_work_group || s->finish_cap < 1 || s->groups < 1)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "bad bracket.* tuning");
    const size_t ncb = (cols + COLS_PER_GROUP - 1) / COLS_PER_GROUP;
    size_t want = ((size_t)s->groups + ncb - 1) / ncb, most = (rows + 63) / 64;
    if (want > MAX_SLICES) want = MAX_SLICES;
    s->nslices = want < most ? want : most;
    s->slice_rows = (rows + s->nslices - 1) / s->nslices;
    s->nslices = (rows + s->slice_rows - 1) / s->slice_rows;
    /* A region holds a slice's keys inside the bracket: room for twice the expected number
     * (5 sigma of a median of `sample` either side, 2.5 sqrt(sample) sample ranks) and some. */
    const double inside = BRACKET_SIGMAS / sqrt((double)s->sample) + 6.0 / (double)s->sample;
    const double room = 2.0 * inside * (double)s->slice_rows + 32.0;
    s->room = room >= (double)s->slice_rows ? s->slice_rows : (size_t)room;
    return CLSTATS_OK;
}

/* Local memory of column_count and column_finish (as declared there, and some). */
static size_t count_local_bytes(const struct bracket_shape *s)
{
    const size_t words = (size_t)s->chunk_rows * (COLS_PER_GROUP + 1) +
                         (size_t)(2 * s->row_lanes + 1 + NCOUNT) * COLS_PER_GROUP;
    return words * sizeof(cl_uint);
}

static size_t finish_local_bytes(const struct bracket_shape *s)
{
    return (size_t)(2 * s->finish_cap + 3 * s->cells + s->cells / 8 + MAX_SLICES + 32) *
           sizeof(cl_uint);
}

/* Regions: one per column and slice. */
static size_t keys_bytes(const struct bracket_shape *s, size_t cols)
{
    return cols * s->nslices * s->room * sizeof(cl_uint);
}

/* The most listed keys this path allocates (as the radix path's transposed copy). */
#define KEYS_MAX_BYTES ((size_t)256 << 20)

/* PoCL 5.0's work-group compiler (its default method) gets column_count's counts wrong, where
 * PoCL 3.1 and 6.0 and NVIDIA's compiler get them right (bench/RESULTS.md, 2026-11-23): the path
 * is refused there, so that not even a forced run can give wrong medians. */
static bool compiler_known_bad(clstats_ctx *ctx)
{
    char version[256] = "";
    clGetPlatformInfo(ctx->platform, CL_PLATFORM_VERSION, sizeof version - 1, version, NULL);
    return strstr(version, "PoCL 5.") != NULL;
}

bool clstats__column_bracket_fits(clstats_ctx *ctx, size_t rows, size_t cols)
{
    struct bracket_shape s;
    if (compiler_known_bad(ctx)) return false;
    /* Bad tuning: let the run report it. */
    if (bracket_shape(ctx, rows, cols, &s) != CLSTATS_OK) return true;
    const size_t keys = keys_bytes(&s, cols);
    return count_local_bytes(&s) <= ctx->local_mem && finish_local_bytes(&s) <= ctx->local_mem &&
           keys <= ctx->max_alloc && keys <= KEYS_MAX_BYTES && rows <= UINT32_MAX &&
           cols <= UINT32_MAX;
}

int clstats__column_bracket(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows, size_t cols,
                            size_t ld, cl_uint *keys3, bool *missed,
                            struct column_bracket_report *report, double *ms)
{
    struct bracket_shape s;
    cl_program program;
    cl_kernel k_sample, k_count, k_finish;
    cl_mem bounds, counts, keys, res;
    cl_uint *out = NULL;
    const size_t first_event = clstats__event_mark(ctx);
    int status = bracket_shape(ctx, rows, cols, &s);
    if (status != CLSTATS_OK) return status;
    char options[256];
    snprintf(options, sizeof options,
             "-D SAMPLE=%ld -D SAMPLE_WG=%ld -D CELLS=%ld -D ROW_LANES=%ld -D CHUNK_ROWS=%ld "
             "-D FINISH_WG=%ld -D FINISH_CAP=%ld -D MAX_SLICES=%d -D BRACKET_SIGMAS=%.1ff "
             "-D COLS_PER_GROUP=%d",
             s.sample, s.sample_wg, s.cells, s.row_lanes, s.chunk_rows, s.finish_wg, s.finish_cap,
             MAX_SLICES, BRACKET_SIGMAS, COLS_PER_GROUP);
    if ((status = clstats__program(ctx, "column_bracket.cl", options, &program)) ||
        (status = clstats__kernel(ctx, program, "column_sample", &k_sample)) ||
        (status = clstats__kernel(ctx, program, "column_count", &k_count)) ||
        (status = clstats__kernel(ctx, program, "column_finish", &k_finish)) ||
        (status = clstats__scratch(ctx, "bracket.bounds", (size_t)(s.cells + 1) * cols * 4,
                                   &bounds)) ||
        (status = clstats__scratch(ctx, "bracket.counts", cols * s.nslices * NCOUNT * 4, &counts)) ||
        (status = clstats__scratch(ctx, "bracket.keys", keys_bytes(&s, cols), &keys)) ||
        (status = clstats__scratch(ctx, "bracket.results", cols * 4 * 4, &res)))
        return status;
    out = malloc(cols * 4 * sizeof *out);
    if (!out) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate %zu results", cols);

    const cl_ulong off = offset, ldl = ld;
    const cl_uint nrows = (cl_uint)rows, ncols = (cl_uint)cols, slice_rows = (cl_uint)s.slice_rows,
                  nslices = (cl_uint)s.nslices, room = (cl_uint)s.room;
    status = CLSTATS_SET_ARGS(ctx, k_sample, "clSetKernelArg(column_sample)", KERNEL_ARG(buf),
                              KERNEL_ARG(off), KERNEL_ARG(nrows), KERNEL_ARG(ncols),
                              KERNEL_ARG(ldl), KERNEL_ARG(bounds));
    if (status != CLSTATS_OK) goto fail;
    status = CLSTATS_SET_ARGS(ctx, k_count, "clSetKernelArg(column_count)", KERNEL_ARG(buf),
                              KERNEL_ARG(off), KERNEL_ARG(nrows), KERNEL_ARG(ncols),
                              KERNEL_ARG(ldl), KERNEL_ARG(slice_rows), KERNEL_ARG(bounds),
                              KERNEL_ARG(counts), KERNEL_ARG(keys), KERNEL_ARG(room));
    if (status != CLSTATS_OK) goto fail;
    status = CLSTATS_SET_ARGS(ctx, k_finish, "clSetKernelArg(column_finish)", KERNEL_ARG(bounds),
                              KERNEL_ARG(counts), KERNEL_ARG(keys), KERNEL_ARG(nrows),
                              KERNEL_ARG(ncols), KERNEL_ARG(nslices), KERNEL_ARG(room),
                              KERNEL_ARG(res));
    if (status != CLSTATS_OK) goto fail;
    const size_t ncb = (cols + COLS_PER_GROUP - 1) / COLS_PER_GROUP;
    const size_t wg[3] = {(size_t)s.sample_wg, (size_t)s.row_lanes * COLS_PER_GROUP,
                          (size_t)s.finish_wg};
    const size_t global[3] = {cols * wg[0], ncb * s.nslices * wg[1], cols * wg[2]};
    const cl_kernel kernel[3] = {k_sample, k_count, k_finish};
    static const char *const names[3] = {"column_sample", "column_count", "column_finish"};
    for (int i = 0; i < 3; i++)
        if ((status = clstats__launch(ctx, kernel[i], 1, NULL, &global[i], &wg[i], names[i])))
            goto fail;
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, res, CL_TRUE, 0, cols * 4 * sizeof *out, out, 0, NULL,
                               NULL),
           "clEnqueueReadBuffer(column results)");
    if (ms) *ms += clstats__events_ms(ctx, first_event);
    clstats__column_results(out, cols, keys3, missed, report);
    clstats__log(ctx,
                 "column bracket: %.4f ms; %zu slices of %zu rows, %zu columns missed, %.2f%% "
                 "listed",
                 clstats__events_ms(ctx, first_event), s.nslices, s.slice_rows, report->missed,
                 100.0 * (double)report->listed / (double)(rows * cols));
fail:
    if (status != CLSTATS_OK) clFinish(ctx->queue);
    free(out);
    return status;
}
