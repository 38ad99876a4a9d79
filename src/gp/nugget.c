/* nugget.c - GPfit's nugget rule: the smallest delta >= 0 that brings the 2-norm condition
 * number of R + delta I to e^thres (Ranjan, Haynes and Karsten 2011), so R never comes back to
 * the host. gp.nugget picks how lambda_min and lambda_max are found: by shift and invert on
 * the device (src/gp/nugget_shift.c, GPUs), or both from the tridiagonal reduction
 * (src/linalg/extremes.c: Householder's reflections on the device or the host, Sturm
 * bisection; CPU devices, and the shift path's fallback). */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>

/* gp.nugget's values, in its table's order (src/core/tuning.c). */
enum { NUGGET_EIGEN = 1, NUGGET_SHIFT = 2 };

double clstats__gp_rule(double lmin, double lmax, double thres)
{
    /* (lmax + delta) / (lmin + delta) = e^thres; a negative or zero lmin (duplicate rows, or
     * rounding) still gives the delta that meets the bound. */
    const double e = exp(thres), need = (lmax - e * lmin) / (e - 1);
    return need > 0 ? need : 0;
}

int clstats__gp_nugget_eigen(clstats_ctx *ctx, cl_mem r, size_t step, size_t n, size_t count,
                             double thres, double *delta)
{
    double *lo = malloc(2 * count * sizeof *lo);
    if (!lo) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: the nugget's eigenvalues");
    double *hi = lo + count;
    const struct clstats__mat a = {r, 0, n};
    const int status = clstats__eig_extremes_many(ctx, a, step, n, count, lo, hi);
    for (size_t m = 0; status == CLSTATS_OK && m < count; m++)
        delta[m] = clstats__gp_rule(lo[m], hi[m], thres);
    free(lo);
    return status;
}

int clstats__gp_nugget(clstats_ctx *ctx, cl_mem r, size_t step, size_t n, size_t count,
                       double thres, double *delta)
{
    const long rule = clstats__tuned(ctx, P_GP_NUGGET);
    if (rule == NUGGET_SHIFT || (rule == AUTO && !ctx->is_cpu))
        return clstats__gp_nugget_shift(ctx, r, step, n, count, thres, delta);
    return clstats__gp_nugget_eigen(ctx, r, step, n, count, thres, delta);
}
