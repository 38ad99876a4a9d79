/* nugget_shift.c - GPfit's nugget rule by shift and invert, on the device: lambda_max of R by
 * a few tens of Lanczos steps (the top of a correlation matrix's spectrum stands apart), then
 * s = lambda_max / (e^thres - 1) (the rule's delta were lambda_min 0: far above R's rounding,
 * n eps lambda_max, so R + s I is positive definite), [R + s I; I] factored by the blocked
 * Cholesky with the identity carried into L^-T, and lambda_min + s as the largest eigenvalue
 * of (R + s I)^-1 = L^-T L^-1 by Lanczos again (src/linalg/lanczos.c). Inverted, R's smallest
 * eigenvalues, whose relative gaps against lambda_max are ~1e-9 (Lanczos on R took 750-950
 * steps: bench/RESULTS.md, issue 23k), become the well separated top of the spectrum.
 *
 * Accuracy: the factor is backward stable (L L' = R + s I + E, |E| ~ n eps lambda_max), so the
 * computed lambda_min moves by about n eps lambda_max, as a Householder reduction's does; the
 * steps stop once the rule's delta is known to TAU of that (both ends of lambda_min's
 * interval from the Ritz value and its error estimate give deltas that close), and
 * lambda_max once its relative error moves delta by less than a hundredth of that. */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>

/* The share of n eps lambda_max to which delta is found. */
#define TAU 0.25
/* Step limits of the two iterations: at n = 4064 lambda_max took 6-8 steps and lambda_min 6-32
 * where it stands apart from R's rounding; a dense cluster of R's eigenvalues at rounding
 * runs to the cap (RESULTS "issue 23l"). At n steps T holds every eigenvalue. */
#define LMAX_STEPS 96
#define LMIN_STEPS 128
/* Bytes of shifted copies with their identities factored at once (four matrices at n = 4064). */
#define COPY_BYTES ((size_t)1 << 30)

struct rule {
    double e, eps_n;     /* e^thres; n eps */
    const double *lmax;  /* lambda_max of the chunk's matrices (inverse phase) */
    const double *shift; /* their s */
};

/* lambda_max's Ritz value is done when its error moves delta (lambda_max / (e - 1)) by less
 * than TAU / 100 of n eps lambda_max. */
static bool lmax_done(void *user, size_t m, double theta, double err)
{
    const struct rule *r = user;
    (void)m;
    return err <= fmax(TAU / 100 * r->eps_n * (r->e - 1), 1e-14) * theta;
}

/* theta <= 1 / (lambda_min + s) <= theta + err: the deltas of both ends within TAU n eps
 * lambda_max. */
static bool lmin_done(void *user, size_t m, double theta, double err)
{
    const struct rule *r = user;
    const double s = r->shift[m], l = r->lmax[m];
    const double lo = 1 / (theta + err) - s, hi = 1 / theta - s;
    const double thres = log(r->e);
    return clstats__gp_rule(lo, l, thres) - clstats__gp_rule(hi, l, thres) <=
           TAU * r->eps_n * l;
}

/* The chunk's deltas (count matrices at r + first + m step) from their lambda_max. */
static int chunk(clstats_ctx *ctx, cl_mem r, size_t first, size_t step, size_t n, size_t count,
                 double thres, const double *lmax, double *delta)
{
    const size_t blocks = clstats__potrf_blocks(n), mat = 2 * n * n;
    cl_mem sbuf, copy, info, parts;
    double *shift = malloc(3 * count * sizeof *shift);
    int32_t *bad = malloc(count * sizeof *bad);
    int status = shift && bad ? CLSTATS_OK
                              : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: the nugget's shifts");
    if (status != CLSTATS_OK) goto fail;
    double *theta = shift + count, *err = theta + count;
    const double e = exp(thres);
    for (size_t m = 0; m < count; m++) shift[m] = lmax[m] / (e - 1);
    status = clstats__scratch(ctx, "gp.shift", count * 8, &sbuf);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.shifted", count * mat * 8, &copy);
    if (status == CLSTATS_OK) status = clstats__scratch(ctx, "gp.shift_info", count * 4, &info);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "gp.shift_parts", count * blocks * 8, &parts);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueWriteBuffer(ctx->queue, sbuf, CL_FALSE, 0,
                                                        count * 8, shift, 0, NULL, NULL),
                                   "clEnqueueWriteBuffer(gp shift)");
    const struct clstats__mat a = {r, first, n}, c = {copy, 0, n}, y = {copy, n * n, n};
    if (status == CLSTATS_OK)
        status = clstats__shifted_with_identity(ctx, a, step, n, count, sbuf, copy);
    if (status == CLSTATS_OK)
        status = clstats__potrf_many_identity(ctx, true, c, mat, n, n, n, count, info, parts);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, info, CL_TRUE, 0, count * 4,
                                                       bad, 0, NULL, NULL),
                                   "clEnqueueReadBuffer(gp shift info)");
    struct rule rule = {e, (double)n * 0x1.0p-52, lmax, shift};
    if (status == CLSTATS_OK)
        status = clstats__lanczos_top(ctx, LANCZOS_GRAM_UPPER, y, mat, n, count, LMIN_STEPS,
                                      lmin_done, &rule, theta, err);
    for (size_t m = 0; m < count && status == CLSTATS_OK; m++) {
        /* R is positive semidefinite to its rounding (n eps lambda_max, far below s), so
         * lambda_min + s = 1 / theta lies above s / 2; a Ritz value past that bound is an
         * iteration gone wrong (as on Intel's CPU runtime before lanczos.cl's subtraction
         * walked its column by a pointer: a miscompiled loop lost the vectors' orthogonality
         * and theta grew to 1e10). test_gp fails if any of its cases takes this net. */
        const bool lost = !(1 / theta[m] > shift[m] / 2);
        if (bad[m] || lost) {
            /* Not positive definite even shifted (a threshold so large that s is at R's
             * rounding), or the iteration lost: the reduction's eigenvalues instead. */
            if (bad[m])
                clstats__log(ctx, "gp nugget: R + %g I not positive definite at row %d; the "
                             "tridiagonal reduction instead", shift[m], bad[m] - 1);
            else
                clstats__log(ctx, "gp nugget: matrix %zu's lambda_min + s = %g, below s / 2 "
                             "= %g; the tridiagonal reduction instead", m, 1 / theta[m],
                             shift[m] / 2);
            const struct clstats__mat am = {r, first + m * step, n};
            double lo, hi;
            status = clstats__eig_extremes_many(ctx, am, step, n, 1, &lo, &hi);
            delta[m] = clstats__gp_rule(lo, hi, thres);
            continue;
        }
        delta[m] = clstats__gp_rule(1 / theta[m] - shift[m], lmax[m], thres);
    }
fail:
    free(shift);
    free(bad);
    return status;
}

int clstats__gp_nugget_shift(clstats_ctx *ctx, cl_mem r, size_t step, size_t n, size_t count,
                             double thres, double *delta)
{
    double *lmax = malloc(2 * count * sizeof *lmax);
    if (!lmax) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: the nugget's eigenvalues");
    double *err = lmax + count;
    struct rule rule = {exp(thres), (double)n * 0x1.0p-52, NULL, NULL};
    const struct clstats__mat a = {r, 0, n};
    int status = clstats__lanczos_top(ctx, LANCZOS_SYMMETRIC, a, step, n, count, LMAX_STEPS,
                                      lmax_done, &rule, lmax, err);
    const size_t most = COPY_BYTES < ctx->max_alloc ? COPY_BYTES : (size_t)ctx->max_alloc;
    size_t per = most / (2 * n * n * 8);
    if (per < 1) per = 1;
    for (size_t at = 0; at < count && status == CLSTATS_OK; at += per) {
        const size_t c = count - at < per ? count - at : per;
        status = chunk(ctx, r, at * step, step, n, c, thres, lmax + at, delta + at);
    }
    free(lmax);
    return status;
}
