/* column_ranks_split.cl - the batched selection of column_ranks.cl for a few long columns: each
 * column split into blocks of BLOCK rows, a work-group a few blocks, so that even one column
 * keeps every compute unit busy. The same radix select on the same keys, each pass in two launches:
 * every block's histogram of the current digit (split_hist), then per column the histograms
 * added and the rank's bin chosen (split_pick), the walk's state kept on the device between
 * passes; then every block's count and sum below the k-th value (split_below) and per column
 * their total in block order (split_finish), which is the same bits as column_ranks.cl's.
 * src/select/column_ranks.c launches them.
 *
 * Column c's element r is m[off + c cstep + r rstep] as in column_ranks.cl. Work-group (g, c)
 * holds the `per` blocks of BLOCK rows of column c from block g per (fewer where the column
 * ends), partial results a group (histograms, ranges, counts) and the sums a block; `groups`
 * and `blocks` are their numbers a column. state[4 c ..]: the prefix, the rank left within it,
 * the NaN count, and (done << 8) | the unshared bits.
 *
 * Build options: those of column_ranks.cl; WG is the work-group of the block kernels. */
#include "rank_keys.cl"

#define ROWS_OF_GROUP                                                                              \
    const uint lid = get_local_id(0), g = get_group_id(0);                                         \
    const ulong c = get_group_id(1);                                                               \
    __global const REAL *col = m + off + c * cstep;                                                \
    const uint from = g * per * BLOCK, to = min(rows, from + per * BLOCK)

/* Each group's NaN count and key range: range[2 (c groups + g) ..] = (kmin, kmax), nans[..]. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
split_range(__global const REAL *m, ulong off, ulong cstep, ulong rstep, uint rows, uint per,
            __global ulong *range, __global uint *nans)
{
    __local key_t lmin[WG], lmax[WG];
    __local uint lnan[WG];
    ROWS_OF_GROUP;
    key_t kmin, kmax;
    uint nan;
    key_range(col, rstep, from, to, lid, &kmin, &kmax, &nan);
    lmin[lid] = kmin, lmax[lid] = kmax, lnan[lid] = nan;
    BARRIER();
    for (uint span = WG / 2; span > 0; span /= 2) {
        if (lid < span) {
            lmin[lid] = min(lmin[lid], lmin[lid + span]);
            lmax[lid] = max(lmax[lid], lmax[lid + span]);
            lnan[lid] += lnan[lid + span];
        }
        BARRIER();
    }
    if (lid == 0) {
        const ulong at = c * get_num_groups(0) + g;
        range[2 * at] = lmin[0], range[2 * at + 1] = lmax[0];
        nans[at] = lnan[0];
    }
}

/* A work-item a column: the groups' ranges and NaN counts into the walk's start. */
__kernel void split_start(__global const ulong *range, __global const uint *nans, uint groups,
                          uint rows, uint cols, __global const ulong *ranks, __global ulong *state,
                          __global uint *hist)
{
    const uint c = get_global_id(0);
    if (c >= cols) return;
    for (uint b = 0; b < BINS; b++) hist[c * BINS + b] = 0;
    key_t kmin = NAN_KEY, kmax = 0;
    uint nan = 0;
    for (uint g = 0; g < groups; g++) {
        const ulong at = (ulong)c * groups + g;
        kmin = min(kmin, (key_t)range[2 * at]);
        kmax = max(kmax, (key_t)range[2 * at + 1]);
        nan += nans[at];
    }
    const ulong want = ranks[c];
    const bool done = want >= rows - nan;
    state[4 * c] = kmin;
    state[4 * c + 1] = want;
    state[4 * c + 2] = nan;
    state[4 * c + 3] = ((ulong)done << 8) | (ulong)unshared_bits(kmin, kmax);
}

/* The shift of pass `pass` of a column's walk, or false where the walk has no such pass. */
inline bool pass_shift(ulong word, uint pass, int *shift)
{
    const int top = (int)(word & 0xff);
    *shift = top - DIGIT * (int)(pass + 1);
    return !(word >> 8) && *shift > -DIGIT;
}

/* Each group's histogram of the pass's digit, added into its column's: hist[c BINS + b]. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
split_hist(__global const REAL *m, ulong off, ulong cstep, ulong rstep, uint rows, uint per,
           __global const ulong *state, uint pass, __global uint *hist)
{
    __local uint lhist[BINS];
    ROWS_OF_GROUP;
    int shift;
    if (!pass_shift(state[4 * c + 3], pass, &shift)) return; /* the same for the whole group */
    const struct digit d = digit_at(shift, (key_t)state[4 * c]);
    for (uint b = lid; b < BINS; b += WG) lhist[b] = 0;
    BARRIER();
    for (uint r = from + lid; r < to; r += WG) {
        const REAL v = col[(ulong)r * rstep];
        if (real_nan(v)) continue;
        const int b = bin_of(d, key_of_real(v));
        if (b >= 0) INC(lhist[b]);
    }
    BARRIER();
    for (uint b = lid; b < BINS; b += WG)
        if (lhist[b]) atomic_add(&hist[c * BINS + b], lhist[b]);
}

/* A work-group of BINS work-items a column: the rank's bin chosen, the prefix and rank moved
 * on, the column's histogram cleared. */
__kernel __attribute__((reqd_work_group_size(BINS, 1, 1))) void
split_pick(__global uint *hist, uint pass, __global ulong *state)
{
    __local uint total[BINS];
    const uint b = get_local_id(0), c = get_group_id(0);
    int shift;
    if (!pass_shift(state[4 * c + 3], pass, &shift)) return;
    total[b] = hist[c * BINS + b];
    hist[c * BINS + b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (b == 0) {
        const struct digit d = digit_at(shift, (key_t)state[4 * c]);
        uint want = (uint)state[4 * c + 1], k = 0;
        while (want >= total[k]) want -= total[k++];
        state[4 * c] = prefix_after(d, k);
        state[4 * c + 1] = want;
    }
}

/* Each group's count of values below the k-th value t and equal to it, counts[2 (c groups +
 * g) ..], and each block's sum below t by lanes, bsums[c blocks + its block] (rank_keys.cl). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
split_below(__global const REAL *m, ulong off, ulong cstep, ulong rstep, uint rows, uint per,
            __global const ulong *state, uint blocks, __global uint *counts, __global REAL *bsums)
{
    __local REAL lanes[LANES];
    __local uint lless[WG], lequal[WG];
    ROWS_OF_GROUP;
    const bool done = state[4 * c + 3] >> 8;
    const key_t t = (key_t)state[4 * c];
    uint less = 0, equal = 0;
    for (uint start = from; start < to; start += BLOCK) {
        const REAL block = block_below(col, rstep, start, min(to, start + BLOCK), t, done, lid,
                                       lanes, &less, &equal);
        if (lid == 0) bsums[c * blocks + start / BLOCK] = block;
    }
    lless[lid] = less, lequal[lid] = equal;
    BARRIER();
    for (uint span = WG / 2; span > 0; span /= 2) {
        if (lid < span) lless[lid] += lless[lid + span], lequal[lid] += lequal[lid + span];
        BARRIER();
    }
    if (lid == 0) {
        const ulong at = c * get_num_groups(0) + g;
        counts[2 * at] = lless[0], counts[2 * at + 1] = lequal[0];
    }
}

/* A work-item a column: stats and sums as column_ranks.cl writes them. */
__kernel void split_finish(__global const ulong *state, __global const uint *counts,
                           __global const REAL *bsums, uint groups, uint blocks, uint cols,
                           __global ulong *stats, __global REAL *sums)
{
    const uint c = get_global_id(0);
    if (c >= cols) return;
    uint less = 0, equal = 0;
    REAL sum = 0;
    for (uint g = 0; g < groups; g++) {
        const ulong at = (ulong)c * groups + g;
        less += counts[2 * at], equal += counts[2 * at + 1];
    }
    for (uint b = 0; b < blocks; b++) sum += bsums[(ulong)c * blocks + b];
    const bool done = state[4 * c + 3] >> 8;
    stats[4 * c] = done ? (ulong)NAN_KEY : state[4 * c];
    stats[4 * c + 1] = state[4 * c + 2];
    stats[4 * c + 2] = less;
    stats[4 * c + 3] = equal;
    sums[c] = sum;
}
