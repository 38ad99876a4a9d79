/* extremes.c - the smallest and largest eigenvalues of many symmetric float64 matrices: each
 * reduced to a tridiagonal matrix by Householder's reflections, on the device a work-group a
 * matrix (kernels/linalg/tridiagonal.cl; only 2 n values a matrix come back) or, on CPU
 * devices, on the host (linalg.eigen), then the two eigenvalues by bisection on Sturm counts
 * on the host, O(n) a step (Golub and Van Loan, sections 8.3 and 8.4). */
#include "linalg_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Eigenvalues of the tridiagonal matrix below x (Sturm's count by the LDL' pivots). */
static size_t below(const double *diag, const double *off, size_t n, double x)
{
    size_t count = 0;
    double q = 1;
    for (size_t i = 0; i < n; i++) {
        const double b2 = i ? off[i - 1] * off[i - 1] : 0;
        q = diag[i] - x - (i ? b2 / q : 0);
        if (q == 0) q = -1e-300; /* a zero pivot counts as just below x */
        if (q < 0) count++;
    }
    return count;
}

/* The eigenvalue of rank `which` (0 the smallest) by bisection inside [lo, hi]. */
static double eigenvalue(const double *diag, const double *off, size_t n, size_t which, double lo,
                         double hi)
{
    for (int it = 0; it < 200; it++) {
        const double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi) break;
        if (below(diag, off, n, mid) > which)
            hi = mid;
        else
            lo = mid;
    }
    return lo + (hi - lo) / 2;
}

static void gershgorin(const double *diag, const double *off, size_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const double rad = (i ? fabs(off[i - 1]) : 0) + (i + 1 < n ? fabs(off[i]) : 0);
        *lo = fmin(*lo, diag[i] - rad);
        *hi = fmax(*hi, diag[i] + rad);
    }
}

static void tridiagonal_extremes(const double *diag, const double *off, size_t n, double *lo_out,
                                 double *hi_out)
{
    double lo, hi;
    gershgorin(diag, off, n, &lo, &hi); /* every eigenvalue lies inside */
    *lo_out = eigenvalue(diag, off, n, 0, lo, hi);
    *hi_out = eigenvalue(diag, off, n, n - 1, lo, hi);
}

double clstats__tridiagonal_eigenvalue(const double *diag, const double *off, size_t n,
                                       size_t which)
{
    double lo, hi;
    gershgorin(diag, off, n, &lo, &hi);
    return eigenvalue(diag, off, n, which, lo, hi);
}

/* The host's reduction of the symmetric n x n a (full, row-major, overwritten) to diag and
 * off, by the kernel's steps in the kernel's order of one item (v and p: n doubles each). */
static void tridiagonalise(double *a, size_t n, double *diag, double *off, double *v, double *p)
{
    for (size_t k = 0; k + 2 < n; k++) {
        const size_t m = n - k - 1;
        double norm = 0;
        for (size_t i = 0; i < m; i++) {
            v[i] = a[(k + 1 + i) * n + k];
            norm += v[i] * v[i];
        }
        norm = sqrt(norm);
        if (norm == 0) continue;
        const double alpha = v[0] > 0 ? -norm : norm;
        v[0] -= alpha;
        double vv = 0;
        for (size_t i = 0; i < m; i++) vv += v[i] * v[i];
        if (vv == 0) continue;
        double vp = 0;
        for (size_t i = 0; i < m; i++) {
            double s = 0;
            const double *row = a + (k + 1 + i) * n + k + 1;
            for (size_t j = 0; j < m; j++) s += row[j] * v[j];
            p[i] = 2 * s / vv;
            vp += v[i] * p[i];
        }
        const double kq = vp / vv;
        for (size_t i = 0; i < m; i++) p[i] -= kq * v[i];
        for (size_t i = 0; i < m; i++) {
            double *row = a + (k + 1 + i) * n + k + 1;
            for (size_t j = 0; j < m; j++) row[j] -= v[i] * p[j] + p[i] * v[j];
        }
        a[(k + 1) * n + k] = alpha;
    }
    for (size_t i = 0; i < n; i++) diag[i] = a[i * n + i];
    for (size_t i = 0; i + 1 < n; i++) off[i] = a[(i + 1) * n + i];
}

/* Each matrix read back and reduced on the host, into out's layout (2 n a matrix). */
static int on_host(clstats_ctx *ctx, struct clstats__mat a, size_t step, size_t n,
                   size_t count, double *out)
{
    double *copy = malloc((n * n + 2 * n) * sizeof *copy);
    if (!copy) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "eigenvalues: a matrix");
    int status = CLSTATS_OK;
    for (size_t m = 0; m < count && status == CLSTATS_OK; m++) {
        status = clstats__cl_check(
            ctx, clEnqueueReadBuffer(ctx->queue, a.buf, CL_TRUE, (a.off + m * step) * 8,
                                     n * n * 8, copy, 0, NULL, NULL),
            "clEnqueueReadBuffer(eigenvalues)");
        if (status == CLSTATS_OK)
            tridiagonalise(copy, n, out + 2 * n * m, out + 2 * n * m + n, copy + n * n,
                           copy + n * n + n);
    }
    free(copy);
    return status;
}

/* The group's size: on CPU devices one item a matrix, reading its rows (PoCL ran 8 items a
 * matrix by columns at 0.65 times that speed, 256 at a quarter: bench/RESULTS.md), where the
 * kernel runs only when linalg.eigen asks; elsewhere a power of two up to 256 that the device
 * allows, reading by columns. */
static size_t group_size(const clstats_ctx *ctx)
{
    if (ctx->is_cpu) return 1;
    size_t wg = 256;
    while (wg > 1 && wg > ctx->max_work_group) wg /= 2;
    return wg;
}

int clstats__eig_extremes_many(clstats_ctx *ctx, struct clstats__mat a, size_t step, size_t n,
                               size_t count, double *lo, double *hi)
{
    if (!ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the device has no float64");
    const long place = clstats__tuned(ctx, P_LINALG_EIGEN);
    const size_t wg = group_size(ctx);
    /* The device's kernel keeps two vectors of n doubles and a work-group's partial sums in
     * local memory; a matrix too large for that (n = 4064 needs 65 KB, NVIDIA's OpenCL gives
     * 48 KB) is reduced on the host. */
    const bool fits = (2 * n + wg) * sizeof(double) <= ctx->local_mem;
    const bool host_side = place == 2 || (place == AUTO && ctx->is_cpu) || !fits;
    char options[64];
    snprintf(options, sizeof options, "-D WG=%zu -D BY_ROWS=%d", wg, ctx->is_cpu ? 1 : 0);
    cl_program prog;
    cl_kernel k;
    cl_mem work, out;
    double *host = malloc(2 * n * count * sizeof *host);
    int status = host ? CLSTATS_OK
                      : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "eigenvalues: %zu matrices", count);
    if (status == CLSTATS_OK && host_side) {
        status = on_host(ctx, a, step, n, count, host);
        goto extremes;
    }
    if (status == CLSTATS_OK) status = clstats__program(ctx, "tridiagonal.cl", options, &prog);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "linalg.tri", count * n * n * 8, &work);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "linalg.tri_out", count * 2 * n * 8, &out);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, "tridiagonalise", &k);
    if (status != CLSTATS_OK) goto fail;
    const cl_ulong off64 = a.off, step64 = step;
    const cl_uint n32 = (cl_uint)n;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(tridiagonalise)", KERNEL_ARG(a.buf),
                              KERNEL_ARG(off64), KERNEL_ARG(step64), KERNEL_ARG(n32),
                              KERNEL_ARG(work), KERNEL_ARG(out), KERNEL_LOCAL(n * sizeof(double)),
                              KERNEL_LOCAL(n * sizeof(double)), KERNEL_LOCAL(wg * sizeof(double)));
    if (status != CLSTATS_OK) goto fail;
    const size_t global = count * wg;
    status = clstats__launch(ctx, k, 1, NULL, &global, &wg, "tridiagonalise");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0,
                                                            2 * n * count * sizeof *host, host,
                                                            0, NULL, NULL),
                                   "clEnqueueReadBuffer(tridiagonal)");
extremes:
    for (size_t m = 0; status == CLSTATS_OK && m < count; m++)
        tridiagonal_extremes(host + 2 * n * m, host + 2 * n * m + n, n, &lo[m], &hi[m]);
fail:
    free(host);
    return status;
}
