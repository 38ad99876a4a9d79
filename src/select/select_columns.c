/* select_columns.c - batched medians: the median of every column of a float32 matrix
 * (clstats_column_medians) and of every tile of an image (clstats_tile_medians), and their
 * cl_mem forms, one work-group per tile running kernels/select_columns.cl (a column is a tile
 * one pixel wide), or on GPUs one of the sample paths (src/select/select_columns_registers.c,
 * src/select/select_columns_bracket.c); the kernels return keys, the host applies the even-count
 * option. */
#include "internal.h"
#include "select_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct clstats_select_options default_options = {0};

/* Largest matrix transposed first (the copy is scratch the context keeps), and the fewest
 * columns for which it pays (see transpose()). */
#define TRANSPOSE_MAX_BYTES ((size_t)256 << 20)
#define TRANSPOSE_MIN_COLS 512

/* Local memory of one tile's digit search (kernels/local_radix.cl): two histograms of 2^bits
 * counts and their chunk sums. */
static size_t search_bytes(int bits)
{
    const size_t bins = (size_t)2 << bits, chunk = (size_t)1 << (bits / 2);
    return (bins + bins / chunk) * sizeof(cl_uint);
}

/* The matrix transposed into scratch, so that a column's values are contiguous: *t, or NULL
 * where it does not pay or does not fit. It pays on GPUs for many columns and costs for few,
 * transposition included (bench/RESULTS.md): done on GPUs from TRANSPOSE_MIN_COLS columns.
 * The tuning parameter columns.transpose (off, on) decides instead (tuning, tests). */
static int transpose(clstats_ctx *ctx, cl_program program, cl_mem buf, size_t offset, size_t rows,
                     size_t cols, size_t ld, cl_mem *t)
{
    cl_kernel kernel;
    const size_t bytes = rows * cols * sizeof(float);
    *t = NULL;
    const long force = clstats__tuned(ctx, P_COLUMNS_TRANSPOSE);
    const bool want =
        force ? force == SWITCH_ON : !ctx->is_cpu && cols >= TRANSPOSE_MIN_COLS;
    if (!want || bytes > ctx->max_alloc || bytes > TRANSPOSE_MAX_BYTES) return CLSTATS_OK;
    int status = clstats__kernel(ctx, program, "transpose", &kernel);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "columns.transposed", bytes, t);
    if (status != CLSTATS_OK) return status;
    const cl_ulong off = offset, ldl = ld;
    const cl_uint nrows = (cl_uint)rows, ncols = (cl_uint)cols;
    status =
        CLSTATS_SET_ARGS(ctx, kernel, "clSetKernelArg(transpose)", KERNEL_ARG(buf), KERNEL_ARG(off),
                         KERNEL_ARG(nrows), KERNEL_ARG(ncols), KERNEL_ARG(ldl), KERNEL_ARG(*t));
    if (status != CLSTATS_OK) goto fail;
    const size_t local[2] = {32, 8};
    const size_t global[2] = {(cols + 31) / 32 * 32, (rows + 31) / 32 * 8};
    status = clstats__launch(ctx, kernel, 2, NULL, global, local, "transpose");
    if (status != CLSTATS_OK) goto fail;
    return CLSTATS_OK;
fail:
    *t = NULL;
    return status;
}

/* Tiles of tw x th pixels of an nx x ny image, pixel (x, y) at element offset + y stride + x,
 * from (0, 0), the last in each direction cut short by the edge (kernels/select_columns.cl). */
struct tiling {
    size_t nx, ny, stride, tw, th;
};

static size_t tiles_across(const struct tiling *t)
{
    return (t->nx + t->tw - 1) / t->tw;
}

static size_t tile_count(const struct tiling *t)
{
    return tiles_across(t) * ((t->ny + t->th - 1) / t->th);
}

/* Pixels in tile g. */
static size_t tile_size(const struct tiling *t, size_t g)
{
    const size_t i = g % tiles_across(t), j = g / tiles_across(t);
    const size_t w = t->nx - i * t->tw < t->tw ? t->nx - i * t->tw : t->tw;
    const size_t h = t->ny - j * t->th < t->th ? t->ny - j * t->th : t->th;
    return w * h;
}

/* One group of wg work-items a tile (kernel tile_select), after transposing a matrix where
 * that pays (`columns`: its tiles are its columns). */
static int launch_tiles(clstats_ctx *ctx, cl_kernel kernel, cl_program program, cl_mem buf,
                        size_t offset, const struct tiling *tl, bool columns, cl_mem res_buf,
                        size_t wg)
{
    cl_mem t_buf = NULL;
    int status = CLSTATS_OK;
    if (columns) {
        status = transpose(ctx, program, buf, offset, tl->ny, tl->nx, tl->stride, &t_buf);
        if (status != CLSTATS_OK) return status;
    }
    /* The transposed matrix is an image of ny columns and nx rows whose tiles are its rows. */
    const struct tiling src_tl = t_buf ? (struct tiling){tl->ny, tl->nx, tl->ny, tl->ny, 1} : *tl;
    const cl_ulong off = t_buf ? 0 : offset, stride = src_tl.stride;
    const cl_uint nx = (cl_uint)src_tl.nx, ny = (cl_uint)src_tl.ny, tw = (cl_uint)src_tl.tw,
                  th = (cl_uint)src_tl.th;
    const cl_mem src = t_buf ? t_buf : buf;
    status = CLSTATS_SET_ARGS(ctx, kernel, "clSetKernelArg(tile_select)", KERNEL_ARG(src),
                              KERNEL_ARG(off), KERNEL_ARG(nx), KERNEL_ARG(ny), KERNEL_ARG(stride),
                              KERNEL_ARG(tw), KERNEL_ARG(th), KERNEL_ARG(res_buf));
    if (status != CLSTATS_OK) goto fail;
    const size_t global = tile_count(tl) * wg;
    status = clstats__launch(ctx, kernel, 1, NULL, &global, &wg, "tile_select");
fail:
    return status;
}

/* The radix kernel's results for every tile into keys[3 g .. 3 g + 2] (kernel tile_select);
 * *ms, when not NULL, gains its time. `columns` allows the matrix's transposition (its tiles
 * are its columns: tw 1, th ny). */
static int radix_keys(clstats_ctx *ctx, cl_mem buf, size_t offset, const struct tiling *tl,
                      bool columns, cl_uint *keys, double *ms)
{
    cl_program program;
    cl_kernel kernel = NULL;
    cl_mem res_buf = NULL;
    int status;
    const size_t first_event = clstats__event_mark(ctx);

    /* columns.wg and .bits (src/core/tuning.c): one work-item per column on CPU devices, plain
     * local increments (as src/select/select.c); 512 a column on GPUs; at most the device's
     * largest work-group. */
    long wg = clstats__tuned(ctx, P_COLUMNS_WG);
    if ((size_t)wg > ctx->max_work_group) wg = (long)ctx->max_work_group;
    const int bits = (int)clstats__tuned(ctx, P_COLUMNS_BITS);
    if (wg < 1 || (wg & (wg - 1)) || bits < 4 || bits > 12)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "bad columns.* tuning");
    /* Rows staged in local memory: what is left beside the histograms and their chunk sums. */
    const size_t fixed = search_bytes(bits) + 256;
    long local_rows = ctx->local_mem > fixed + 4096 ? (long)((ctx->local_mem - fixed) / 4) : 0;
    if (local_rows > 1 << 16) local_rows = 1 << 16; /* CPU devices report megabytes */
    if (clstats__tuned(ctx, P_COLUMNS_LOCAL_ROWS))
        local_rows = clstats__tuned(ctx, P_COLUMNS_LOCAL_ROWS);
    char options[160];
    snprintf(options, sizeof options, "-D WG=%ld -D RADIX_BITS=%d -D LOCAL_ROWS=%ld", wg, bits,
             local_rows);
    status = clstats__program(ctx, "select_columns.cl", options, &program);
    if (status != CLSTATS_OK) return status;

    const size_t ntiles = tile_count(tl);
    if ((status = clstats__kernel(ctx, program, "tile_select", &kernel)) ||
        (status =
             clstats__scratch(ctx, "columns.results", ntiles * 3 * sizeof(cl_uint), &res_buf)))
        return status;
    status = launch_tiles(ctx, kernel, program, buf, offset, tl, columns, res_buf, (size_t)wg);
    if (status != CLSTATS_OK) goto fail;
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, res_buf, CL_TRUE, 0, ntiles * 3 * sizeof(cl_uint), keys,
                               0, NULL, NULL),
           "clEnqueueReadBuffer(tile results)");
    if (ms) *ms += clstats__events_ms(ctx, first_event);
    clstats__log(ctx, "column radix: %zu tiles, %.4f ms (transposition included)", ntiles,
                 clstats__events_ms(ctx, first_event));
fail:
    if (status != CLSTATS_OK) clFinish(ctx->queue);
    return status;
}

void clstats__column_results(const cl_uint *out, size_t cols, cl_uint *keys3, bool *missed,
                             struct column_bracket_report *report)
{
    memset(report, 0, sizeof *report);
    for (size_t c = 0; c < cols; c++) {
        memcpy(&keys3[3 * c], &out[4 * c], 3 * sizeof *out);
        missed[c] = out[4 * c + 3] == 0xffffffffu; /* NO_KEY */
        if (missed[c])
            report->missed++;
        else
            report->listed += out[4 * c + 3];
    }
}

/* On GPUs, by default (each threshold from the H100 sweeps in bench/RESULTS.md, kernel time
 * against the radix kernel):
 * - columns from BRACKET_MIN_ROWS rows take the bracket path (src/select/select_columns_bracket.c),
 *   which reads the matrix once where the radix kernel makes four passes; so do shorter ones
 *   too long for the one-launch path, given a column for every compute unit;
 * - columns of STREAMED_MIN_ROWS to STREAMED_MAX_ROWS rows take the streamed path where its
 *   groups of eight (or four) columns fill most compute units in one wave
 *   (clstats__column_streamed_group); in two waves it loses to the registers path;
 * - columns of REGISTERS_MIN_ROWS rows up to what fits take the one-launch path
 *   (src/select/select_columns_registers.c) where there are REGISTERS_COLS_PER_UNIT columns for every
 *   compute unit (with fewer its groups leave the GPU idle), or from REGISTERS_ALWAYS_ROWS
 *   rows, where the radix kernel no longer holds a column in local memory and takes about
 *   twice as long.
 * The tuning parameter columns.method (registers, streamed, bracket, radix) decides instead. */
#define BRACKET_MIN_ROWS 32768
#define STREAMED_MIN_ROWS 2048
#define STREAMED_MAX_ROWS 16384
#define REGISTERS_MIN_ROWS 512
#define REGISTERS_COLS_PER_UNIT 2
#define REGISTERS_ALWAYS_ROWS 12288

/* The sample path the columns take, or NULL: all to the radix kernel. */
static clstats__column_path path_wanted(clstats_ctx *ctx, const struct tiling *tl, bool columns)
{
    const long method = clstats__tuned(ctx, P_COLUMNS_METHOD);
    if (!columns || method == COLUMNS_RADIX) return NULL;
    if (method == COLUMNS_REGISTERS)
        return clstats__column_registers_fits(ctx, tl->ny, tl->nx) ? clstats__column_registers
                                                                   : NULL;
    if (method == COLUMNS_STREAMED)
        return clstats__column_streamed_fits(ctx, tl->ny, tl->nx) ? clstats__column_streamed
                                                                  : NULL;
    if (method == COLUMNS_BRACKET)
        return clstats__column_bracket_fits(ctx, tl->ny, tl->nx) ? clstats__column_bracket : NULL;
    if (ctx->is_cpu) return NULL;
    const size_t rows = tl->ny, cols = tl->nx, units = ctx->compute_units;
    if (rows >= STREAMED_MIN_ROWS && rows <= STREAMED_MAX_ROWS &&
        clstats__column_streamed_group(ctx, cols) && clstats__column_streamed_fits(ctx, rows, cols))
        return clstats__column_streamed;
    if (rows < BRACKET_MIN_ROWS && clstats__column_registers_fits(ctx, rows, cols))
        return rows >= REGISTERS_MIN_ROWS &&
                       (cols >= REGISTERS_COLS_PER_UNIT * units || rows >= REGISTERS_ALWAYS_ROWS)
                   ? clstats__column_registers
                   : NULL;
    return (rows >= BRACKET_MIN_ROWS || cols >= units) &&
                   clstats__column_bracket_fits(ctx, rows, cols)
               ? clstats__column_bracket
               : NULL;
}

/* The median of every tile into out[g], tile g = j ntx + i. `columns`: the tiles are the
 * matrix's columns (tw 1, th ny), which may take the bracket path and fall back from it. */
static int tiles_device(clstats_ctx *ctx, cl_mem buf, size_t offset, struct tiling tl, bool columns,
                        const struct clstats_select_options *o, float *out)
{
    const size_t ntiles = tile_count(&tl);
    clstats__begin(ctx);
    cl_uint *keys = malloc(ntiles * 3 * sizeof *keys);
    if (!keys) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate %zu results", ntiles);
    double ms = 0;
    size_t missed = ntiles; /* columns the radix kernel must give */
    bool *miss = NULL;
    cl_uint *radix = keys;
    int status = CLSTATS_OK;
    const clstats__column_path path = path_wanted(ctx, &tl, columns);
    if (path) {
        struct column_bracket_report report;
        if (!(miss = malloc(ntiles * sizeof *miss))) {
            free(keys);
            return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate %zu flags", ntiles);
        }
        status = path(ctx, buf, offset, tl.ny, tl.nx, tl.stride, keys, miss, &report,
                      o->kernel_ms ? &ms : NULL);
        missed = status == CLSTATS_OK ? report.missed : ntiles;
        /* The radix kernel runs for every column (one launch); only the missed take its keys. */
        if (status == CLSTATS_OK && missed && !(radix = malloc(ntiles * 3 * sizeof *radix)))
            status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate %zu results", ntiles);
    }
    if (status == CLSTATS_OK && missed)
        status = radix_keys(ctx, buf, offset, &tl, columns, radix, o->kernel_ms ? &ms : NULL);
    if (status != CLSTATS_OK) goto fail;
    if (radix != keys)
        for (size_t g = 0; g < ntiles; g++)
            if (miss[g]) memcpy(&keys[3 * g], &radix[3 * g], 3 * sizeof *keys);
    if (o->kernel_ms) *o->kernel_ms = ms;

    uint64_t nan = 0;
    for (size_t g = 0; g < ntiles; g++) {
        const cl_uint ka = keys[3 * g], kb = keys[3 * g + 1], cnan = keys[3 * g + 2];
        nan += cnan;
        if (cnan == tile_size(&tl, g)) {
            const uint32_t qnan = 0x7fc00000u;
            memcpy(&out[g], &qnan, sizeof out[g]);
            continue;
        }
        const float a = (float)clstats__value_of_key(ka, false);
        const float b = (float)clstats__value_of_key(kb, false);
        const float m = ka == kb || o->even == CLSTATS_EVEN_LOWER ? a
                        : o->even == CLSTATS_EVEN_UPPER           ? b
                                                                  : clstats__mean_f32(a, b);
        out[g] = (float)clstats__plus_zero(m);
    }
    if (o->nan_count) *o->nan_count = nan;
    if (o->nan_policy == CLSTATS_NAN_ERROR && nan)
        status = clstats__fail(ctx, CLSTATS_ERR_NAN, "%llu NaN values in the %s",
                               (unsigned long long)nan, columns ? "matrix" : "image");
fail:
    status = clstats__end(ctx, status);
    if (radix != keys) free(radix);
    free(miss);
    free(keys);
    return status;
}

static int check_args(clstats_ctx *ctx, const void *m, const struct tiling *t,
                      const struct clstats_select_options *o, const float *out, const char *what)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    if (!m || !out) return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s or out is NULL", what);
    if (t->nx == 0 || t->ny == 0 || t->nx > UINT32_MAX || t->ny > UINT32_MAX || t->stride < t->nx)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s of %zu x %zu, stride %zu is out of range",
                             what, t->nx, t->ny, t->stride);
    size_t bytes; /* span_of() below relies on this check */
    if (!clstats__span_bytes(t->ny, t->stride, t->nx, sizeof(float), &bytes))
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "the %s, %zu rows %zu elements apart, is larger than any array can be",
                             what, t->ny, t->stride);
    if (t->tw == 0 || t->th == 0 || t->tw > UINT32_MAX / t->th)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "tiles of %zu x %zu are out of range", t->tw,
                             t->th);
    if ((unsigned)o->nan_policy > CLSTATS_NAN_ERROR || (unsigned)o->even > CLSTATS_EVEN_UPPER)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "unknown selection option value");
    return CLSTATS_OK;
}

/* Elements from the first pixel to the last (check_args has made sure no size overflows). */
static size_t span_of(const struct tiling *t)
{
    return (t->ny - 1) * t->stride + t->nx;
}

static int tiles_host(clstats_ctx *ctx, const float *m, struct tiling tl, bool columns,
                      const struct clstats_select_options *opts, float *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    const char *what = columns ? "matrix" : "image";
    int status = check_args(ctx, m, &tl, o, out, what);
    if (status != CLSTATS_OK) return status;
    if (span_of(&tl) * sizeof(float) > ctx->max_alloc)
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "the %s is larger than the device's largest buffer", what);
    cl_mem buf;
    status = clstats__upload(ctx, m, span_of(&tl) * sizeof(float),
                             columns ? "uploading the matrix" : "uploading the image", &buf);
    if (status != CLSTATS_OK) return status;
    status = tiles_device(ctx, buf, 0, tl, columns, o, out);
    clReleaseMemObject(buf);
    return status;
}

static int tiles_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, struct tiling tl, bool columns,
                        const struct clstats_select_options *opts, float *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    const char *what = columns ? "matrix" : "image";
    int status = check_args(ctx, buf, &tl, o, out, what);
    if (status != CLSTATS_OK) return status;
    size_t size = 0;
    if (clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "buf is not a valid cl_mem");
    if (offset > size / sizeof(float) || span_of(&tl) > size / sizeof(float) - offset)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the %s runs past the end of buf", what);
    return tiles_device(ctx, buf, offset, tl, columns, o, out);
}

/* A matrix's columns are its tiles of one pixel by all the rows. */
int clstats_column_medians(clstats_ctx *ctx, const float *matrix, size_t rows, size_t cols,
                           size_t ld, const struct clstats_select_options *opts, float *out)
{
    return tiles_host(ctx, matrix, (struct tiling){cols, rows, ld, 1, rows ? rows : 1}, true, opts,
                      out);
}

int clstats_column_medians_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows,
                                  size_t cols, size_t ld, const struct clstats_select_options *opts,
                                  float *out)
{
    return tiles_buffer(ctx, buf, offset, (struct tiling){cols, rows, ld, 1, rows ? rows : 1}, true,
                        opts, out);
}

int clstats_tile_medians(clstats_ctx *ctx, const float *image, size_t nx, size_t ny, size_t stride,
                         size_t tw, size_t th, const struct clstats_select_options *opts,
                         float *out)
{
    return tiles_host(ctx, image, (struct tiling){nx, ny, stride, tw, th}, false, opts, out);
}

int clstats_tile_medians_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t nx, size_t ny,
                                size_t stride, size_t tw, size_t th,
                                const struct clstats_select_options *opts, float *out)
{
    return tiles_buffer(ctx, buf, offset, (struct tiling){nx, ny, stride, tw, th}, false, opts,
                        out);
}
