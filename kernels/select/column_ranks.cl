/* column_ranks.cl - the k-th smallest valid value of every column, any rank per column, and the
 * sum of the values below it: one work-group a column runs a radix select on order-preserving
 * keys (32-bit for float, 64-bit for double), histograms in local memory, the digits starting
 * below the prefix that all the column's keys share. The sum of the k + 1 smallest follows on
 * the host from the k-th value t, the count c of values below t and their sum s by the
 * multiplicity rule of the cutting-plane paper's section VI: s + (k + 1 - c) t, exact in
 * which values it takes however many equal t. The LTS objective is that sum over squared
 * residuals, the LMS objective the k-th value itself (src/regress/). Long columns among few
 * take column_ranks_split.cl instead, which gives the same bits (rank_keys.cl says how).
 *
 * Column c's element r is m[off + c cstep + r rstep]: columns of a row-major matrix (cstep 1,
 * rstep its row stride) or its rows (cstep the stride, rstep 1).
 *
 * Build options: -D REAL=float or double (-D CLSTATS_FP64 with double), -D WG=work-group size
 * (1 on CPU devices: no barriers, no atomics), a power of two up to LANES.
 */
#include "rank_keys.cl"

/* stats[4 c ..]: the key of rank ranks[c] among the valid values (NAN_KEY where the rank is
 * not below their count), the NaN count, the count of values below that key and of values
 * equal to it; sums[c] the sum of the values below it. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
column_ranks(__global const REAL *m, ulong off, ulong cstep, ulong rstep, uint rows,
             __global const ulong *ranks, __global ulong *stats, __global REAL *sums)
{
    __local uint hist[BINS];
    __local key_t lmin[WG], lmax[WG];
    __local uint lcount[WG], lequal[WG];
    __local REAL lanes[LANES];
    __local key_t prefix_l;
    __local uint rank_l;
    __local int done_l;
    const uint lid = get_local_id(0);
    const ulong c = get_group_id(0);
    __global const REAL *col = m + off + c * cstep;

    /* The NaN count and the key range. */
    key_t kmin, kmax;
    uint nan;
    key_range(col, rstep, 0, rows, lid, &kmin, &kmax, &nan);
    lmin[lid] = kmin;
    lmax[lid] = kmax;
    lcount[lid] = nan;
    BARRIER();
    if (lid == 0) {
        for (uint i = 1; i < WG; i++) {
            kmin = min(kmin, lmin[i]);
            kmax = max(kmax, lmax[i]);
            nan += lcount[i];
        }
        const ulong want = ranks[c];
        const uint nv = rows - nan;
        done_l = want >= nv;
        rank_l = (uint)want;
        prefix_l = kmin;
        lmin[0] = kmin;
        lmax[0] = kmax;
        lcount[0] = nan;
    }
    BARRIER();
    const uint nans = lcount[0];
    const int top = unshared_bits(lmin[0], lmax[0]);
    /* prefix_l holds the bits resolved so far, those below the digit still kmin's. */
    for (int shift = top - DIGIT; !done_l && shift > -DIGIT; shift -= DIGIT) {
        const struct digit d = digit_at(shift, prefix_l);
        for (uint b = lid; b < BINS; b += WG) hist[b] = 0;
        BARRIER();
        for (uint r = lid; r < rows; r += WG) {
            const REAL v = col[(ulong)r * rstep];
            if (real_nan(v)) continue;
            const int b = bin_of(d, key_of_real(v));
            if (b >= 0) INC(hist[b]);
        }
        BARRIER();
        if (lid == 0) {
            uint want = rank_l, b = 0;
            while (want >= hist[b]) want -= hist[b++];
            rank_l = want;
            prefix_l = prefix_after(d, b);
        }
        BARRIER();
        if (d.s == 0) break;
    }
    const key_t t = prefix_l;
    /* Values below t: their count, and their sum by blocks and lanes (rank_keys.cl); values
     * equal to t. */
    uint less = 0, equal = 0;
    REAL sum = 0;
    for (uint from = 0; !done_l && from < rows; from += BLOCK) {
        const REAL block = block_below(col, rstep, from, min(rows, from + BLOCK), t, false, lid,
                                       lanes, &less, &equal);
        if (lid == 0) sum += block;
    }
    BARRIER(); /* every item has read lcount[0] (nans) */
    lcount[lid] = less;
    lequal[lid] = equal;
    BARRIER();
    if (lid == 0) {
        for (uint i = 1; i < WG; i++) {
            less += lcount[i];
            equal += lequal[i];
        }
        stats[4 * c] = done_l ? (ulong)NAN_KEY : (ulong)t;
        stats[4 * c + 1] = nans;
        stats[4 * c + 2] = less;
        stats[4 * c + 3] = equal;
        sums[c] = sum;
    }
}
