/* median_filter_bracket.cl - exact sliding-window median for wide windows on GPUs, a tile at a
 * time, in O(1) union reads and O(list) local reads a pixel, whatever the window's size.
 *
 * A work-group owns TX x TY output pixels; their windows lie in a union of UW x UH input keys
 * (boundary applied through the maps). Neighbouring windows overlap by most of their cells, so
 * the tile's medians lie in a narrow band of the union's keys. Elements are (key, position) pairs
 * packed into one ulong, key << 32 | row << 16 | column: unique, so every count below is of a
 * strict order and ties between equal keys need no care, and a window's k-th element in that
 * order carries its k-th smallest key.
 *
 * 1. A sample of the union, SAMPLE elements at evenly spaced positions, sorted: it places
 *    brackets [L, H] of elements, each holding about as many union elements as asked.
 * 2. For a bracket, every pixel's count of window elements below L and at or under H, by box
 *    sums: each union column's sums over WY rows sliding down it, then prefix sums along each
 *    row of those (box_counts); O(UW UH / (TX TY)) a pixel, not O(WX WY).
 * 3. The union's elements inside [L, H] compacted into a local list and sorted. A pixel whose
 *    middle rank(s) r (even_rule.cl) lie in [count below L, count <= H) walks the list from its
 *    start, counting the elements inside its window, to the (r - count below L)-th: every
 *    work-item reads the same entry at the same time (a broadcast).
 * 4. Pixels the bracket misses lie wholly below or wholly above the ranges brackets have covered:
 *    the next bracket is the next stretch of the union's order, below (first) or above what was
 *    covered, MARCH elements long by the sample. A bracket whose elements overflow the list's CAP
 *    is halved (in element order, so ties and clumps between two sample elements still split)
 *    and built again. Each round covers elements never covered before, and the union is
 *    finite, so every pixel is answered exactly.
 *
 * NaN keys (missing) are KEY_NAN, above every number's key: a window's n valid keys are its
 * elements below KEY_NAN << 32, and its middle ranks are among those. The MAD, from each
 * pixel's median, by the paired walk below (mad_pass).
 *
 * Build options: -D WX, -D WY (window columns and rows), -D EVEN (even_rule.cl), -D PY (output
 * rows a work-item holds; TY = 8 PY), -D CAP (the list's capacity, a power of two), -D SAMPLE
 * (the sample's size, a power of two), -D MAD (1: the MAD pass is built), -D ROLLED (1: loops
 * with fixed trip counts stay loops: CPU compilers that unroll them, PoCL's, take minutes to
 * build the kernel, and the CPUs take the design only where tests force it). The local arrays come
 * as kernel arguments (sized by the host from the same numbers): sums of TY x UW + GROUP
 * ushorts, list of CAP and sample of SAMPLE ulongs.
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "even_rule.cl"

#define KEY_NAN 0xffffffffu
#if ROLLED
#define ROLL _Pragma("unroll 1")
#else
#define ROLL
#endif
#define GX 32                /* work-group: GX x GY work-items, each PY pixels of one column */
#define GY 8
#define GROUP (GX * GY)
#define TX GX
#define TY (GY * PY)
#define UW (TX + WX - 1)     /* the union of the tile's windows */
#define UH (TY + WY - 1)
#define UNION (UW * UH)
#define PARTS (GROUP / TY)   /* work-items sharing one row's prefix sums */
#define PART_LEN ((UW + PARTS - 1) / PARTS)
#define ELEM_TOP 0xfffffffffffffffeul /* above every element: positions are below 2^31 */
#define NO_ELEM 0xfffffffffffffffful  /* the list's padding, above ELEM_TOP */
#define KEY_NEG_INF 0x007fffffu /* key_of(-inf) */
#define KEY_POS_INF 0xff800000u /* key_of(+inf) */

/* The element at union row ur, column uc of the tile whose first output is (x0, y0). */
inline ulong element_at(__global const float *img, long stride, __global const int *colmap,
                        __global const int *rowmap, float cval, int x0, int y0, int ur, int uc)
{
    const int r = rowmap[y0 + ur], c = colmap[x0 + uc];
    const float v = (r < 0 || c < 0) ? cval : img[(long)r * stride + c];
    const uint k = is_nan(v) ? KEY_NAN : key_of(v);
    return (ulong)k << 32 | (uint)(ur << 16 | uc);
}

#define ELEMENT(ur, uc) element_at(img, stride, colmap, rowmap, cval, x0, y0, ur, uc)
#define SOURCE                                                                                  \
    __global const float *img, long stride, __global const int *colmap,                        \
        __global const int *rowmap, float cval, int x0, int y0
#define SOURCE_PASS img, stride, colmap, rowmap, cval, x0, y0

/* For each of the work-item's pixels (pixel p: tile column lx, row ly + p GY), its window's
 * count of elements below t, into out[p]. Sums wrap at 2^16, and a difference of two is exact:
 * a window holds at most 65535 elements (the host checks). */
void box_counts(SOURCE, ulong t, __local ushort *sums, int lid, int lx, int ly, ushort *out)
{
    for (int uc = lid; uc < UW; uc += GROUP) {
        int s = 0;
        ROLL for (int ur = 0; ur < WY; ur++)
            s += ELEMENT(ur, uc) < t;
        sums[uc] = (ushort)s;
        ROLL for (int k = 1; k < TY; k++) {
            s += (int)(ELEMENT(k + WY - 1, uc) < t) - (int)(ELEMENT(k - 1, uc) < t);
            sums[k * UW + uc] = (ushort)s;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Inclusive prefix sums along each row, PARTS work-items a row, each a stretch. */
    const int row = lid / PARTS, part = lid % PARTS;
    const int a = part * PART_LEN, b = min(a + PART_LEN, UW);
    __local ushort *line = sums + row * UW, *totals = sums + TY * UW;
    ushort run = 0;
    for (int i = a; i < b; i++) {
        run += line[i];
        line[i] = run;
    }
    totals[lid] = run;
    barrier(CLK_LOCAL_MEM_FENCE);
    ushort off = 0;
    for (int q = 0; q < part; q++)
        off += totals[row * PARTS + q];
    for (int i = a; i < b; i++)
        line[i] += off;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < PY; p++) {
        __local const ushort *y = sums + (ly + p * GY) * UW;
        out[p] = (ushort)(y[lx + WX - 1] - (lx ? y[lx - 1] : (ushort)0));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Sorts a[0 .. n-1] ascending (n a power of two; the caller's barrier made a whole). */
void bitonic_sort(__local ulong *a, int n, int lid)
{
    ROLL for (int k = 2; k <= n; k <<= 1)
        ROLL for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = lid; i < n; i += GROUP) {
                const int l = i ^ j;
                if (l > i) {
                    const ulong x = a[i], y = a[l];
                    if ((x > y) == ((i & k) == 0)) {
                        a[i] = y;
                        a[l] = x;
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
}

/* The first index of the sorted s[0 .. SAMPLE-1] whose element is >= e (SAMPLE if none). */
inline int sample_index(__local const ulong *s, ulong e)
{
    int lo = 0, hi = SAMPLE;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (s[mid] < e) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

#if MAD
/* ---- The MAD: the middle of |x - m| over each pixel's window, m its median. ----
 *
 * Over a window's valid elements in order, e_0 < ... < e_{n-1}, the deviation d(e) = |e - m|
 * (rounded as the reference rounds it: monotone, so d falls up to m and rises after it) makes
 * f(i) = max(d(e_i), d(e_{i+k})) a valley in i, and the k-th smallest deviation is min_i f(i):
 * the k + 1 smallest deviations are one stretch of the order around m (where f is least), and
 * any stretch of k + 1 elements holds one at least as large as f's least. So a pixel needs only
 * the elements near its m - MAD and m + MAD: two brackets of union elements, [L1, H1] around the
 * tile's lower ends and [L2, H2] around its upper ends, each compacted into a half of the list
 * and sorted; box counts of elements below L1, at or under H1, below L2 and at or under H2 give
 * the ranks of each pixel's first listed elements, so a walk pairs each listed e_i with e_{i+k}
 * and takes the least f. That least is exact when the stretch of i it saw holds f's valley
 * floor: every i below it has f(i) >= d(e_i) >= d(e_{i_lo - 1}) where that element lies at or
 * below m, and every i above it f(i) >= d(e_{i_end + k}) where that one lies at or above m; so
 * the walk checks those two elements' deviations (or the brackets' ends', where they lie
 * outside the lists) against its answer. Ties need no care: ranks count (key, position) pairs.
 * A pixel the brackets miss (rare: its m - MAD or m + MAD lies outside them) takes its answer
 * by bisection over deviations, counting its window directly: exact, and bounded by 32 passes.
 *
 * The MAD's brackets are steered by the sample's own MAD about its middle; each holds at most
 * half the list (HC), and one whose elements overflow it is halved about its middle. Infinite
 * medians take no selection (mad_without_selection), only the count that tells whether every
 * valid value equals them. */
#define HC (CAP / 2)

/* The next element of l[*at .. len-1] in the window whose top-left union cell is (uc0, ur0). */
inline ulong next_in_window(__local const ulong *l, int len, int *at, int uc0, int ur0)
{
    while (*at < len) {
        const ulong e = l[(*at)++];
        const int uc = (int)(e & 0xffffu), ur = (int)((uint)e >> 16);
        if ((uint)(uc - uc0) < (uint)WX && (uint)(ur - ur0) < (uint)WY) return e;
    }
    return NO_ELEM;
}

inline float value_of_elem(ulong e)
{
    return value_of((uint)(e >> 32));
}

/* The window's (uc0, ur0) k-th smallest deviation from m (finite), from the brackets' lists
 * lo[0 .. lo_len-1] and up[0 .. up_len-1] and the window's counts a1 (elements below L1), a2
 * (at or under H1), b1 (below L2), b2 (at or under H2) of its n valid; false where the lists
 * cannot tell it. */
bool paired_deviation(__local const ulong *lo, int lo_len, __local const ulong *up, int up_len,
                      int uc0, int ur0, float m, int n, int k, int a1, int a2, int b1, int b2,
                      ulong L1, ulong H2, float *out)
{
    const int i_lo = max(a1, b1 - k), i_end = min(min(a2, b2 - k), n - k);
    if (i_lo >= i_end) return false;
    int at_lo = 0, at_up = 0;
    for (int s = a1; s < i_lo - 1; s++)
        next_in_window(lo, lo_len, &at_lo, uc0, ur0);
    /* Below the stretch: e_{i_lo - 1}, listed or bounded by L1's key. */
    const float v_left = i_lo == 0          ? m
                         : i_lo - 1 >= a1 ? value_of_elem(next_in_window(lo, lo_len, &at_lo, uc0, ur0))
                                          : value_of_elem(L1);
    for (int s = b1; s < i_lo + k; s++)
        next_in_window(up, up_len, &at_up, uc0, ur0);
    float best = INFINITY;
    for (int i = i_lo; i < i_end; i++) {
        const float dl = deviation(value_of_elem(next_in_window(lo, lo_len, &at_lo, uc0, ur0)), m);
        const float du = deviation(value_of_elem(next_in_window(up, up_len, &at_up, uc0, ur0)), m);
        best = min(best, max(dl, du));
    }
    /* Above it: e_{i_end + k}, listed, bounded by H2's key, or past the valid ones. */
    const int j = i_end + k;
    const float v_right = j >= n  ? m
                          : j < b2 ? value_of_elem(next_in_window(up, up_len, &at_up, uc0, ur0))
                                   : value_of_elem(H2);
    const bool left_ok = i_lo == 0 || (v_left <= m && deviation(v_left, m) >= best);
    const bool right_ok = j >= n || (v_right >= m && deviation(v_right, m) >= best);
    *out = best;
    return left_ok && right_ok;
}

/* The window's (uc0, ur0) k-th smallest deviation from m (finite) by bisection over deviation
 * bits, counting the window's elements directly: for the pixels the brackets miss. */
float counted_deviation(SOURCE, int uc0, int ur0, float m, int k)
{
    uint lo = 0u, hi = 0x7f800000u; /* +inf bounds every valid value's deviation */
    while (lo < hi) {
        const uint mid = lo + ((hi - lo) >> 1);
        int c = 0;
        /* Not unrolled: rare, and a WX x WY unrolled body makes builds slow. */
#pragma unroll 1
        for (int r = 0; r < WY; r++)
#pragma unroll 1
            for (int q = 0; q < WX; q++) {
                const uint key = (uint)(ELEMENT(ur0 + r, uc0 + q) >> 32);
                c += key != KEY_NAN && as_uint(deviation(value_of(key), m)) <= mid;
            }
        if (c > k) hi = mid;
        else lo = mid + 1u;
    }
    return as_float(lo);
}

/* Halves the bracket [*L, *H] about its middle (its elements overflowed a list). */
inline void halve_about_middle(ulong *L, ulong *H)
{
    const ulong span = (*H - *L) >> 1, centre = *L + span;
    *L = centre - (span >> 1);
    *H = centre + (span >> 1);
}

/* The MAD of each of the work-item's pixels (n[p] valid, median med[p]) into mad[p]; the whole
 * group calls it (barriers). len_a, len_b: local counters. */
void mad_pass(SOURCE, int nx, int ny, __local ushort *sums, __local ulong *list,
              __local const ulong *sample, volatile __local int *len_a,
              volatile __local int *len_b, int lid, int lx, int ly, const ushort *n,
              const float *med, int valid_samples, int per_step, int first_half, float *mad)
{
    /* Where the union's sample puts m - MAD and m + MAD: its middle's deviations merged
     * outward, by one work-item (the answer only steers). */
    if (lid == 0) {
        int lo = valid_samples > 0 ? (valid_samples - 1) / 2 : SAMPLE / 2, hi = lo + 1;
        const float mc = value_of_elem(sample[lo]);
        for (int taken = 0; taken < valid_samples / 2 && isfinite(mc); taken++) {
            const float dl = lo > 0 ? deviation(value_of_elem(sample[lo - 1]), mc) : INFINITY;
            const float dh = hi < valid_samples ? deviation(value_of_elem(sample[hi]), mc)
                                                : INFINITY;
            if (dl <= dh && lo > 0) lo--;
            else if (hi < valid_samples) hi++;
        }
        *len_a = lo;
        *len_b = max(hi - 1, lo);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int at_lo = *len_a, at_hi = *len_b;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int steps = clamp(min(first_half, HC / 4) / per_step, 1, SAMPLE / 2);
    ulong L1 = at_lo >= steps ? sample[at_lo - steps] : 0ul;
    ulong H1 = at_lo + steps < SAMPLE ? sample[at_lo + steps] : ELEM_TOP;
    ulong L2 = at_hi >= steps ? sample[at_hi - steps] : 0ul;
    ulong H2 = at_hi + steps < SAMPLE ? sample[at_hi + steps] : ELEM_TOP;

    __local ulong *lo_list = list, *up_list = list + HC;
    int len1, len2;
    for (;;) {
        if (lid == 0) *len_a = *len_b = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int ur = ly; ur < UH; ur += GY)
            for (int uc = lx; uc < UW; uc += GX) {
                const ulong e = ELEMENT(ur, uc);
                if (e >= L1 && e <= H1) {
                    const int i = atomic_inc(len_a);
                    if (i < HC) lo_list[i] = e;
                }
                if (e >= L2 && e <= H2) {
                    const int i = atomic_inc(len_b);
                    if (i < HC) up_list[i] = e;
                }
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        len1 = *len_a;
        len2 = *len_b;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (len1 <= HC && len2 <= HC) break;
        if (len1 > HC) halve_about_middle(&L1, &H1);
        if (len2 > HC) halve_about_middle(&L2, &H2);
    }
    ROLL for (int h = 0; h < 2; h++) {
        __local ulong *l = h ? up_list : lo_list;
        const int len = h ? len2 : len1;
        int n2 = 1;
        while (n2 < len)
            n2 <<= 1;
        for (int i = len + lid; i < n2; i += GROUP)
            l[i] = NO_ELEM;
        barrier(CLK_LOCAL_MEM_FENCE);
        bitonic_sort(l, n2, lid);
    }

    /* Infinite medians: whether every valid value equals them (then NaN, else +inf). */
    if (lid == 0) *len_a = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < PY; p++)
        if (n[p] > 0 && is_inf(med[p])) *len_a = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int any_inf = *len_a;
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Each pixel's window counts below L1, at or under H1, below L2, at or under H2, and
     * (infinite medians only) below +inf and at or under -inf. */
    const ulong bound[6] = {L1, H1 + 1ul, L2, H2 + 1ul, (ulong)KEY_POS_INF << 32,
                            (ulong)(KEY_NEG_INF + 1u) << 32};
    ushort counts[6][PY];
    ROLL for (int j = 0; j < 6; j++)
        if (j < 4 || any_inf) box_counts(SOURCE_PASS, bound[j], sums, lid, lx, ly, counts[j]);

    ROLL for (int p = 0; p < PY; p++) {
        const float m = med[p];
        const int cnt = n[p], ur0 = ly + p * GY;
        mad[p] = as_float(CANONICAL_NAN);
        if (x0 + lx >= nx || y0 + ur0 >= ny || cnt == 0 || is_nan(m)) continue;
        if (is_inf(m)) {
            const bool all_equal = m > 0.0f ? counts[4][p] == 0 : counts[5][p] == cnt;
            mad[p] = mad_without_selection(m, all_equal);
            continue;
        }
        const int r = MIDDLE_RANK(cnt), rs = MIDDLE_IS_MEAN(cnt) ? 2 : 1;
        float d[2];
        ROLL for (int h = 0; h < rs; h++)
            if (!paired_deviation(lo_list, len1, up_list, len2, lx, ur0, m, cnt, r + h,
                                  counts[0][p], counts[1][p], counts[2][p], counts[3][p], L1,
                                  H2, &d[h]))
                d[h] = counted_deviation(SOURCE_PASS, lx, ur0, m, r + h);
        mad[p] = rs == 2 ? mean_of_middles(d[0], d[1]) : d[0];
    }
}

#endif /* MAD */

__kernel __attribute__((reqd_work_group_size(GX, GY, 1))) void
median_mad(__global const float *img, long stride, int nx, int ny, __global const int *colmap,
           __global const int *rowmap, float cval, __global float *median_out,
           __global float *mad_out, int want_median, int want_mad, __local ushort *sums,
           __local ulong *list, __local ulong *sample)
{
    __local int list_len, misses;
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * GX + lx;
    /* Global ids carry the band's offset (group ids do not). */
    const int x0 = (int)get_global_id(0) - lx, y0 = ((int)get_global_id(1) - ly) * PY;

    /* The sample, sorted. */
    for (int i = lid; i < SAMPLE; i += GROUP) {
        const int u = (int)((long)i * UNION / SAMPLE);
        sample[i] = ELEMENT(u / UW, u % UW);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    bitonic_sort(sample, SAMPLE, lid);

    /* Each pixel's middle ranks among its valid keys; bit 2p (2p + 1) of `pending`: pixel p's
     * rank ra[p] (rb[p], the mean rule's second) is still unanswered. */
    ushort n[PY], below[PY], upto[PY];
    box_counts(SOURCE_PASS, (ulong)KEY_NAN << 32, sums, lid, lx, ly, n);
    int ra[PY], rb[PY], pending = 0;
    uint ka[PY], kb[PY];
    for (int p = 0; p < PY; p++) {
        ra[p] = MIDDLE_RANK((int)n[p]);
        rb[p] = ra[p] + (MIDDLE_IS_MEAN((int)n[p]) ? 1 : 0);
        ka[p] = kb[p] = KEY_NAN;
        const bool inside = x0 + lx < nx && y0 + ly + p * GY < ny;
        if (inside && n[p] > 0) pending |= (rb[p] != ra[p] ? 3 : 1) << (2 * p);
    }

    /* Union elements a step of the sample stands for; the first bracket holds about
     * 4 UNION / sqrt(WX WY) of them (a tile's medians of noise spread over about that many
     * around the union's middle), a later one MARCH. */
    const int per_step = max(UNION / SAMPLE, 1);
    const int first_half = (int)(2.0f * (float)UNION / sqrt((float)(WX * WY)));
    const int first_steps = clamp(min(first_half, CAP / 4) / per_step, 1, SAMPLE / 2);
    const int march_steps = clamp((CAP / 2) / per_step, 1, SAMPLE);
    const int valid_samples = sample_index(sample, (ulong)KEY_NAN << 32);
    const int centre = valid_samples > 0 ? (valid_samples - 1) / 2 : SAMPLE / 2;
    ulong L = centre >= first_steps ? sample[centre - first_steps] : 0ul;
    ulong H = centre + first_steps < SAMPLE ? sample[centre + first_steps] : ELEM_TOP;
    ulong cov_lo = 0, cov_hi = 0; /* the elements brackets have covered (none yet) */
    bool covered = false;
    int dir = 0; /* the bracket's side of what was covered: -1 below, 1 above */

    for (;;) {
        /* The union's elements in [L, H] into the list, if they fit. */
        if (lid == 0) list_len = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int ur = ly; ur < UH; ur += GY)
            for (int uc = lx; uc < UW; uc += GX) {
                const ulong e = ELEMENT(ur, uc);
                if (e >= L && e <= H) {
                    const int i = atomic_inc(&list_len);
                    if (i < CAP) list[i] = e;
                }
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int len = list_len;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (len > CAP) {
            /* Halved toward what was covered, so the rounds stay contiguous. */
            if (dir < 0) L = H - (H - L) / 2;
            else H = L + (H - L) / 2;
            continue;
        }
        int n2 = 1;
        while (n2 < len)
            n2 <<= 1;
        for (int i = len + lid; i < n2; i += GROUP)
            list[i] = NO_ELEM;
        barrier(CLK_LOCAL_MEM_FENCE);
        bitonic_sort(list, n2, lid);

        ROLL for (int j = 0; j < 2; j++)
            box_counts(SOURCE_PASS, j ? H + 1ul : L, sums, lid, lx, ly, j ? upto : below);

        /* The walk: target ta (tb) is the window's in-bracket element the rank falls on. */
        int ta[PY], tb[PY], need[PY], cnt[PY];
        for (int p = 0; p < PY; p++) {
            ta[p] = (pending >> (2 * p) & 1) && ra[p] >= below[p] && ra[p] < upto[p]
                        ? ra[p] - below[p]
                        : -1;
            tb[p] = (pending >> (2 * p + 1) & 1) && rb[p] >= below[p] && rb[p] < upto[p]
                        ? rb[p] - below[p]
                        : -1;
            need[p] = max(ta[p], tb[p]);
            cnt[p] = 0;
        }
        for (int i = 0; i < len; i++) {
            bool more = false;
            for (int p = 0; p < PY; p++)
                more |= cnt[p] <= need[p];
            if (!more) break;
            const ulong e = list[i];
            const int uc = (int)(e & 0xffffu), ur = (int)((uint)e >> 16);
            if ((uint)(uc - lx) >= (uint)WX) continue;
            for (int p = 0; p < PY; p++)
                if ((uint)(ur - ly - p * GY) < (uint)WY) {
                    if (cnt[p] == ta[p]) ka[p] = (uint)(e >> 32);
                    if (cnt[p] == tb[p]) kb[p] = (uint)(e >> 32);
                    cnt[p]++;
                }
        }

        /* What is left, and on which side. */
        int side = 0;
        for (int p = 0; p < PY; p++) {
            if (ta[p] >= 0) pending &= ~(1 << (2 * p));
            if (tb[p] >= 0) pending &= ~(2 << (2 * p));
            for (int h = 0; h < 2; h++)
                if (pending >> (2 * p + h) & 1) side |= (h ? rb[p] : ra[p]) < below[p] ? 1 : 2;
        }
        if (lid == 0) misses = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (side) atomic_or(&misses, side);
        barrier(CLK_LOCAL_MEM_FENCE);
        const int left = misses;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!left) break;
        cov_lo = covered ? min(cov_lo, L) : L;
        cov_hi = covered ? max(cov_hi, H) : H;
        covered = true;
        if (left & 1) { /* below: nothing lies below element 0, so cov_lo > 0 */
            dir = -1;
            H = cov_lo - 1ul;
            const int i = sample_index(sample, cov_lo) - march_steps;
            L = i >= 0 ? min(sample[i], H) : 0ul;
        } else { /* above: every element lies at or under ELEM_TOP, so cov_hi < ELEM_TOP */
            dir = 1;
            L = cov_hi + 1ul;
            const int i = sample_index(sample, L) + march_steps - 1;
            H = i < SAMPLE ? max(sample[i], L) : ELEM_TOP;
        }
    }

    float med[PY], mad[PY];
    for (int p = 0; p < PY; p++) {
        med[p] = mad[p] = as_float(CANONICAL_NAN);
        if (n[p] > 0)
            med[p] = rb[p] != ra[p] ? mean_of_middles(value_of(ka[p]), value_of(kb[p]))
                                    : value_of(ka[p]);
    }
#if MAD
    if (want_mad)
        mad_pass(SOURCE_PASS, nx, ny, sums, list, sample, &list_len, &misses, lid, lx, ly, n,
                 med, valid_samples, per_step, first_half, mad);
#endif

    for (int p = 0; p < PY; p++) {
        const int x = x0 + lx, y = y0 + ly + p * GY;
        if (x >= nx || y >= ny) continue;
        if (want_median) median_out[(long)y * nx + x] = stored_result(med[p]);
        if (want_mad) mad_out[(long)y * nx + x] = stored_result(mad[p]);
    }
}
