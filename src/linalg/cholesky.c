/* cholesky.c - Cholesky factorisations and solves on the device, which CLBlast lacks: many small
 * p x p systems at once (kernels/linalg/cholesky.cl, one work-item a matrix), and an n x n
 * matrix blocked right-looking as clMAGMA does it, in our own kernels: each diagonal block
 * factored by one work-group, the panel below it solved against it, the trailing matrix
 * updated, no host work between the launches (CLBlast's TRSM and SYRK cost tens of launches,
 * temporary buffers and host work a call: bench/RESULTS.md, issue 23). On GPUs by look-ahead,
 * two launches a block (potrf_ahead: each block factored inside the update launch before it,
 * then its panel); on CPU devices three. */
#include "linalg_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Rows of the diagonal block: its work-group's size, and the block in local memory (33 KiB of
 * doubles at 64, within the 48 KiB NVIDIA's OpenCL gives a work-group). Larger blocks mean
 * fewer steps, each two or three launches. */
#define BLOCK 64
/* The trailing update's tile (kernels/linalg/cholesky.cl SYRK_TILE). */
#define UPDATE_TILE 64
/* linalg.potrf_update's value for a work-item a piece of row over the transposed panel, and
 * its columns (kernels/linalg/cholesky.cl ROW_CHUNK). */
#define UPDATE_ROWS 2
/* linalg.potrf_step's value for the one-launch step, and that launch's work-group
 * (kernels/linalg/cholesky.cl STEP_ITEMS). */
#define STEP_INVERSE 2
/* ... and for the look-ahead design: each diagonal block factored inside the update launch
 * before it, the panel a launch of its own. */
#define STEP_AHEAD 3
#define STEP_ITEMS 256
#define ROW_CHUNK 64
/* lauum's tile (kernels/linalg/cholesky.cl WIDE_TILE). */
#define WIDE_TILE 128
/* The batched factorisation's switch to a work-group per matrix: the regression's p x p normal
 * equations stay below it, a Gaussian process's n x n correlations are above. */
#define GROUP_P 32

/* `lauum`: the program with lauum_upper, apart from the others (PoCL takes most of a minute to
 * build it). */
static int program_with(clstats_ctx *ctx, bool f64, bool lauum, cl_program *out)
{
    if (f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the device has no float64");
    char options[112];
    snprintf(options, sizeof options, "-D REAL=%s%s -D NB=%d%s", f64 ? "double" : "float",
             f64 ? " -D CLSTATS_FP64" : "", BLOCK, lauum ? " -D LAUUM" : "");
    return clstats__program(ctx, "cholesky.cl", options, out);
}

static int program(clstats_ctx *ctx, bool f64, cl_program *out)
{
    return program_with(ctx, f64, false, out);
}

int clstats__potrf_batched(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t step,
                           size_t p, size_t count, cl_mem info, cl_mem logdet)
{
    cl_program prog;
    cl_kernel k;
    /* From p = GROUP_P a work-group per matrix (kernels/linalg/cholesky.cl): below it a
     * work-item per matrix, whose p^3/3 steps are few. */
    const bool groups = p >= GROUP_P;
    int status = program(ctx, f64, &prog);
    if (status == CLSTATS_OK)
        status = clstats__kernel(ctx, prog, groups ? "potrf_batched_groups" : "potrf_batched", &k);
    if (status != CLSTATS_OK) return status;
    const cl_ulong off = a.off, mstep = step;
    const cl_uint np = (cl_uint)p, lda = (cl_uint)a.ld, cnt = (cl_uint)count;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(potrf_batched_groups)", KERNEL_ARG(a.buf),
                              KERNEL_ARG(off), KERNEL_ARG(mstep), KERNEL_ARG(np), KERNEL_ARG(lda),
                              KERNEL_ARG(cnt), KERNEL_ARG(info), KERNEL_ARG(logdet));
    if (status != CLSTATS_OK) goto fail;
    const size_t local = 64, global = groups ? count * local : (count + local - 1) / local * local;
    status = clstats__launch(ctx, k, 1, NULL, &global, &local,
                             groups ? "potrf_batched_groups" : "potrf_batched");
fail:
    return status;
}

int clstats__potrs_batched(clstats_ctx *ctx, bool f64, struct clstats__mat l, size_t l_step,
                           size_t p, struct clstats__mat b, size_t b_step, size_t nrhs,
                           size_t count)
{
    cl_program prog;
    cl_kernel k;
    int status = program(ctx, f64, &prog);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, "potrs_batched", &k);
    if (status != CLSTATS_OK) return status;
    const cl_ulong loff = l.off, ls = l_step, boff = b.off, bs = b_step;
    const cl_uint np = (cl_uint)p, lda = (cl_uint)l.ld, nr = (cl_uint)nrhs, ldb = (cl_uint)b.ld,
                  cnt = (cl_uint)count;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(potrs_batched)", KERNEL_ARG(l.buf),
                              KERNEL_ARG(loff), KERNEL_ARG(ls), KERNEL_ARG(np), KERNEL_ARG(lda),
                              KERNEL_ARG(b.buf), KERNEL_ARG(boff), KERNEL_ARG(bs), KERNEL_ARG(nr),
                              KERNEL_ARG(ldb), KERNEL_ARG(cnt));
    if (status != CLSTATS_OK) goto fail;
    const size_t local[2] = {1, 64};
    const size_t global[2] = {nrhs, (count + 63) / 64 * 64};
    status = clstats__launch(ctx, k, 2, NULL, global, local, "potrs_batched");
fail:
    return status;
}

size_t clstats__potrf_blocks(size_t n)
{
    return (n + BLOCK - 1) / BLOCK;
}

/* What both designs of potrf_many set up first: the status cleared, the matrices' layout as
 * the first four arguments of their three kernels, and the update's own arguments 6-8. */
static int start_factor(clstats_ctx *ctx, cl_kernel k[3], struct clstats__mat a, size_t step,
                        size_t n, size_t rows, size_t count, cl_mem info, bool by_rows,
                        cl_mem pt)
{
    int status = CLSTATS_OK;
    const cl_int zero = 0;
    CL_TRY(ctx, clEnqueueFillBuffer(ctx->queue, info, &zero, sizeof zero, 0,
                                    count * sizeof zero, 0, NULL, NULL),
           "clEnqueueFillBuffer(status)");
    const cl_ulong off = a.off, mstep = step;
    const cl_uint lda = (cl_uint)a.ld, rows32 = (cl_uint)rows, n32 = (cl_uint)n;
    for (int i = 0; i < 3; i++) {
        status = CLSTATS_SET_ARGS(ctx, k[i], "clSetKernelArg(potrf_many)", KERNEL_ARG(a.buf),
                                  KERNEL_ARG(off), KERNEL_ARG(mstep), KERNEL_ARG(lda));
        if (status != CLSTATS_OK) goto fail;
    }
    CL_ARG(k[2], 6, rows32);
    CL_ARG(k[2], 7, n32);
    if (by_rows) CL_ARG(k[2], 8, pt);
fail:
    return status;
}

/* The trailing update's launch after the panel at `at` (nb columns): ku with its arguments 0-3
 * and 6-8 set. */
static int launch_update(clstats_ctx *ctx, cl_kernel ku, bool by_rows, size_t at, size_t nb,
                         size_t n, size_t rows, size_t count)
{
    int status = CLSTATS_OK;
    const size_t below = rows - at - nb;
    const cl_uint at32 = (cl_uint)at, nb32 = (cl_uint)nb;
    CL_ARG(ku, 4, at32);
    CL_ARG(ku, 5, nb32);
    const size_t tiles = (below + UPDATE_TILE - 1) / UPDATE_TILE;
    const size_t gt[3] = {tiles * 16, tiles * 16, count}, lt[3] = {16, 16, 1};
    const size_t gr[3] = {(n - at - nb + ROW_CHUNK - 1) / ROW_CHUNK, below, count};
    status = clstats__launch(ctx, ku, 3, NULL, by_rows ? gr : gt, by_rows ? NULL : lt,
                             by_rows ? "potrf_update_rows" : "potrf_update");
fail:
    return status;
}

/* The two kernels of a GPU design's step (k[0] named first, k[1] second) and its scratch of
 * one NB x NB block a matrix (`what`). */
static int step_kernels(clstats_ctx *ctx, cl_program prog, const char *first, const char *second,
                        cl_kernel k[2], const char *what, size_t count, size_t es, cl_mem *block)
{
    int status = clstats__kernel(ctx, prog, first, &k[0]);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, second, &k[1]);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, what, count * BLOCK * BLOCK * es, block);
    return status;
}

/* potrf_many by potrf_step, the block and panel in one launch a step (GPUs), then the update;
 * the last block's L11 put in place at the end (kernels/linalg/cholesky.cl says why). */
static int potrf_fused(clstats_ctx *ctx, cl_program prog, cl_kernel ku, bool by_rows,
                       struct clstats__mat a, size_t step, size_t n, size_t extra, size_t count,
                       cl_mem info, cl_mem parts, cl_mem pt, size_t es)
{
    cl_kernel two[2];
    cl_mem l11;
    const size_t blocks = clstats__potrf_blocks(n), rows = n + extra;
    int status = step_kernels(ctx, prog, "potrf_step", "potrf_put_block", two, "linalg.l11", count,
                              es, &l11);
    cl_kernel ks = two[0], kput = two[1], all[3] = {ks, kput, ku};
    if (status == CLSTATS_OK)
        status = start_factor(ctx, all, a, step, n, rows, count, info, by_rows, pt);
    if (status != CLSTATS_OK) return status;
    const cl_uint rows32 = (cl_uint)rows, blocks32 = (cl_uint)blocks, want_pt = by_rows;
    CL_ARG(ks, 6, rows32);
    CL_ARG(ks, 7, pt);
    CL_ARG(ks, 8, want_pt);
    CL_ARG(ks, 10, blocks32);
    CL_ARG(ks, 11, info);
    CL_ARG(ks, 12, parts);
    CL_ARG(ks, 13, l11);
    CL_ARG(kput, 6, l11);
    for (size_t b = 0; b < blocks && status == CLSTATS_OK; b++) {
        const size_t at = b * BLOCK, nb = n - at < BLOCK ? n - at : BLOCK, below = rows - at - nb;
        const cl_uint at32 = (cl_uint)at, nb32 = (cl_uint)nb, b32 = (cl_uint)b,
                      prev32 = (cl_uint)(b ? at - BLOCK : 0);
        CL_ARG(ks, 4, at32);
        CL_ARG(ks, 5, nb32);
        CL_ARG(ks, 9, b32);
        CL_ARG(ks, 14, prev32);
        const size_t groups = below ? (below + BLOCK - 1) / BLOCK : 1;
        const size_t gs[2] = {groups * STEP_ITEMS, count}, ls[2] = {STEP_ITEMS, 1};
        status = clstats__launch(ctx, ks, 2, NULL, gs, ls, "potrf_step");
        if (status == CLSTATS_OK && below && at + nb < n)
            status = launch_update(ctx, ku, by_rows, at, nb, n, rows, count);
    }
    if (status == CLSTATS_OK) {
        const size_t at = (blocks - 1) * BLOCK;
        const cl_uint at32 = (cl_uint)at, nb32 = (cl_uint)(n - at);
        CL_ARG(kput, 4, at32);
        CL_ARG(kput, 5, nb32);
        const size_t gp[2] = {BLOCK * BLOCK, count};
        status = clstats__launch(ctx, kput, 2, NULL, gp, NULL, "potrf_put_block");
    }
fail:
    return status;
}

/* potrf_many by look-ahead (GPUs): the first block factored alone, then per step the panel
 * from the block's inverse and the update, whose first group factors the next block
 * (kernels/linalg/cholesky.cl potrf_update_ahead); the queue flushed after each step, so the
 * device starts on the first steps while the host enqueues the rest. */
static int potrf_ahead(clstats_ctx *ctx, cl_program prog, struct clstats__mat a, size_t step,
                       size_t n, size_t extra, size_t ident, size_t count, cl_mem info,
                       cl_mem parts, size_t es)
{
    cl_kernel two[2], ku;
    cl_mem linv;
    const size_t blocks = clstats__potrf_blocks(n), rows = n + extra;
    int status = step_kernels(ctx, prog, "potrf_factor_first", "potrf_panel_ahead", two,
                              "linalg.linv", count, es, &linv);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, "potrf_update_ahead", &ku);
    /* start_factor's arguments 6-7 of the update (rows, cols) hold for potrf_update_ahead. */
    cl_kernel kf = two[0], kp = two[1], all[3] = {kf, kp, ku};
    if (status == CLSTATS_OK)
        status = start_factor(ctx, all, a, step, n, rows, count, info, false, NULL);
    if (status != CLSTATS_OK) return status;
    const cl_uint rows32 = (cl_uint)rows, blocks32 = (cl_uint)blocks,
                  nb0 = (cl_uint)(n < BLOCK ? n : BLOCK);
    CL_ARG(kf, 4, nb0);
    CL_ARG(kf, 5, blocks32);
    CL_ARG(kf, 6, info);
    CL_ARG(kf, 7, parts);
    CL_ARG(kf, 8, linv);
    const cl_uint ident32 = (cl_uint)ident;
    CL_ARG(kp, 6, rows32);
    CL_ARG(kp, 7, linv);
    CL_ARG(kp, 8, ident32);
    CL_ARG(ku, 13, ident32);
    CL_ARG(ku, 9, blocks32);
    CL_ARG(ku, 10, info);
    CL_ARG(ku, 11, parts);
    CL_ARG(ku, 12, linv);
    const size_t gf[2] = {STEP_ITEMS, count}, ls[3] = {STEP_ITEMS, 1, 1};
    status = clstats__launch(ctx, kf, 2, NULL, gf, ls, "potrf_factor_first");
    for (size_t b = 0; b < blocks && status == CLSTATS_OK; b++) {
        const size_t at = b * BLOCK, nb = n - at < BLOCK ? n - at : BLOCK, below = rows - at - nb;
        if (below == 0) break;
        const cl_uint at32 = (cl_uint)at, nb32 = (cl_uint)nb, next = (cl_uint)(b + 1);
        CL_ARG(kp, 4, at32);
        CL_ARG(kp, 5, nb32);
        const size_t tiles = (below + BLOCK - 1) / BLOCK;
        const size_t gp[2] = {tiles * STEP_ITEMS, count};
        status = clstats__launch(ctx, kp, 2, NULL, gp, ls, "potrf_panel_ahead");
        if (status != CLSTATS_OK || at + nb >= n) break;
        CL_ARG(ku, 4, at32);
        CL_ARG(ku, 5, nb32);
        CL_ARG(ku, 8, next);
        const size_t gu[3] = {tiles * STEP_ITEMS, tiles, count};
        status = clstats__launch(ctx, ku, 3, NULL, gu, ls, "potrf_update_ahead");
        if (status == CLSTATS_OK) CL_TRY(ctx, clFlush(ctx->queue), "clFlush(potrf)");
    }
fail:
    return status;
}

int clstats__potrf_many(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t step,
                        size_t n, size_t extra, size_t count, cl_mem info, cl_mem parts)
{
    return clstats__potrf_many_identity(ctx, f64, a, step, n, extra, n + extra, count, info,
                                        parts);
}

int clstats__potrf_many_identity(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t step,
                                 size_t n, size_t extra, size_t ident, size_t count, cl_mem info,
                                 cl_mem parts)
{
    cl_program prog;
    cl_kernel kb, kp, ku;
    cl_mem pt;
    const size_t blocks = clstats__potrf_blocks(n), es = f64 ? 8 : 4, rows = n + extra;
    const long update = clstats__tuned(ctx, P_LINALG_POTRF_UPDATE);
    const bool by_rows =
        update == UPDATE_ROWS || (update == AUTO && ctx->device_class == CLASS_CPU);
    const char *update_name = by_rows ? "potrf_update_rows" : "potrf_update";
    const long design = clstats__tuned(ctx, P_LINALG_POTRF_STEP);
    const bool ahead = design == STEP_AHEAD || (design == AUTO && ctx->device_class != CLASS_CPU);
    const bool fused = design == STEP_INVERSE;
    int status = program(ctx, f64, &prog);
    if (status == CLSTATS_OK && ahead)
        return potrf_ahead(ctx, prog, a, step, n, extra, ident, count, info, parts, es);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, update_name, &ku);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "linalg.panel", count * BLOCK * rows * es, &pt);
    if (status != CLSTATS_OK) return status;
    if (fused)
        return potrf_fused(ctx, prog, ku, by_rows, a, step, n, extra, count, info, parts, pt,
                           es);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, "potrf_block", &kb);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, "potrf_panel", &kp);
    cl_kernel all[3] = {kb, kp, ku};
    status = start_factor(ctx, all, a, step, n, rows, count, info, by_rows, pt);
    if (status != CLSTATS_OK) return status;
    const cl_uint rows32 = (cl_uint)rows, blocks32 = (cl_uint)blocks;
    CL_ARG(kb, 7, blocks32);
    CL_ARG(kb, 8, info);
    CL_ARG(kb, 9, parts);
    CL_ARG(kp, 6, rows32);
    CL_ARG(kp, 7, pt);
    for (size_t b = 0; b < blocks && status == CLSTATS_OK; b++) {
        const size_t at = b * BLOCK, nb = n - at < BLOCK ? n - at : BLOCK, below = rows - at - nb;
        const cl_uint at32 = (cl_uint)at, nb32 = (cl_uint)nb, b32 = (cl_uint)b;
        CL_ARG(kb, 4, at32);
        CL_ARG(kb, 5, nb32);
        CL_ARG(kb, 6, b32);
        const size_t gb[2] = {BLOCK, count}, lb[2] = {BLOCK, 1};
        status = clstats__launch(ctx, kb, 2, NULL, gb, lb, "potrf_block");
        if (status != CLSTATS_OK || below == 0) continue;
        CL_ARG(kp, 4, at32);
        CL_ARG(kp, 5, nb32);
        const size_t gp[2] = {(below + BLOCK - 1) / BLOCK * BLOCK, count};
        status = clstats__launch(ctx, kp, 2, NULL, gp, lb, "potrf_panel");
        if (status != CLSTATS_OK || at + nb >= n) continue;
        status = launch_update(ctx, ku, by_rows, at, nb, n, rows, count);
    }
fail:
    return status;
}

int clstats__potrf(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t n, size_t extra,
                   int *bad, double *logdet)
{
    cl_mem st, parts;
    const size_t blocks = clstats__potrf_blocks(n), es = f64 ? 8 : 4;
    double *part = malloc(blocks * sizeof *part);
    *bad = 0;
    *logdet = NAN;
    int status = part ? CLSTATS_OK : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "potrf");
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "linalg.status", sizeof(cl_int), &st);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "linalg.logdet", blocks * es, &parts);
    if (status == CLSTATS_OK)
        status = clstats__potrf_many(ctx, f64, a, 0, n, extra, 1, st, parts);
    if (status != CLSTATS_OK) goto fail;
    cl_int first_bad = 0;
    void *raw = part;
    CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, st, CL_FALSE, 0, sizeof first_bad, &first_bad, 0,
                                    NULL, NULL),
           "clEnqueueReadBuffer(status)");
    CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, parts, CL_TRUE, 0, blocks * es, raw, 0, NULL, NULL),
           "clEnqueueReadBuffer(logdet)");
    /* Summed here in a fixed order, so that the result is the same on every device. */
    double sum = 0;
    for (size_t b = 0; b < blocks; b++)
        sum += f64 ? part[b] : (double)((float *)raw)[b];
    *bad = first_bad;
    *logdet = first_bad ? NAN : sum;
fail:
    free(part);
    return status;
}

int clstats__lauum(clstats_ctx *ctx, bool f64, struct clstats__mat u, size_t n,
                   struct clstats__mat c)
{
    cl_program prog;
    cl_kernel k;
    int status = program_with(ctx, f64, true, &prog);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, "lauum_upper", &k);
    if (status != CLSTATS_OK) return status;
    const cl_ulong uoff = u.off, coff = c.off;
    const cl_uint ldu = (cl_uint)u.ld, n32 = (cl_uint)n, ldc = (cl_uint)c.ld;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(lauum_upper)", KERNEL_ARG(u.buf),
                              KERNEL_ARG(uoff), KERNEL_ARG(ldu), KERNEL_ARG(n32), KERNEL_ARG(c.buf),
                              KERNEL_ARG(coff), KERNEL_ARG(ldc));
    if (status != CLSTATS_OK) goto fail;
    const size_t tiles = (n + WIDE_TILE - 1) / WIDE_TILE;
    const size_t global[2] = {tiles * 16, tiles * 16}, local[2] = {16, 16};
    status = clstats__launch(ctx, k, 2, NULL, global, local, "lauum_upper");
fail:
    return status;
}
