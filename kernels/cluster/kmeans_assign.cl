/* kmeans_assign.cl - the nearest centre of each row (ties to the lowest index), three ways that
 * give the same labels (src/cluster/assign.c chooses): the direct form, one row an item; the
 * direct form tiled, the centres in local memory and several rows an item, counting the labels
 * of its block as it goes; and a screen on |x|^2 - 2 x.c + |c|^2 from a GEMM whose few
 * close candidates the direct form decides. */
#include "kmeans_common.cl"


/* The nearest of the K centres to the row at xp by the direct form, ties to the lowest index. */
inline int nearest(__global const real *xp, __global const real *centres)
{
    real bd = squared_distance(xp, centres);
    int best = 0;
    for (int j = 1; j < K; j++) {
        const real d = squared_distance(xp, centres + (size_t)j * DIM);
        if (d < bd) {
            bd = d;
            best = j;
        }
    }
    return best;
}

/* labels[p] = the nearest centre, -1 for rows left out; a changed label sets the state's
 * CHANGED word (every writer stores 1, so the race is harmless). */
__kernel void assign(__global const real *x, __global const uchar *valid, int n,
                     __global const real *centres, __global int *labels, __global int *state,
                     int ignore_stop)
{
    if (!ignore_stop && state[S_STOP]) return;
    const int p = get_global_id(0);
    if (p >= n) return;
    const int best = valid[p] ? nearest(x + (size_t)p * DIM, centres) : -1;
    if (labels[p] != best) {
        labels[p] = best;
        state[S_CHANGED] = 1;
    }
}

#ifdef TILED
#include "kmeans_scan.cl"
#define TILE_ITEMS (WG / TILE_ROWS)

/* The direct form for a block of WG rows a group, TILE_ITEMS items of TILE_ROWS rows each
 * (item i takes rows i, i + TILE_ITEMS, ...: neighbours read neighbouring rows). Each distance
 * adds its columns in the order c = 0, 1, ... as squared_distance does, so the labels are the
 * direct kernel's bit for bit. The block's label counts (the counting sort's first step,
 * kmeans_lloyd.cl: block_counts) are written whole, so nothing needs clearing before. With
 * fuse_scan, the last group to finish (by the `done` counter, which it leaves at 0 again) scans
 * every block's counts as scan_runs' one group would (src/cluster/lloyd.c: SCAN_RUNS_WHOLE):
 * each group's counts are fenced before it counts itself done, and read back through volatile
 * loads, so the last group sees them all. */
__kernel __attribute__((reqd_work_group_size(TILE_ITEMS, 1, 1))) void
assign_tiled(__global const real *x, __global const uchar *valid, int n,
             __global const real *centres, __global int *labels, __global int *state,
             int ignore_stop, __global int *counts, int fuse_scan, __global int *done,
             __global int *within, __global int *start, __global int *seg0, __global int *seg1,
             __global int *seg2, __global int *seg3, int levels, __local int *scan_wg)
{
    __local real cl[K * DIM];
    __local int count[K];
    __local int changed, last;
    const int run = ignore_stop || !state[S_STOP];
    const int i = get_local_id(0), b = get_group_id(0);
    for (int e = i; run && e < K * DIM; e += TILE_ITEMS)
        cl[e] = centres[e];
    for (int j = i; run && j < K; j += TILE_ITEMS)
        count[j] = 0;
    if (i == 0) changed = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    real xr[TILE_ROWS][DIM], bd[TILE_ROWS];
    int best[TILE_ROWS], p[TILE_ROWS];
    for (int r = 0; r < TILE_ROWS; r++) {
        p[r] = b * WG + r * TILE_ITEMS + i;
        const int ok = run && p[r] < n && valid[p[r]];
        best[r] = ok ? 0 : -1;
        bd[r] = 0;
        for (int c = 0; c < DIM; c++)
            xr[r][c] = ok ? x[(size_t)p[r] * DIM + c] : (real)0;
    }
    for (int j = 0; run && j < K; j++) {
        real s[TILE_ROWS];
        for (int r = 0; r < TILE_ROWS; r++)
            s[r] = 0;
        for (int c = 0; c < DIM; c++) {
            const real m = cl[j * DIM + c];
            for (int r = 0; r < TILE_ROWS; r++) {
                const real t = xr[r][c] - m;
                s[r] = s[r] + t * t;
            }
        }
        for (int r = 0; r < TILE_ROWS; r++)
            if (best[r] >= 0 && (j == 0 || s[r] < bd[r])) {
                bd[r] = s[r];
                best[r] = j;
            }
    }
    for (int r = 0; run && r < TILE_ROWS; r++) {
        if (p[r] >= n) continue;
        if (best[r] >= 0) atomic_inc(&count[best[r]]);
        if (labels[p[r]] != best[r]) {
            labels[p[r]] = best[r];
            changed = 1;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = i; run && j < K; j += TILE_ITEMS)
        counts[(size_t)b * K + j] = count[j];
    if (run && i == 0 && changed) state[S_CHANGED] = 1;
    if (fuse_scan) { /* the same for every item (a kernel argument) */
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        if (i == 0) last = run && atomic_inc(done) == (int)get_num_groups(0) - 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (last) { /* the same for every item of the group */
            const int blocks = get_num_groups(0);
            scan_runs_group(counts, blocks, blocks, within, within, 1, start, seg0, seg1, seg2,
                            seg3, levels, 0, 0, scan_wg);
            if (i == 0) *done = 0;
        }
    }
}
#endif

/* One work-item a block of WG rows, for CPU devices (src/cluster/assign.c): the direct form, ties
 * to the lowest index as the direct kernel's, the block's label counts kept in private memory
 * and written whole, with no barrier and no atomic (a CPU device runs a group's items one after
 * another, and pays for each barrier and local atomic). Up to 32 features, SERIAL_ROWS rows go
 * together, so that the compiler can take them in one vector. */
#define SERIAL_ROWS 8
__kernel void assign_serial(__global const real *x, __global const uchar *valid, int n,
                            __global const real *centres, __global int *labels,
                            __global int *state, int ignore_stop, __global int *counts)
{
    const int b = get_global_id(0);
    if (!ignore_stop && state[S_STOP]) return;
    int count[K];
    for (int j = 0; j < K; j++)
        count[j] = 0;
    int changed = 0;
    const int end = min(n, (b + 1) * WG);
#if DIM <= 32
    for (int p0 = b * WG; p0 < end; p0 += SERIAL_ROWS) {
        /* column-major, so that each column of the rows is one vector */
        real xr[DIM][SERIAL_ROWS], bd[SERIAL_ROWS], s[SERIAL_ROWS];
        int bj[SERIAL_ROWS];
        for (int r = 0; r < SERIAL_ROWS; r++)
            for (int c = 0; c < DIM; c++)
                xr[c][r] = p0 + r < end ? x[(size_t)(p0 + r) * DIM + c] : (real)0;
        for (int j = 0; j < K; j++) {
            for (int r = 0; r < SERIAL_ROWS; r++)
                s[r] = 0;
            for (int c = 0; c < DIM; c++) {
                const real m = centres[(size_t)j * DIM + c];
                for (int r = 0; r < SERIAL_ROWS; r++) {
                    const real t = xr[c][r] - m;
                    s[r] = s[r] + t * t;
                }
            }
            /* strictly smaller, so ties keep the lower index; fmin gives that same value (the
             * sums are >= 0, and an invalid row's NaN is not used) and keeps bd in registers */
            for (int r = 0; r < SERIAL_ROWS; r++) {
                bj[r] = j == 0 || s[r] < bd[r] ? j : bj[r];
                bd[r] = j == 0 ? s[r] : fmin(s[r], bd[r]);
            }
        }
        int best[SERIAL_ROWS];
        for (int r = 0; r < SERIAL_ROWS; r++)
            best[r] = p0 + r < end && valid[p0 + r] ? bj[r] : -1;
#if K <= 16
        /* a vector compare a cluster, not a chain of increments through memory */
        for (int j = 0; j < K; j++)
            for (int r = 0; r < SERIAL_ROWS; r++)
                count[j] += best[r] == j;
#else
        for (int r = 0; r < SERIAL_ROWS; r++)
            if (best[r] >= 0) count[best[r]]++;
#endif
        for (int r = 0; r < SERIAL_ROWS && p0 + r < end; r++)
            if (labels[p0 + r] != best[r]) {
                labels[p0 + r] = best[r];
                changed = 1;
            }
    }
#else
    for (int p = b * WG; p < end; p++) {
        const int best = valid[p] ? nearest(x + (size_t)p * DIM, centres) : -1;
        if (best >= 0) count[best]++;
        if (labels[p] != best) {
            labels[p] = best;
            changed = 1;
        }
    }
#endif
    for (int j = 0; j < K; j++)
        counts[(size_t)b * K + j] = count[j];
    if (changed) state[S_CHANGED] = 1;
}

/* norms[j] = |c_j|^2 and norms[K + j] = |c_j|, for the screen; and the fused path's list of
 * rows left undecided emptied (kmeans_fused.cl: its count, undecided[0]). */
__kernel void centre_norms(__global const real *centres, __global real *norms,
                           __global const int *state, int ignore_stop, __global int *undecided)
{
    const int j = get_global_id(0);
    if (!ignore_stop && state[S_STOP]) return;
    if (j == 0) undecided[0] = 0;
    if (j >= K) return;
    real s = 0;
    for (int c = 0; c < DIM; c++) {
        const real v = centres[(size_t)j * DIM + c];
        s = s + v * v;
    }
    norms[j] = s;
    norms[K + j] = sqrt(s);
}

/* xnorms[p] = |x_p|^2 and xnorms[n + p] = |x_p|, once a job (the rows do not change between
 * iterations), as the screen's bound takes them. */
__kernel void row_norms(__global const real *x, int n, __global real *xnorms)
{
    const int p = get_global_id(0);
    if (p >= n) return;
    __global const real *xp = x + (size_t)p * DIM;
    real xx = 0;
    for (int c = 0; c < DIM; c++)
        xx = xx + xp[c] * xp[c];
    xnorms[p] = xx;
    xnorms[(size_t)n + p] = sqrt(xx);
}

/* Centres the screen's first pass takes together: their products and norms are loaded before
 * any is compared, so that a work-item has that many reads in flight, not one. */
#define SCREEN_BATCH 8

/* Rows first .. first + rows - 1 from dots[j][r] = x_(first+r) . c_j (a GEMM's, ld `rows`).
 * q_j = |x|^2 - 2 x.c_j + |c_j|^2 is within e_j = 2 (DIM + 4) u (|x| + |c_j|)^2 (+ what
 * underflow may lose) of the exact squared distance whatever order the GEMM summed in (Higham,
 * Accuracy and Stability, 3.1: |fl(x.c) - x.c| <= gamma_DIM |x|.|c|), and so is the direct form
 * (its terms are at most (|x| + |c_j|)^2 too); the factor 2 covers the bound's own rounding. So
 * the centre the direct form picks has q_j - e_j <= min_i (q_i + e_i), and deciding every such
 * candidate by the direct form, in index order, gives the direct kernel's label exactly. A
 * bound that is not finite (overflow) makes every centre a candidate. |x|^2 and |x| come from
 * row_norms (xnorms, n rows each). */
__kernel void assign_screened(__global const real *x, __global const uchar *valid, int n,
                              __global const real *centres, __global int *labels,
                              __global int *state, int ignore_stop, __global const real *dots,
                              __global const real *norms, int first, int rows,
                              __global const real *xnorms)
{
    if (!ignore_stop && state[S_STOP]) return;
    const int r = get_global_id(0), p = first + r;
    if (r >= rows || p >= n) return;
    int best = -1;
    if (valid[p]) {
        __global const real *xp = x + (size_t)p * DIM;
        const real xx = xnorms[p], xn = xnorms[(size_t)n + p],
                   scale = (real)(2 * (DIM + 4)) * UNIT_ROUNDOFF,
                   tiny = (real)(8 * (DIM + 4)) * TINY;
        /* One pass finds the limit and the two lowest q_j - e_j: the lowest is always a
         * candidate, and when the second passes the limit it is the only one, the label with
         * no direct distance at all (most rows). Else, or with a NaN anywhere, the second pass
         * decides every candidate. */
        real limit = INFINITY, low1 = INFINITY, low2 = INFINITY;
        int j1 = -1, odd = 0;
        for (int j0 = 0; j0 < K; j0 += SCREEN_BATCH) {
            real dv[SCREEN_BATCH], cc[SCREEN_BATCH], cn[SCREEN_BATCH];
            for (int u = 0; u < SCREEN_BATCH; u++) {
                const int j = j0 + u < K ? j0 + u : K - 1;
                dv[u] = dots[(size_t)j * rows + r];
                cc[u] = norms[j];
                cn[u] = norms[K + j];
            }
            for (int u = 0; u < SCREEN_BATCH && j0 + u < K; u++) {
                real lo, hi;
                screen_bounds(xx, xn, dv[u], cc[u], cn[u], scale, tiny, &lo, &hi);
                limit = fmin(limit, hi);
                odd |= isnan(hi) || isnan(lo);
                if (lo < low1) {
                    low2 = low1;
                    low1 = lo;
                    j1 = j0 + u;
                } else if (lo < low2) {
                    low2 = lo;
                }
            }
        }
        const int alone = !odd && isfinite(limit) && j1 >= 0 && low2 > limit;
        if (alone) best = j1;
        real bd = 0;
        for (int j = 0; !alone && j < K; j++) {
            real lo, hi;
            screen_bounds(xx, xn, dots[(size_t)j * rows + r], norms[j], norms[K + j], scale, tiny,
                          &lo, &hi);
            if (isfinite(limit) && lo > limit) continue;
            const real d = squared_distance(xp, centres + (size_t)j * DIM);
            if (best < 0 || d < bd) {
                bd = d;
                best = j;
            }
        }
    }
    if (labels[p] != best) {
        labels[p] = best;
        state[S_CHANGED] = 1;
    }
}
