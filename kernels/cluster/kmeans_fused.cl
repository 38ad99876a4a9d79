/* kmeans_fused.cl - the nearest centre of every row with no products written (src/cluster/
 * assign.c: the fused path, float32): a work-group takes FR rows against every centre, FC
 * centres at a time, each item FI x FI (row, centre) pairs held in registers, the rows' and the
 * centres' next FK features staged through local memory, and keeps, for each of its rows, what
 * the screen of kmeans_assign.cl (assign_screened) needs; the products themselves are never
 * stored. Built twice from this one file:
 * - assign_fused: x.c_j by fused multiply-adds, the screen's q_j -+ e_j (screen_bounds) folded
 *   into each row's limit and two lowest q_j - e_j; a row whose lowest is alone gets its label,
 *   the others (two centres within the bound, NaN) go to the list `undecided` (its count first,
 *   cleared by centre_norms before);
 * - assign_decide (-D DIRECT): the listed rows against every centre by the direct form: each
 *   pair's squared distance adds t * t over the features in the order c = 0, 1, ... (as
 *   squared_distance, no contraction: kmeans_common.cl), so the same bits as the direct kernel;
 *   the lowest, ties to the lowest index, is the label.
 * Every row thus gets the direct kernel's label (kmeans_assign.cl: assign_screened says why the
 * screen keeps it). */
#include "kmeans_common.cl"

#define FR 128 /* rows a group */
#define FC 128 /* centres a block */
#define FK 8   /* features a stage (16 do not fit beside the stats in NVIDIA's 48 KiB) */
#define FI 8   /* rows (and centres) an item: FI/2 and FI/2 again FR/2 further on */
#define FT 16  /* items along the centres; FR / FI along the rows */
#define FQ (FK / 4)           /* feature quads a row of a stage */
#define FSTAGED (FK / 8)      /* quads of rows (and of centres) an item stages */
#define FSTEP (FR / FSTAGED)  /* rows between an item's staged quads */
#define FLD (FR + 4)          /* a stage's row of local memory: float4 reads, no two stores of a
                                 warp in one bank */
#define FSLOT (FT + 1)        /* a row's stats, one an item along the centres and a pad */

/* The four features c .. c + 3 of row `row` of m (DIM features a row), 0 past DIM. */
inline float4 four(__global const real *m, size_t row, int c)
{
#if DIM % FK == 0 && DIM % 4 == 0
    return *(__global const float4 *)(m + row * DIM + c);
#else
    __global const real *r = m + row * DIM;
    return (float4)(c < DIM ? r[c] : 0, c + 1 < DIM ? r[c + 1] : 0, c + 2 < DIM ? r[c + 2] : 0,
                    c + 3 < DIM ? r[c + 3] : 0);
#endif
}

/* The item's i-th row (or centre) within the group's FR (or block's FC). */
#define LOCAL_ROW(i, t) (((i) & 3) + (t) * 4 + ((i) >> 2) * (FR / 2))

#ifdef DIRECT
#define KERNEL_NAME assign_decide
/* a before b in the order lowest value, then lowest index; index -1 (none yet) is last */
#define BEFORE(va, ja, vb, jb) ((ja) >= 0 && ((jb) < 0 || (va) < (vb) || ((va) == (vb) && (ja) < (jb))))
#else
#define KERNEL_NAME assign_fused
#endif

/* stats holds, for each of the group's rows and each of the FT items along the centres, the
 * screen's limit, lowest and second-lowest q - e and the lowest's centre (-2 once a NaN came),
 * or with DIRECT the lowest distance and its centre, in four planes of FR x FSLOT words. */
__kernel __attribute__((reqd_work_group_size(FR / FI * FT, 1, 1))) void
KERNEL_NAME(__global const real *x, __global const uchar *valid, int n,
            __global const real *centres, __global int *labels, __global int *state,
            int ignore_stop, __global const real *norms, __global const real *xnorms,
            __global int *undecided, __local float4 *tiles, __local float *stats)
{
    /* no return before the barriers (PoCL's compiler fails on it): `run`, the same for the
     * whole group, guards the work instead */
    const int lid = get_local_id(0), tx = lid % FT, ty = lid / FT;
    const int row0 = get_group_id(0) * FR;
#ifdef DIRECT
    const int listed = undecided[0];
    const int run = (ignore_stop || !state[S_STOP]) && row0 < listed;
#else
    const int run = ignore_stop || !state[S_STOP];
#endif
    __local float *a_tile = (__local float *)tiles, *b_tile = a_tile + FK * FLD;
    __local float *s_lim = stats, *s_lo1 = stats + FR * FSLOT, *s_lo2 = stats + 2 * FR * FSLOT;
    __local int *s_j1 = (__local int *)(stats + 3 * FR * FSLOT);
    for (int i = 0; i < FI; i++) {
        const int s = LOCAL_ROW(i, ty) * FSLOT + tx;
        s_lim[s] = INFINITY;
        s_lo1[s] = INFINITY;
        s_lo2[s] = INFINITY;
        s_j1[s] = -1;
    }
    /* This item stages feature quad lid % FQ of rows lid / FQ + m FSTEP (m < FSTAGED) of the
     * rows and of the centres. */
    const int stage_row = lid / FQ, stage_c = (lid % FQ) * 4;
    size_t a_row[FSTAGED];
    for (int m = 0; m < FSTAGED; m++) {
#ifdef DIRECT
        a_row[m] = undecided[1 + min(row0 + stage_row + m * FSTEP, listed - 1)];
#else
        a_row[m] = min(row0 + stage_row + m * FSTEP, n - 1);
#endif
    }
#ifndef DIRECT
    const real scale = (real)(2 * (DIM + 4)) * UNIT_ROUNDOFF, tiny = (real)(8 * (DIM + 4)) * TINY;
#endif
    for (int col0 = 0; run && col0 < K; col0 += FC) {
        size_t b_row[FSTAGED];
        float4 pa[FSTAGED], pb[FSTAGED];
        for (int m = 0; m < FSTAGED; m++) {
            b_row[m] = min(col0 + stage_row + m * FSTEP, K - 1);
            pa[m] = four(x, a_row[m], stage_c);
            pb[m] = four(centres, b_row[m], stage_c);
        }
        float acc[FI][FI];
        for (int i = 0; i < FI; i++)
            for (int j = 0; j < FI; j++)
                acc[i][j] = 0;
        for (int k0 = 0; k0 < DIM; k0 += FK) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int m = 0; m < FSTAGED; m++) {
                const int r = stage_row + m * FSTEP;
                a_tile[(stage_c + 0) * FLD + r] = pa[m].x;
                a_tile[(stage_c + 1) * FLD + r] = pa[m].y;
                a_tile[(stage_c + 2) * FLD + r] = pa[m].z;
                a_tile[(stage_c + 3) * FLD + r] = pa[m].w;
                b_tile[(stage_c + 0) * FLD + r] = pb[m].x;
                b_tile[(stage_c + 1) * FLD + r] = pb[m].y;
                b_tile[(stage_c + 2) * FLD + r] = pb[m].z;
                b_tile[(stage_c + 3) * FLD + r] = pb[m].w;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int m = 0; m < FSTAGED && k0 + FK < DIM; m++) {
                /* the next stage's loads in flight during this one's sums */
                pa[m] = four(x, a_row[m], k0 + FK + stage_c);
                pb[m] = four(centres, b_row[m], k0 + FK + stage_c);
            }
            for (int kk = 0; kk < FK; kk++) {
                __local const float4 *ar = (__local const float4 *)(a_tile + kk * FLD),
                                     *br = (__local const float4 *)(b_tile + kk * FLD);
                const float4 a0 = ar[ty], a1 = ar[ty + FR / 8], b0 = br[tx], b1 = br[tx + FC / 8];
                const float a[FI] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
                const float b[FI] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
                for (int i = 0; i < FI; i++)
                    for (int j = 0; j < FI; j++) {
#ifdef DIRECT
                        const float t = a[i] - b[j];
                        acc[i][j] = acc[i][j] + t * t;
#else
                        acc[i][j] = fma(a[i], b[j], acc[i][j]);
#endif
                    }
            }
        }
        /* this block's pairs into the item's stats for its rows */
#ifndef DIRECT
        real cc[FI], cn[FI];
        for (int jj = 0; jj < FI; jj++) {
            const int j = min(col0 + LOCAL_ROW(jj, tx), K - 1);
            cc[jj] = norms[j];
            cn[jj] = norms[K + j];
        }
#endif
        for (int i = 0; i < FI; i++) {
            const int s = LOCAL_ROW(i, ty) * FSLOT + tx;
            float lo1 = s_lo1[s];
            int j1 = s_j1[s];
#ifndef DIRECT
            const size_t p = min(row0 + LOCAL_ROW(i, ty), n - 1);
            const real xx = xnorms[p], xn = xnorms[(size_t)n + p];
            float lim = s_lim[s], lo2 = s_lo2[s];
#endif
            for (int jj = 0; jj < FI; jj++) {
                const int j = col0 + LOCAL_ROW(jj, tx);
                if (j >= K) continue;
#ifdef DIRECT
                /* the direct kernel keeps centre 0 when its distance is NaN (nothing compares
                 * below it), and passes over every other NaN */
                const float d = j == 0 && isnan(acc[i][jj]) ? -INFINITY : acc[i][jj];
                if (!isnan(d) && BEFORE(d, j, lo1, j1)) {
                    lo1 = d;
                    j1 = j;
                }
#else
                real lo, hi;
                screen_bounds(xx, xn, acc[i][jj], cc[jj], cn[jj], scale, tiny, &lo, &hi);
                lim = fmin(lim, hi);
                if (isnan(hi) || isnan(lo)) j1 = -2;
                if (j1 == -2) continue;
                if (lo < lo1) {
                    lo2 = lo1;
                    lo1 = lo;
                    j1 = j;
                } else if (lo < lo2) {
                    lo2 = lo;
                }
#endif
            }
            s_lo1[s] = lo1;
            s_j1[s] = j1;
#ifndef DIRECT
            s_lim[s] = lim;
            s_lo2[s] = lo2;
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* an item a row: the FT items' stats merged, the label written or the row listed */
    const int s0 = lid * FSLOT;
#ifdef DIRECT
    if (!run || lid >= FR || row0 + lid >= listed) return;
    const int p = undecided[1 + row0 + lid];
    float lo1 = s_lo1[s0];
    int best = s_j1[s0];
    for (int t = 1; t < FT; t++)
        if (BEFORE(s_lo1[s0 + t], s_j1[s0 + t], lo1, best)) {
            lo1 = s_lo1[s0 + t];
            best = s_j1[s0 + t];
        }
    if (best < 0) best = 0; /* every distance NaN: centre 0, as the direct kernel */
#else
    const int p = row0 + lid;
    if (!run || lid >= FR || p >= n) return;
    int best = -1;
    if (valid[p]) {
        float lim = s_lim[s0], lo1 = s_lo1[s0], lo2 = s_lo2[s0];
        int j1 = s_j1[s0], odd = j1 == -2;
        for (int t = 1; t < FT; t++) {
            const float l1 = s_lo1[s0 + t], l2 = s_lo2[s0 + t];
            lim = fmin(lim, s_lim[s0 + t]);
            odd |= s_j1[s0 + t] == -2;
            if (l1 < lo1) {
                lo2 = fmin(lo1, l2);
                lo1 = l1;
                j1 = s_j1[s0 + t];
            } else {
                lo2 = fmin(lo2, l1);
            }
        }
        /* the lowest alone below the limit decides; else the direct form (assign_decide) */
        if (odd || !isfinite(lim) || j1 < 0 || !(lo2 > lim)) {
            undecided[1 + atomic_inc(undecided)] = p;
            return;
        }
        best = j1;
    }
#endif
    if (labels[p] != best) {
        labels[p] = best;
        state[S_CHANGED] = 1;
    }
}
