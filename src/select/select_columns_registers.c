/* select_columns_registers.c - column medians on GPUs in one launch that reads the matrix once
 * (kernels/column_registers.cl), each column's values held in its group's registers: for
 * columns of some thousands of rows, where the radix kernel's transposed copy and the bracket's
 * three launches cost more than the work; or streamed, a sample held in registers and the
 * matrix read in passes (the first lists what later rounds need), so that a group takes more
 * columns and the groups run in one wave. Columns it leaves open are reported, and the caller
 * (src/select/select_columns.c) takes theirs from the radix kernel. */
#include "internal.h"
#include "select_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most keys a work-item holds (the kernel's EACH_KEY names 64). At 64 registers already
 * spill on GPUs, yet the path still leads the radix kernel there (bench/RESULTS.md). */
#define VPT_MAX 64

/* How the kernel is built for one matrix shape. */
struct registers_shape {
    long cols, wg, sample_stride, log2_nb, sigmas, list_cap, max_rounds;
    long stream;   /* 0, or the loads in flight of a pass over the matrix (kernel's STREAM) */
    long pass_cap; /* keys a column the first pass lists, where it streams */
    size_t vpt;    /* keys a work-item holds: its column's, or where it streams a sample */
};

static size_t row_lanes(const struct registers_shape *s)
{
    return (size_t)(s->wg / s->cols);
}

size_t clstats__column_streamed_group(clstats_ctx *ctx, size_t cols)
{
    const size_t units = ctx->compute_units;
    if ((cols + 7) / 8 <= units && 10 * ((cols + 7) / 8) >= 6 * units) return 8;
    if ((cols + 3) / 4 <= units && 4 * ((cols + 3) / 4) >= 3 * units) return 4;
    return 0;
}

/* Sample keys a work-item holds, streaming: enough that the first range, about 2 SIGMAS
 * sample standard deviations of the median's rank wide, holds some 600 of the column's keys,
 * well inside the first pass's list (PASS_CAP, 1024), rounded to whole steps of the pass (8
 * loads), but at most HELD_MOST: beyond it, holding more keys stopped paying on the GPU sweeps
 * from 10^4 to 16384 rows (bench/RESULTS.md). Where more than 64 would be needed: 0, which
 * does not fit. */
#define HELD_MOST 44
static long held_for(size_t rows, long sigmas, size_t lanes)
{
    const double per_side = (double)rows * (double)(sigmas ? sigmas : 1) / 600.0;
    const double keys = per_side * per_side / (double)lanes;
    if (keys > VPT_MAX) return 0;
    const long held = keys <= 8 ? 8 : (long)(keys / 8 + 0.5) * 8;
    return held < HELD_MOST ? held : HELD_MOST;
}

/* The defaults (the tuning table's registers.*, src/core/tuning.c) are for 10^4 rows on the H100
 * (bench/RESULTS.md). Keys a work-item holds: the rows over the work-items down a column,
 * rounded up to a multiple of 4 (fewer programs to build); or, streaming, HELD sample keys.
 * Streaming, a group takes eight columns (a 32-byte segment of each row), and its local
 * memory goes mostly to the first pass's lists, so that it has fewer bins. */
static int registers_shape(clstats_ctx *ctx, size_t rows, size_t cols, bool streamed,
                           struct registers_shape *s)
{
    const size_t group = clstats__column_streamed_group(ctx, cols);
    /* A tuned value, or the path's own where the table says auto (0). */
#define TUNED_OR(id, fallback) (clstats__tuned(ctx, id) ? clstats__tuned(ctx, id) : (fallback))
    s->cols = TUNED_OR(P_REGISTERS_COLS, !streamed ? 4 : group ? (long)group : 8);
    const long wg = (long)ctx->max_work_group < 1024 ? (long)ctx->max_work_group : 1024;
    s->wg = TUNED_OR(P_REGISTERS_WG, wg);
    s->sample_stride = clstats__tuned(ctx, P_REGISTERS_SAMPLE_STRIDE);
    s->log2_nb = TUNED_OR(P_REGISTERS_LOG2_BINS, streamed ? 7 : 10);
    s->sigmas = TUNED_OR(P_REGISTERS_SIGMAS, streamed ? 3 : 4);
    s->list_cap = TUNED_OR(P_REGISTERS_CAP, streamed ? 128 : 256);
    s->max_rounds = clstats__tuned(ctx, P_REGISTERS_ROUNDS);
    s->stream = streamed ? clstats__tuned(ctx, P_REGISTERS_STREAM) : 0;
    s->pass_cap = clstats__tuned(ctx, P_REGISTERS_PASS_CAP);
    const long held = TUNED_OR(
        P_REGISTERS_HELD,
        s->cols > 0 && s->wg >= s->cols ? held_for(rows, s->sigmas, (size_t)(s->wg / s->cols)) : 8);
#undef TUNED_OR
#define POW2(x) ((x) > 0 && !((x) & ((x)-1)))
    if (s->cols < 1 || s->wg < 2 * s->cols || s->wg % s->cols || !POW2(s->wg / s->cols) ||
        (size_t)s->wg > ctx->max_work_group || s->sample_stride < 1 ||
        (s->wg / s->cols) % s->sample_stride || s->log2_nb < 5 || s->log2_nb > 12 ||
        s->sigmas < 0 || s->list_cap < 1 || s->max_rounds < 1 || (streamed && s->stream < 1) ||
        s->stream > 16 || s->pass_cap < 1 || held < 0 || held > VPT_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "bad registers.* tuning");
    s->vpt = (rows + row_lanes(s) - 1) / row_lanes(s);
    /* Streaming with no room for the sample (held 0): VPT_MAX + 1, which does not fit. */
    s->vpt = s->stream ? (held ? (size_t)held : VPT_MAX + 1) : (s->vpt + 3) / 4 * 4;
    return CLSTATS_OK;
}

/* Local memory of column_registers (as declared there, and some). */
static size_t registers_local_bytes(const struct registers_shape *s)
{
    const size_t nb = (size_t)1 << s->log2_nb;
    const size_t pass = s->stream ? (size_t)s->pass_cap + 8 : 0;
    const size_t chunks = nb >> (s->log2_nb / 2);
    const size_t per_col = row_lanes(s) + nb + chunks + (size_t)s->list_cap + 32 + pass;
    return ((size_t)s->cols * per_col + 16) * sizeof(cl_uint);
}

static bool fits(clstats_ctx *ctx, size_t rows, size_t cols, bool streamed)
{
    struct registers_shape s;
    /* Bad tuning: let the run report it. */
    if (registers_shape(ctx, rows, cols, streamed, &s) != CLSTATS_OK) return true;
    return s.vpt <= VPT_MAX && registers_local_bytes(&s) <= ctx->local_mem && cols <= UINT32_MAX;
}

static int run(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows, size_t cols, size_t ld,
               bool streamed, cl_uint *keys3, bool *missed, struct column_bracket_report *report,
               double *ms)
{
    struct registers_shape s;
    cl_program program;
    cl_kernel kernel;
    cl_mem res;
    cl_uint *out = NULL;
    const size_t first_event = clstats__event_mark(ctx);
    int status = registers_shape(ctx, rows, cols, streamed, &s);
    if (status != CLSTATS_OK) return status;
    if (s.vpt > VPT_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "columns of %zu rows are too long for %ld "
                             "work-items a column",
                             rows, s.wg / s.cols);
    char options[360], streaming[48] = "";
    if (s.stream)
        snprintf(streaming, sizeof streaming, " -D STREAM=%ld -D PASS_CAP=%ld", s.stream,
                 s.pass_cap);
    const long stop = clstats__tuned(ctx, P_REGISTERS_STOP); /* timing probes */
    char stop_option[32] = "";
    if (stop) snprintf(stop_option, sizeof stop_option, " -D STOP=%ld", stop);
    /* Every index the kernel forms, off + row ld + col, fits in 32 bits. */
    const bool index32 = clstats__tuned(ctx, P_REGISTERS_INDEX64) != SWITCH_ON &&
                         (rows == 0 || (rows - 1) * ld + cols + offset <= UINT32_MAX);
    /* NVIDIA from compute capability 8 takes a fetch-size hint on loads (inline PTX); a
     * driver that refuses it gets the plain loads, then and on every later call, without a
     * failing build each time. The tuning parameter registers.l2_hint (off, on) decides. */
    const long hint = clstats__tuned(ctx, P_REGISTERS_L2_HINT);
    bool l2_hint = hint ? hint == SWITCH_ON : ctx->nv_compute_major >= 8 && !ctx->load_hint_refused;
    for (;;) {
        snprintf(options, sizeof options,
                 "-D COLS=%ld -D WG=%ld -D SAMPLE_STRIDE=%ld -D VPT=%zu "
                 "-D LOG2_NB=%ld -D SIGMAS=%ld -D LIST_CAP=%ld -D MAX_ROUNDS=%ld%s%s%s%s",
                 s.cols, s.wg, s.sample_stride, s.vpt, s.log2_nb, s.sigmas, s.list_cap,
                 s.max_rounds, streaming, index32 ? " -D INDEX32" : "",
                 l2_hint ? " -D L2_HINT" : "", stop_option);
        status = clstats__program(ctx, "column_registers.cl", options, &program);
        if (status != CLSTATS_ERR_BUILD || !l2_hint) break;
        l2_hint = false;
        ctx->load_hint_refused = true;
    }
    if (status || (status = clstats__kernel(ctx, program, "column_registers", &kernel)) ||
        (status = clstats__scratch(ctx, "registers.results", cols * 4 * sizeof(cl_uint), &res)))
        return status;
    out = malloc(cols * 4 * sizeof *out);
    if (!out) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate %zu results", cols);

    const cl_ulong off = offset, ldl = ld;
    const cl_uint nrows = (cl_uint)rows, ncols = (cl_uint)cols;
    status = CLSTATS_SET_ARGS(ctx, kernel, "clSetKernelArg(column_registers)", KERNEL_ARG(buf),
                              KERNEL_ARG(off), KERNEL_ARG(nrows), KERNEL_ARG(ncols),
                              KERNEL_ARG(ldl), KERNEL_ARG(res));
    if (status != CLSTATS_OK) goto fail;
    const size_t wg = (size_t)s.wg, global = (cols + (size_t)s.cols - 1) / (size_t)s.cols * wg;
    if ((status = clstats__launch(ctx, kernel, 1, NULL, &global, &wg, "column_registers")))
        goto fail;
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, res, CL_TRUE, 0, cols * 4 * sizeof *out, out, 0, NULL,
                               NULL),
           "clEnqueueReadBuffer(column results)");
    if (ms) *ms += clstats__events_ms(ctx, first_event);
    clstats__column_results(out, cols, keys3, missed, report);
    clstats__log(ctx, "column %s: %.4f ms; %zu keys a work-item, %zu columns open, %.3f%% listed",
                 streamed ? "streamed" : "registers", clstats__events_ms(ctx, first_event), s.vpt,
                 report->missed, 100.0 * (double)report->listed / (double)(rows * cols));
fail:
    if (status != CLSTATS_OK) clFinish(ctx->queue);
    free(out);
    return status;
}

bool clstats__column_registers_fits(clstats_ctx *ctx, size_t rows, size_t cols)
{
    return fits(ctx, rows, cols, false);
}

int clstats__column_registers(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows, size_t cols,
                              size_t ld, cl_uint *keys3, bool *missed,
                              struct column_bracket_report *report, double *ms)
{
    return run(ctx, buf, offset, rows, cols, ld, false, keys3, missed, report, ms);
}

bool clstats__column_streamed_fits(clstats_ctx *ctx, size_t rows, size_t cols)
{
    return fits(ctx, rows, cols, true);
}

int clstats__column_streamed(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows, size_t cols,
                             size_t ld, cl_uint *keys3, bool *missed,
                             struct column_bracket_report *report, double *ms)
{
    return run(ctx, buf, offset, rows, cols, ld, true, keys3, missed, report, ms);
}
