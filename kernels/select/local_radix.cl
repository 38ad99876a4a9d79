/* local_radix.cl - the digit search of a radix select that one work-group runs alone, with its
 * histograms in local memory: a tile's median (select_columns.cl) and a sample's quantiles
 * (select.cl). Included by those files, which define LR_BITS (digit width) and LR_WG first:
 * with LR_WG 1 (CPU devices, one work-item a group) histograms are counted without atomics
 * and searched by walking.
 *
 * A histogram is searched in chunks of LR_CHUNK bins: one step sums the chunks, one finds the
 * chunk that holds each rank, one the bin within it, each work-item testing one chunk or bin
 * against a sum of the words before it, so no chain of dependent reads and about five barriers
 * a pass where a scan over the work-group took about forty (two ranks, 2 log2(WG) each). One
 * work-item (CPU devices) walks the sums instead. */

/* Barriers of the group (LR_BARRIER; includers use it in the group's other code too). A group
 * of one work-item (CPU devices) needs none and gets none: PoCL's work-group compilers crashed
 * on barriers in our select kernels, on different shapes in different versions (5.0 failed an
 * assertion forming its parallel regions; 6.0 did the same in sample_bracket when its local
 * select ran unconditionally), never on none. */
#if LR_WG == 1
#define LR_BARRIER(flags)
#else
#define LR_BARRIER(flags) barrier(flags)
#endif

#define LR_NB (1 << LR_BITS)
#define LR_CHUNK (1 << (LR_BITS / 2))
#define LR_NCHUNK (LR_NB / LR_CHUNK)

/* Counting into a local histogram: one work-item per group (CPU devices) owns its local
 * memory, so no atomics are needed there. */
#if LR_WG == 1
#define LR_INC(x) ((x)++)
#else
#define LR_INC(x) atomic_inc(&(x))
#endif

#if LR_WG == 1
/* Bin of h (chunk sums csum) holding rank *r; *r becomes the rank within the bin. The bounds
 * only guard against a rank beyond the count, which the callers never pass. */
inline uint walk_to_bin(__local const uint *h, __local const uint *csum, uint *r)
{
    uint want = *r;
    int c = 0;
    while (c < LR_NCHUNK - 1 && want >= csum[c]) want -= csum[c++];
    int b = c * LR_CHUNK;
    while (b < (c + 1) * LR_CHUNK - 1 && want >= h[b]) want -= h[b++];
    *r = want;
    return (uint)b;
}
#endif

/* Of counts[0 .. n), does element i hold rank `want`? If so, found[0] = i and found[1] = the
 * rank within it (exactly one element does when want is below their sum). */
inline void test_slot(__local const uint *counts, int i, uint want, __local uint *found)
{
    uint before = 0;
    for (int j = 0; j < i; j++) before += counts[j];
    if (want >= before && want - before < counts[i]) {
        found[0] = (uint)i;
        found[1] = want - before;
    }
}

/* The digits of both ranks: *da of rank *ra in the first histogram of lh (LR_NB bins), *db of
 * rank *rb in the second when `two` (the ranks' prefixes differ), else in the first too; *ra
 * and *rb become the ranks within those bins. Work-items lane = 0 .. lanes - 1 share the work
 * (a group's, or its share of one when a group searches several histograms at once); every
 * work-item of the group calls it (barriers inside). csum holds 2 LR_NCHUNK words, found 8. */
inline void find_bins(__local const uint *lh, bool two, uint *ra, uint *rb, uint *da, uint *db,
                      __local uint *csum, __local uint *found, int lane, int lanes)
{
    LR_BARRIER(CLK_LOCAL_MEM_FENCE);
    for (int c = lane; c < (two ? 2 : 1) * LR_NCHUNK; c += lanes) {
        uint sum = 0;
        for (int i = 0; i < LR_CHUNK; i++) sum += lh[c * LR_CHUNK + i];
        csum[c] = sum;
    }
    LR_BARRIER(CLK_LOCAL_MEM_FENCE);
#if LR_WG == 1
    *da = walk_to_bin(lh, csum, ra);
    *db = two ? walk_to_bin(lh + LR_NB, csum + LR_NCHUNK, rb) : walk_to_bin(lh, csum, rb);
#else
    /* found: chunk and rank within it for ra, then rb; then bin and rank within it. */
    for (int j = lane; j < 2 * LR_NCHUNK; j += lanes) {
        const int second = j >= LR_NCHUNK;
        test_slot(csum + (second && two ? LR_NCHUNK : 0), j % LR_NCHUNK, second ? *rb : *ra,
                  found + 2 * second);
    }
    LR_BARRIER(CLK_LOCAL_MEM_FENCE);
    for (int j = lane; j < 2 * LR_CHUNK; j += lanes) {
        const int second = j >= LR_CHUNK;
        const uint c = found[2 * second];
        test_slot(lh + (second && two ? LR_NB : 0) + c * LR_CHUNK, j % LR_CHUNK,
                  found[2 * second + 1], found + 4 + 2 * second);
    }
    LR_BARRIER(CLK_LOCAL_MEM_FENCE);
    *da = found[0] * LR_CHUNK + found[4];
    *ra = found[5];
    *db = found[2] * LR_CHUNK + found[6];
    *rb = found[7];
#endif
    LR_BARRIER(CLK_LOCAL_MEM_FENCE); /* all have read lh and found before they are reused */
}
