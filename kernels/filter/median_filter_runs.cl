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
 * above it. The 32 pixels of a group's row have windows that overlap by most of their width, so
 * their medians lie close: the row shares one bracket [L, H] around every pixel's first guess,
 * each of its 32 + WX - 1 runs is searched for L and H once, and a pixel whose median the
 * bracket holds (the counts tell) searches each run only between those two places, a few keys,
 * not the whole run. The MAD's counts are bracketed the same way once every pixel of the row
 * has its median: the row shares one bracket around each end of its pixels' deviation intervals
 * [m - d, m + d] for their first guesses d, and a count searches each run only between the
 * bracket's places where its end lies in that bracket (sorted_select.cl's count_bounded, exact
 * wherever the end lies).
 *
 * Build options: -D WX, -D WY (window columns and rows), -D EVEN (even_rule.cl), -D RUN_GROUP
 * (column_runs' work-group size), -D PY (output rows a median_mad work-item walks).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "even_rule.cl"

#define SEG_SPACE __global
#define SEG_COUNTS __global const ushort
#define GROUP_ROWS 4                 /* median_mad's work-group: 32 columns x GROUP_ROWS rows */
#define BOUND_COLUMNS (32 + WX - 1) /* runs a row of the group reads */
#define RUN_BOUNDS BOUND_COLUMNS
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

/* Ranks either side of a pixel's first guess that the row's shared bracket spans: wide enough
 * for a guess from the pixel above or from the runs' medians, narrow enough that a bracket over
 * 32 pixels holds a few keys a run. The MAD's brackets around its interval's ends take as many
 * ranks either side of its first guess. */
#define BRACKET_RANKS 24.0f

/* Run j's counts of keys below L and at or under H, for the row's runs from x0 (its 32 + WX - 1,
 * shared out over the row's 32 work-items), into bounds[j] and bounds[BOUND_COLUMNS + j]. */
inline void count_row_bounds(__global const uint *row_runs, int run_stride, int lx, int x0,
                             int cw, uint L, uint H, __local ushort *bounds)
{
    for (int c = lx; c < BOUND_COLUMNS && x0 + c < cw; c += 32) {
        __global const uint *col = row_runs + x0 + c;
        bounds[c] = (ushort)(L ? count_le(col, run_stride, L - 1u) : 0);
        bounds[BOUND_COLUMNS + c] = (ushort)count_le(col, run_stride, H);
    }
}

__kernel __attribute__((reqd_work_group_size(32, GROUP_ROWS, 1))) void
median_mad(__global const uint *runs, __global const ushort *counts, int cw, int run_stride,
           int nx, int rows, long out0, __global float *median_out, __global float *mad_out,
           int want_median, int want_mad)
{
    /* Per row of the group: the bracket [L, H] its pixels share (row_keys[ly].xy; for the MAD,
     * the brackets of its intervals' upper and lower ends, .xy and .zw), and each run's counts
     * of keys below L and at or under H (sorted_select.cl's bounds; the MAD's lower end in the
     * last two quarters). */
    __local uint row_keys[GROUP_ROWS][4];
    __local ushort bounds[GROUP_ROWS][4 * BOUND_COLUMNS];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int x = get_global_id(0), x0 = x - lx;
    const int k0 = (get_group_id(1) * GROUP_ROWS + ly) * PY;
    uint prev_med = NO_KEY, prev_mad = NO_KEY; /* the answers of the pixel above, as keys */
    for (int p = 0; p < PY; p++) {
        const int k = k0 + p;
        const bool active = x < nx && k < rows;
        const long at = (long)k * cw + x;
        __global const uint *row_runs = runs + (long)k * cw;
        struct window_glance g = {0, NO_KEY, 0u, NO_KEY, 0.0f, 0.0f};
        if (active) g = glance_window(runs + at, run_stride, counts + at, prev_med, prev_mad);

        /* The row's bracket: every pixel's guess, BRACKET_RANKS ranks either side. */
        if (lx < 4) row_keys[ly][lx] = lx % 2 ? 0u : NO_KEY;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (g.n > 0 && g.kmin != g.kmax) {
            const float v = value_of(clamp(g.guess, g.kmin, g.kmax));
            const float d = BRACKET_RANKS * MEDIAN_PER_RANK(g);
            const uint lo = isfinite(v - d) ? clamp(key_of(v - d), g.kmin, g.kmax) : g.kmin;
            const uint hi = isfinite(v + d) ? clamp(key_of(v + d), g.kmin, g.kmax) : g.kmax;
            atomic_min(&row_keys[ly][0], lo);
            atomic_max(&row_keys[ly][1], hi);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint L = row_keys[ly][0], H = row_keys[ly][1];
        const bool bracketed = L <= H && k < rows;
        if (bracketed) count_row_bounds(row_runs, run_stride, lx, x0, cw, L, H, bounds[ly]);
        barrier(CLK_LOCAL_MEM_FENCE);
        float med = as_float(CANONICAL_NAN), mad;
        if (active) {
            /* The bracket serves this pixel where its middle (and the next, for the mean of an
             * even count) lies in it; else the whole runs. */
            int c_lo = 0, c_hi = 0;
            if (bracketed) {
                for (int j = 0; j < WX; j++) {
                    c_lo += bounds[ly][lx + j];
                    c_hi += bounds[ly][BOUND_COLUMNS + lx + j];
                }
            }
            const int r = MIDDLE_RANK(g.n);
            if (bracketed && c_lo <= r && c_hi >= r + 2)
                select_window(runs + at, run_stride, &bounds[ly][lx], (uint4)(L, H, 0u, 0u), L,
                              H, c_lo, c_hi, &g, 0, &prev_med, &prev_mad, &med, &mad);
            else
                select_window(runs + at, run_stride NO_BOUNDS, g.kmin, g.kmax, 0, g.n, &g, 0,
                              &prev_med, &prev_mad, &med, &mad);
        }
        {
            /* The MAD's brackets: each pixel's interval [med - d, med + d] for its first guess
             * d, each end BRACKET_RANKS of the window's keys either side (a key's rank moves
             * twice as fast as a deviation's). */
            if (lx < 4) row_keys[ly][lx] = lx % 2 ? 0u : NO_KEY;
            barrier(CLK_LOCAL_MEM_FENCE);
            const float dg = is_nan(g.spread) ? 0.0f : fabs(g.spread);
            const float dd = BRACKET_RANKS * 2.0f * MAD_PER_RANK(g);
            if (want_mad && active && g.n > 0 && g.kmin != g.kmax && isfinite(med) && isfinite(dg) &&
                isfinite(dd)) {
                atomic_min(&row_keys[ly][0], key_of(med + dg - dd));
                atomic_max(&row_keys[ly][1], key_of(med + dg + dd));
                atomic_min(&row_keys[ly][2], key_of(med - dg - dd));
                atomic_max(&row_keys[ly][3], key_of(med - dg + dd));
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint4 mk = (uint4)(row_keys[ly][0], row_keys[ly][1], row_keys[ly][2],
                                     row_keys[ly][3]);
            const bool mad_bracketed = want_mad && mk.x <= mk.y && k < rows;
            if (mad_bracketed) {
                count_row_bounds(row_runs, run_stride, lx, x0, cw, mk.x, mk.y, bounds[ly]);
                count_row_bounds(row_runs, run_stride, lx, x0, cw, mk.z, mk.w,
                                 bounds[ly] + 2 * BOUND_COLUMNS);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (want_mad && active)
                mad = mad_bracketed
                          ? window_mad(runs + at, run_stride, &bounds[ly][lx], mk, &g, med,
                                       &prev_mad)
                          : window_mad(runs + at, run_stride NO_BOUNDS, &g, med, &prev_mad);
        }
        if (active) {
            const long o = out0 + (long)k * nx + x;
            if (want_median) median_out[o] = stored_result(med);
            if (want_mad) mad_out[o] = stored_result(mad);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
