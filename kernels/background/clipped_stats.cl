/* clipped_stats.cl - one work-item per mesh box: photutils' box statistics (Background2D with
 * SigmaClip(sigma, maxiters), include/clstats/background.h says the steps). The box's valid
 * pixels are copied to its own stretch of `sorted` and sorted, so every step after is a walk over
 * a contiguous range of ascending values: astropy's clipping keeps median +- sigma std, which is
 * a range of the sorted values, and every sum below runs over the kept range in ascending order
 * (tests/reference_clipped.c makes them in the same order, so the results are compared bit for
 * bit). All in double, as photutils computes; no FMA contraction.
 *
 * Build options: IN_DOUBLE (float64 input), HAS_MASK. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#define BAD_BOX (-1e30f)
#define MAD_TO_STD 1.482602218505602 /* 1 / Phi^-1(3/4), astropy's mad_std */

/* the estimators' numbers (include/clstats/background.h's enums) */
#define EST_SEXTRACTOR 0
#define EST_MEDIAN 1
#define EST_MEAN 2
#define EST_MMM 3
#define EST_BIWEIGHT 4
#define RMS_STD 0
#define RMS_MAD_STD 1
#define RMS_BIWEIGHT 2

#include "box_pixels.cl"

static void sift_down(__global double *v, long root, long n)
{
    for (long child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && v[child + 1] > v[child]) child++;
        if (!(v[child] > v[root])) return;
        const double t = v[root];
        v[root] = v[child];
        v[child] = t;
    }
}

/* Heap sort: in place, no recursion, for the n values of one work-item. */
static void sort_values(__global double *v, long n)
{
    for (long i = n / 2 - 1; i >= 0; i--)
        sift_down(v, i, n);
    for (long end = n - 1; end > 0; end--) {
        const double t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
}

/* numpy's median of v[a..b), ascending: the middle value, or the mean of the middle two. */
static double median_of(__global const double *v, long a, long b)
{
    const long n = b - a, m = a + n / 2;
    return n & 1 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

static double mean_of(__global const double *v, long a, long b)
{
    double s = 0.0;
    for (long i = a; i < b; i++)
        s += v[i];
    return s / (double)(b - a);
}

/* numpy's std (ddof 0): the root of the mean squared deviation from the mean. */
static double std_of(__global const double *v, long a, long b, double mean)
{
    double s = 0.0;
    for (long i = a; i < b; i++) {
        const double d = v[i] - mean;
        s += d * d;
    }
    return sqrt(s / (double)(b - a));
}

/* The k-th smallest (from 0) of |v[i] - m| over v[a..b), ascending: the deviations below m fall
 * and those above rise, so the two sides merge from the value nearest m outwards. */
static double kth_deviation(__global const double *v, long a, long b, double m, long k)
{
    long lo = a, hi = b; /* v[a..lo) < m <= v[lo..b) */
    while (lo < hi) {
        const long mid = lo + (hi - lo) / 2;
        if (v[mid] < m)
            lo = mid + 1;
        else
            hi = mid;
    }
    long left = lo - 1, right = lo;
    double d = 0.0;
    for (long i = 0; i <= k; i++) {
        const double dl = left >= a ? m - v[left] : INFINITY;
        const double dr = right < b ? v[right] - m : INFINITY;
        if (dl <= dr) {
            d = dl;
            left--;
        } else {
            d = dr;
            right++;
        }
    }
    return d;
}

/* The median absolute deviation from m (astropy's median_absolute_deviation). */
static double mad_of(__global const double *v, long a, long b, double m)
{
    const long n = b - a;
    const double hi = kth_deviation(v, a, b, m, n / 2);
    return n & 1 ? hi : (kth_deviation(v, a, b, m, n / 2 - 1) + hi) / 2.0;
}

/* astropy's biweight_location(c, M = median): the median if the MAD is 0. */
static double biweight_location(__global const double *v, long a, long b, double med, double c)
{
    const double mad = mad_of(v, a, b, med);
    if (mad == 0.0) return med;
    double num = 0.0, den = 0.0;
    for (long i = a; i < b; i++) {
        const double d = v[i] - med, u = d / (c * mad);
        const double w = fabs(u) >= 1.0 ? 0.0 : (1.0 - u * u) * (1.0 - u * u);
        num += d * w;
        den += w;
    }
    return med + num / den;
}

/* astropy's biweight_scale(c, M = median), the sample size all the kept values: 0 if the MAD
 * is 0. */
static double biweight_scale(__global const double *v, long a, long b, double med, double c)
{
    const double mad = mad_of(v, a, b, med);
    if (mad == 0.0) return 0.0;
    double f1 = 0.0, f2 = 0.0;
    for (long i = a; i < b; i++) {
        const double d = v[i] - med, u = d / (c * mad), u2 = u * u;
        if (!(fabs(u) < 1.0)) continue;
        const double q = (1.0 - u2) * (1.0 - u2);
        f1 += d * d * (q * q);
        f2 += (1.0 - u2) * (1.0 - 5.0 * u2);
    }
    return sqrt((double)(b - a) * f1 / (fabs(f2) * fabs(f2)));
}

/* astropy's sigma clipping (median centre, std, its C fast path): the bounds median -+ sigma
 * std of what is kept, again until nothing more is clipped or maxiters rounds (< 0: no limit);
 * what is kept in
 * the end is every valid value within the last bounds. v[0..n) ascending; the kept range out. */
static void sigma_clip(__global const double *v, long n, double sigma, int maxiters, long *ka,
                       long *kb)
{
    long a = 0, b = n;
    double lo = -INFINITY, hi = INFINITY;
    for (int iter = 0; b > a;) {
        const double mean = mean_of(v, a, b), sd = std_of(v, a, b, mean);
        const double med = median_of(v, a, b);
        lo = med - sigma * sd;
        hi = med + sigma * sd;
        long na = a, nb = b;
        while (na < nb && !(v[na] >= lo))
            na++;
        while (nb > na && !(v[nb - 1] <= hi))
            nb--;
        if (nb - na == b - a) break;
        a = na, b = nb;
        if (maxiters >= 0 && ++iter >= maxiters) break;
    }
    if (b == a) {
        *ka = *kb = 0;
        return;
    }
    while (a > 0 && v[a - 1] >= lo)
        a--;
    while (b < n && v[b] <= hi)
        b++;
    *ka = a, *kb = b;
}

/* Box (id 0, row0 + id 1) of a width x height image at img + offset, rows `stride` apart, of a
 * mesh nby boxes high (the launch takes a band of its rows); `sorted` holds bw * bh values for
 * each box of the band. max_missing: a box with more of its bw * bh pixels missing or clipped is
 * bad (photutils' exclude_percentile; pixels beyond the image's edge count as missing, as
 * photutils pads with NaN). out: every box's background, then every box's RMS. */
__kernel void clipped_stats(__global const in_t *img, ulong offset, ulong stride, int width,
                            int height, int bw, int bh, __global const uchar *mask, double sigma,
                            int maxiters, double max_missing, int estimator, int rms_estimator,
                            double biweight_c, double biweight_scale_c, int row0, int nby,
                            __global double *sorted, __global float *out)
{
    const int bx = get_global_id(0), by = row0 + get_global_id(1);
    const int nbx = get_global_size(0), nb = nbx * nby, box = by * nbx + bx;
    const int x0 = bx * bw, y0 = by * bh;
    const int w = min(bw, width - x0), h = min(bh, height - y0);
    __global double *v = sorted + ((long)get_global_id(1) * nbx + bx) * bw * bh;
    long n = 0;
    for (int y = y0; y < y0 + h; y++)
        for (int x = x0; x < x0 + w; x++) {
            const double pix = img[offset + (ulong)y * stride + (ulong)x];
            if (!missing(mask, (long)y * width + x) && isfinite(pix)) v[n++] = pix;
        }
    sort_values(v, n);
    long a, b;
    sigma_clip(v, n, sigma, maxiters, &a, &b);
    if (b == a || (double)((long)bw * bh - (b - a)) > max_missing) {
        out[box] = out[nb + box] = BAD_BOX;
        return;
    }
    const double mean = mean_of(v, a, b), med = median_of(v, a, b);
    double back;
    switch (estimator) {
    case EST_MEDIAN: back = med; break;
    case EST_MEAN: back = mean; break;
    case EST_MMM: back = 3.0 * med - 2.0 * mean; break;
    case EST_BIWEIGHT: back = biweight_location(v, a, b, med, biweight_c); break;
    default: { /* photutils' SExtractorBackground */
        const double sd = std_of(v, a, b, mean);
        back = sd == 0.0 ? mean
               : fabs(mean - med) / sd < 0.3 ? 2.5 * med - 1.5 * mean
                                              : med;
    }
    }
    double rms;
    switch (rms_estimator) {
    case RMS_MAD_STD: rms = MAD_TO_STD * mad_of(v, a, b, med); break;
    case RMS_BIWEIGHT: rms = biweight_scale(v, a, b, med, biweight_scale_c); break;
    default: rms = std_of(v, a, b, mean);
    }
    out[box] = (float)back;
    out[nb + box] = (float)rms;
}
