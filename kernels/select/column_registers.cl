/* column_registers.cl - exact medians of the columns of a row-major float32 matrix in one launch
 * that reads the matrix once, for GPUs and columns of some thousands of rows, where a second
 * launch or a second read costs as much as the work.
 *
 * A group takes COLS adjacent columns (a row's COLS values one memory segment), and each of its
 * work-items holds VPT keys of one column in registers: rows lane, lane + ROW_LANES, ... Then:
 * 1. every SAMPLE_STRIDE-th work-item loads one more key, from a row at random in its stratum;
 *    ranked against each other (no sort), the sample's keys some SIGMAS standard deviations of
 *    the sample median's rank either side of it bound the first key range;
 * 2. the work-items count their keys below the range and into NB bins across it (bins of equal
 *    key width: the keys of floats are close to logarithmic in them, so that bins are fine
 *    where the values crowd near zero and even across a narrow range);
 * 3. the bins of the two middle ranks give a key range with its count: one key (a run of ties)
 *    is an answer; a range of at most LIST_CAP keys is listed from the registers and ranked;
 *    a larger one, or a rank outside the sample's range, becomes the next range (step 2 again),
 *    each at most 1 / NB of the last, so that a few rounds resolve any data.
 * A column still open after MAX_ROUNDS rounds is reported (NO_KEY), and the host takes the
 * radix kernel's answer for it: the sample steers the work, never the answer. None is when
 * MAX_ROUNDS >= 2 + 33 / LOG2_NB (the sample's range, one beside it, and 32-bit keys split
 * LOG2_NB bits a round, one bit more where the two ranks part).
 *
 * Streamed (-D STREAM, below), the registers hold the first part of a pass over the matrix
 * instead, rows spread over the column: a round -1 narrows the first range with that sample,
 * and steps 2 and 3 take it and read the rest of the matrix, or the first pass's list.
 *
 * Build options: -D COLS=columns a group, -D WG=its work-items (COLS ROW_LANES, ROW_LANES a
 * power of two), -D SAMPLE_STRIDE (divides ROW_LANES), -D VPT=keys a work-item holds (rows <=
 * VPT ROW_LANES, VPT <= 64), -D LOG2_NB=log2 of the bins (>= 5), -D SIGMAS, -D LIST_CAP=keys a
 * column's list holds, -D MAX_ROUNDS; streamed also -D STREAM=loads in flight, -D PASS_CAP.
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "sample_rows.cl"

#define ROW_LANES (WG / COLS) /* work-items down each column */
#define SAMPLE (ROW_LANES / SAMPLE_STRIDE)
#define NB (1 << LOG2_NB)
/* Finding the bin of a rank walks chunk sums, then bins of one chunk: chunks of about
 * sqrt(NB) bins make both walks short (each step a dependent local load). */
#define BIN_CHUNK (1 << (LOG2_NB / 2))
#define NCHUNK (NB / BIN_CHUNK)

/* The word of column c in a row: 32-bit index arithmetic where the host says that the
 * matrix's indices fit (-D INDEX32), which saves instructions on every load. -D L2_HINT
 * (NVIDIA, compute capability 8 and later, by the host's choice) asks for 256 bytes about each
 * load to be brought into L2: a group reads 32 bytes of a row, and its neighbours the rest. */
#ifdef INDEX32
#define AT(row) ((uint)off + (row) * (uint)ld + c)
#else
#define AT(row) (off + (ulong)(row) * ld + c)
#endif
#ifdef L2_HINT
inline uint load_hinted(__global const uint *p)
{
    uint v;
    asm("ld.global.L2::256B.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
#define LOAD_AT(row) load_hinted(m + AT(row))
#else
#define LOAD_AT(row) m[AT(row)]
#endif

/* The keys a work-item holds are scalars k0 .. k(VPT - 1), each step written once per key by
 * EACH_KEY: NVIDIA's compiler kept an array of them in stack memory even with its loops
 * unrolled, and every use became a memory access. VPT <= 64. */
#define EACH_KEY_OF(G, F)                                                                  \
    G(F, 0) G(F, 1) G(F, 2) G(F, 3) G(F, 4) G(F, 5) G(F, 6) G(F, 7) G(F, 8) G(F, 9)         \
    G(F, 10) G(F, 11) G(F, 12) G(F, 13) G(F, 14) G(F, 15) G(F, 16) G(F, 17) G(F, 18)        \
    G(F, 19) G(F, 20) G(F, 21) G(F, 22) G(F, 23) G(F, 24) G(F, 25) G(F, 26) G(F, 27)        \
    G(F, 28) G(F, 29) G(F, 30) G(F, 31) G(F, 32) G(F, 33) G(F, 34) G(F, 35) G(F, 36)        \
    G(F, 37) G(F, 38) G(F, 39) G(F, 40) G(F, 41) G(F, 42) G(F, 43) G(F, 44) G(F, 45)        \
    G(F, 46) G(F, 47) G(F, 48) G(F, 49) G(F, 50) G(F, 51) G(F, 52) G(F, 53) G(F, 54)        \
    G(F, 55) G(F, 56) G(F, 57) G(F, 58) G(F, 59) G(F, 60) G(F, 61) G(F, 62) G(F, 63)
#define APPLY(F, j) F(j)
#define EACH_KEY(F) EACH_KEY_OF(APPLY, F)

/* With -D STREAM=n the group holds no column in registers: it reads the matrix in passes, n
 * loads (<= 16) in flight a work-item, so that it can take more columns than its registers
 * would hold (one memory segment a row, one wave of groups). A pass takes `steps` steps; in
 * step t a work-item's load u reads row (lane + ROW_LANES u) steps + t (slot t STREAM + u), so
 * that every row is read once and each step's rows spread evenly over the whole column. The
 * first VPT slots are loaded first and held in registers: they are the sample that narrows the
 * first range to a few per cent of the column, and each pass takes them from there and streams
 * only the rest. The first pass counts below that range and lists the keys inside it
 * (PASS_CAP a column; its bins are counted from the list afterwards, and from the keys past
 * the cap as they come), so that later rounds read that list and not the matrix again, unless
 * their range leaves the listed one. F(x, r) sees each key x (NaNs and rows past the end
 * NO_KEY) of row r; r is 0 for listed keys. */
#ifdef STREAM
#define SLOT_ROW(t, u) ((lane + ROW_LANES * (u)) * steps + (t))
#define STREAM_LOAD(u)                                                                         \
    const uint stream_row##u = SLOT_ROW(t, u);                                                 \
    const bool stream_new##u = u < STREAM && t * STREAM + u >= VPT;                            \
    const uint stream_bits##u = stream_new##u && stream_row##u < rows                          \
                                    ? LOAD_AT(stream_row##u)                                    \
                                    : CANONICAL_NAN;
#define STREAM_USE(F, u)                                                                       \
    if (stream_new##u) {                                                                       \
        const uint bits = stream_bits##u, r = stream_row##u;                                   \
        const uint x = bits_nan(bits) ? NO_KEY : key_of_bits(bits);                            \
        F(x, r)                                                                                \
    }
#define HELD_SOURCE(F, j)                                                                      \
    if (j < VPT) {                                                                             \
        const uint held_x = k##j, held_r = HELD_ROW(j);                                        \
        F(held_x, held_r)                                                                      \
    }
#define STREAMED(F)                                                                            \
    EACH_KEY_OF(HELD_SOURCE, F)                                                                \
    for (uint t = VPT / STREAM; live && t < steps; t++) {                                      \
        STREAM_LOAD(0) STREAM_LOAD(1) STREAM_LOAD(2) STREAM_LOAD(3)                            \
        STREAM_LOAD(4) STREAM_LOAD(5) STREAM_LOAD(6) STREAM_LOAD(7)                            \
        STREAM_LOAD(8) STREAM_LOAD(9) STREAM_LOAD(10) STREAM_LOAD(11)                          \
        STREAM_LOAD(12) STREAM_LOAD(13) STREAM_LOAD(14) STREAM_LOAD(15)                        \
        STREAM_USE(F, 0) STREAM_USE(F, 1) STREAM_USE(F, 2) STREAM_USE(F, 3)                    \
        STREAM_USE(F, 4) STREAM_USE(F, 5) STREAM_USE(F, 6) STREAM_USE(F, 7)                    \
        STREAM_USE(F, 8) STREAM_USE(F, 9) STREAM_USE(F, 10) STREAM_USE(F, 11)                  \
        STREAM_USE(F, 12) STREAM_USE(F, 13) STREAM_USE(F, 14) STREAM_USE(F, 15)                \
    }
/* The keys of a round after the first: the first pass's list, or a pass again. */
#define EACH_SOURCE_KEY(F)                                                                     \
    if (from_list[col]) {                                                                      \
        const uint listed_keys = min(plisted[col], (uint)PASS_CAP);                            \
        for (uint i_ = lane; i_ < listed_keys; i_ += ROW_LANES) {                              \
            const uint x = plist[col][i_], r = 0;                                              \
            F(x, r)                                                                            \
        }                                                                                      \
    } else {                                                                                   \
        STREAMED(F)                                                                            \
    }
#define STREAMS true
/* Held slots past the pass's steps (short columns) are no rows. */
#define HELD_ROW(j) ((j) / STREAM < steps ? SLOT_ROW((j) / STREAM, (j) % STREAM) : rows)
#define HELD_REAL(j) true /* rows past the end count as NaNs for the sample's size */
#else
#define EACH_SOURCE_KEY(F)
#define STREAMS false
#define HELD_ROW(j) (lane + j * ROW_LANES)
#define HELD_REAL(j) (lane + j * ROW_LANES < rows)
#endif

/* Timing probes (tuning registers.stop): stop after phase n, writing x so that it is
 * computed. */
#ifdef STOP
#define STOP_HERE(n, x)                                                                        \
    if (STOP == n) {                                                                           \
        if (live) res[4 * c + lane % 4] = (x);                                                 \
        return;                                                                                \
    }
#else
#define STOP_HERE(n, x)
#endif

/* A column's state after a round's step 3: answered, counting again in a narrower range,
 * listing its range, taking the ends of two ranges (the two ranks parted), or left open; or,
 * streaming, between the sample's round -1 and the first pass. */
enum { DONE, COUNT, LIST, ENDS, FAILED, START };

/* Bins of equal width 2^shift from key lo, so that NB of them cover lo .. hi. */
inline uint shift_for(uint lo, uint hi)
{
    const uint width = hi - lo;
    const int bits = width ? 32 - (int)clz(width) : 0;
    return (uint)max(bits - LOG2_NB, 0);
}

/* Ranks of the ends of a sample's window among its n keys: SIGMAS standard deviations of its
 * median's rank either side (that rank is off by about sqrt(n) / 2), and 2 more. */
inline uint2 window_ranks(uint n)
{
    const uint mid = n ? (n - 1) / 2 : 0;
    const uint d = (uint)(0.5f * SIGMAS * sqrt((float)n)) + 2;
    return (uint2)(mid > d ? mid - d : 0, n ? min(mid + 1 + d, n - 1) : 0);
}

/* Group g: columns COLS g .. COLS g + COLS - 1. res[4 c .. 4 c + 3] = key of rank
 * (nv - 1) / 2, key of rank nv / 2, the column's NaN count, and the keys it listed; or that
 * word NO_KEY where the column is left open (nv: its numbers; nv == 0 gives keys 0). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
column_registers(__global const uint *m, ulong off, uint rows, uint cols, ulong ld,
                 __global uint *res)
{
    /* hist[bin][column]: a warp's work-items, on COLS columns, count into COLS banks apart. */
    __local uint sample[COLS * (SAMPLE + 1)], hist[NB][COLS], sums[COLS][NCHUNK];
    __local uint list[COLS][LIST_CAP];
    __local uint numbers[COLS], nans[COLS], below[COLS], listed[COLS], state[COLS];
    __local uint lo[COLS], hi[COLS], shift[COLS], base[COLS], wanted[COLS], total[COLS];
    __local uint rank[COLS][2], key[COLS][2], done[COLS][2];
    __local uint inside[COLS], found_chunk[COLS][2], found_bin[COLS][2], found_cum[COLS][2];
    __local uint found_before[COLS][2], lo_upper[COLS], hi_upper[COLS];
    __local uint range_lo[COLS][2], range_hi[COLS][2], range_before[COLS][2], range_count[COLS][2];
#ifdef STREAM
    /* The first pass's list: its keys (all of them where plisted <= PASS_CAP), range, and the
     * count below that range; from_list: this round's range lies inside it. */
    __local uint plist[COLS][PASS_CAP], plisted[COLS], plo[COLS], phi[COLS], pbelow[COLS];
    __local uint from_list[COLS];
#endif
    const uint lid = get_local_id(0), col = lid % COLS, lane = lid / COLS;
    const uint c = get_group_id(0) * COLS + col;
    const bool live = c < cols;
#ifdef STREAM
    const uint steps = (rows + ROW_LANES * STREAM - 1) / (ROW_LANES * STREAM);
#endif

    /* The loads first, all of them: the sample's (a row at random in each of SAMPLE strata,
     * from every SAMPLE_STRIDE-th work-item), then the column's keys into registers, so that
     * the sample is ranked while the column's arrive. */
    const bool sampling = lane % SAMPLE_STRIDE == 0;
    const uint si = lane / SAMPLE_STRIDE;
    const uint sb = sampling && live ? LOAD_AT(sample_row(si, rows, SAMPLE))
                                     : CANONICAL_NAN;
#define DECLARE(j) uint k##j = NO_KEY;
    EACH_KEY(DECLARE)
#define LOAD(j)                                                                                \
    if (j < VPT) {                                                                             \
        const uint r = HELD_ROW(j);                                                            \
        k##j = live && r < rows ? LOAD_AT(r) : CANONICAL_NAN;                                   \
    }
    EACH_KEY(LOAD)

    /* Meanwhile: empty counts, and every key the range until the sample says otherwise. */
    for (uint i = lid; i < COLS * NB; i += WG)
        hist[i % NB][i / NB] = 0;
    if (lid < COLS) {
        numbers[lid] = nans[lid] = below[lid] = listed[lid] = inside[lid] = 0;
        found_chunk[lid][0] = found_chunk[lid][1] = NCHUNK; /* none */
        found_bin[lid][0] = found_bin[lid][1] = 0;
        lo[lid] = 0;
        hi[lid] = NO_KEY - 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 1. The two sample keys that bound the first range, found by ranking each sample key
     * against the rest, which takes no sort (NaNs rank last, as NO_KEY). */
    const uint sk = bits_nan(sb) ? NO_KEY : key_of_bits(sb);
    __local uint *own_sample = sample + col * (SAMPLE + 1); /* + 1: columns in other banks */
    if (sampling) own_sample[si] = sk;
    if (sampling && sk != NO_KEY) atomic_inc(&numbers[col]);
    barrier(CLK_LOCAL_MEM_FENCE);
    {
        const uint2 window = window_ranks(numbers[col]);
        const uint i_lo = window.x, i_hi = window.y;
        if (sampling && sk != NO_KEY) {
            uint less = 0, most = 0;
            for (uint j = 0; j < SAMPLE; j++) {
                const uint y = own_sample[j];
                less += y < sk;
                most += y <= sk;
            }
            /* Ties all write the same key. */
            if (less <= i_lo && i_lo < most) lo[col] = sk;
            if (less <= i_hi && i_hi < most) hi[col] = sk;
        }
    }
    /* The column's keys (NaNs and rows past the end as NO_KEY) and NaN count. */
    uint nan = 0;
#define TO_KEY(j)                                                                              \
    if (j < VPT) {                                                                             \
        const bool is_nan = bits_nan(k##j);                                                    \
        nan += is_nan && live && HELD_REAL(j);                                                 \
        k##j = is_nan ? NO_KEY : key_of_bits(k##j);                                            \
    }
    EACH_KEY(TO_KEY)
    if (nan) atomic_add(&nans[col], nan);
#ifdef STOP
    uint probe = nan;
#define PROBE(j) probe += k##j;
    EACH_KEY(PROBE)
    STOP_HERE(1, probe)
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    STOP_HERE(2, lo[col] + probe)
    /* Column lid's total and middle ranks, once its NaNs are counted. */
#define SET_RANKS()                                                                            \
    const uint nv = live ? rows - nans[lid] : 0;                                               \
    total[lid] = nv;                                                                           \
    rank[lid][0] = nv ? (nv - 1) / 2 : 0;                                                      \
    rank[lid][1] = nv / 2;                                                                     \
    done[lid][0] = done[lid][1] = nv == 0;                                                     \
    state[lid] = nv ? COUNT : DONE;
    if (lid < COLS) {
        shift[lid] = shift_for(lo[lid], hi[lid]);
        key[lid][0] = key[lid][1] = 0;
        wanted[lid] = 0;
#ifdef STREAM
        /* Round -1 counts the held sample in the small sample's range, for the ends of its
         * window. The column's ranks and NaN count come with the first pass (SET_RANKS). */
        const uint hv = live ? VPT * ROW_LANES - nans[lid] : 0;
        const uint2 window = window_ranks(hv);
        nans[lid] = 0;
        rank[lid][0] = window.x;
        rank[lid][1] = window.y;
        state[lid] = hv ? COUNT : DONE;
        plisted[lid] = from_list[lid] = 0;
#else
        SET_RANKS()
#endif
    }

    /* Counts and finds of a round are emptied before the next. */
#ifdef STREAM
#define BELOW_KNOWN(sc) (from_list[sc] ? pbelow[sc] : 0)
#else
#define BELOW_KNOWN(sc) 0
#endif
#define EMPTY_COUNTS()                                                                         \
    for (uint i = lid; i < COLS * NB; i += WG)                                                 \
        hist[i % NB][i / NB] = 0;                                                              \
    if (lid < COLS) {                                                                          \
        below[lid] = BELOW_KNOWN(lid);                                                         \
        inside[lid] = 0;                                                                       \
        found_chunk[lid][0] = found_chunk[lid][1] = NCHUNK;                                    \
        found_bin[lid][0] = found_bin[lid][1] = 0;                                             \
    }

    for (int round = STREAMS ? -1 : 0; round < MAX_ROUNDS; round++) {
        /* 2. Counts below and in the bins of the range, for the columns still counting (the
         * counts emptied before the first round, and after each). */
        barrier(CLK_LOCAL_MEM_FENCE);
        if (state[col] == COUNT || state[col] == START) {
            const uint r_lo = lo[col], r_hi = hi[col], sh = shift[col];
            uint under = 0;
#define COUNT_KEY(j)                                                                           \
    if (j < VPT) {                                                                             \
        if (k##j < r_lo) under++;                                                              \
        else if (k##j <= r_hi) atomic_inc(&hist[(k##j - r_lo) >> sh][col]);                    \
    }
            if (!STREAMS || round < 0) {
                EACH_KEY(COUNT_KEY)
            } else {
                /* The first pass lists the range's keys instead, counting into the bins
                 * only those past its cap (the listed ones are counted from the list, below),
                 * and counts the NaNs. */
                uint nan_streamed = 0;
#define COUNT_SOURCE_KEY(x, r)                                                                 \
    if (x < r_lo) {                                                                            \
        under++;                                                                               \
    } else if (x <= r_hi) {                                                                    \
        const uint at = round == 0 ? atomic_inc(&plisted[col]) : PASS_CAP;                     \
        if (at < PASS_CAP) plist[col][at] = x;                                                 \
        else atomic_inc(&hist[(x - r_lo) >> sh][col]);                                         \
    } else if (round == 0 && x == NO_KEY && r < rows) {                                        \
        nan_streamed++;                                                                        \
    }
                EACH_SOURCE_KEY(COUNT_SOURCE_KEY)
                if (nan_streamed) atomic_add(&nans[col], nan_streamed);
            }
            if (under) atomic_add(&below[col], under);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#ifdef STREAM
        /* No barrier in a branch, and no `continue` past one: built that way, round -1 gave
         * wrong medians on PoCL 3.1 and 6.0, which a printf in the kernel made right. */
        if (round == 0) { /* the column's ranks, now that its NaNs are counted */
            if (lid < COLS) {
                SET_RANKS()
                plo[lid] = lo[lid];
                phi[lid] = hi[lid];
                pbelow[lid] = below[lid];
                from_list[lid] = plisted[lid] <= PASS_CAP;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* The first pass's bins of the listed keys, from its list: fewer work-items diverge
         * into counting in the pass, where few of the keys a warp reads at once are in the
         * range, but some almost always are. */
        if (round == 0 && state[col] == COUNT) {
            const uint r_lo = lo[col], sh = shift[col], n = min(plisted[col], (uint)PASS_CAP);
            for (uint i = lane; i < n; i += ROW_LANES)
                atomic_inc(&hist[(plist[col][i] - r_lo) >> sh][col]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (round == 0) { STOP_HERE(5, hist[lane % NB][col] + probe) }
#endif
        STOP_HERE(3, hist[lane % NB][col] + probe)
        /* The bins of the open ranks, in parallel: the chunk sums; each chunk tests whether it
         * holds a rank; each bin of a chunk that does, likewise. */
        for (uint i = lid; i < COLS * NCHUNK; i += WG) {
            const uint sc = i % COLS, ch = i / COLS; /* a warp's reads in several banks */
            uint sum = 0;
            for (uint b = ch * BIN_CHUNK; b < (ch + 1) * BIN_CHUNK; b++)
                sum += hist[b][sc];
            sums[sc][ch] = sum;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const bool counting = state[col] == COUNT;
        for (uint ch = lane; counting && ch < NCHUNK; ch += ROW_LANES) {
            uint cum = 0;
            for (uint i = 0; i < ch; i++)
                cum += sums[col][i];
            if (ch == NCHUNK - 1) inside[col] = cum + sums[col][ch];
            for (int h = 0; h < 2; h++) {
                const uint r = rank[col][h] - below[col]; /* wraps when below the range */
                if (cum <= r && r < cum + sums[col][ch]) {
                    found_chunk[col][h] = ch;
                    found_cum[col][h] = cum;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = lane; counting && i < 2 * BIN_CHUNK; i += ROW_LANES) {
            const uint h = i / BIN_CHUNK, ch = found_chunk[col][h];
            const uint bin = ch * BIN_CHUNK + i % BIN_CHUNK; /* a work-item a bin and rank */
            if (ch < NCHUNK) {
                uint cum = found_cum[col][h];
                for (uint b = ch * BIN_CHUNK; b < bin; b++)
                    cum += hist[b][col];
                const uint r = rank[col][h] - below[col];
                if (cum <= r && r < cum + hist[bin][col]) {
                    found_bin[col][h] = bin;
                    found_before[col][h] = cum;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#ifdef STREAM
        /* Round -1 ends here: the first pass's range runs from the bin of the sample window's
         * lower end to that of its upper end (the small sample's range where an end lies
         * outside it: the range only steers, and a missed rank costs rounds, not answers). */
        if (round < 0 && lid < COLS) {
            if (state[lid] == COUNT) {
                const uint under = below[lid], in_range = inside[lid], sh = shift[lid];
                const uint r_lo = lo[lid], r_hi = hi[lid], r0 = rank[lid][0], r1 = rank[lid][1];
                if (under <= r0 && r0 < under + in_range)
                    lo[lid] = r_lo + (found_bin[lid][0] << sh);
                if (under <= r1 && r1 < under + in_range)
                    hi[lid] = (uint)min((ulong)r_hi,
                                        (ulong)r_lo + ((ulong)(found_bin[lid][1] + 1) << sh) - 1);
                shift[lid] = shift_for(lo[lid], hi[lid]);
            }
            state[lid] = live ? START : DONE; /* the later steps pass it by */
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#endif

        /* 3. Each open rank's key range [a, b], with the count of keys below it and in it
         * (a work-item a rank, then one a column: few values live beside the keys). */
        if (lid < 2 * COLS && state[lid / 2] == COUNT && !done[lid / 2][lid % 2]) {
            const uint sc = lid / 2, h = lid % 2, r = rank[sc][h], under = below[sc];
            const uint r_lo = lo[sc], r_hi = hi[sc], in_range = inside[sc];
            uint a, b;
            if (r < under) { /* below the range: every key under lo */
                a = 0;
                b = r_lo - 1;
                range_before[sc][h] = 0;
                range_count[sc][h] = under;
            } else if (r >= under + in_range) { /* above it */
                a = r_hi + 1;
                b = NO_KEY - 1;
                range_before[sc][h] = under + in_range;
                range_count[sc][h] = total[sc] - (under + in_range);
            } else { /* in a bin */
                const uint bin = found_bin[sc][h], sh = shift[sc];
                a = r_lo + (bin << sh);
                b = (uint)min((ulong)r_hi, (ulong)a + ((1ul << sh) - 1));
                range_before[sc][h] = under + found_before[sc][h];
                range_count[sc][h] = hist[bin][sc];
            }
            range_lo[sc][h] = a;
            range_hi[sc][h] = b;
            if (a == b) { /* one key: a run of ties, or a bin of width one */
                key[sc][h] = a;
                done[sc][h] = 1;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < COLS && state[lid] == COUNT) {
            const uint sc = lid;
            const bool need0 = !done[sc][0], need1 = !done[sc][1];
            if (!need0 && !need1) {
                state[sc] = DONE;
            } else if (need0 && need1 && range_lo[sc][0] != range_lo[sc][1]) {
                /* Consecutive ranks in two ranges, with none between: the lower is the
                 * largest key of its range, the upper the smallest of its own. */
                lo[sc] = range_lo[sc][0];
                hi[sc] = range_hi[sc][0];
                lo_upper[sc] = range_lo[sc][1];
                hi_upper[sc] = range_hi[sc][1];
                key[sc][0] = 0; /* below every number's key */
                key[sc][1] = NO_KEY;
                state[sc] = ENDS;
            } else {
                const int h = need0 ? 0 : 1; /* one range */
                lo[sc] = range_lo[sc][h];
                hi[sc] = range_hi[sc][h];
                shift[sc] = shift_for(lo[sc], hi[sc]);
                base[sc] = range_before[sc][h];
                wanted[sc] = range_count[sc][h];
                state[sc] = wanted[sc] <= LIST_CAP ? LIST : COUNT;
                if (need0) key[sc][0] = NO_KEY;
                if (need1) key[sc][1] = NO_KEY;
            }
#ifdef STREAM
            /* The first pass's list serves while the ranges lie inside its own. */
            const bool ends = state[sc] == ENDS;
            from_list[sc] = from_list[sc] && plo[sc] <= lo[sc] && hi[sc] <= phi[sc] &&
                            (!ends || (plo[sc] <= lo_upper[sc] && hi_upper[sc] <= phi[sc]));
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* Listing: the range's keys from the registers (or the source), then each work-item
         * ranks its listed keys against all, and the one whose run of ties holds an open rank
         * writes it. */
        const bool listing = state[col] == LIST;
        if (listing) {
            const uint r_lo = lo[col], r_hi = hi[col];
#define LIST_KEY(j)                                                                            \
    if (j < VPT && r_lo <= k##j && k##j <= r_hi) {                                             \
        const uint at = atomic_inc(&listed[col]);                                              \
        if (at < LIST_CAP) list[col][at] = k##j;                                               \
    }
            if (!STREAMS) {
                EACH_KEY(LIST_KEY)
            }
#define LIST_SOURCE_KEY(x, r)                                                                  \
    if (r_lo <= x && x <= r_hi) {                                                              \
        const uint at = atomic_inc(&listed[col]);                                              \
        if (at < LIST_CAP) list[col][at] = x;                                                  \
    }
            EACH_SOURCE_KEY(LIST_SOURCE_KEY)
        }
        if (state[col] == ENDS) {
            const uint a0 = lo[col], b0 = hi[col], a1 = lo_upper[col], b1 = hi_upper[col];
            uint top = 0, bottom = NO_KEY;
#define END_KEYS(j)                                                                            \
    if (j < VPT) {                                                                             \
        if (a0 <= k##j && k##j <= b0) top = max(top, k##j);                                    \
        if (a1 <= k##j && k##j <= b1) bottom = min(bottom, k##j);                              \
    }
            if (!STREAMS) {
                EACH_KEY(END_KEYS)
            }
#define END_SOURCE_KEY(x, r)                                                                   \
    if (a0 <= x && x <= b0) top = max(top, x);                                                 \
    if (a1 <= x && x <= b1) bottom = min(bottom, x);
            EACH_SOURCE_KEY(END_SOURCE_KEY)
            if (top) atomic_max(&key[col][0], top);
            if (bottom != NO_KEY) atomic_min(&key[col][1], bottom);
        }
        /* The bins and chunk results are read no more this round: emptied for the next. */
        EMPTY_COUNTS()
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint n = listed[col];
        for (uint i = lane; listing && n == wanted[col] && i < n; i += ROW_LANES) {
            const uint x = list[col][i];
            uint less = 0, most = 0;
            for (uint j = 0; j < n; j++) {
                const uint y = list[col][j];
                less += y < x;
                most += y <= x;
            }
            for (int h = 0; h < 2; h++) {
                const uint q = rank[col][h] - base[col];
                if (!done[col][h] && less <= q && q < most) atomic_min(&key[col][h], x);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* A list that does not hold the range's count leaves the column open for good. */
        if (lid < COLS && state[lid] == ENDS) state[lid] = DONE;
        if (lid < COLS && state[lid] == LIST) {
            const bool whole = listed[lid] == wanted[lid];
            done[lid][0] |= whole;
            done[lid][1] |= whole;
            state[lid] = whole ? DONE : FAILED;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        STOP_HERE(4, key[col][0])
        if (round == 0) { STOP_HERE(6, key[col][0]) }
        if (lid < COLS) listed[lid] = 0;
        bool open = false; /* the same for every work-item: the loop ends for all at once */
        for (int sc = 0; sc < COLS; sc++)
            open |= state[sc] == COUNT || state[sc] == START;
        if (!open) break;
    }

    if (live && lane == 0) {
        res[4 * c] = key[col][0];
        res[4 * c + 1] = key[col][1];
        res[4 * c + 2] = nans[col];
        res[4 * c + 3] = state[col] == DONE ? wanted[col] : NO_KEY;
    }
}
