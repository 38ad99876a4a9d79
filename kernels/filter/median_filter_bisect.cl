/* median_filter_bisect.cl - exact sliding-window median and MAD by counting, one work-item per
 * pixel, the work-group's window tile in local memory.
 *
 * Each pass counts the window's keys <= t and also keeps the largest key <= t and the smallest
 * key > t. The k-th key is found as soon as a count lands on k or k + 1; otherwise the bracket
 * snaps to those window keys, so it shrinks by data, not only by halving the key range, and ties
 * cost nothing. Passes are branch-free loops over the tile: no private arrays, no gathers, which
 * is what made the binned design (median_filter.cl) slow on GPUs. The first threshold is a
 * guess (the mean; 0.6745 sd for the MAD), the next ones interpolate the rank in the bracket.
 *
 * Keys: order-preserving uint images of float bits (-0 just below +0); NaN is stored as one
 * positive NaN whose key lies above every number's, so it is never counted. Deviations are
 * non-negative floats, whose bits are already ordered.
 *
 * Build options: -D WX, -D WY (window columns and rows) -D TX=.. -D TY=.. (work-group and tile
 * shape) -D EVEN (even_rule.cl).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "even_rule.cl"

#define TW (TX + WX - 1)
#define TH (TY + WY - 1)
#define KEY_INF 0xff800000u /* key_of(+inf): the largest key of a number */

/* Key of |v - m| (m finite), above every number's key for NaN v. */
inline uint dev_key(float v, float m)
{
    return as_uint(deviation(v, m)) | 0x80000000u;
}

/* The key of element (dx, dy) of this work-item's window: the value's, or its deviation's. */
#define KEY_AT(row, dx) (use_dev ? dev_key((row)[dx], m) : key_of((row)[dx]))

/* Smallest key K with count(keys <= K) >= rank + 1, for K in [lo, hi], where c_lo keys lie
 * below lo and c_hi keys at or below hi; `guess` is tried first. Later thresholds interpolate
 * the rank between the bracket's counts (secant on the window's distribution), every third one
 * halves the bracket instead, which bounds the worst case. On return *count_at is
 * count(keys <= K) when the last pass told it, else 0. */
uint select_key(__local const float *tile, int lx, int ly, int use_dev, float m, int rank,
                uint lo, uint hi, int c_lo, int c_hi, uint guess, int *count_at)
{
    uint t = clamp(guess, lo, hi);
    *count_at = 0;
    for (int step = 0; lo < hi; step++) {
        if (t >= hi) t = lo + ((hi - lo) >> 1); /* t must split [lo, hi) */
        int c = 0;
        uint below = 0u, above = 0xffffffffu;
        for (int dy = 0; dy < WY; dy++) {
            __local const float *row = tile + (ly + dy) * TW + lx;
            for (int dx = 0; dx < WX; dx++) {
                const uint k = KEY_AT(row, dx);
                const int le = k <= t;
                c += le;
                below = le ? max(below, k) : below;
                above = le ? above : min(above, k);
            }
        }
        if (c == rank + 1) {
            *count_at = c;
            return below;
        }
        if (c == rank) return above;
        if (c > rank + 1) {
            hi = below;
            c_hi = c;
        } else {
            lo = above;
            c_lo = c;
        }
        if (lo >= hi) break;
        const uint span = hi - lo;
        if (step % 3 == 2) {
            t = lo + (span >> 1);
        } else {
            const float f = ((float)(rank - c_lo) + 0.5f) / (float)(c_hi - c_lo);
            t = lo + min(convert_uint_sat(f * (float)span), span - 1u);
        }
    }
    return lo;
}

/* The middle of n keys by the even rule: rank MIDDLE_RANK(n), and under the mean rule for even
 * n the mean with the next one. */
float select_middle(__local const float *tile, int lx, int ly, int use_dev, float m, int n,
                    uint lo, uint hi, uint guess)
{
    const int r = MIDDLE_RANK(n);
    int count_at;
    const uint ka = select_key(tile, lx, ly, use_dev, m, r, lo, hi, 0, n, guess, &count_at);
    const float a = use_dev ? as_float(ka & 0x7fffffffu) : value_of(ka);
    if (!MIDDLE_IS_MEAN(n)) return a;
    /* Rank r + 1: the same key if it repeats, else the smallest key above it. */
    uint kb = ka;
    if (count_at < r + 2) {
        int c = 0;
        uint above = 0xffffffffu;
        for (int dy = 0; dy < WY; dy++) {
            __local const float *row = tile + (ly + dy) * TW + lx;
            for (int dx = 0; dx < WX; dx++) {
                const uint k = KEY_AT(row, dx);
                c += k <= ka;
                above = k > ka ? min(above, k) : above;
            }
        }
        kb = c >= r + 2 ? ka : above;
    }
    return mean_of_middles(a, use_dev ? as_float(kb & 0x7fffffffu) : value_of(kb));
}

__kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void
median_mad(__global const float *img, long stride, int nx, int ny, __global const int *colmap,
           __global const int *rowmap, float cval, __global float *median_out,
           __global float *mad_out, int want_median, int want_mad)
{
    __local float tile[TH * TW];
    const int x = get_global_id(0), y = get_global_id(1);
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int x0 = x - lx, y0 = y - ly;
    /* The group's tile, boundary applied; the maps are padded to whole groups. */
    for (int i = ly * TX + lx; i < TH * TW; i += TX * TY) {
        const int r = rowmap[y0 + i / TW], c = colmap[x0 + i % TW];
        const float v = (r < 0 || c < 0) ? cval : img[(long)r * stride + c];
        tile[i] = is_nan(v) ? as_float(CANONICAL_NAN) : v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= nx || y >= ny) return;

    /* Count, extremes, and mean and sd for the first guesses (guesses only steer). */
    int n = 0;
    uint kmin = 0xffffffffu, kmax = 0u;
    float sum = 0.0f, sumsq = 0.0f;
    for (int dy = 0; dy < WY; dy++) {
        __local const float *row = tile + (ly + dy) * TW + lx;
        for (int dx = 0; dx < WX; dx++) {
            const float v = row[dx];
            const uint k = key_of(v);
            const int valid = k <= KEY_INF;
            n += valid;
            kmin = valid ? min(kmin, k) : kmin;
            kmax = valid ? max(kmax, k) : kmax;
            sum += valid ? v : 0.0f;
            sumsq += valid ? v * v : 0.0f;
        }
    }
    float med = as_float(CANONICAL_NAN), mad = as_float(CANONICAL_NAN);
    if (n > 0 && kmin == kmax) {
        med = value_of(kmin);
        mad = mad_without_selection(med, true);
    } else if (n > 0) {
        const float mean = sum / (float)n;
        const float sd = sqrt(fmax(sumsq / (float)n - mean * mean, 0.0f));
        const uint guess = is_nan(mean) ? kmin : key_of(mean);
        med = select_middle(tile, lx, ly, 0, 0.0f, n, kmin, kmax, guess);
        if (want_mad && is_inf(med)) {
            mad = mad_without_selection(med, false);
        } else if (want_mad && !is_nan(med)) {
            /* |x - m| is largest at the extremes; for normal data the MAD is near 0.6745 sd. */
            const uint dlo = dev_key(value_of(kmin), med), dhi = dev_key(value_of(kmax), med);
            const float dguess = 0.6745f * sd;
            mad = select_middle(tile, lx, ly, 1, med, n, 0x80000000u, max(dlo, dhi),
                                is_nan(dguess) ? 0x80000000u : key_of(dguess));
        }
    }
    const long o = (long)y * nx + x;
    if (want_median) median_out[o] = stored_result(med);
    if (want_mad) mad_out[o] = stored_result(mad);
}
