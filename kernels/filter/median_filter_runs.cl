/* median_filter_runs.cl - exact sliding-window median and MAD for large windows on GPUs: the
 * sorted-runs selection (sorted_select.cl), with the runs in global memory and each built from
 * the one above it instead of sorted afresh.
 *
 * column_runs: a work-item walks down one input column (boundary applied through the maps) for
 * a chunk of output rows, keeping the WY keys under the window's rows sorted in local memory. A
 * step down removes the key leaving and inserts the one entering: a binary search and a shift
 * of the keys between them, at most WY moves (a sort would be WY log² WY). Each step's run goes
 * to `runs`: key i of the run of column c for band row k at runs[i * run_stride + k * cw + c],
 * its count of valid keys (NaN keys sort last) at counts[k * cw + c], so neighbouring pixels
 * read neighbouring words.
 *
 * median_mad: one work-item per output column and PY output rows, walking down; every window is
 * WX of those runs side by side, and its middles come from counts (WX binary searches of
 * log WY steps a count, sorted_select.cl), each pixel starting from the answers of the pixel
 * above it.
 *
 * Build options: -D WX, -D WY (window columns and rows), -D EVEN (even_rule.cl), -D RUN_GROUP
 * (column_runs' work-group size), -D PY (output rows a median_mad work-item walks).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "even_rule.cl"

#define SEG_SPACE __global
#define SEG_COUNTS __global const ushort
#include "sorted_select.cl"

#define KEY_NAN 0xffffffffu

/* The key at map row r of input column c (boundary applied; NaN is KEY_NAN). */
inline uint input_key(__global const float *img, long stride, int r, int c, float cval)
{
    const float v = (r < 0 || c < 0) ? cval : img[(long)r * stride + c];
    return is_nan(v) ? KEY_NAN : key_of(v);
}

/* The position of a key equal to `key` in s[0 .. len-1] (sorted, the key present; element i at
 * s[i * RUN_GROUP]). */
inline int find_key(__local const uint *s, int len, uint key)
{
    int lo = 0, hi = len - 1;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (s[mid * RUN_GROUP] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Puts `key` into the sorted s in place of the key at position p (a hole): the keys between
 * move one place toward the hole. */
inline void replace_at(__local uint *s, int len, int p, uint key)
{
    while (p + 1 < len && s[(p + 1) * RUN_GROUP] < key) {
        s[p * RUN_GROUP] = s[(p + 1) * RUN_GROUP];
        p++;
    }
    while (p > 0 && s[(p - 1) * RUN_GROUP] > key) {
        s[p * RUN_GROUP] = s[(p - 1) * RUN_GROUP];
        p--;
    }
    s[p * RUN_GROUP] = key;
}

__kernel __attribute__((reqd_work_group_size(RUN_GROUP, 1, 1))) void
column_runs(__global const float *img, long stride, __global const int *colmap,
            __global const int *rowmap, float cval, int row0, int rows, int chunk, int cw,
            int run_stride, __global uint *runs, __global ushort *counts)
{
    __local uint sorted_keys[WY * RUN_GROUP];
    const int c = get_global_id(0), k0 = get_global_id(1) * chunk;
    if (c >= cw || k0 >= rows) return;
    __local uint *s = sorted_keys + get_local_id(0);
    const int col = colmap[c];
    const int k1 = min(k0 + chunk, rows);

    /* The first run: insertion, each key a hole at the end. */
    int valid = 0;
    for (int i = 0; i < WY; i++) {
        const uint key = input_key(img, stride, rowmap[row0 + k0 + i], col, cval);
        valid += key != KEY_NAN;
        replace_at(s, i + 1, i, key);
    }
    for (int k = k0;; k++) {
        __global uint *out = runs + (long)k * cw + c;
        for (int i = 0; i < WY; i++)
            out[i * run_stride] = s[i * RUN_GROUP];
        counts[(long)k * cw + c] = (ushort)valid;
        if (k + 1 >= k1) break;
        const uint leaving = input_key(img, stride, rowmap[row0 + k], col, cval);
        const uint entering = input_key(img, stride, rowmap[row0 + k + WY], col, cval);
        valid += (entering != KEY_NAN) - (leaving != KEY_NAN);
        replace_at(s, WY, find_key(s, WY, leaving), entering);
    }
}

__kernel void median_mad(__global const uint *runs, __global const ushort *counts, int cw,
                         int run_stride, int nx, int rows, long out0,
                         __global float *median_out, __global float *mad_out, int want_median,
                         int want_mad)
{
    const int x = get_global_id(0), k0 = get_global_id(1) * PY;
    if (x >= nx) return;
    uint prev_med = NO_KEY, prev_mad = NO_KEY; /* the answers of the pixel above, as keys */
    for (int k = k0; k < k0 + PY && k < rows; k++) {
        const long at = (long)k * cw + x;
        float med, mad;
        window_median_mad(runs + at, run_stride, counts + at, want_mad, &prev_med, &prev_mad,
                          &med, &mad);
        const long o = out0 + (long)k * nx + x;
        if (want_median) median_out[o] = stored_result(med);
        if (want_mad) mad_out[o] = stored_result(mad);
    }
}
