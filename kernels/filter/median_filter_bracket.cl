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
 * elements below KEY_NAN << 32, and its middle ranks are among those. MAD (-D MAD=1): from
 * the medians found so, a search over ranks of its own (bracket_mad.cl).
 *
 * Build options: -D WX, -D WY (window columns and rows), -D EVEN (even_rule.cl), -D PY (output
 * rows a work-item holds; TY = 8 PY), -D CAP (the list's capacity, a power of two), -D SAMPLE
 * (the sample's size, a power of two), -D MAD (1: the MAD is built, with bracket_mad.cl's
 * options), -D ROLLED (1: loops with fixed trip counts stay loops: CPU compilers that unroll
 * them, PoCL's, take minutes to build the MAD's kernel). The local arrays come as kernel
 * arguments (sized by the host from the same numbers): sums of TY x UW + GROUP ushorts, list of
 * CAP and sample of SAMPLE ulongs.
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
#include "bracket_mad.cl"
#endif

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

        for (int j = 0; j < 2; j++)
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

#if MAD
    float med[PY], mad[PY];
    for (int p = 0; p < PY; p++) {
        med[p] = mad[p] = as_float(CANONICAL_NAN);
        if (n[p] > 0)
            med[p] = rb[p] != ra[p] ? mean_of_middles(value_of(ka[p]), value_of(kb[p]))
                                    : value_of(ka[p]);
    }
    /* Built only for calls that want a MAD (the host's plan), so no branch holds its barriers. */
    mad_pass(SOURCE_PASS, nx, ny, sums, list, sample, &misses, lid, lx, ly, n, med,
             valid_samples, per_step, mad);
    for (int p = 0; p < PY; p++) {
        const int x = x0 + lx, y = y0 + ly + p * GY;
        if (x >= nx || y >= ny) continue;
        if (want_median) median_out[(long)y * nx + x] = stored_result(med[p]);
        if (want_mad) mad_out[(long)y * nx + x] = stored_result(mad[p]);
    }
#else
    for (int p = 0; p < PY; p++) {
        const int x = x0 + lx, y = y0 + ly + p * GY;
        if (x >= nx || y >= ny || !want_median) continue;
        float med = as_float(CANONICAL_NAN);
        if (n[p] > 0)
            med = rb[p] != ra[p] ? mean_of_middles(value_of(ka[p]), value_of(kb[p]))
                                 : value_of(ka[p]);
        median_out[(long)y * nx + x] = stored_result(med);
    }
#endif
}
