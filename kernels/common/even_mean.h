/* even_mean.h - the mean of an even count's two middle values: the one rule that the filter
 * kernels (through float_keys.cl) and the host's order statistics (src/select/select.c) share, so it
 * is valid C and OpenCL C alike. */
#ifndef EVEN_MEAN_H
#define EVEN_MEAN_H

#ifdef __OPENCL_VERSION__
#define EVEN_MEAN_FN inline
#else
#include <math.h>
#define EVEN_MEAN_FN static inline
#endif

/* (a + b) / 2 rounded once to float: numpy's float32 median wherever a + b does not overflow,
 * and the float nearest the exact mean where it does. The rounded sum halved is already that:
 * a sum below 2^-125 in magnitude is exact (it is a multiple of the smallest subnormal), and
 * above it halving is exact. Only a sum of finite values can overflow, and then both lie above
 * 2^103, so their halves are exact and one rounding adds them. -inf and +inf give NaN, as in
 * numpy. */
EVEN_MEAN_FN float mean_of_middles(float a, float b)
{
    const float s = a + b;
    if (isinf(s) && isfinite(a) && isfinite(b)) return 0.5f * a + 0.5f * b;
    return s * 0.5f;
}

/* The same rule in float64 (clstats_median_f64's and the float64 filter's): (a + b) / 2 as
 * numpy computes it, except that a + b of two finite values never overflows. In OpenCL C only
 * where the including kernel enabled fp64 and says so with FP64. */
#if !defined(__OPENCL_VERSION__) || defined(FP64)
EVEN_MEAN_FN double mean_of_middles_f64(double a, double b)
{
    const double s = a + b;
    if (isinf(s) && isfinite(a) && isfinite(b)) return 0.5 * a + 0.5 * b;
    return s * 0.5;
}
#endif

#endif
