/* nugget.c - GPfit's nugget rule: the smallest delta >= 0 that brings the 2-norm condition
 * number of R + delta I to e^thres (Ranjan, Haynes and Karsten 2011), from R's extreme
 * eigenvalues: Householder's reduction to a tridiagonal matrix, then bisection on Sturm counts
 * (Golub and Van Loan, sections 8.3 and 8.4), on the host in float64. */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>

/* Reduces the symmetric n x n a (full, row-major, overwritten) to the tridiagonal matrix with
 * diagonal diag and subdiagonal off (n - 1) by similarity transforms H = I - 2 v v'/v'v. */
static void tridiagonalise(double *a, size_t n, double *diag, double *off, double *v, double *p)
{
    for (size_t k = 0; k + 2 < n; k++) {
        const size_t m = n - k - 1; /* rows below the pivot */
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
        /* p = (2/v'v) A v, q = p - (v'p/v'v) v, A -= v q' + q v' on the trailing block. */
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

int clstats__gp_nugget(double *r, size_t n, double thres, double *delta)
{
    double *work = malloc(4 * n * sizeof *work);
    if (!work) return clstats__fail(NULL, CLSTATS_ERR_NOMEM, "gp: the nugget's eigenvalues");
    double *diag = work, *off = work + n, *v = work + 2 * n, *p = work + 3 * n;
    tridiagonalise(r, n, diag, off, v, p);
    /* Gershgorin's bounds hold every eigenvalue. */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const double rad = (i ? fabs(off[i - 1]) : 0) + (i + 1 < n ? fabs(off[i]) : 0);
        lo = fmin(lo, diag[i] - rad);
        hi = fmax(hi, diag[i] + rad);
    }
    const double lmin = eigenvalue(diag, off, n, 0, lo, hi);
    const double lmax = eigenvalue(diag, off, n, n - 1, lo, hi);
    const double e = exp(thres);
    /* (lmax + delta) / (lmin + delta) = e^thres; a negative or zero lmin (duplicate rows, or
     * rounding) still gives the delta that meets the bound. */
    const double need = (lmax - e * lmin) / (e - 1);
    *delta = need > 0 ? need : 0;
    free(work);
    return CLSTATS_OK;
}
