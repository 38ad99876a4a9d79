/* nugget.c - GPfit's nugget rule: the smallest delta >= 0 that brings the 2-norm condition
 * number of R + delta I to e^thres (Ranjan, Haynes and Karsten 2011), from each matrix's
 * extreme eigenvalues, which the linear-algebra layer finds on the device (Householder's
 * tridiagonal reduction, Sturm bisection: src/linalg/extremes.c), so R never comes back. */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>

int clstats__gp_nugget(clstats_ctx *ctx, cl_mem r, size_t step, size_t n, size_t count,
                       double thres, double *delta)
{
    double *lo = malloc(2 * count * sizeof *lo);
    if (!lo) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: the nugget's eigenvalues");
    double *hi = lo + count;
    const struct clstats__mat a = {r, 0, n};
    const int status = clstats__eig_extremes_many(ctx, a, step, n, count, lo, hi);
    const double e = exp(thres);
    /* (lmax + delta) / (lmin + delta) = e^thres; a negative or zero lmin (duplicate rows, or
     * rounding) still gives the delta that meets the bound. */
    for (size_t m = 0; status == CLSTATS_OK && m < count; m++) {
        const double need = (hi[m] - e * lo[m]) / (e - 1);
        delta[m] = need > 0 ? need : 0;
    }
    free(lo);
    return status;
}
