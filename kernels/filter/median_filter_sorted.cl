/* median_filter_sorted.cl - exact sliding-window median and MAD from sorted column runs.
 *
 * A work-group covers TX*PX x TY output pixels. It loads its input tile as keys (boundary
 * applied), then sorts, once, every WY-long column segment its pixels need: each sorted segment
 * serves the WX pixels of its row whose windows hold that column, so a window's values arrive as
 * WX sorted runs (a rectangle is only segments of another height; an origin only shifts the
 * host's maps). A pixel's k-th key is found by counting bisection, as in
 * median_filter_bisect.cl, but one count is a binary search per run (WX log WY, not WX WY), and
 * it snaps the bracket to window keys, so ties cost nothing (sorted_select.cl, with the MAD).
 * A work-item walks PX neighbouring pixels left to right; each starts from its left
 * neighbour's answers, which are close, and takes a Newton step from there.
 *
 * Build options: -D WX, -D WY (window columns and rows) -D TX -D TY (work-group shape) -D PX
 * (pixels per work-item) -D EVEN (even_rule.cl); the host puts SORT_NETWORK(v), a sorting
 * network for WY keys, before this file, or for WY above 16 the blocks sort_blocks.cl sorts with
 * (SORT_BLOCKS).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "even_rule.cl"

#define CW (TX * PX + WX - 1) /* tile columns */
#define TH (TY + WY - 1)      /* tile rows */
#define SORT_KEYS WY          /* keys of a segment, for sort_blocks.cl */
#define KEY_NAN 0xffffffffu

/* Sorted segments: element i of the segment of tile column c for output row k lies at
 * seg[i * SEG_STRIDE + k * CW + c], so a work-group's neighbouring pixels read neighbouring
 * words. */
#define SEG_STRIDE (TY * CW)

#define CE(v, a, b)                                                                            \
    {                                                                                          \
        const uint lo_ = min(v[a], v[b]);                                                      \
        v[b] = max(v[a], v[b]);                                                                \
        v[a] = lo_;                                                                            \
    }

#define SEG_SPACE __local
#define SEG_COUNTS __local const uchar
#define UNROLL_WINDOW_LOOPS /* WX <= 63 (src/filter/filter.c plan_sorted) */
#include "sorted_select.cl"

#include "sort_blocks.cl"

__kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void
median_mad(__global const float *img, long stride, int nx, int ny, __global const int *colmap,
           __global const int *rowmap, float cval, __global float *median_out,
           __global float *mad_out, int want_median, int want_mad)
{
    __local uint tile[TH * CW];
    __local uint seg[WY * SEG_STRIDE];
    __local uchar seg_count[TY * CW]; /* valid keys of each segment */

    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * TX + lx;
    /* Global ids carry the band's offset (group ids do not). */
    const int x0 = ((int)get_global_id(0) - lx) * PX, y0 = (int)get_global_id(1) - ly;

    /* The group's tile, boundary applied; the maps are padded to whole groups. */
    for (int i = lid; i < TH * CW; i += TX * TY) {
        const int r = rowmap[y0 + i / CW], c = colmap[x0 + i % CW];
        const float v = (r < 0 || c < 0) ? cval : img[(long)r * stride + c];
        tile[i] = is_nan(v) ? KEY_NAN : key_of(v);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Every segment sorted once, in registers (in blocks above 16 keys). */
    for (int s = lid; s < TY * CW; s += TX * TY) {
        const int c = s % CW, k = s / CW;
#ifdef SORT_BLOCKS
        seg_count[s] = (uchar)sort_in_blocks(tile + k * CW + c, CW, seg + s, SEG_STRIDE);
#else
        uint v[WY];
#pragma unroll
        for (int i = 0; i < WY; i++) v[i] = tile[(k + i) * CW + c];
        SORT_NETWORK(v)
        int n = 0;
#pragma unroll
        for (int i = 0; i < WY; i++) {
            seg[i * SEG_STRIDE + s] = v[i];
            n += v[i] != KEY_NAN;
        }
        seg_count[s] = (uchar)n;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const int y = y0 + ly;
    uint prev_med = NO_KEY, prev_mad = NO_KEY; /* the left neighbour's answers, as keys */
    for (int p = 0; p < PX; p++) {
        const int c0 = lx * PX + p, x = x0 + c0;
        if (x >= nx || y >= ny) break;
        float med, mad;
        window_median_mad(seg + ly * CW + c0, SEG_STRIDE, seg_count + ly * CW + c0, want_mad,
                          &prev_med, &prev_mad, &med, &mad);
        const long o = (long)y * nx + x;
        if (want_median) median_out[o] = stored_result(med);
        if (want_mad) mad_out[o] = stored_result(mad);
    }
}
