/* lanczos.c - the largest eigenvalue of many symmetric positive semidefinite float64 operators
 * at once by Lanczos's iteration on the device (kernels/linalg/lanczos.cl): a full matrix A,
 * or Y Y' for an upper triangular Y (with Y = L^-T from a Cholesky factor, (L L')^-1). Every
 * step is a few launches for all the matrices in lockstep (the products, classical
 * Gram-Schmidt against every earlier vector twice, the next vector); T's entries stay on the
 * device and come back only at the checks, every CHECK_EVERY steps, where the host finds T's
 * largest eigenvalue theta by Sturm bisection (src/linalg/extremes.c) and its error estimate
 * min(r, r^2 / gap) (r = |beta_k s_k|, s_k the last entry of theta's unit eigenvector of T;
 * gap to T's next eigenvalue: Parlett, The Symmetric Eigenvalue Problem, 11.7), which the
 * caller's test judges. A matrix's theta is kept from the check that accepted it, so that it
 * does not depend on the other matrices of the batch. Largest eigenvalues converge in a few
 * tens of steps where the top of the spectrum stands apart, as it does for correlation
 * matrices and for the inverses of shifted ones (src/gp/nugget_shift.c); like every Krylov
 * method it assumes the start vector not orthogonal to the top eigenvector (a fixed
 * pseudo-random one). */
#include "linalg_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Checks from step MIN_STEPS, then every CHECK_EVERY: each reads T back (a wait on the queue). */
enum { MIN_STEPS = 6, CHECK_EVERY = 4 };
/* The groups of rows_times (kernels/linalg/lanczos.cl ROW_ITEMS), of dots and next_vector
 * (SUM_ITEMS), and cols_times_upper's COL_X x COL_Y. */
enum { ROW_ITEMS = 64, SUM_ITEMS = 256, COL_X = 16, COL_Y = 16 };

/* A start vector with no particular direction (splitmix64 from a fixed seed: reproducible),
 * entries uniform in [-1, 1), normalised. */
static void start_vector(double *x, size_t n)
{
    uint64_t state = 0x5EED1A2C05ull;
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        x[i] = (double)(z >> 11) * 0x1.0p-52 - 1;
        s += x[i] * x[i];
    }
    s = sqrt(s);
    for (size_t i = 0; i < n; i++)
        x[i] /= s;
}

/* |last entry| of the unit eigenvector of the k x k tridiagonal T (diag, off) for its largest
 * eigenvalue theta, by two steps of inverse iteration: T - theta I is semidefinite there, so
 * its LDL' needs no pivoting (a pivot at rounding is floored). */
static double last_component(const double *diag, const double *off, size_t k, double theta,
                             double *d, double *x)
{
    double scale = 0;
    for (size_t i = 0; i < k; i++)
        scale = fmax(scale, fabs(diag[i]) + (i ? off[i - 1] : 0));
    const double floor = 1e-300 + scale * 0x1.0p-60;
    for (size_t i = 0; i < k; i++)
        x[i] = 1;
    for (int it = 0; it < 2; it++) {
        for (size_t i = 0; i < k; i++) { /* L D L' = T - theta I, solving L y = x as we go */
            double p = diag[i] - theta;
            if (i) {
                const double l = off[i - 1] / d[i - 1];
                p -= l * off[i - 1];
                x[i] -= l * x[i - 1];
            }
            if (fabs(p) < floor) p = p < 0 ? -floor : floor;
            d[i] = p;
        }
        for (size_t i = k; i-- > 0;) { /* D L' z = y */
            x[i] /= d[i];
            if (i + 1 < k) x[i] -= off[i] / d[i] * x[i + 1];
        }
        double s = 0;
        for (size_t i = 0; i < k; i++)
            s += x[i] * x[i];
        s = sqrt(s);
        if (!(s > 0) || !isfinite(s)) return 1; /* no estimate: counts as not converged */
        for (size_t i = 0; i < k; i++)
            x[i] /= s;
    }
    return fabs(x[k - 1]);
}

/* theta and its error estimate from T's first `steps` entries (beta[steps - 1] the last
 * vector's length). */
static void ritz(const double *alpha, const double *beta, size_t steps, double *work, double *theta,
                 double *err)
{
    *theta = clstats__tridiagonal_eigenvalue(alpha, beta, steps, steps - 1);
    const double r =
        beta[steps - 1] * last_component(alpha, beta, steps, *theta, work, work + steps);
    const double gap =
        steps > 1 ? *theta - clstats__tridiagonal_eigenvalue(alpha, beta, steps, steps - 2) : 0;
    *err = gap > 0 ? fmin(r, r * r / gap) : r;
}

struct run {
    clstats_ctx *ctx;
    cl_program prog;
    enum clstats__lanczos_op op;
    struct clstats__mat a;
    size_t step, n, count, k1; /* k1: the vectors' rows a matrix, K + 1 */
    cl_mem v, w, tmp, h, alpha, beta;
};

/* w = Op v_k for every matrix. */
static int product(struct run *r, size_t k)
{
    clstats_ctx *ctx = r->ctx;
    cl_kernel kr, kc;
    int status = clstats__kernel(ctx, r->prog, "rows_times", &kr);
    if (status != CLSTATS_OK) return status;
    const cl_ulong off = r->a.off, step = r->step, xoff = k * r->n, vstep = r->k1 * r->n,
                   nstep = r->n;
    const cl_uint n32 = (cl_uint)r->n, upper = r->op == LANCZOS_GRAM_UPPER;
    const cl_ulong zero = 0;
    cl_mem x = r->v;
    cl_ulong x_off = xoff, x_step = vstep;
    if (upper) { /* tmp = Y' v_k first, then w = Y tmp */
        status = clstats__kernel(ctx, r->prog, "cols_times_upper", &kc);
        if (status != CLSTATS_OK) return status;
        status = CLSTATS_SET_ARGS(ctx, kc, "clSetKernelArg(lanczos cols_times_upper)",
                                  KERNEL_ARG(r->a.buf), KERNEL_ARG(off), KERNEL_ARG(step),
                                  KERNEL_ARG(n32), KERNEL_ARG(r->v), KERNEL_ARG(xoff),
                                  KERNEL_ARG(vstep), KERNEL_ARG(r->tmp), KERNEL_ARG(nstep));
        if (status != CLSTATS_OK) return status;
        const size_t gc[3] = {(r->n + COL_X - 1) / COL_X * COL_X, COL_Y, r->count},
                     lc[3] = {COL_X, COL_Y, 1};
        status = clstats__launch(ctx, kc, 3, NULL, gc, lc, "lanczos cols_times_upper");
        if (status != CLSTATS_OK) return status;
        x = r->tmp;
        x_off = zero;
        x_step = nstep;
    }
    status = CLSTATS_SET_ARGS(ctx, kr, "clSetKernelArg(lanczos rows_times)", KERNEL_ARG(r->a.buf),
                              KERNEL_ARG(off), KERNEL_ARG(step), KERNEL_ARG(n32), KERNEL_ARG(upper),
                              KERNEL_ARG(x), KERNEL_ARG(x_off), KERNEL_ARG(x_step),
                              KERNEL_ARG(r->w), KERNEL_ARG(nstep));
    if (status != CLSTATS_OK) return status;
    const size_t gr[2] = {r->n * ROW_ITEMS, r->count}, lr[2] = {ROW_ITEMS, 1};
    status = clstats__launch(ctx, kr, 2, NULL, gr, lr, "lanczos rows_times");
    return status;
}

/* w made orthogonal to v_0 .. v_k (twice), then beta_k, alpha_k and v_{k+1}. */
static int orthogonalise(struct run *r, size_t k)
{
    clstats_ctx *ctx = r->ctx;
    cl_kernel kd, ks, kn;
    int status = clstats__kernel(ctx, r->prog, "dots", &kd);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, r->prog, "subtract", &ks);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, r->prog, "next_vector", &kn);
    if (status != CLSTATS_OK) return status;
    const cl_uint n32 = (cl_uint)r->n, k1 = (cl_uint)r->k1, k32 = (cl_uint)k;
    const cl_ulong hstep = 2 * r->k1;
    for (int pass = 0; pass < 2 && status == CLSTATS_OK; pass++) {
        const cl_ulong hoff = pass * r->k1;
        status = CLSTATS_SET_ARGS(ctx, kd, "clSetKernelArg(lanczos dots)", KERNEL_ARG(r->v),
                                  KERNEL_ARG(n32), KERNEL_ARG(k1), KERNEL_ARG(r->w),
                                  KERNEL_ARG(r->h), KERNEL_ARG(hoff), KERNEL_ARG(hstep));
        if (status != CLSTATS_OK) return status;
        const size_t gd[2] = {(k + 1) * SUM_ITEMS, r->count}, ld[2] = {SUM_ITEMS, 1};
        status = clstats__launch(ctx, kd, 2, NULL, gd, ld, "lanczos dots");
        if (status != CLSTATS_OK) break;
        status =
            CLSTATS_SET_ARGS(ctx, ks, "clSetKernelArg(lanczos subtract)", KERNEL_ARG(r->v),
                             KERNEL_ARG(n32), KERNEL_ARG(k1), KERNEL_ARG(k32), KERNEL_ARG(r->h),
                             KERNEL_ARG(hoff), KERNEL_ARG(hstep), KERNEL_ARG(r->w));
        if (status != CLSTATS_OK) return status;
        const size_t gs[2] = {r->n, r->count};
        status = clstats__launch(ctx, ks, 2, NULL, gs, NULL, "lanczos subtract");
    }
    if (status != CLSTATS_OK) return status;
    status = CLSTATS_SET_ARGS(ctx, kn, "clSetKernelArg(lanczos next_vector)", KERNEL_ARG(r->v),
                              KERNEL_ARG(n32), KERNEL_ARG(k1), KERNEL_ARG(k32), KERNEL_ARG(r->w),
                              KERNEL_ARG(r->h), KERNEL_ARG(hstep), KERNEL_ARG(r->alpha),
                              KERNEL_ARG(r->beta));
    if (status != CLSTATS_OK) return status;
    const size_t gn = r->count * SUM_ITEMS, ln = SUM_ITEMS;
    status = clstats__launch(ctx, kn, 1, NULL, &gn, &ln, "lanczos next_vector");
    return status;
}

static int buffers(struct run *r, const double *x0)
{
    clstats_ctx *ctx = r->ctx;
    const size_t n = r->n, c = r->count, k1 = r->k1;
    int status = clstats__scratch(ctx, "lanczos.v", c * k1 * n * 8, &r->v);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "lanczos.w", c * n * 8, &r->w);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "lanczos.tmp", c * n * 8, &r->tmp);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "lanczos.h", c * 2 * k1 * 8, &r->h);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "lanczos.alpha", c * (k1 - 1) * 8, &r->alpha);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "lanczos.beta", c * (k1 - 1) * 8, &r->beta);
    /* The last write waits (and the queue is in order): x0 is the caller's until it returns,
     * which an error before the first read back would otherwise free under pending writes. */
    for (size_t m = 0; m < c && status == CLSTATS_OK; m++)
        status = clstats__cl_check(ctx,
                                   clEnqueueWriteBuffer(ctx->queue, r->v, m + 1 == c,
                                                        m * k1 * n * 8, n * 8, x0, 0, NULL, NULL),
                                   "clEnqueueWriteBuffer(lanczos start)");
    return status;
}

int clstats__lanczos_top(clstats_ctx *ctx, enum clstats__lanczos_op op, struct clstats__mat a,
                         size_t step, size_t n, size_t count, size_t kmax,
                         clstats__lanczos_done done, void *user, double *theta, double *err)
{
    if (!ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the device has no float64");
    const size_t K = kmax < n ? kmax : n;
    struct run r = {
        .ctx = ctx, .op = op, .a = a, .step = step, .n = n, .count = count, .k1 = K + 1};
    double *host = malloc((2 * count * K + 2 * K + n) * sizeof *host);
    bool *ok = calloc(count, sizeof *ok);
    int status = host && ok ? CLSTATS_OK
                            : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "lanczos: %zu matrices", count);
    double *al = host, *be = host + count * K, *work = be + count * K, *x0 = work + 2 * K;
    if (status == CLSTATS_OK) {
        start_vector(x0, n);
        status = clstats__program(ctx, "lanczos.cl", "", &r.prog);
    }
    if (status == CLSTATS_OK) status = buffers(&r, x0);
    size_t steps = 0, left = count;
    for (size_t k = 0; k < K && left && status == CLSTATS_OK; k++) {
        status = product(&r, k);
        if (status == CLSTATS_OK) status = orthogonalise(&r, k);
        steps = k + 1;
        const bool last = steps == K;
        if (status != CLSTATS_OK ||
            !(last || (steps >= MIN_STEPS && (steps - MIN_STEPS) % CHECK_EVERY == 0)))
            continue;
        status = clstats__cl_check(
            ctx,
            clEnqueueReadBuffer(ctx->queue, r.alpha, CL_FALSE, 0, count * K * 8, al, 0, NULL, NULL),
            "clEnqueueReadBuffer(lanczos alpha)");
        if (status == CLSTATS_OK)
            status = clstats__cl_check(ctx,
                                       clEnqueueReadBuffer(ctx->queue, r.beta, CL_TRUE, 0,
                                                           count * K * 8, be, 0, NULL, NULL),
                                       "clEnqueueReadBuffer(lanczos beta)");
        for (size_t m = 0; m < count && status == CLSTATS_OK; m++) {
            if (ok[m]) continue;
            ritz(al + m * K, be + m * K, steps, work, &theta[m], &err[m]);
            if (last || done(user, m, theta[m], err[m])) {
                ok[m] = true;
                left--;
                clstats__log(ctx,
                             "lanczos: matrix %zu of %zu, n %zu, %zu steps: %.12g (error "
                             "%.2g)",
                             m, count, n, steps, theta[m], err[m]);
            }
        }
    }
    free(host);
    free(ok);
    return status;
}

int clstats__shifted_with_identity(clstats_ctx *ctx, struct clstats__mat a, size_t step, size_t n,
                                   size_t count, cl_mem shift, cl_mem dst)
{
    cl_program prog;
    cl_kernel k;
    int status = clstats__program(ctx, "lanczos.cl", "", &prog);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, prog, "shifted_with_identity", &k);
    if (status != CLSTATS_OK) return status;
    const cl_ulong off = a.off, step64 = step;
    const cl_uint n32 = (cl_uint)n;
    status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(shifted_with_identity)", KERNEL_ARG(a.buf),
                              KERNEL_ARG(off), KERNEL_ARG(step64), KERNEL_ARG(n32),
                              KERNEL_ARG(shift), KERNEL_ARG(dst));
    if (status != CLSTATS_OK) return status;
    const size_t global[3] = {n, 2 * n, count};
    status = clstats__launch(ctx, k, 3, NULL, global, NULL, "shifted_with_identity");
    return status;
}
