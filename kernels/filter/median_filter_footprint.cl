/* median_filter_footprint.cl - exact sliding-window median and MAD over any window: rectangles
 * of any size, scipy's origin, footprints (circles, rings, any set of cells), each even-count
 * rule, float32 or float64 (-D FP64). The exact fall-back for every window the rectangle designs
 * do not serve.
 *
 * One work-item per pixel reads its window from global memory through the boundary maps. The
 * median is a radix selection on order-preserving keys, 4 bits a pass over the window's key
 * range: counting alone finds the element of the wanted rank, so no float arithmetic steers it
 * and every device gives the same bits. The MAD repeats it on |x - m|.
 *
 * The window is a list of cells built on the host, each packed as row << 8 | column, cell
 * (i, j) of output (x, y) reading rowmap[y + i] and colmap[x + j]: -1 there means the constant.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifdef FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#include "../common/float_keys.cl"
#include "even_rule.cl"

#ifdef FP64
typedef double real;
typedef ulong key_t;
#define KEY_BITS 64
#define KEY(v) key_of_f64(v)
#define VALUE(k) value_of_f64(k)
#define IS_NAN(v) is_nan_f64(v)
#define IS_INF(v) is_inf_f64(v)
#define DEVIATION(v, m) deviation_f64(v, m)
#define MEAN(a, b) mean_of_middles_f64(a, b)
#define NO_SELECTION(m, all_equal) mad_without_selection_f64(m, all_equal)
#define STORED(v) stored_result_f64(v)
#define NAN_VALUE as_double(CANONICAL_NAN_F64)
#else
typedef float real;
typedef uint key_t;
#define KEY_BITS 32
#define KEY(v) key_of(v)
#define VALUE(k) value_of(k)
#define IS_NAN(v) is_nan(v)
#define IS_INF(v) is_inf(v)
#define DEVIATION(v, m) deviation(v, m)
#define MEAN(a, b) mean_of_middles(a, b)
#define NO_SELECTION(m, all_equal) mad_without_selection(m, all_equal)
#define STORED(v) stored_result(v)
#define NAN_VALUE as_float(CANONICAL_NAN)
#endif

/* WINDOW_BEGIN(k) ... WINDOW_END loops over the valid values of one pixel's window, each as its
 * key `k` (the key of its deviation from m when use_dev). */
#define WINDOW_ARGS                                                                            \
    __global const real *img, long stride, __global const int *colmap,                        \
        __global const int *rowmap, __global const int *cells, int n_cells, int x, int y,     \
        real cval, int use_dev, real m
#define WINDOW_PASS img, stride, colmap, rowmap, cells, n_cells, x, y, cval, use_dev, m
#define WINDOW_BEGIN(k)                                                                        \
    for (int c_ = 0; c_ < n_cells; c_++) {                                                     \
        const int cell_ = cells[c_];                                                           \
        const int r_ = rowmap[y + (cell_ >> 8)], s_ = colmap[x + (cell_ & 255)];              \
        real v_ = (r_ < 0 || s_ < 0) ? cval : img[(long)r_ * stride + s_];                     \
        if (IS_NAN(v_)) continue;                                                              \
        if (use_dev) v_ = DEVIATION(v_, m);                                                    \
        const key_t k = KEY(v_);
#define WINDOW_END }

/* The key of rank r (0-based) among the window's keys, which all lie in [klo, khi] (klo < khi);
 * *next_same says whether rank r + 1 is a copy of it. */
key_t select_rank(WINDOW_ARGS, int r, key_t klo, key_t khi, int *next_same)
{
    int c = 0; /* values in the current [klo, khi] */
    while (klo != khi) {
        const int shift = max(0, KEY_BITS - (int)clz(khi - klo) - 4);
        int h[16];
        for (int i = 0; i < 16; i++)
            h[i] = 0;
        WINDOW_BEGIN(k)
        if (k >= klo && k <= khi) h[(int)((k - klo) >> shift)]++;
        WINDOW_END
        int j = 0;
        while (r >= h[j])
            r -= h[j++];
        c = h[j];
        klo += (key_t)j << shift;
        const key_t width = ((key_t)1 << shift) - 1;
        if (khi - klo > width) khi = klo + width;
    }
    *next_same = r + 1 < c;
    return klo;
}

/* Smallest key above `above` among the window's keys (there is one: the caller knows). */
key_t min_key_above(WINDOW_ARGS, key_t above)
{
    key_t best = ~(key_t)0;
    WINDOW_BEGIN(k)
    if (k > above && k < best) best = k;
    WINDOW_END
    return best;
}

/* The median of n values with keys in [kmin, kmax] (kmin < kmax) by the even-count rule. */
real median_by_rule(WINDOW_ARGS, int n, key_t kmin, key_t kmax, int even)
{
    const bool odd = n % 2;
    const int r = odd || even == EVEN_UPPER ? n / 2 : n / 2 - 1;
    int next_same;
    const key_t ka = select_rank(WINDOW_PASS, r, kmin, kmax, &next_same);
    if (odd || even != EVEN_MEAN) return VALUE(ka);
    const key_t kb = next_same ? ka : min_key_above(WINDOW_PASS, ka);
    return MEAN(VALUE(ka), VALUE(kb));
}

__kernel void median_mad(__global const real *img, long stride, int nx, int ny,
                         __global const int *colmap, __global const int *rowmap, real cval,
                         __global real *median_out, __global real *mad_out, int want_median,
                         int want_mad, __global const int *cells, int n_cells, int even)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= nx || y >= ny) return;
    int use_dev = 0;
    real m = 0;
    int n = 0;
    key_t kmin = ~(key_t)0, kmax = 0;
    WINDOW_BEGIN(k)
    n++;
    kmin = min(kmin, k);
    kmax = max(kmax, k);
    WINDOW_END
    real med = NAN_VALUE, mad = NAN_VALUE;
    if (n > 0 && kmin == kmax) { /* a constant window: no selection needed */
        med = VALUE(kmin);
        mad = NO_SELECTION(med, true);
    } else if (n > 0) {
        med = median_by_rule(WINDOW_PASS, n, kmin, kmax, even);
        if (want_mad && IS_INF(med)) {
            mad = NO_SELECTION(med, false);
        } else if (want_mad && !IS_NAN(med)) {
            /* Every deviation is valid (m is finite); the largest is at an extreme. */
            const real dmax = max(DEVIATION(VALUE(kmin), med), DEVIATION(VALUE(kmax), med));
            use_dev = 1;
            m = med;
            const key_t dlo = KEY((real)0), dhi = KEY(dmax);
            mad = dlo == dhi ? (real)0 : median_by_rule(WINDOW_PASS, n, dlo, dhi, even);
        }
    }
    const long o = (long)y * nx + x;
    if (want_median) median_out[o] = STORED(med);
    if (want_mad) mad_out[o] = STORED(mad);
}
