/* median_filter.cl - exact sliding-window median and MAD, one work-item per pixel.
 *
 * The reference design: one pass for the window's count, mean and standard deviation, NB value
 * bins over mean +- 3 sd, a count per bin, then a sort of only the bin that holds the median.
 * When that bin holds more than CAP values (ties, heavy tails) the bin is narrowed in the space of
 * order-preserving integer keys, 4 bits a pass, until it fits or holds one value: so the result
 * is always an element of the window (or the mean of two), exact, and the same on every device.
 * The same selection runs again on |x - m| for the MAD.
 *
 * Build options: -D W=window width, -D NB=value bins, -D CAP=largest bin sorted in registers.
 * Boundary modes live in colmap/rowmap (built on the host): index W-1+nx of the column map holds
 * the source column for each window position, -1 meaning "outside: use cval".
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef NB
#define NB 32
#endif
#ifndef CAP
#define CAP 32
#endif

#define CANONICAL_NAN 0x7fc00000u

/* Order-preserving map of float bits to uint: total order, -0 just below +0. */
inline uint key_of(float v)
{
    uint u = as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

inline float value_of(uint k)
{
    return as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

/* Bit test, so that no compiler option can turn it into "never NaN". */
inline bool is_nan(float v)
{
    return (as_uint(v) & 0x7fffffffu) > 0x7f800000u;
}

/* |v - m| for the MAD; exactly 0 where v == m, so that inf - inf never makes a NaN. */
inline float deviation(float v, float m)
{
    return v == m ? 0.0f : fabs(v - m);
}

/* Value bin of v: 0 below lo, NB + 1 above hi. Monotone in v, so each bin is a key interval. */
inline int value_bin(float v, float lo, float hi, float scale)
{
    if (v < lo) return 0;
    if (v > hi) return NB + 1;
    return 1 + min((int)((v - lo) * scale), NB - 1);
}

/* Opens a loop over the valid values of the window at (x, y), each as float `v` (the deviation
 * from m when use_dev); WINDOW_END closes it. */
#define WINDOW_BEGIN(v)                                                                        \
    for (int dy_ = 0; dy_ < W; dy_++) {                                                        \
        const int r_ = rowmap[y + dy_];                                                        \
        for (int dx_ = 0; dx_ < W; dx_++) {                                                    \
            const int c_ = colmap[x + dx_];                                                    \
            float v = (r_ < 0 || c_ < 0) ? cval : img[(long)r_ * stride + c_];                 \
            if (is_nan(v)) continue;                                                           \
            if (use_dev) v = deviation(v, m);
#define WINDOW_END                                                                             \
    }                                                                                          \
    }

#define WINDOW_ARGS                                                                            \
    __global const float *img, long stride, __global const int *colmap,                       \
        __global const int *rowmap, int x, int y, float cval, int use_dev, float m
#define WINDOW_PASS img, stride, colmap, rowmap, x, y, cval, use_dev, m

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

/* Median of the window's valid values (or of their deviations from m): NaN when none. */
float window_median(WINDOW_ARGS)
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
    if (n == 0) return as_float(CANONICAL_NAN);
    if (kmin == kmax) return value_of(kmin);

    const int need_next = (n % 2) == 0; /* even count: the mean of ranks k and k + 1 */
    int r = (n - 1) / 2;                /* rank sought, within the current set */
    int c = n;                          /* size of the current set */
    uint klo = kmin, khi = kmax;        /* current set = values with keys in [klo, khi] */
    uint buf[CAP];
    int gathered = 0; /* buf holds the current set's keys */

    /* Value bins from mean and sd: these only steer, exactness comes from the counts. */
    float mean = sum / (float)n;
    float sd = sqrt(fmax(sumsq / (float)n - mean * mean, 0.0f));
    float lo = fmax(mean - 3.0f * sd, value_of(kmin));
    float hi = fmin(mean + 3.0f * sd, value_of(kmax));
    float scale = (float)NB / (hi - lo);
    if (isfinite(lo) && isfinite(hi) && hi > lo && isfinite(scale)) {
        int counts[NB + 2];
        for (int i = 0; i < NB + 2; i++) counts[i] = 0;
        WINDOW_BEGIN(v)
        counts[value_bin(v, lo, hi, scale)]++;
        WINDOW_END
        int b = 0;
        while (r >= counts[b]) r -= counts[b++];
        c = counts[b];
        /* The bin's key interval: its gather, or its bounds for the narrowing below. */
        int got = 0;
        klo = 0xffffffffu;
        khi = 0u;
        WINDOW_BEGIN(v)
        if (value_bin(v, lo, hi, scale) == b) {
            uint k = key_of(v);
            klo = min(klo, k);
            khi = max(khi, k);
            if (c <= CAP) buf[got++] = k;
        }
        WINDOW_END
        gathered = c <= CAP;
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
    return (a + value_of(kb)) * 0.5f;
}

__kernel void median_mad(__global const float *img, long stride, int nx, int ny,
                         __global const int *colmap, __global const int *rowmap, float cval,
                         __global float *median_out, __global float *mad_out, int want_median,
                         int want_mad)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= nx || y >= ny) return;
    float med = window_median(img, stride, colmap, rowmap, x, y, cval, 0, 0.0f);
    float mad = as_float(CANONICAL_NAN);
    if (want_mad && !is_nan(med))
        mad = window_median(img, stride, colmap, rowmap, x, y, cval, 1, med);
    /* One NaN bit pattern on every device (hardware NaNs differ in sign and payload). */
    if (is_nan(med)) med = as_float(CANONICAL_NAN);
    if (is_nan(mad)) mad = as_float(CANONICAL_NAN);
    const long o = (long)y * nx + x;
    if (want_median) median_out[o] = med;
    if (want_mad) mad_out[o] = mad;
}
