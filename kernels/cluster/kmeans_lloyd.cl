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
#include "kmeans_scan.cl"

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

/* The same scans for few clusters (kmeans_scan.cl: scan_runs_group), a group a launch's part. */
__kernel void scan_runs(__global const int *in, int rows, int per_group, __global int *prefix,
                        __global int *totals, int whole, __global int *start, __global int *seg0,
                        __global int *seg1, __global int *seg2, __global int *seg3, int levels,
                        __global const int *state, __local int *run)
{
    scan_runs_group(in, rows, per_group, prefix, totals, whole, start, seg0, seg1, seg2, seg3,
                    levels, state[S_STOP], get_group_id(0), run);
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
inline void member_sums_group(__global const real *x, __global const real *weight,
                              __global const int *order, __global const int *start,
                              __global const int *segs, __global acc *out, int stop,
                              __local acc *columns_wg)
{
    __local acc(*l)[WG] = (__local acc(*)[WG])columns_wg; /* PASS_COLUMNS x WG */
    const int g = get_group_id(0), i = get_local_id(0);
    const int columns = stop || g >= segs[K] ? 0 : DIM + 1;
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

__kernel void member_sums(__global const real *x, __global const real *weight,
                          __global const int *order, __global const int *start,
                          __global const int *segs, __global acc *out, __global const int *state,
                          __local acc *columns_wg)
{
    member_sums_group(x, weight, order, start, segs, out, state[S_STOP], columns_wg);
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
inline acc tree_sum(volatile __global const acc *in, size_t stride, int count)
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
        volatile __global const acc *in = level % 2 ? sums0 : sums1;
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

/* The (row, column) pairs halve_level halves together behind one set of barriers: the local
 * array finish takes holds FINISH_SLOTS x WG sums (src/cluster/job.c). */
#define FINISH_SLOTS 16

/* Level `level` of the sums (>= 1) by one group, FINISH_SLOTS of its (row, column) sums at a
 * time, each as row_sums makes it (halve_columns: so its bits): for the few rows of a level
 * just below those finish makes by trees, a launch fewer than row_sums' (src/cluster/lloyd.c:
 * plan). */
inline void halve_level(__global acc *sums0, __global acc *sums1, __global int *const *segs,
                        int level, int stop, __local acc *slots_wg)
{
    __local acc(*l)[WG] = (__local acc(*)[WG])slots_wg; /* FINISH_SLOTS x WG */
    const int i = get_local_id(0);
    volatile __global const acc *in = level % 2 ? sums0 : sums1;
    __global acc *out = level % 2 ? sums1 : sums0;
    __global const int *below = segs[level - 1], *next = segs[level];
    const int slots = stop ? 0 : next[K] * (DIM + 1);
    for (int t0 = 0; t0 < slots; t0 += FINISH_SLOTS) {
        const int count = min(FINISH_SLOTS, slots - t0);
        for (int u = 0; u < count; u++) {
            const int g = (t0 + u) / (DIM + 1), c = (t0 + u) % (DIM + 1);
            const int j = cluster_of(next, g);
            const int r = below[j] + (g - next[j]) * WG + i;
            l[u][i] = r < below[j + 1] ? in[(size_t)r * (DIM + 1) + c] : (acc)0;
        }
        halve_columns(l, i, count);
        for (int u = 0; i == 0 && u < count; u++)
            out[t0 + u] = l[u][0];
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
}

/* One group: level `halved` of the sums when it is not 0 (halve_level), then the levels from
 * `from` (none when from = levels: row_sums made them);
 * then for each cluster its sums (kept for the host's relocation of empty clusters), its
 * new centre, the weighted mean, and its squared shift; then the iteration's end. A cluster
 * without weight stops the loop for the host, which relocates and carries on
 * (src/cluster/lloyd.c). Otherwise labels unchanged end the run (strict), so does a total
 * squared shift (summed in cluster order) at most tol, or the last iteration. */
inline void finish_group(__global acc *sums0, __global acc *sums1, __global int *seg0,
                         __global int *seg1, __global int *seg2, __global int *seg3, int levels,
                         int from, int halved, __global const real *old,
                         __global real *centres, __global acc *kept, __global acc *shift, acc tol,
                         int max_iter, int new_buffer, __global int *state, int stop,
                         __local acc *slots_wg)
{
    /* the flag after the FINISH_SLOTS x WG sums: local memory the caller passed in, not a
     * kernel-scope array a helper with barriers works on (src/cluster/job.c says why) */
    __local int *empty = (__local int *)(slots_wg + FINISH_SLOTS * WG);
    __global int *const seg_list[4] = {seg0, seg1, seg2, seg3};
    if (halved) halve_level(sums0, sums1, seg_list, halved, stop, slots_wg);
    sum_levels(sums0, sums1, seg_list, levels, from, stop);
    volatile __global const acc *sums = (levels - 1) % 2 ? sums1 : sums0;
    __global const int *segs = seg_list[levels - 1];

    const int i = get_local_id(0);
    if (i == 0) *empty = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = i; !stop && j < K; j += get_local_size(0)) {
        const int has = segs[j + 1] > segs[j];
        volatile __global const acc *s = sums + (size_t)segs[j] * (DIM + 1);
        const acc w = has ? s[DIM] : (acc)0;
        for (int c = 0; c <= DIM; c++)
            kept[(size_t)j * (DIM + 1) + c] = has ? s[c] : (acc)0;
        if (!(w > 0)) {
            *empty = 1;
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
    if (*empty) {
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

__kernel void finish(__global acc *sums0, __global acc *sums1, __global int *seg0,
                     __global int *seg1, __global int *seg2, __global int *seg3, int levels,
                     int from, int halved, __global const real *old, __global real *centres,
                     __global acc *kept, __global acc *shift, acc tol, int max_iter,
                     int new_buffer, __global int *state, __local acc *slots_wg)
{
    finish_group(sums0, sums1, seg0, seg1, seg2, seg3, levels, from, halved, old, centres, kept,
                 shift, tol, max_iter, new_buffer, state, state[S_STOP], slots_wg);
}

/* member_sums, then finish by the last of its groups to be done (the `done` counter, which
 * that group leaves at 0 again), where no row_sums level lies between them (src/cluster/
 * lloyd.c: a launch an iteration fewer): each group's sums are fenced before it counts itself
 * done, and finish's helpers read the sums through volatile pointers, so that the last group
 * sees them all. Arguments 4 on are finish's. */
__kernel void member_sums_finish(__global const real *x, __global const real *weight,
                                 __global const int *order, __global const int *start,
                                 __global acc *sums0, __global acc *sums1, __global int *seg0,
                                 __global int *seg1, __global int *seg2, __global int *seg3,
                                 int levels, int from, int halved, __global const real *old,
                                 __global real *centres, __global acc *kept, __global acc *shift,
                                 acc tol, int max_iter, int new_buffer, __global int *state,
                                 __global int *done, __local acc *slots_wg)
{
    __local int last;
    const int stop = state[S_STOP];
    member_sums_group(x, weight, order, start, seg0, sums0, stop, slots_wg);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) last = !stop && atomic_inc(done) == (int)get_num_groups(0) - 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last) { /* the same for every item of the group */
        finish_group(sums0, sums1, seg0, seg1, seg2, seg3, levels, from, halved, old, centres,
                     kept, shift, tol, max_iter, new_buffer, state, 0, slots_wg);
        if (get_local_id(0) == 0) *done = 0;
    }
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
