/* column_bracket.cl - exact medians of the long columns of a row-major float32 matrix on GPUs,
 * in three kernels that read the matrix once, in whole row segments, with no transposed copy:
 *
 * 1. column_sample: a group per column sorts the keys of SAMPLE rows, one from each stretch of
 *    rows / SAMPLE, and keeps CELLS + 1 of them around the sample's median, t_0 <= ... <=
 *    t_CELLS, so far apart that the column's median lies between t_0 and t_CELLS unless the
 *    sample missed by more than BRACKET_SIGMAS standard deviations.
 * 2. column_count: a group of 32 adjacent columns by a slice of rows (each row's 32 values one
 *    memory transaction) counts per column the NaNs, the values below t_0 and those equal to
 *    t_0 or to t_CELLS, and lists the keys strictly between t_0 and t_CELLS: each work-item
 *    keeps them in local memory (no atomics, no search in its loop), and every CHUNK_ROWS
 *    rows the group copies them, a column's at a time, to the column's region for the slice.
 * 3. column_finish: a group per column adds the slices' counts, sorts the listed keys into
 *    cells by the t_j (cell 2j: keys equal to t_j; cell 2j - 1: keys strictly between t_(j-1)
 *    and t_j), finds the cells that hold the two middle ranks, and ranks only their keys.
 *
 * A rank outside [t_0, t_CELLS], or a region's keys beyond its room, is reported and the host
 * runs the radix kernel (select_columns.cl) instead: the sample steers the work, never the
 * answer.
 *
 * Build options: -D SAMPLE=sampled rows (a power of two), -D SAMPLE_WG=column_sample's group
 * (a power of two, at most SAMPLE / 2), -D CELLS=boundaries less one, -D ROW_LANES=work-items
 * down each column in column_count, -D CHUNK_ROWS=rows between two copies of listed keys (a
 * multiple of ROW_LANES), -D FINISH_WG=column_finish's group, -D FINISH_CAP=keys of one cell
 * column_finish can rank, -D MAX_SLICES=the most slices of rows, -D BRACKET_SIGMAS (float),
 * -D COLS_PER_GROUP (column_count's columns a group: 32, one memory transaction a row); the
 * host sizes its buffers by these.
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "sample_rows.cl"

#define COUNT_WG (COLS_PER_GROUP * ROW_LANES)
#define LOADS_IN_FLIGHT 4
#define PER_LANE (CHUNK_ROWS / ROW_LANES) /* rows of a chunk each work-item reads */

/* Counts per column and slice, in this order. */
enum { BELOW, AT_FIRST, AT_LAST, NANS, LISTED, NCOUNT };

#define NCELL (2 * CELLS + 1)
#define CELL_CHUNK 16
#define NCHUNK ((NCELL + CELL_CHUNK - 1) / CELL_CHUNK)

inline uint element(__global const uint *m, ulong off, ulong ld, uint r, uint c)
{
    return m[off + (ulong)r * ld + c];
}

/* Sorts s[0 .. SAMPLE) ascending, SAMPLE_WG work-items sharing each step's comparators. */
inline void bitonic_sort(__local uint *s, uint lid)
{
    for (uint size = 2; size <= SAMPLE; size <<= 1) {
        for (uint stride = size / 2; stride > 0; stride >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint p = lid; p < SAMPLE / 2; p += SAMPLE_WG) {
                const uint i = 2 * p - (p & (stride - 1)); /* pair (i, i + stride) */
                const uint a = s[i], b = s[i + stride];
                if ((a > b) == ((i & size) == 0)) {
                    s[i] = b;
                    s[i + stride] = a;
                }
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Group c (one column): bounds[j cols + c] = t_j. Fewer than 16 numbers in the sample give
 * t_j = NO_KEY, so that every value counts as below the bracket and the column is reported
 * as missed. */
__kernel __attribute__((reqd_work_group_size(SAMPLE_WG, 1, 1))) void
column_sample(__global const uint *m, ulong off, uint rows, uint cols, ulong ld,
              __global uint *bounds)
{
    __local uint s[SAMPLE];
    __local uint numbers;
    const uint c = get_group_id(0), lid = get_local_id(0);
    if (lid == 0) numbers = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = 0;
    for (uint i = lid; i < SAMPLE; i += SAMPLE_WG) {
        const uint b = element(m, off, ld, sample_row(i, rows, SAMPLE), c);
        s[i] = bits_nan(b) ? NO_KEY : key_of_bits(b);
        mine += !bits_nan(b);
    }
    atomic_add(&numbers, mine);
    bitonic_sort(s, lid);
    /* The sample median's rank among sv numbers is off by about sqrt(sv) / 2. */
    const uint sv = numbers, mid = sv ? (sv - 1) / 2 : 0;
    const uint d = (uint)(0.5f * BRACKET_SIGMAS * sqrt((float)sv)) + 2;
    const uint lo = mid > d ? mid - d : 0, hi = sv ? min(mid + 1 + d, sv - 1) : 0;
    for (uint j = lid; j <= CELLS; j += SAMPLE_WG)
        bounds[(ulong)j * cols + c] =
            sv < 16 ? NO_KEY : s[lo + (j * (hi - lo) + CELLS / 2) / CELLS];
}

/* Group g: columns c0 .. c0 + 31 (c0 = 32 (g % ceil(cols / 32))) by rows slice slice_rows ..
 * + slice_rows - 1 (slice = g / ceil(cols / 32)). counts[(c nslices + slice) NCOUNT + w] gets
 * count w of column c in the slice, and region (c nslices + slice) of keys, room room, its
 * keys strictly between t_0 and t_CELLS (LISTED counts them all: those beyond room are
 * dropped, and the host falls back). */
__kernel __attribute__((reqd_work_group_size(COUNT_WG, 1, 1))) void
column_count(__global const uint *m, ulong off, uint rows, uint cols, ulong ld, uint slice_rows,
             __global const uint *bounds, __global uint *counts, __global uint *keys, uint room)
{
    /* A chunk's listed keys: work-item (lane rl, column i)'s n-th at (rl PER_LANE + n) 33 + i,
     * so that a row of 32 appends and a column's run both fall in different banks. The
     * counts of a chunk alternate between two copies, so that one chunk's copy can still be
     * read while the next chunk's are written. */
    __local uint lk[CHUNK_ROWS * (COLS_PER_GROUP + 1)];
    __local uint nk[2][ROW_LANES][COLS_PER_GROUP], filled[COLS_PER_GROUP];
    __local uint lc[NCOUNT][COLS_PER_GROUP];
    const uint lid = get_local_id(0), cl = lid % COLS_PER_GROUP, rl = lid / COLS_PER_GROUP;
    const uint ncb = (cols + COLS_PER_GROUP - 1) / COLS_PER_GROUP, g = get_group_id(0);
    const uint c0 = (g % ncb) * COLS_PER_GROUP, slice = g / ncb;
    const uint nslices = (rows + slice_rows - 1) / slice_rows;
    const uint c = c0 + cl, r_begin = slice * slice_rows, r_end = min(r_begin + slice_rows, rows);
    const bool live = c < cols;
    const uint t_first = live ? bounds[c] : NO_KEY;
    const uint t_last = live ? bounds[(ulong)CELLS * cols + c] : NO_KEY;
    for (uint i = lid; i < NCOUNT * COLS_PER_GROUP; i += COUNT_WG)
        lc[i / COLS_PER_GROUP][i % COLS_PER_GROUP] = 0;
    if (lid < COLS_PER_GROUP) filled[lid] = 0;
    uint below = 0, at_first = 0, at_last = 0, nan = 0, parity = 0;
    for (uint chunk = r_begin; chunk < r_end; chunk += CHUNK_ROWS, parity ^= 1) {
        const uint chunk_end = min(chunk + CHUNK_ROWS, r_end);
        uint n = 0;
        for (uint r = chunk + rl; live && r < chunk_end; r += ROW_LANES * LOADS_IN_FLIGHT) {
            uint b[LOADS_IN_FLIGHT]; /* loaded first, so that their latencies overlap */
            for (int v = 0; v < LOADS_IN_FLIGHT; v++) {
                const uint rv = r + v * ROW_LANES;
                b[v] = rv < chunk_end ? element(m, off, ld, rv, c) : 0u;
            }
            for (int v = 0; v < LOADS_IN_FLIGHT && r + v * ROW_LANES < chunk_end; v++) {
                const uint k = key_of_bits(b[v]);
                if (bits_nan(b[v])) nan++;
                else if (k < t_first) below++;
                else if (k == t_first) at_first++;
                else if (k == t_last) at_last++;
                else if (k < t_last) lk[(rl * PER_LANE + n++) * (COLS_PER_GROUP + 1) + cl] = k;
            }
        }
        nk[parity][rl][cl] = n;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Copy: column col's keys, lane after lane, to its region from `filled` on. */
        for (uint col = rl; col < COLS_PER_GROUP; col += ROW_LANES) {
            __global uint *region = keys + ((ulong)(c0 + col) * nslices + slice) * room;
            const uint start = filled[col];
            uint lane = 0, before = 0; /* key j of the chunk is lane's (j - before)-th */
            for (uint j = cl;; j += COLS_PER_GROUP) {
                while (lane < ROW_LANES && j >= before + nk[parity][lane][col])
                    before += nk[parity][lane++][col];
                if (lane == ROW_LANES || start + j >= room) break;
                region[start + j] = lk[(lane * PER_LANE + j - before) * (COLS_PER_GROUP + 1) + col];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < COLS_PER_GROUP)
            for (int l = 0; l < ROW_LANES; l++) filled[lid] += nk[parity][l][lid];
    }
    if (below) atomic_add(&lc[BELOW][cl], below);
    if (at_first) atomic_add(&lc[AT_FIRST][cl], at_first);
    if (at_last) atomic_add(&lc[AT_LAST][cl], at_last);
    if (nan) atomic_add(&lc[NANS][cl], nan);
    if (lid < COLS_PER_GROUP) lc[LISTED][lid] = filled[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < NCOUNT * COLS_PER_GROUP; i += COUNT_WG) {
        const uint col = i / NCOUNT, w = i % NCOUNT;
        if (c0 + col < cols)
            counts[((ulong)(c0 + col) * nslices + slice) * NCOUNT + w] = lc[w][col];
    }
}

/* Smallest j in [1, CELLS] with k <= t[j], given t[0] < k < t[CELLS]. */
inline uint boundary_at_or_above(__local const uint *t, uint k)
{
    uint lo = 1, hi = CELLS;
    while (lo < hi) {
        const uint mid = (lo + hi) / 2;
        if (k <= t[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* Of list[0 .. n), the key of rank q (0-based, ties counted): each work-item ranks its keys
 * against all n, and the one whose run of ties holds q writes it into *key. */
inline void rank_in_list(__local const uint *list, uint n, uint q, __local uint *key, uint lid)
{
    for (uint i = lid; i < n; i += FINISH_WG) {
        const uint x = list[i];
        uint less = 0, most = 0;
        for (uint j = 0; j < n; j++) {
            const uint y = list[j];
            less += y < x;
            most += y <= x;
        }
        if (less <= q && q < most) atomic_min(key, x);
    }
}

/* The cell (of cells[0 .. NCELL), chunk sums sums[0 .. NCHUNK)) holding rank r counted from
 * `before` (the values below them), and *within, r's rank inside it; -1 beyond them all. */
inline int cell_of_rank(__local const uint *cells, __local const uint *sums, uint before, uint r,
                        uint *within)
{
    if (r < before) return -1;
    r -= before;
    int ch = 0;
    while (ch < NCHUNK && r >= sums[ch]) r -= sums[ch++];
    if (ch == NCHUNK) return -1;
    int w = ch * CELL_CHUNK;
    while (r >= cells[w]) r -= cells[w++];
    *within = r;
    return w;
}

/* Key i of a column's listed keys, which are the slices' regions one after another: the
 * region s with start[s] <= i < start[s + 1] (start: nslices + 1 running sums). */
inline uint listed_key(__global const uint *regions, __local const uint *start, uint nslices,
                       uint room, uint i)
{
    uint lo = 0, hi = nslices - 1;
    while (lo < hi) {
        const uint mid = (lo + hi + 1) / 2;
        if (start[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    return regions[(ulong)lo * room + i - start[lo]];
}

/* Group c (one column): res[4 c .. 4 c + 3] = key of rank (nv - 1) / 2, key of rank nv / 2,
 * the column's NaN count, and its listed keys' count; or that count as NO_KEY where the
 * bracket missed a middle rank or a region's keys did not fit (nv: its numbers; nv == 0
 * gives keys 0). */
__kernel __attribute__((reqd_work_group_size(FINISH_WG, 1, 1))) void
column_finish(__global const uint *bounds, __global const uint *counts, __global const uint *keys,
              uint rows, uint cols, uint nslices, uint room, __global uint *res)
{
    __local uint total[NCOUNT], t[CELLS + 1], cells[NCELL], sums[NCHUNK];
    __local uint list[2][FINISH_CAP], in_list[2], key[2], within[2], overflow;
    __local uint start[MAX_SLICES + 1];
    __local int cell[2];
    const uint c = get_group_id(0), lid = get_local_id(0);
    __global const uint *mine = counts + (ulong)c * nslices * NCOUNT;
    __global const uint *regions = keys + (ulong)c * nslices * room;
    for (uint w = lid; w < NCOUNT; w += FINISH_WG) total[w] = 0;
    if (lid == 0) overflow = 0;
    for (uint j = lid; j <= CELLS; j += FINISH_WG) t[j] = bounds[(ulong)j * cols + c];
    for (uint w = lid; w < NCELL; w += FINISH_WG) cells[w] = 0;
    for (uint s = lid; s < nslices; s += FINISH_WG) {
        const uint n = mine[s * NCOUNT + LISTED];
        start[s + 1] = min(n, room);
        if (n > room) overflow = 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < nslices * NCOUNT; i += FINISH_WG) {
        const uint v = mine[i];
        if (v) atomic_add(&total[i % NCOUNT], v);
    }
    if (lid == 0) {
        start[0] = 0;
        for (uint s = 1; s <= nslices; s++) start[s] += start[s - 1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint nlisted = start[nslices];
    /* Cells: the listed keys by the t_j (those equal to t_0 or t_CELLS were counted). */
    for (uint i = lid; i < nlisted; i += FINISH_WG) {
        const uint k = listed_key(regions, start, nslices, room, i), j = boundary_at_or_above(t, k);
        atomic_inc(&cells[k == t[j] ? 2 * j : 2 * j - 1]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        cells[0] = total[AT_FIRST];
        cells[NCELL - 1] = total[AT_LAST];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint ch = lid; ch < NCHUNK; ch += FINISH_WG) {
        uint sum = 0;
        for (uint w = ch * CELL_CHUNK; w < min((uint)NCELL, (ch + 1) * CELL_CHUNK); w++)
            sum += cells[w];
        sums[ch] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint nv = rows - total[NANS];
    if (lid < 2) {
        uint q = 0;
        const int w = nv ? cell_of_rank(cells, sums, total[BELOW], lid ? nv / 2 : (nv - 1) / 2,
                                        &q)
                         : 0;
        cell[lid] = w;
        within[lid] = q;
        in_list[lid] = 0;
        key[lid] = w >= 0 && w % 2 == 0 ? t[w / 2] : NO_KEY;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* A dropped key leaves the cells unknown: that is a miss too. Cells 2j - 1 need their keys
     * ranked (one list when both ranks share the cell). The barriers below stay outside every
     * branch: PoCL has miscompiled barriers in branches whose condition it cannot see is the
     * group's (local_radix.cl). */
    const bool between[2] = {cell[0] % 2 != 0, cell[1] % 2 != 0};
    bool miss = nv && (overflow || cell[0] < 0 || cell[1] < 0);
    const bool rank = nv && !miss && (between[0] || between[1]);
    const int lists = cell[0] == cell[1] ? 1 : 2;
    for (uint i = lid; rank && i < nlisted; i += FINISH_WG) {
        const uint k = listed_key(regions, start, nslices, room, i);
        for (int h = 0; h < lists; h++) {
            const int w = cell[h];
            if (between[h] && t[w / 2] < k && k < t[(w + 1) / 2]) {
                const uint a = atomic_inc(&in_list[h]);
                if (a < FINISH_CAP) list[h][a] = k;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* A list must hold its cell's count, or something is off: fall back. */
    for (int h = 0; rank && h < 2; h++)
        if (between[h])
            miss |= cells[cell[h]] > FINISH_CAP || in_list[h % lists] != cells[cell[h]];
    for (int h = 0; rank && !miss && h < 2; h++)
        if (between[h]) rank_in_list(list[h % lists], in_list[h % lists], within[h], &key[h], lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        res[4 * c] = nv ? key[0] : 0u;
        res[4 * c + 1] = nv ? key[1] : 0u;
        res[4 * c + 2] = total[NANS];
        res[4 * c + 3] = miss ? NO_KEY : nlisted;
    }
}
