/* blas.c - CLBlast's GEMM, batched GEMM, SYRK, TRSM and GEMV on the context's queue, row-major,
 * float32 or float64: the one file of the library that includes CLBlast. Each call's event joins
 * the context's (so clstats_ctx_last_kernel_ms counts it) and each status becomes ours, with the
 * routine and CLBlast's code in the context's message. */
#include "linalg_internal.h"

#include <clblast_c.h>
#include <stdlib.h>

static const char *blast_name(CLBlastStatusCode s)
{
    switch (s) {
    case CLBlastNotImplemented:
        return "not implemented";
    case CLBlastInvalidDimension:
        return "invalid dimension";
    case CLBlastInvalidLeadDimA:
    case CLBlastInvalidLeadDimB:
    case CLBlastInvalidLeadDimC:
        return "leading dimension too small";
    case CLBlastInsufficientMemoryA:
    case CLBlastInsufficientMemoryB:
    case CLBlastInsufficientMemoryC:
    case CLBlastInsufficientMemoryX:
    case CLBlastInsufficientMemoryY:
        return "buffer too small";
    case CLBlastInvalidLocalMemUsage:
        return "not enough local memory";
    case CLBlastNoDoublePrecision:
        return "no double precision";
    case CLBlastDatabaseError:
        return "no tuning entry";
    default:
        return "error";
    }
}

/* Our status for CLBlast's: OpenCL's own codes as clstats__cl_check maps them, a wrong size
 * as an argument error, no fp64 as unsupported, the rest as an OpenCL failure. The event of a
 * successful call is kept. */
static int blast_status(clstats_ctx *ctx, CLBlastStatusCode s, cl_event ev, const char *routine)
{
    if (s == CLBlastSuccess) return clstats__keep_event(ctx, ev);
    if (ev) clReleaseEvent(ev);
    if (s > -1000) return clstats__cl_check(ctx, (cl_int)s, routine);
    int status = CLSTATS_ERR_OPENCL;
    if (s == CLBlastNoDoublePrecision)
        status = CLSTATS_ERR_UNSUPPORTED;
    else if (s == CLBlastTempBufferAllocFailure || s == CLBlastInvalidLocalMemUsage)
        status = CLSTATS_ERR_DEVICE_MEMORY;
    else if (s >= CLBlastNotImplemented && s <= CLBlastInsufficientMemoryY)
        status = CLSTATS_ERR_ARG;
    return clstats__fail(ctx, status, "CLBlast %s: %s (%d)", routine, blast_name(s), (int)s);
}

static CLBlastTranspose op(bool t)
{
    return t ? CLBlastTransposeYes : CLBlastTransposeNo;
}

/* One GEMM call of CLBlast's in either layout. */
static int gemm(clstats_ctx *ctx, CLBlastLayout layout, bool f64, bool ta, bool tb, size_t m,
                size_t n, size_t k, double alpha, struct clstats__mat a, struct clstats__mat b,
                double beta, struct clstats__mat c)
{
    cl_event ev = NULL;
    CLBlastStatusCode s =
        f64 ? CLBlastDgemm(layout, op(ta), op(tb), m, n, k, alpha, a.buf, a.off, a.ld, b.buf,
                           b.off, b.ld, beta, c.buf, c.off, c.ld, &ctx->queue, &ev)
            : CLBlastSgemm(layout, op(ta), op(tb), m, n, k, (float)alpha, a.buf, a.off, a.ld,
                           b.buf, b.off, b.ld, (float)beta, c.buf, c.off, c.ld, &ctx->queue, &ev);
    return blast_status(ctx, s, ev, f64 ? "Dgemm" : "Sgemm");
}

int clstats__gemm(clstats_ctx *ctx, bool f64, bool ta, bool tb, size_t m, size_t n, size_t k,
                  double alpha, struct clstats__mat a, struct clstats__mat b, double beta,
                  struct clstats__mat c)
{
    return gemm(ctx, CLBlastLayoutRowMajor, f64, ta, tb, m, n, k, alpha, a, b, beta, c);
}

int clstats__gemm_colmajor(clstats_ctx *ctx, bool f64, bool ta, bool tb, size_t m, size_t n,
                           size_t k, double alpha, struct clstats__mat a, struct clstats__mat b,
                           double beta, struct clstats__mat c)
{
    return gemm(ctx, CLBlastLayoutColMajor, f64, ta, tb, m, n, k, alpha, a, b, beta, c);
}

int clstats__gemm_batched(clstats_ctx *ctx, bool f64, bool ta, bool tb, size_t m, size_t n,
                          size_t k, double alpha, struct clstats__mat a, const size_t *a_offs,
                          struct clstats__mat b, const size_t *b_offs, double beta,
                          struct clstats__mat c, const size_t *c_offs, size_t count)
{
    /* CLBlast takes a scalar pair and an offset per matrix; the offsets are absolute. */
    size_t *offs = malloc(3 * count * sizeof *offs);
    void *scal = malloc(2 * count * (f64 ? sizeof(double) : sizeof(float)));
    if (!offs || !scal) {
        free(offs);
        free(scal);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "batched GEMM: %zu matrices", count);
    }
    for (size_t i = 0; i < count; i++) {
        offs[i] = a.off + a_offs[i];
        offs[count + i] = b.off + b_offs[i];
        offs[2 * count + i] = c.off + c_offs[i];
        if (f64) {
            ((double *)scal)[i] = alpha;
            ((double *)scal)[count + i] = beta;
        } else {
            ((float *)scal)[i] = (float)alpha;
            ((float *)scal)[count + i] = (float)beta;
        }
    }
    cl_event ev = NULL;
    CLBlastStatusCode s =
        f64 ? CLBlastDgemmBatched(CLBlastLayoutRowMajor, op(ta), op(tb), m, n, k, scal, a.buf,
                                  offs, a.ld, b.buf, offs + count, b.ld, (double *)scal + count,
                                  c.buf, offs + 2 * count, c.ld, count, &ctx->queue, &ev)
            : CLBlastSgemmBatched(CLBlastLayoutRowMajor, op(ta), op(tb), m, n, k, scal, a.buf,
                                  offs, a.ld, b.buf, offs + count, b.ld, (float *)scal + count,
                                  c.buf, offs + 2 * count, c.ld, count, &ctx->queue, &ev);
    free(offs);
    free(scal);
    return blast_status(ctx, s, ev, f64 ? "DgemmBatched" : "SgemmBatched");
}

int clstats__syrk(clstats_ctx *ctx, bool f64, bool ta, size_t n, size_t k, double alpha,
                  struct clstats__mat a, double beta, struct clstats__mat c)
{
    cl_event ev = NULL;
    CLBlastStatusCode s =
        f64 ? CLBlastDsyrk(CLBlastLayoutRowMajor, CLBlastTriangleLower, op(ta), n, k, alpha, a.buf,
                           a.off, a.ld, beta, c.buf, c.off, c.ld, &ctx->queue, &ev)
            : CLBlastSsyrk(CLBlastLayoutRowMajor, CLBlastTriangleLower, op(ta), n, k,
                           (float)alpha, a.buf, a.off, a.ld, (float)beta, c.buf, c.off, c.ld,
                           &ctx->queue, &ev);
    return blast_status(ctx, s, ev, f64 ? "Dsyrk" : "Ssyrk");
}

int clstats__trsm(clstats_ctx *ctx, bool f64, bool right, bool tl, size_t m, size_t n,
                  double alpha, struct clstats__mat l, struct clstats__mat b)
{
    cl_event ev = NULL;
    const CLBlastSide side = right ? CLBlastSideRight : CLBlastSideLeft;
    CLBlastStatusCode s =
        f64 ? CLBlastDtrsm(CLBlastLayoutRowMajor, side, CLBlastTriangleLower, op(tl),
                           CLBlastDiagonalNonUnit, m, n, alpha, l.buf, l.off, l.ld, b.buf, b.off,
                           b.ld, &ctx->queue, &ev)
            : CLBlastStrsm(CLBlastLayoutRowMajor, side, CLBlastTriangleLower, op(tl),
                           CLBlastDiagonalNonUnit, m, n, (float)alpha, l.buf, l.off, l.ld, b.buf,
                           b.off, b.ld, &ctx->queue, &ev);
    return blast_status(ctx, s, ev, f64 ? "Dtrsm" : "Strsm");
}

int clstats__gemv(clstats_ctx *ctx, bool f64, bool ta, size_t m, size_t n, double alpha,
                  struct clstats__mat a, cl_mem x, size_t xoff, double beta, cl_mem y,
                  size_t yoff)
{
    cl_event ev = NULL;
    CLBlastStatusCode s =
        f64 ? CLBlastDgemv(CLBlastLayoutRowMajor, op(ta), m, n, alpha, a.buf, a.off, a.ld, x,
                           xoff, 1, beta, y, yoff, 1, &ctx->queue, &ev)
            : CLBlastSgemv(CLBlastLayoutRowMajor, op(ta), m, n, (float)alpha, a.buf, a.off, a.ld,
                           x, xoff, 1, (float)beta, y, yoff, 1, &ctx->queue, &ev);
    return blast_status(ctx, s, ev, f64 ? "Dgemv" : "Sgemv");
}
