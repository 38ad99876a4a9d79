/* median_filter.cl - exact sliding-window median and MAD, one work-item per pixel.
 *
 * The reference design: one pass for the window's count, mean and standard deviation, NB value
 * bins over mean +- 3 sd, a count per bin, then a sort of only the bin that holds the median.
 * The count pass also gathers, speculatively, the values of the bins around the expected median
 * (the mean), so the usual case needs no separate gather pass. When the median's bin holds more
 * than CAP values (ties, heavy tails) it is narrowed in the space of order-preserving integer
 * keys, 4 bits a pass, until it fits or holds one value: so the result is always an element of
 * the window (or the mean of two), exact, and the same on every device. The MAD repeats the
 * selection on |x - m|, with bins over [0, 3 sd] from the median's pass.
 *
 * Build options: -D WX, -D WY (window columns and rows), -D NB=value bins, -D CAP=largest bin
 * sorted in registers, -D EVEN (even_rule.cl).
 * It reads the window from global memory, so it serves any width; median_filter_bisect.cl is
 * faster where its local-memory tile fits.
 * Boundary modes live in colmap/rowmap (built on the host): entry x + dx holds the source column
 * of window column dx for output column x, -1 meaning "outside: use cval".
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "even_rule.cl"

#ifndef NB
#define NB 32
#endif
#ifndef CAP
#define CAP 32
#endif


/* Value bin of v: 0 below lo, NB + 1 above hi. Monotone in v, so each bin is a key interval. */
inline int value_bin(float v, float lo, float hi, float scale)
{
    if (v < lo) return 0;
    if (v > hi) return NB + 1;
    return 1 + min((int)((v - lo) * scale), NB - 1);
}

/* WINDOW_BEGIN(v) ... WINDOW_END loops over the valid values of one pixel's window, each as
 * float `v` (its deviation from m when use_dev), read through the boundary maps. */
#define WINDOW_ARGS                                                                            \
    __global const float *img, long stride, __global const int *colmap,                       \
        __global const int *rowmap, int x, int y, float cval, int use_dev, float m
#define WINDOW_PASS img, stride, colmap, rowmap, x, y, cval, use_dev, m
#define WINDOW_BEGIN(v)                                                                        \
    for (int dy_ = 0; dy_ < WY; dy_++) {                                                       \
        const int r_ = rowmap[y + dy_];                                                        \
        for (int dx_ = 0; dx_ < WX; dx_++) {                                                   \
            const int c_ = colmap[x + dx_];                                                    \
            float v = (r_ < 0 || c_ < 0) ? cval : img[(long)r_ * stride + c_];                 \
            if (is_nan(v)) continue;                                                           \
            if (use_dev) v = deviation(v, m);
#define WINDOW_END                                                                             \
    }                                                                                          \
    }

/* Smallest key above `above` among the window's values (there is one: the caller knows). */
inline uint min_key_above(WINDOW_ARGS, uint above)
{
    uint best = 0xffffffffu;
    WINDOW_BEGIN(v)
    uint k = key_of(v);
    if (k > above && k < best) best = k;
    WINDOW_END
    return best;
}

inline void sort_keys(uint *buf, int c)
{
    for (int i = 1; i < c; i++) {
        uint k = buf[i];
        int j = i - 1;
        while (j >= 0 && buf[j] > k) {
            buf[j + 1] = buf[j];
            j--;
        }
        buf[j + 1] = k;
    }
}

/* The median of n window values (deviations when use_dev) whose keys lie in [kmin, kmax]:
 * value bins over [lo, hi] steer (any lo, hi give the exact answer), `expect` says where the
 * median probably is, for the speculative gather. */
float select_median(WINDOW_ARGS, int n, float lo, float hi, float expect, uint kmin, uint kmax)
{
    const int need_next = MIDDLE_IS_MEAN(n); /* the mean of ranks r and r + 1 */
    int r = MIDDLE_RANK(n);                  /* rank sought, within the current set */
    int c = n;                          /* size of the current set */
    uint klo = kmin, khi = kmax;        /* current set = values with keys in [klo, khi] */
    uint buf[CAP];
    int gathered = 0; /* buf holds the current set's keys */

    const float scale = (float)NB / (hi - lo);
    if (isfinite(lo) && isfinite(hi) && hi > lo && isfinite(scale) && scale > 0.0f) {
        int counts[NB + 2];
        for (int i = 0; i < NB + 2; i++) counts[i] = 0;
        const int be = is_nan(expect) ? 1 : value_bin(expect, lo, hi, scale);
        int got = 0; /* values of bins be-1..be+1 seen; buf overflowed when got > CAP */
        WINDOW_BEGIN(v)
        const int bin = value_bin(v, lo, hi, scale);
        counts[bin]++;
        if (bin >= be - 1 && bin <= be + 1) {
            if (got < CAP) buf[got] = key_of(v);
            got++;
        }
        WINDOW_END
        int b = 0;
        while (r >= counts[b]) r -= counts[b++];
        c = counts[b];
        klo = 0xffffffffu;
        khi = 0u;
        if (b >= be - 1 && b <= be + 1 && got <= CAP) {
            /* The guess held: keep the target bin's keys, no pass over the window. */
            int kept = 0;
            for (int i = 0; i < got; i++) {
                if (value_bin(value_of(buf[i]), lo, hi, scale) == b) {
                    klo = min(klo, buf[i]);
                    khi = max(khi, buf[i]);
                    buf[kept++] = buf[i];
                }
            }
            gathered = 1;
        } else {
            /* The bin's key interval: its gather, or its bounds for the narrowing below. */
            int kept = 0;
            WINDOW_BEGIN(v)
            if (value_bin(v, lo, hi, scale) == b) {
                uint k = key_of(v);
                klo = min(klo, k);
                khi = max(khi, k);
                if (c <= CAP) buf[kept++] = k;
            }
            WINDOW_END
            gathered = c <= CAP;
        }
    }

    /* Narrow [klo, khi] 4 key bits a pass until the set fits in buf or holds one value. */
    while (c > CAP && klo != khi) {
        uint span = khi - klo;
        int shift = max(0, 32 - (int)clz(span) - 4);
        int h[16];
        for (int i = 0; i < 16; i++) h[i] = 0;
        WINDOW_BEGIN(v)
        uint k = key_of(v);
        if (k >= klo && k <= khi) h[(k - klo) >> shift]++;
        WINDOW_END
        int j = 0;
        while (r >= h[j]) r -= h[j++];
        c = h[j];
        uint width = (1u << shift) - 1u;
        klo = klo + ((uint)j << shift);
        khi = (khi - klo < width) ? khi : klo + width;
    }
    if (klo != khi && !gathered) {
        int got = 0;
        WINDOW_BEGIN(v)
        uint k = key_of(v);
        if (k >= klo && k <= khi) buf[got++] = k;
        WINDOW_END
    }

    uint ka, kb;
    if (klo == khi) {
        ka = klo;
        kb = (r + 1 < c) ? klo : 0u;
    } else {
        sort_keys(buf, c);
        ka = buf[r];
        kb = (r + 1 < c) ? buf[r + 1] : 0u;
    }
    float a = value_of(ka);
    if (!need_next) return a;
    if (r + 1 >= c) kb = min_key_above(WINDOW_PASS, khi);
    return mean_of_middles(a, value_of(kb));
}

/* Median and MAD of one pixel's window; NaN where the window has no valid value. */
inline void window_median_mad(WINDOW_ARGS, int want_mad, float *med_out, float *mad_out)
{
    int n = 0;
    float sum = 0.0f, sumsq = 0.0f;
    uint kmin = 0xffffffffu, kmax = 0u;
    WINDOW_BEGIN(v)
    n++;
    sum += v;
    sumsq += v * v;
    uint k = key_of(v);
    kmin = min(kmin, k);
    kmax = max(kmax, k);
    WINDOW_END
    *med_out = *mad_out = as_float(CANONICAL_NAN);
    if (n == 0) return;
    const float vmin = value_of(kmin), vmax = value_of(kmax);
    if (kmin == kmax) { /* constant window: no selection needed */
        *med_out = vmin;
        *mad_out = mad_without_selection(vmin, true);
        return;
    }
    /* Bins from mean and sd: these only steer, exactness comes from the counts. */
    const float mean = sum / (float)n;
    const float sd = sqrt(fmax(sumsq / (float)n - mean * mean, 0.0f));
    const float med = select_median(WINDOW_PASS, n, fmax(mean - 3.0f * sd, vmin),
                                    fmin(mean + 3.0f * sd, vmax), mean, kmin, kmax);
    *med_out = med;
    if (!want_mad || is_nan(med)) return;
    if (is_inf(med)) {
        *mad_out = mad_without_selection(med, false);
        return;
    }
    /* |x - m| is largest at the extremes; for normal data the MAD is near 0.6745 sd. */
    const float dmax = fmax(deviation(vmin, med), deviation(vmax, med));
    use_dev = 1;
    m = med;
    *mad_out = select_median(WINDOW_PASS, n, 0.0f, fmin(3.0f * sd, dmax), 0.6745f * sd,
                             key_of(0.0f), key_of(dmax));
}

__kernel void median_mad(__global const float *img, long stride, int nx, int ny,
                __global const int *colmap, __global const int *rowmap, float cval,
                __global float *median_out, __global float *mad_out, int want_median,
                int want_mad)
{
    const int x = get_global_id(0), y = get_global_id(1);
    float med, mad;
    if (x >= nx || y >= ny) return;
    window_median_mad(img, stride, colmap, rowmap, x, y, cval, 0, 0.0f, want_mad, &med, &mad);
    const long o = (long)y * nx + x;
    if (want_median) median_out[o] = stored_result(med);
    if (want_mad) mad_out[o] = stored_result(mad);
}
