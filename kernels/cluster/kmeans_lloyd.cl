/* kmeans_lloyd.cl - one Lloyd iteration as a chain of kernels that the host enqueues many times
 * without reading anything back (src/cluster/lloyd.c): after the nearest centre of each row
 * (kmeans_assign.cl), a stable counting sort of the rows by label (counts per block of 256 rows, their offsets, the scatter),
 * so that each cluster's members lie in row order; their weighted sums by the fixed halving order
 * (level by level, 256 at a time); the new centres, their shifts and the convergence test. Every
 * kernel first reads the state's stop word and does nothing once the run has ended, so that
 * iterations enqueued past the end cost only their launches. Kernels with barriers never return
 * ahead of one (PoCL's work-group compiler has miscompiled that: kernels/select/select.cl);
 * their loops run no times instead. */
#include "kmeans_common.cl"

/* counts[b][j]: rows of block b (256 rows) labelled j. The buffer is zeroed before. */
__kernel void block_counts(__global const int *labels, int n, __global int *counts,
                           __global const int *state)
{
    if (state[S_STOP]) return;
    const int p = get_global_id(0);
    if (p >= n) return;
    const int j = labels[p];
    if (j >= 0) atomic_inc(&counts[(size_t)get_group_id(0) * K + j]);
}

/* For chunks of 256 blocks: within[b][j] = rows labelled j in the chunk's blocks before b;
 * chunk_total[c][j] the chunk's. One item per (chunk, cluster). */
__kernel void scan_chunks(__global const int *counts, int blocks, __global int *within,
                          __global int *chunk_total, __global const int *state)
{
    if (state[S_STOP]) return;
    const int g = get_global_id(0), c = g / K, j = g % K;
    if (c * WG >= blocks) return;
    int run = 0;
    const int end = min(blocks, (c + 1) * WG);
    for (int b = c * WG; b < end; b++) {
        within[(size_t)b * K + j] = run;
        run += counts[(size_t)b * K + j];
    }
    chunk_total[(size_t)c * K + j] = run;
}

/* By every item of a group, once start[j + 1] holds the rows labelled j: start[j] = rows with a
 * label below j (start[K] all); seg0[j] = segments of 256 members before cluster j's, and for
 * each later level of the sums (levels in all) the same count of its segments of 256 rows of
 * the level below: every level's layout follows from the counts alone, a cluster's segments at
 * each level from its count, so all levels are one scan over the clusters, `items` clusters at
 * a time in local memory (sc: 5 x WG ints). */
inline void layout(__global int *start, __global int *seg0, __global int *seg1,
                   __global int *seg2, __global int *seg3, int levels, __local int *sc)
{
    const int i = get_local_id(0), items = get_local_size(0);
#ifdef SERIAL_HALVE
    /* CPU devices: item 0 walks the clusters alone (each barrier is a pass over the items). */
    if (i == 0) {
        start[0] = 0;
        seg0[0] = 0;
        for (int j = 0; j < K; j++) {
            const int count = start[j + 1];
            start[j + 1] = start[j] + count;
            seg0[j + 1] = seg0[j] + (count + WG - 1) / WG;
        }
        __global int *segs[4] = {seg0, seg1, seg2, seg3};
        for (int level = 1; level < levels; level++) {
            __global const int *below = segs[level - 1];
            __global int *next = segs[level];
            next[0] = 0;
            for (int j = 0; j < K; j++)
                next[j + 1] = next[j] + (below[j + 1] - below[j] + WG - 1) / WG;
        }
    }
#else
    __global int *out[5] = {start, seg0, seg1, seg2, seg3};
    int carry[5] = {0, 0, 0, 0, 0};
    for (int l = 0; i == 0 && l <= levels; l++)
        out[l][0] = 0;
    for (int j0 = 0; j0 < K; j0 += items) {
        const int j = j0 + i;
        int v = j < K ? start[j + 1] : 0;
        for (int l = 0; l <= levels; l++) {
            sc[l * WG + i] = v;
            v = (v + WG - 1) / WG;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = 1; s < items; s <<= 1) {
            int t[5];
            for (int l = 0; l <= levels; l++)
                t[l] = i >= s ? sc[l * WG + i - s] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int l = 0; l <= levels; l++)
                sc[l * WG + i] += t[l];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        for (int l = 0; l <= levels; l++) {
            if (j < K) out[l][j + 1] = carry[l] + sc[l * WG + i];
            carry[l] += sc[l * WG + items - 1];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
}

/* One group: chunk_offset[c][j] = rows labelled j in chunks before c; start and the levels'
 * layout (layout above). */
__kernel void scan_clusters(__global const int *chunk_total, int chunks,
                            __global int *chunk_offset, __global int *start, __global int *seg0,
                            __global int *seg1, __global int *seg2, __global int *seg3,
                            int levels, __global const int *state, __local int *sc)
{
    const int stop = state[S_STOP];
    const int i = get_local_id(0);
    for (int j = i; !stop && j < K; j += get_local_size(0)) {
        int run = 0;
        for (int c = 0; c < chunks; c++) {
            chunk_offset[(size_t)c * K + j] = run;
            run += chunk_total[(size_t)c * K + j];
        }
        start[j + 1] = run;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (!stop) layout(start, seg0, seg1, seg2, seg3, levels, sc);
}

/* The same scans for few clusters (src/cluster/lloyd.c), with every item busy: a group's items
 * split each cluster's column of in[rows][K] into `parts` runs, so that an item walks a run of
 * its rows, not all of them. Group g takes rows [g * per_group, ...): prefix[r][j] = the column's
 * sum over the group's rows before r; then either totals[g][j] = the group's sums (several
 * groups: counts to the chunks' totals), or, for a group that takes every row (`whole`),
 * start[j + 1] = the column's sum and the layout, as scan_clusters. With in = the blocks' counts
 * and one group, chunk_offset must hold zeros (the scatter adds it). */
__kernel void scan_runs(__global const int *in, int rows, int per_group, __global int *prefix,
                        __global int *totals, int whole, __global int *start, __global int *seg0,
                        __global int *seg1, __global int *seg2, __global int *seg3, int levels,
                        __global const int *state, __local int *run)
{
    __local int *sc = run + WG; /* run: 6 x WG ints, the runs then layout's 5 x WG */
    const int stop = state[S_STOP];
    const int i = get_local_id(0), items = get_local_size(0), g = get_group_id(0);
    const int parts = max(1, items / K), width = items / parts; /* clusters a pass */
    const int r0 = g * per_group, r1 = min(rows, r0 + per_group);
    const int len = (r1 - r0 + parts - 1) / parts;
    for (int j0 = 0; !stop && j0 < K; j0 += width) {
        const int jj = i / parts, part = i % parts, j = j0 + jj;
        const int active = jj < width && j < K;
        const int first = r0 + part * len, last = min(r1, first + len);
        int sum = 0;
        for (int r = first; active && r < last; r++)
            sum += in[(size_t)r * K + j];
        run[i] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        int before = 0;
        for (int q = jj * parts; active && q < i; q++)
            before += run[q];
        for (int r = first; active && r < last; r++) {
            prefix[(size_t)r * K + j] = before;
            before += in[(size_t)r * K + j];
        }
        if (active && part == parts - 1) {
            if (whole) start[j + 1] = before;
            else totals[(size_t)g * K + j] = before;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (whole && !stop) layout(start, seg0, seg1, seg2, seg3, levels, sc);
}

/* order[start[j] + rank] = p, rank counting the rows labelled j before p: the members of each
 * cluster in row order. One group per block. Up to MASK_MAX_K clusters, each cluster's rows of
 * the block are a bit mask of WG bits, so that an item counts the rows before it by WG / 32
 * population counts, not by walking them one by one. */
#define MASK_MAX_K 64
__kernel void scatter(__global const int *labels, int n, __global const int *within,
                      __global const int *chunk_offset, __global const int *start,
                      __global int *order, __global const int *state)
{
    const int p = get_global_id(0), i = get_local_id(0), b = get_group_id(0);
    const int j = p < n && !state[S_STOP] ? labels[p] : -1;
#if K <= MASK_MAX_K
    __local uint mask[K][WG / 32];
    for (int e = i; e < K * (WG / 32); e += WG)
        mask[e / (WG / 32)][e % (WG / 32)] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (j >= 0) atomic_or(&mask[j][i / 32], 1u << (i % 32));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (j >= 0) {
        int rank = popcount(mask[j][i / 32] & ((1u << (i % 32)) - 1u));
        for (int w = 0; w < i / 32; w++)
            rank += popcount(mask[j][w]);
#else
    __local int lab[WG];
    lab[i] = j;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (j >= 0) {
        int rank = 0;
        for (int q = 0; q < i; q++)
            rank += lab[q] == j;
#endif
        order[start[j] + chunk_offset[(size_t)(b / WG) * K + j] + within[(size_t)b * K + j] +
              rank] = p;
    }
}

/* The same for CPU devices with the serial sums and few enough clusters for a private count
 * each (src/cluster/lloyd.c): one work-item a block numbers its rows in one walk. */
__kernel void scatter_serial(__global const int *labels, int n, __global const int *within,
                             __global const int *chunk_offset, __global const int *start,
                             __global int *order, __global const int *state)
{
    const int b = get_global_id(0);
    if (state[S_STOP]) return;
    int next[K]; /* where the block's next row of each cluster goes */
    for (int j = 0; j < K; j++)
        next[j] = start[j] + chunk_offset[(size_t)(b / WG) * K + j] + within[(size_t)b * K + j];
    const int end = min(n, (b + 1) * WG);
    for (int p = b * WG; p < end; p++) {
        const int j = labels[p];
        if (j >= 0) order[next[j]++] = p;
    }
}

/* The cluster whose segments [segs[j], segs[j+1]) hold segment g (segs[K] > g). */
inline int cluster_of(__global const int *segs, int g)
{
    int lo = 0, hi = K; /* segs[lo] <= g < segs[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (segs[mid] <= g) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The columns that member_sums and row_sums halve together, behind one set of barriers. */
#define PASS_COLUMNS (DIM + 1 < 8 ? DIM + 1 : 8)

/* The first level: one group per segment of 256 members, out[g][c] = sum of w x_c (c < DIM) and
 * of w (c = DIM) by halving (halve_columns: each column's additions as halve's). */
__kernel void member_sums(__global const real *x, __global const real *weight,
                          __global const int *order, __global const int *start,
                          __global const int *segs, __global acc *out, __global const int *state,
                          __local acc *columns_wg)
{
    __local acc(*l)[WG] = (__local acc(*)[WG])columns_wg; /* PASS_COLUMNS x WG */
    const int g = get_group_id(0), i = get_local_id(0);
    const int columns = state[S_STOP] || g >= segs[K] ? 0 : DIM + 1;
    const int j = columns ? cluster_of(segs, g) : 0;
    const int m = start[j] + (g - segs[j]) * WG + i;
    const int inside = columns && m < start[j + 1];
    const int p = inside ? order[m] : 0;
    const acc w = inside ? (acc)weight[p] : (acc)0;
    for (int c0 = 0; c0 < columns; c0 += PASS_COLUMNS) {
        const int cols = min(PASS_COLUMNS, columns - c0);
        for (int c = 0; c < cols; c++)
            l[c][i] = c0 + c < DIM ? (inside ? w * (acc)x[(size_t)p * DIM + c0 + c] : (acc)0) : w;
        halve_columns(l, i, cols);
        for (int c = 0; i == 0 && c < cols; c++)
            out[(size_t)g * (DIM + 1) + c0 + c] = l[c][0];
    }
}

/* A later level: one group per segment of 256 rows of the level below. */
__kernel void row_sums(__global const acc *in, __global const int *segs,
                       __global const int *next, __global acc *out, __global const int *state,
                       __local acc *columns_wg)
{
    __local acc(*l)[WG] = (__local acc(*)[WG])columns_wg; /* PASS_COLUMNS x WG */
    const int g = get_group_id(0), i = get_local_id(0);
    const int columns = state[S_STOP] || g >= next[K] ? 0 : DIM + 1;
    const int j = columns ? cluster_of(next, g) : 0;
    const int r = segs[j] + (g - next[j]) * WG + i;
    const int inside = columns && r < segs[j + 1];
    for (int c0 = 0; c0 < columns; c0 += PASS_COLUMNS) {
        const int cols = min(PASS_COLUMNS, columns - c0);
        for (int c = 0; c < cols; c++)
            l[c][i] = inside ? in[(size_t)r * (DIM + 1) + c0 + c] : (acc)0;
        halve_columns(l, i, cols);
        for (int c = 0; i == 0 && c < cols; c++)
            out[(size_t)g * (DIM + 1) + c0 + c] = l[c][0];
    }
}

/* The same two kernels for CPU devices (tuning "kmeans.sums" serial, src/cluster/lloyd.c): one
 * work-item a segment forms the halving tree alone, by the same additions in the same order (so
 * the same bits), without the 9 barriers a column that cost a CPU device a pass over the group's
 * 256 items each. Launched with one work-item a group. */
#define SUM_COLUMNS (DIM + 1 < 8 ? DIM + 1 : 8)

inline void halve_serial(acc *l)
{
    for (int s = WG / 2; s > 0; s >>= 1)
        for (int i = 0; i < s; i++)
            l[i] = l[i] + l[i + s];
}

__kernel void member_sums_serial(__global const real *x, __global const real *weight,
                                 __global const int *order, __global const int *start,
                                 __global const int *segs, __global acc *out,
                                 __global const int *state)
{
    const int g = get_global_id(0);
    if (state[S_STOP] || g >= segs[K]) return;
    const int j = cluster_of(segs, g);
    const int first = start[j] + (g - segs[j]) * WG, count = min(WG, start[j + 1] - first);
    /* SUM_COLUMNS columns a pass, so that each member is found once a pass, not once a column */
    acc l[SUM_COLUMNS][WG];
    for (int c0 = 0; c0 <= DIM; c0 += SUM_COLUMNS) {
        const int cols = min(SUM_COLUMNS, DIM + 1 - c0);
        for (int i = 0; i < WG; i++) {
            const int p = i < count ? order[first + i] : 0;
            const acc w = i < count ? (acc)weight[p] : (acc)0;
            for (int c = 0; c < cols; c++)
                l[c][i] = c0 + c < DIM ? (i < count ? w * (acc)x[(size_t)p * DIM + c0 + c] : (acc)0)
                                       : w;
        }
        for (int c = 0; c < cols; c++) {
            halve_serial(l[c]);
            out[(size_t)g * (DIM + 1) + c0 + c] = l[c][0];
        }
    }
}

__kernel void row_sums_serial(__global const acc *in, __global const int *segs,
                              __global const int *next, __global acc *out,
                              __global const int *state)
{
    const int g = get_global_id(0);
    if (state[S_STOP] || g >= next[K]) return;
    const int j = cluster_of(next, g);
    const int first = segs[j] + (g - next[j]) * WG, count = min(WG, segs[j + 1] - first);
    acc l[WG];
    for (int c = 0; c <= DIM; c++) {
        for (int i = 0; i < WG; i++)
            l[i] = i < count ? in[(size_t)(first + i) * (DIM + 1) + c] : (acc)0;
        halve_serial(l);
        out[(size_t)g * (DIM + 1) + c] = l[0];
    }
}

/* The halving tree of halve_serial over in[0], in[stride], ... (zeros from `count` on) without
 * holding its 256 values, for a work-item of a GPU's group, where 256 private values would spill:
 * the tree adds i and i + s for s = 128, ..., 1, that is the leaves in bit-reversed order summed
 * pairwise from the left, each pair's left half kept on a stack of one sum a level. The same
 * additions in the same order, so the same bits. */
inline acc tree_sum(__global const acc *in, size_t stride, int count)
{
    /* One leaf (a cluster's top level, most often): the tree adds only zeros to it, which
     * leaves it as it is but for a -0, made +0 by the first: in[0] + 0 is its bits. */
    if (count <= 1) return count ? in[0] + (acc)0 : (acc)0;
    acc stack[9];
    for (int q = 0; q < WG; q++) {
        int i = 0; /* q's 8 bits reversed */
        for (int b = 0; b < 8; b++)
            i |= ((q >> b) & 1) << (7 - b);
        acc v = i < count ? in[(size_t)i * stride] : (acc)0;
        int level = 0;
        for (int m = q; m & 1; m >>= 1)
            v = stack[level++] + v;
        stack[level] = v;
    }
    return stack[8];
}

/* The levels from `from` on of the sums (levels in all), by one group (src/cluster/lloyd.c: where
 * they are few): for each level, every (row, column) of it a work-item's tree of 256 rows of the
 * level below (row_sums' bits), the levels in turn; the level below is sums[(level - 1) % 2], the
 * level sums[level % 2]. */
inline void sum_levels(__global acc *sums0, __global acc *sums1, __global int *const *segs,
                       int levels, int from, int stop)
{
    const int i = get_local_id(0), items = get_local_size(0);
    for (int level = from; !stop && level < levels; level++) {
        __global const acc *in = level % 2 ? sums0 : sums1;
        __global acc *out = level % 2 ? sums1 : sums0;
        __global const int *below = segs[level - 1], *next = segs[level];
        const int trees = next[K] * (DIM + 1);
        for (int t = i; t < trees; t += items) {
            const int g = t / (DIM + 1), c = t % (DIM + 1);
            const int j = cluster_of(next, g);
            const int first = below[j] + (g - next[j]) * WG, count = min(WG, below[j + 1] - first);
            out[(size_t)g * (DIM + 1) + c] =
                tree_sum(in + (size_t)first * (DIM + 1) + c, DIM + 1, count);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

/* One group: the levels of the sums from `from` (none when from = levels: row_sums made them);
 * then for each cluster its sums (kept for the host's relocation of empty clusters), its
 * new centre, the weighted mean, and its squared shift; then the iteration's end. A cluster
 * without weight stops the loop for the host, which relocates and carries on
 * (src/cluster/lloyd.c). Otherwise labels unchanged end the run (strict), so does a total
 * squared shift (summed in cluster order) at most tol, or the last iteration. */
__kernel void finish(__global acc *sums0, __global acc *sums1, __global int *seg0,
                     __global int *seg1, __global int *seg2, __global int *seg3, int levels,
                     int from, __global const real *old, __global real *centres,
                     __global acc *kept, __global acc *shift, acc tol, int max_iter,
                     int new_buffer, __global int *state)
{
    __local int empty;
    const int stop = state[S_STOP];
    __global int *const seg_list[4] = {seg0, seg1, seg2, seg3};
    sum_levels(sums0, sums1, seg_list, levels, from, stop);
    __global const acc *sums = (levels - 1) % 2 ? sums1 : sums0;
    __global const int *segs = seg_list[levels - 1];

    const int i = get_local_id(0);
    if (i == 0) empty = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = i; !stop && j < K; j += get_local_size(0)) {
        const int has = segs[j + 1] > segs[j];
        __global const acc *s = sums + (size_t)segs[j] * (DIM + 1);
        const acc w = has ? s[DIM] : (acc)0;
        for (int c = 0; c <= DIM; c++)
            kept[(size_t)j * (DIM + 1) + c] = has ? s[c] : (acc)0;
        if (!(w > 0)) {
            empty = 1;
            continue;
        }
        acc sh = 0;
        for (int c = 0; c < DIM; c++) {
            const real m = (real)(s[c] / w);
            centres[(size_t)j * DIM + c] = m;
            const acc t = (acc)m - (acc)old[(size_t)j * DIM + c];
            sh = sh + t * t;
        }
        shift[j] = sh;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (i != 0 || stop) return;
    if (empty) {
        state[S_EMPTY] = 1;
        state[S_STOP] = STOP_EMPTY;
        return;
    }
    const int it = state[S_ITER] + 1;
    state[S_ITER] = it;
    state[S_FINAL] = new_buffer;
    const int changed = state[S_CHANGED];
    state[S_CHANGED] = 0;
    if (!changed) {
        state[S_STOP] = STOP_STRICT;
        return;
    }
    acc total = 0;
    for (int j = 0; j < K; j++)
        total = total + shift[j];
    if (total <= tol) state[S_STOP] = STOP_TOL;
    else if (it >= max_iter) state[S_STOP] = STOP_MAX_ITER;
}

/* dist[p] = |x_p - centre(label_p)|^2 by the direct form, -1 for rows without a label: the
 * host's relocation of empty clusters picks the farthest rows by it (src/cluster/lloyd.c). */
__kernel void own_distances(__global const real *x, int n, __global const real *centres,
                            __global const int *labels, __global acc *dist)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    const int j = labels[p];
    dist[p] = j < 0 ? (acc)-1
                    : (acc)squared_distance(x + (size_t)p * DIM, centres + (size_t)j * DIM);
}

/* part[g]: the group's sum of w_p |x_p - centre(label_p)|^2 by halving. */
__kernel void inertia(__global const real *x, __global const real *weight, int n,
                      __global const real *centres, __global const int *labels,
                      __global acc *part, __local acc *l)
{
    const int p = get_global_id(0), i = get_local_id(0);
    acc v = 0;
    if (p < n && labels[p] >= 0)
        v = (acc)weight[p] * (acc)squared_distance(x + (size_t)p * DIM,
                                                   centres + (size_t)labels[p] * DIM);
    l[i] = v;
    halve(l, i);
    if (i == 0) part[get_group_id(0)] = l[0];
}
