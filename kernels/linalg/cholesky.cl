/* cholesky.cl - the dense factorisations CLBlast lacks (it has no LAPACK): Cholesky A = L L^T of
 * many small matrices at once, and of one large matrix blocked (src/linalg/cholesky.c: per
 * block step its diagonal block, the panel below it and the trailing update, three launches,
 * or two with potrf_step, with no host work between them), and solves with L of several right-hand sides. Matrices are row-major, element (i, j) at a[i lda + j];
 * only the lower triangle (j <= i) is read and written, the strict upper is left as it was.
 *
 * Build options: -D REAL=float or double (double needs fp64), -D NB=rows of the diagonal block
 * (a work-group of NB work-items, the block in local memory), -D LAUUM for lauum_upper (a
 * program apart: PoCL takes most of a minute to compile its unrolled loops).
 */
#ifndef REAL
#define REAL float
#endif
#ifndef NB
#define NB 32
#endif

#ifdef CLSTATS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* One matrix per work-item: small p (the regression's p x p normal equations), where a
 * work-group per matrix would leave most of its items idle. info[m] = 0, or j + 1 where the
 * j-th pivot was not positive (the factor then stops: what follows is not meaningful);
 * logdet[m] = log det A = 2 sum log L_jj (NaN when info is set). */
__kernel void potrf_batched(__global REAL *a, ulong off, ulong mat_step, uint p, uint lda,
                            uint count, __global int *info, __global REAL *logdet)
{
    const uint m = get_global_id(0);
    if (m >= count) return;
    __global REAL *A = a + off + (ulong)m * mat_step;
    REAL ld = 0;
    int bad = 0;
    for (uint j = 0; j < p && !bad; j++) {
        REAL d = A[(ulong)j * lda + j];
        for (uint k = 0; k < j; k++) d -= A[(ulong)j * lda + k] * A[(ulong)j * lda + k];
        /* !(d > 0) also catches NaN: a NaN pivot is not positive definite either. */
        if (!(d > 0)) {
            bad = (int)j + 1;
            break;
        }
        const REAL l = sqrt(d);
        A[(ulong)j * lda + j] = l;
        ld += log(l);
        for (uint i = j + 1; i < p; i++) {
            REAL s = A[(ulong)i * lda + j];
            for (uint k = 0; k < j; k++) s -= A[(ulong)i * lda + k] * A[(ulong)j * lda + k];
            A[(ulong)i * lda + j] = s / l;
        }
    }
    info[m] = bad;
    logdet[m] = bad ? (REAL)NAN : 2 * ld;
}

/* The same factorisation by a work-group per matrix, for p in the tens and hundreds (a
 * Gaussian process's correlation matrices), where one work-item a matrix would run p^3/3 steps
 * alone: right-looking, column j's pivot by item 0, the column below it divided and the
 * trailing lower triangle updated by the group's items a row each. Every element sees the same
 * subtractions in the same order as potrf_batched's, then the same division. */
__kernel void potrf_batched_groups(__global REAL *a, ulong off, ulong mat_step, uint p,
                                   uint lda, uint count, __global int *info,
                                   __global REAL *logdet)
{
    const uint m = get_group_id(0), t = get_local_id(0), w = get_local_size(0);
    if (m >= count) return; /* a whole group: the barriers below stay uniform */
    __global REAL *A = a + off + (ulong)m * mat_step;
    __local REAL pivot;
    __local int bad;
    if (t == 0) bad = 0;
    for (uint j = 0; j < p; j++) {
        if (t == 0 && !bad) {
            const REAL d = A[(ulong)j * lda + j];
            if (!(d > 0))
                bad = (int)j + 1;
            else
                A[(ulong)j * lda + j] = pivot = sqrt(d);
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (bad) break; /* read by all after the barrier: every item leaves together */
        const REAL l = pivot;
        for (uint i = j + 1 + t; i < p; i += w) A[(ulong)i * lda + j] /= l;
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (uint i = j + 1 + t; i < p; i += w) {
            const REAL lij = A[(ulong)i * lda + j];
            for (uint k = j + 1; k <= i; k++)
                A[(ulong)i * lda + k] -= A[(ulong)k * lda + j] * lij;
        }
        /* pivot is rewritten only after this barrier, once every item has read it. */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    if (t == 0) {
        REAL ld = 0;
        for (uint j = 0; j < p && !bad; j++) ld += log(A[(ulong)j * lda + j]);
        info[m] = bad;
        logdet[m] = bad ? (REAL)NAN : 2 * ld;
    }
}

/* Solves L L^T X = B for matrix m's right-hand side r (work-item (r, m)): forward then back
 * substitution down column r of B (p x nrhs at b + boff + m b_step, row stride ldb). */
__kernel void potrs_batched(__global const REAL *l, ulong loff, ulong l_step, uint p, uint lda,
                            __global REAL *b, ulong boff, ulong b_step, uint nrhs, uint ldb,
                            uint count)
{
    const uint r = get_global_id(0), m = get_global_id(1);
    if (r >= nrhs || m >= count) return;
    __global const REAL *L = l + loff + (ulong)m * l_step;
    __global REAL *B = b + boff + (ulong)m * b_step + r;
    for (uint i = 0; i < p; i++) {
        REAL s = B[(ulong)i * ldb];
        for (uint k = 0; k < i; k++) s -= L[(ulong)i * lda + k] * B[(ulong)k * ldb];
        B[(ulong)i * ldb] = s / L[(ulong)i * lda + i];
    }
    for (uint i = p; i-- > 0;) {
        REAL s = B[(ulong)i * ldb];
        for (uint k = i + 1; k < p; k++) s -= L[(ulong)k * lda + i] * B[(ulong)k * ldb];
        B[(ulong)i * ldb] = s / L[(ulong)i * lda + i];
    }
}

/* The blocked factorisation (src/linalg/cholesky.c) of `count` matrices at once, matrix m at
 * a + off + m step: its kernels' last dimension is the matrix. */

/* The diagonal block of `nb` <= NB rows at row and column `at`, factored in place by one
 * work-group of NB items (item i owns row i) through local memory: the blocked factorisation's
 * one sequential step. status[m] gets the matrix's first bad pivot + 1 if this block has one
 * (and no earlier block did), is left alone otherwise; logdet_part[m blocks + block] = 2 sum
 * log L_jj of the block. */
__kernel __attribute__((reqd_work_group_size(NB, 1, 1))) void
potrf_block(__global REAL *a, ulong off, ulong step, uint lda, uint at, uint nb, uint block,
            uint blocks, __global int *status, __global REAL *logdet_part)
{
    __local REAL t[NB][NB + 1];
    __local int bad;
    const uint i = get_local_id(0), m = get_group_id(1);
    __global REAL *A = a + off + m * step + (ulong)at * lda + at;
    if (i == 0) bad = 0;
    /* Item i copies column i of each row: the group's reads and writes of a row consecutive. */
    for (uint r = 0; r < nb; r++)
        if (i <= r) t[r][i] = A[(ulong)r * lda + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < nb; j++) {
        /* Every item reads the pivot after the barrier, so all agree on stopping. */
        const REAL d = t[j][j];
        if (!(d > 0)) {
            if (i == 0 && !bad) bad = (int)j + 1;
            break;
        }
        const REAL l = sqrt(d);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i == j) t[j][j] = l;
        if (i > j && i < nb) t[i][j] /= l;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i > j && i < nb)
            for (uint k = j + 1; k <= i; k++) t[i][k] -= t[i][j] * t[k][j];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint r = 0; r < nb; r++)
        if (i <= r) A[(ulong)r * lda + i] = t[r][i];
    if (i == 0) {
        REAL ld = 0;
        for (uint j = 0; j < nb; j++) ld += log(t[j][j]);
        logdet_part[(ulong)m * blocks + block] = bad ? (REAL)NAN : 2 * ld;
        if (bad && status[m] == 0) status[m] = (int)(at + bad);
    }
}

/* The panel below the diagonal block at `at` (nb columns), rows [at + nb, rows): each row a
 * becomes a L11^-T by forward substitution against the factored block, held in local memory;
 * a work-item a row. The panel also goes to pt transposed (pt + m NB rows, element (i, k) at
 * [k rows + i]: column k of the panel contiguous), which potrf_update_rows reads. */
__kernel __attribute__((reqd_work_group_size(NB, 1, 1))) void
potrf_panel(__global REAL *a, ulong off, ulong step, uint lda, uint at, uint nb, uint rows,
            __global REAL *pt)
{
    __local REAL t[NB][NB + 1];
    const uint li = get_local_id(0), m = get_group_id(1);
    __global REAL *M = a + off + m * step;
    __global const REAL *D = M + (ulong)at * lda + at;
    for (uint r = 0; r < nb; r++) /* column li of each row, as potrf_block copies */
        if (li <= r) t[r][li] = D[(ulong)r * lda + li];
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong i = (ulong)at + nb + get_global_id(0);
    if (i >= rows) return;
    __global REAL *row = M + i * lda + at;
    __global REAL *p = pt + (ulong)m * NB * rows + i;
    for (uint j = 0; j < nb; j++) {
        REAL s = row[j];
        for (uint k = 0; k < j; k++) s -= row[k] * t[j][k];
        row[j] = s / t[j][j];
        p[(ulong)j * rows] = row[j];
    }
}

/* Work-items of potrf_step's group (16 x 16) and the panel's columns it stages at a time. */
#define STEP_ITEMS 256
#define STEP_K 16

/* The diagonal block of nb rows, in t's lower triangle (zeros elsewhere), factored in place by
 * the group's STEP_ITEMS items, right-looking, two barriers a column: items 0 .. nb - 1 scale
 * the column by rsqrt of its pivot (one operation on the serial chain instead of a square
 * root and a division; L11 differs from potrf_block's by that rounding), then item (ty, tx) of
 * 16 x 16 updates the elements (ty + 16 p, tx + 16 s), so the shrinking triangle stays spread
 * over all items (RESULTS "issue 23j": rows of 4 items, division, one barrier a column).
 * Returns the first bad pivot + 1, or 0; the same in every item (each reads the pivot after
 * the barrier). */
static int step_factor(__local REAL (*t)[NB + 1], __local REAL *col, __local int *bad, uint nb,
                       uint lid)
{
    const uint tx = lid % 16, ty = lid / 16;
    if (lid == 0) *bad = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < nb; j++) {
        const REAL d = t[j][j];
        if (!(d > 0)) {
            if (lid == 0) *bad = (int)j + 1;
            break;
        }
        if (lid > j && lid < nb) {
            const REAL x = t[lid][j] * rsqrt(d);
            col[lid] = x;
            t[lid][j] = x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = 0; p < 4; p++) {
            const uint r = ty + 16 * p;
            if (r <= j || r >= nb) continue;
            const REAL lrj = col[r];
            for (int s = 0; s < 4; s++) {
                const uint k = tx + 16 * s;
                if (k > j && k <= r) t[r][k] -= lrj * col[k];
            }
        }
        if (lid == 0) t[j][j] = sqrt(d);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return *bad;
}

/* The factored block's log determinant part (2 sum log L_jj, NaN if it failed) and the
 * matrix's first bad pivot, as potrf_block records them, where `write` is set: the logs by nb
 * items at once into lg, their sum in order by one; by the whole group. */
static void step_record(__local REAL (*t)[NB + 1], __local REAL *lg, uint nb, int failed, uint at,
                        uint m, uint block, uint blocks, __global int *status,
                        __global REAL *logdet_part, uint lid, bool write)
{
    if (lid < nb) lg[lid] = log(t[lid][lid]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0 && write) {
        REAL ld = 0;
        for (uint j = 0; j < nb; j++) ld += lg[j];
        logdet_part[(ulong)m * blocks + block] = failed ? (REAL)NAN : 2 * ld;
        if (failed && status[m] == 0) status[m] = (int)(at + failed);
    }
}

/* Rows of the blocks of step_invert's inverse: NB / INV_B of them. */
#define INV_B 16

/* t's factored block (nb rows) becomes inv(L11)^T, upper triangular, zeros below, by INV_B-row
 * blocks (22 barriers, where row by row took 64: RESULTS "issue 23j"): X = inv(L11), X_ic at
 * t[c][i] above the diagonal, its diagonal in dinv. Each diagonal block is inverted by a
 * quarter of the group, row by row (row j of X is B's row j over L_jj, then B_ic -= L_ij X_jc
 * below it; B starts as I), then the blocks below them a diagonal of blocks at a time, X_ab =
 * -X_aa sum_k L_ak X_kb (k from b to a - 1), the sums staged in w (a block of rows a pair,
 * 3 INV_B rows). */
static void step_invert(__local REAL (*t)[NB + 1], __local REAL *dinv,
                        __local REAL (*w)[STEP_K + 1], uint nb, uint lid)
{
    for (uint j = lid; j < nb; j += STEP_ITEMS) dinv[j] = 1 / t[j][j];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Diagonal block lid / 64 (NB = 64, STEP_ITEMS = 256), item (u, v) of its 8 x 8 the
     * elements (u + 8 pp, v + 8 sp). */
    const uint o = INV_B * (lid / 64), u = lid % 64 / 8, v = lid % 8;
    for (uint jj = 0; jj + 1 < INV_B; jj++) {
        const uint j = o + jj;
        const REAL inv_jj = j < nb ? dinv[j] : 0;
        for (int sp = 0; sp < 2; sp++) {
            const uint c = o + v + 8 * sp;
            if (c > j || j >= nb) continue;
            const REAL xjc = c == j ? inv_jj : t[c][j] * inv_jj;
            for (int pp = 0; pp < 2; pp++) {
                const uint i = o + u + 8 * pp;
                if (i > j && i < nb) t[c][i] -= t[i][j] * xjc;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int pp = 0; pp < 2; pp++)
        for (int sp = 0; sp < 2; sp++) {
            const uint i = o + u + 8 * pp, c = o + v + 8 * sp;
            if (c < i && i < nb) t[c][i] *= dinv[i];
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint ri = lid / INV_B, ci = lid % INV_B;
    for (uint d = 1; d < NB / INV_B; d++) {
        /* Pair q: a = q + d, b = q; item (ri, ci) its element (ri, ci). */
        for (uint q = 0; q + d < NB / INV_B; q++) {
            const uint row = INV_B * (q + d) + ri, c = INV_B * q + ci;
            REAL sum = 0;
            if (row < nb)
                for (uint k = c; k < INV_B * (q + d); k++)
                    sum += t[row][k] * (k == c ? dinv[k] : t[c][k]);
            w[INV_B * q + ri][ci] = sum;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint q = 0; q + d < NB / INV_B; q++) {
            const uint a0 = INV_B * (q + d), row = a0 + ri, c = INV_B * q + ci;
            if (row >= nb) continue;
            REAL sum = 0;
            for (uint k = a0; k <= row; k++)
                sum += (k == row ? dinv[k] : t[k][row]) * w[INV_B * q + k - a0][ci];
            t[c][row] = -sum;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    /* L11's triangle gives way to zeros and the diagonal to dinv. */
    for (uint e = lid; e < NB * NB; e += STEP_ITEMS) {
        const uint rr = e / NB, c = e % NB;
        if (c < rr)
            t[rr][c] = 0;
        else if (c == rr)
            t[rr][c] = rr < nb ? dinv[rr] : 0;
    }
}

/* The group's 64 panel rows from i0 on (below `rows` only), columns at .. at + nb - 1 of M,
 * become A21 inv(L11)^T with t = inv(L11)^T: item (ty, tx) the rows ty + 16 p and columns tx +
 * 16 s of the tile, every element an independent dot product; also into pt as potrf_panel
 * writes it where want_pt is set. */
static void step_panel(__global REAL *M, uint lda, uint at, uint nb, uint rows, ulong i0,
                       __local REAL (*t)[NB + 1], __local REAL (*sa)[STEP_K + 1],
                       __global REAL *pt, uint want_pt, uint m)
{
    const uint lid = get_local_id(0), tx = lid % 16, ty = lid / 16;
    REAL acc[4][4];
    for (int p = 0; p < 4; p++)
        for (int s = 0; s < 4; s++) acc[p][s] = 0;
    /* The group's rows of A21 read at once into registers (one wait on global memory, not one
     * a staging), element e = lid + STEP_ITEMS h of column chunk kc at ahead[kc][h]. */
    enum { CHUNKS = NB / STEP_K, EACH = NB * STEP_K / STEP_ITEMS };
    REAL ahead[CHUNKS][EACH];
    for (int kc = 0; kc < CHUNKS; kc++)
        for (int h = 0; h < EACH; h++) {
            const uint e = lid + STEP_ITEMS * h, rr = e / STEP_K, k = STEP_K * kc + e % STEP_K;
            const ulong i = i0 + rr;
            ahead[kc][h] = i < rows && k < nb ? M[i * lda + at + k] : 0;
        }
    /* A loop of constant count, so that ahead's indices are constants (registers). */
    for (int kc = 0; kc < CHUNKS; kc++) {
        const uint k0 = STEP_K * kc;
        if (k0 >= nb) break; /* the same in every item */
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = 0; h < EACH; h++) {
            const uint e = lid + STEP_ITEMS * h;
            sa[e / STEP_K][e % STEP_K] = ahead[kc][h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint c = 0; c < STEP_K; c++) {
            REAL ai[4], mj[4];
            for (int p = 0; p < 4; p++) {
                ai[p] = sa[ty + 16 * p][c];
                mj[p] = t[k0 + c][tx + 16 * p];
            }
            for (int p = 0; p < 4; p++)
                for (int s = 0; s < 4; s++) acc[p][s] += ai[p] * mj[s];
        }
    }
    /* Every item has read its rows of A21 (the barrier above the last staging): now they may
     * be overwritten. */
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (int p = 0; p < 4; p++) {
        const ulong i = i0 + ty + 16 * p;
        if (i >= rows) continue;
        for (int s = 0; s < 4; s++) {
            const uint j = tx + 16 * s;
            if (j >= nb) continue;
            M[i * lda + at + j] = acc[p][s];
            if (want_pt) pt[(ulong)m * NB * rows + (ulong)j * rows + i] = acc[p][s];
        }
    }
}

/* One 64-row step of the blocked factorisation in one launch, for GPUs, where potrf_block and
 * potrf_panel's long serial loops (a row an item) left most of each step's time to latency:
 * every work-group factors the diagonal block at `at` in local memory (step_factor), forms
 * inv(L11) in the same local array, then its own 64 rows of the panel as A21 inv(L11)^T.
 * Group 0 alone writes the block's logdet part and the status (as potrf_block does) and L11
 * to l11 (m NB^2 on), which the next step's group 0, or potrf_put_block after the last step,
 * copies into place: the other groups of this step may still be reading A11 there. The panel
 * differs from substitution's by rounding (inv(L11)'s error, about eps cond(L11), where
 * cond(L11) = sqrt(cond(A11))). pt as potrf_panel, written only where want_pt is set (the CPU
 * devices' update reads it, the tiles do not). */
__kernel __attribute__((reqd_work_group_size(STEP_ITEMS, 1, 1))) void
potrf_step(__global REAL *a, ulong off, ulong step, uint lda, uint at, uint nb, uint rows,
           __global REAL *pt, uint want_pt, uint block, uint blocks, __global int *status,
           __global REAL *logdet_part, __global REAL *l11, uint prev_at)
{
    /* L11 on and below the diagonal; inv(L11) transposed above it, its diagonal in dinv:
     * element (j, c) of the inverse, c < j, at t[c][j]. */
    __local REAL t[NB][NB + 1];
    __local REAL col[NB], dinv[NB];
    __local REAL sa[NB][STEP_K + 1];
    __local int bad;
    const uint lid = get_local_id(0), g = get_group_id(0), m = get_group_id(1);
    __global REAL *M = a + off + m * step;
    __global REAL *D = M + (ulong)at * lda + at;
    __global REAL *keep = l11 + (ulong)m * NB * NB;
    /* The previous step's L11 into place (no group of this step reads there). */
    if (g == 0 && block > 0) {
        __global REAL *P = M + (ulong)prev_at * lda + prev_at;
        for (uint e = lid; e < NB * NB; e += STEP_ITEMS) {
            const uint r = e / NB, c = e % NB;
            if (c <= r && r < at - prev_at) P[(ulong)r * lda + c] = keep[e];
        }
    }
    for (uint e = lid; e < NB * NB; e += STEP_ITEMS) {
        const uint r = e / NB, c = e % NB;
        t[r][c] = c <= r && r < nb ? D[(ulong)r * lda + c] : 0;
    }
    const int failed = step_factor(t, col, &bad, nb, lid);
    /* To the scratch, not yet in place: other groups may still be reading A11. */
    if (g == 0)
        for (uint e = lid; e < NB * NB; e += STEP_ITEMS) keep[e] = t[e / NB][e % NB];
    /* Every group reaches step_record's barrier (PoCL miscompiled it inside the branch). */
    step_record(t, col, nb, failed, at, m, block, blocks, status, logdet_part, lid, g == 0);
    const ulong i0 = (ulong)at + nb + (ulong)g * NB;
    if (failed || i0 >= rows) return; /* the whole group: no barrier is left waiting */
    step_invert(t, dinv, sa, nb, lid);
    step_panel(M, lda, at, nb, rows, i0, t, sa, pt, want_pt, m);
}

/* The last potrf_step's L11 (nb rows) from l11 into place at `at`. */
__kernel void potrf_put_block(__global REAL *a, ulong off, ulong step, uint lda, uint at, uint nb,
                              __global const REAL *l11)
{
    const uint e = get_global_id(0), m = get_global_id(1), r = e / NB, c = e % NB;
    if (c <= r && r < nb)
        a[off + m * step + (ulong)(at + r) * lda + at + c] = l11[(ulong)m * NB * NB + e];
}

/* The look-ahead design (src/linalg/cholesky.c): each diagonal block is factored by one group
 * as soon as its last update is done, inside the update's own launch (potrf_update_ahead), so
 * that the block's long serial chain overlaps the rest of that update instead of following it;
 * the next launch then only forms the panel from the block's inverse (potrf_panel_ahead). */

/* The block in t (nb rows at `at` of M, block number `block`) factored, L11 written in place
 * (no other group of the launch reads there), its logdet part and status recorded, and
 * inv(L11)^T (NB x NB, zeros below) to linv for the panel's launch; by the whole group. */
static void ahead_block(__global REAL *M, uint lda, uint at, uint nb, __local REAL (*t)[NB + 1],
                        __local REAL *col, __local REAL *dinv, __local REAL (*w)[STEP_K + 1],
                        __local int *bad, uint m,
                        uint block, uint blocks, __global int *status,
                        __global REAL *logdet_part, __global REAL *linv, uint lid)
{
    __global REAL *D = M + (ulong)at * lda + at;
    const int failed = step_factor(t, col, bad, nb, lid);
    for (uint e = lid; e < NB * NB; e += STEP_ITEMS) {
        const uint r = e / NB, c = e % NB;
        if (c <= r && r < nb) D[(ulong)r * lda + c] = t[r][c];
    }
    step_record(t, col, nb, failed, at, m, block, blocks, status, logdet_part, lid, true);
    /* A failed block still gives the panel numbers (meaningless, as the status says). */
    step_invert(t, dinv, w, nb, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    __global REAL *keep = linv + (ulong)m * NB * NB;
    for (uint e = lid; e < NB * NB; e += STEP_ITEMS) keep[e] = t[e / NB][e % NB];
}

/* The first diagonal block of the look-ahead design (at 0, no update before it): a group a
 * matrix (group (0, m)). */
__kernel __attribute__((reqd_work_group_size(STEP_ITEMS, 1, 1))) void
potrf_factor_first(__global REAL *a, ulong off, ulong step, uint lda, uint nb, uint blocks,
                   __global int *status, __global REAL *logdet_part, __global REAL *linv)
{
    __local REAL t[NB][NB + 1];
    __local REAL col[NB], dinv[NB];
    __local REAL w[3 * INV_B][STEP_K + 1];
    __local int bad;
    const uint lid = get_local_id(0), m = get_group_id(1);
    __global REAL *M = a + off + m * step;
    for (uint e = lid; e < NB * NB; e += STEP_ITEMS) {
        const uint r = e / NB, c = e % NB;
        t[r][c] = c <= r && r < nb ? M[(ulong)r * lda + c] : 0;
    }
    ahead_block(M, lda, 0, nb, t, col, dinv, w, &bad, m, 0, blocks, status, logdet_part, linv,
                lid);
}

/* The panel below the block at `at` (nb columns, rows [at + nb, rows)) as A21 inv(L11)^T, with
 * inv(L11)^T from linv (ahead_block's): group (g, m) its 64 rows from at + nb + 64 g. Rows
 * from ident on are the identity's, carried along: row ident + t is zero left of column t, so
 * rows from ident + at + nb have a zero panel and are left alone (ident = rows: none). */
__kernel __attribute__((reqd_work_group_size(STEP_ITEMS, 1, 1))) void
potrf_panel_ahead(__global REAL *a, ulong off, ulong step, uint lda, uint at, uint nb, uint rows,
                  __global const REAL *linv, uint ident)
{
    __local REAL t[NB][NB + 1];
    __local REAL sa[NB][STEP_K + 1];
    const uint lid = get_local_id(0), g = get_group_id(0), m = get_group_id(1);
    __global const REAL *keep = linv + (ulong)m * NB * NB;
    for (uint e = lid; e < NB * NB; e += STEP_ITEMS) t[e / NB][e % NB] = keep[e];
    const ulong i0 = (ulong)at + nb + (ulong)g * NB;
    /* the whole group: no barrier is left waiting */
    if (i0 >= rows || i0 >= (ulong)ident + at + nb) return;
    step_panel(a + off + m * step, lda, at, nb, rows, i0, t, sa, (__global REAL *)0, 0, m);
}

/* Tile of the trailing update a work-group computes (SYRK_TILE x SYRK_TILE elements, each of
 * its 16 x 16 items SYRK_TILE / 16 squared of them, in registers) and the panel's columns
 * staged in local memory at a time. */
#define SYRK_TILE 64
#define SYRK_K 16
#define SYRK_R (SYRK_TILE / 16)

/* One tile of the trailing update after the panel at `at` (nb columns): acc = the tile's part
 * of A21 A21^T, rows from i0, columns from j0 (rows past `rows` read as zeros), item (lx, ly)
 * the elements (ly + 16 p, lx + 16 q), the panel's columns staged in pi and pj. */
static void update_tile(__global const REAL *M, uint lda, uint at, uint nb, uint rows, uint i0,
                        uint j0, __local REAL (*pi)[SYRK_K + 1], __local REAL (*pj)[SYRK_K + 1],
                        REAL acc[SYRK_R][SYRK_R], uint lx, uint ly)
{
    const uint lid = ly * 16 + lx;
    for (int p = 0; p < SYRK_R; p++)
        for (int q = 0; q < SYRK_R; q++) acc[p][q] = 0;
    for (uint k0 = 0; k0 < nb; k0 += SYRK_K) {
        for (uint e = lid; e < SYRK_TILE * SYRK_K; e += 256) {
            const uint r = e / SYRK_K, c = e % SYRK_K, gi = i0 + r, gj = j0 + r;
            const bool kin = k0 + c < nb;
            const ulong col = at + k0 + c;
            pi[r][c] = kin && gi < rows ? M[(ulong)gi * lda + col] : 0;
            pj[r][c] = kin && gj < rows ? M[(ulong)gj * lda + col] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint c = 0; c < SYRK_K; c++) {
            REAL bi[SYRK_R], bj[SYRK_R];
            for (int p = 0; p < SYRK_R; p++) {
                bi[p] = pi[ly + 16 * p][c];
                bj[p] = pj[lx + 16 * p][c];
            }
            for (int p = 0; p < SYRK_R; p++)
                for (int q = 0; q < SYRK_R; q++) acc[p][q] += bi[p] * bj[q];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The tile's elements subtracted from M on the lower triangle, within rows and cols. */
static void update_write(__global REAL *M, uint lda, uint rows, uint cols, uint i0, uint j0,
                         REAL acc[SYRK_R][SYRK_R], uint lx, uint ly)
{
    for (int p = 0; p < SYRK_R; p++)
        for (int q = 0; q < SYRK_R; q++) {
            const uint i = i0 + ly + 16 * p, j = j0 + lx + 16 * q;
            if (i < rows && j < cols && j <= i) M[(ulong)i * lda + j] -= acc[p][q];
        }
}

/* The trailing update after the panel at `at` (nb columns): A22 -= A21 A21^T on the lower
 * triangle, rows [at + nb, rows), columns [at + nb, cols) (cols <= rows: rows past cols are
 * extra right-hand sides carried along, whose own corner is not needed). Work-group (x, y)
 * the tile of columns x and rows y; tiles above the diagonal leave at once. */
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void
potrf_update(__global REAL *a, ulong off, ulong step, uint lda, uint at, uint nb, uint rows,
             uint cols)
{
    const uint tj = get_group_id(0), ti = get_group_id(1);
    if (tj > ti) return; /* the whole group: no barrier is left waiting */
    const uint start = at + nb, i0 = start + ti * SYRK_TILE, j0 = start + tj * SYRK_TILE;
    if (j0 >= cols) return;
    const uint lx = get_local_id(0), ly = get_local_id(1);
    __global REAL *M = a + off + get_group_id(2) * step;
    __local REAL pi[SYRK_TILE][SYRK_K + 1], pj[SYRK_TILE][SYRK_K + 1];
    REAL acc[SYRK_R][SYRK_R];
    update_tile(M, lda, at, nb, rows, i0, j0, pi, pj, acc, lx, ly);
    update_write(M, lda, rows, cols, i0, j0, acc, lx, ly);
}

#if SYRK_TILE == NB
/* potrf_update for the look-ahead design: a group of 256 items in one dimension (group (x, y,
 * m) the tile of columns x and rows y of matrix m), and the first tile, the next diagonal block
 * (`block`, nb2 = min(NB, cols - start) rows), is not written back but factored at once by its
 * group (ahead_block), which the launch's earliest groups are: its serial chain then runs
 * beside the other tiles. Rows of that tile past cols (extra right-hand sides) are written as
 * any tile's; tiles of the identity's rows whose panel is zero are skipped. */
__kernel __attribute__((reqd_work_group_size(STEP_ITEMS, 1, 1))) void
potrf_update_ahead(__global REAL *a, ulong off, ulong step, uint lda, uint at, uint nb,
                   uint rows, uint cols, uint block, uint blocks, __global int *status,
                   __global REAL *logdet_part, __global REAL *linv, uint ident)
{
    const uint tj = get_group_id(0), ti = get_group_id(1), m = get_group_id(2);
    if (tj > ti) return; /* the whole group: no barrier is left waiting */
    const uint start = at + nb, i0 = start + ti * SYRK_TILE, j0 = start + tj * SYRK_TILE;
    /* Rows from ident + at + nb: the identity's, zero in the panel (potrf_panel_ahead). */
    if (j0 >= cols || (ulong)i0 >= (ulong)ident + start) return;
    const uint lid = get_local_id(0), lx = lid % 16, ly = lid / 16;
    __global REAL *M = a + off + m * step;
    /* The tile's staging, then the block being factored: one array for both. */
    __local REAL t[NB][NB + 1];
    __local REAL col[NB], dinv[NB];
    __local REAL w[3 * INV_B][STEP_K + 1];
    __local int bad;
    __local REAL(*pi)[SYRK_K + 1] = (__local REAL(*)[SYRK_K + 1]) & t[0][0];
    __local REAL(*pj)[SYRK_K + 1] = pi + SYRK_TILE;
    REAL acc[SYRK_R][SYRK_R];
    update_tile(M, lda, at, nb, rows, i0, j0, pi, pj, acc, lx, ly);
    if (ti != 0) {
        update_write(M, lda, rows, cols, i0, j0, acc, lx, ly);
        return;
    }
    const uint nb2 = min(cols - start, (uint)NB);
    for (int p = 0; p < SYRK_R; p++)
        for (int q = 0; q < SYRK_R; q++) {
            const uint r = ly + 16 * p, c = lx + 16 * q, i = i0 + r, j = j0 + c;
            if (r < nb2)
                t[r][c] = c <= r ? M[(ulong)i * lda + j] - acc[p][q] : 0;
            else {
                t[r][c] = 0;
                if (i < rows && j < cols && j <= i) M[(ulong)i * lda + j] -= acc[p][q];
            }
        }
    /* Every item's reads of the block above are done before ahead_block writes L11 over it:
     * its own barriers fence local memory only. */
    barrier(CLK_GLOBAL_MEM_FENCE);
    ahead_block(M, lda, start, nb2, t, col, dinv, w, &bad, m, block, blocks, status,
                logdet_part, linv, lid);
}
#endif

/* Columns of the trailing update a potrf_update_rows work-item computes. */
#define ROW_CHUNK 64

/* The same update as potrf_update for CPU devices, whose compilers vectorise innermost loops
 * without reductions: item (c, i) the elements j0 .. j0 + ROW_CHUNK - 1 of row i (j0 = at + nb
 * + c ROW_CHUNK), accumulated over the panel's columns k as acc[j] += a_ik pt[k][j], the
 * transposed panel's row k contiguous in j; then subtracted, as potrf_update does. */
__kernel void potrf_update_rows(__global REAL *a, ulong off, ulong step, uint lda, uint at,
                                uint nb, uint rows, uint cols, __global const REAL *pt)
{
    const uint start = at + nb, i = start + get_global_id(1), m = get_global_id(2);
    const uint j0 = start + get_global_id(0) * ROW_CHUNK;
    if (i >= rows || j0 >= cols || j0 > i) return;
    const uint end = min(min(i + 1, cols), j0 + ROW_CHUNK), len = end - j0;
    __global REAL *M = a + off + m * step;
    __global const REAL *ai = M + (ulong)i * lda + at;
    __global const REAL *pm = pt + (ulong)m * NB * rows + j0;
    REAL acc[ROW_CHUNK];
    for (uint c = 0; c < ROW_CHUNK; c++) acc[c] = 0;
    for (uint k = 0; k < nb; k++) {
        const REAL aik = ai[k];
        __global const REAL *p = pm + (ulong)k * rows;
        for (uint c = 0; c < len; c++) acc[c] += aik * p[c];
    }
    __global REAL *ci = M + (ulong)i * lda + j0;
    for (uint c = 0; c < len; c++) ci[c] -= acc[c];
}

#ifdef LAUUM
/* lauum's tiles: 128 x 128 elements a work-group, each of its 16 x 16 items 8 x 8 of them in
 * registers (16 local reads a 64 multiply-adds), U's columns staged WIDE_K at a time and
 * transposed (element (row r, column c) at [c][r]), so that the items of a row of the group
 * read consecutive doubles. */
#define WIDE_TILE 128
#define WIDE_K 16
#define WIDE_R (WIDE_TILE / 16)

/* C = U U^T on C's lower triangle (LAPACK's lauum), U upper triangular n x n at u + uoff
 * (row-major, leading dimension ldu; row i zero left of column i, not read there), C n x n at
 * c + coff, leading dimension ldc: a Cholesky factor's inverse times its transpose. Tile
 * (i0, j0) sums over columns from i0 only, left of which its rows of U vanish. */
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void
lauum_upper(__global const REAL *u, ulong uoff, uint ldu, uint n, __global REAL *c, ulong coff,
            uint ldc)
{
    const uint tj = get_group_id(0), ti = get_group_id(1);
    if (tj > ti) return; /* the whole group: no barrier is left waiting */
    const uint i0 = ti * WIDE_TILE, j0 = tj * WIDE_TILE;
    const uint lx = get_local_id(0), ly = get_local_id(1), lid = ly * 16 + lx;
    __global const REAL *U = u + uoff;
    __local REAL pi[WIDE_K][WIDE_TILE + 1], pj[WIDE_K][WIDE_TILE + 1];
    REAL acc[WIDE_R][WIDE_R];
#pragma unroll
    for (int p = 0; p < WIDE_R; p++)
#pragma unroll
        for (int q = 0; q < WIDE_R; q++) acc[p][q] = 0;
    for (uint k0 = i0; k0 < n; k0 += WIDE_K) {
#pragma unroll
        for (uint e = lid; e < WIDE_TILE * WIDE_K; e += 256) {
            const uint r = e / WIDE_K, cc = e % WIDE_K, gi = i0 + r, gj = j0 + r, k = k0 + cc;
            pi[cc][r] = k < n && gi < n && k >= gi ? U[(ulong)gi * ldu + k] : 0;
            pj[cc][r] = k < n && gj < n && k >= gj ? U[(ulong)gj * ldu + k] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (uint cc = 0; cc < WIDE_K; cc++) {
            REAL bi[WIDE_R], bj[WIDE_R];
#pragma unroll
            for (int p = 0; p < WIDE_R; p++) {
                bi[p] = pi[cc][ly + 16 * p];
                bj[p] = pj[cc][lx + 16 * p];
            }
#pragma unroll
            for (int p = 0; p < WIDE_R; p++)
#pragma unroll
                for (int q = 0; q < WIDE_R; q++) acc[p][q] += bi[p] * bj[q];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    __global REAL *C = c + coff;
#pragma unroll
    for (int p = 0; p < WIDE_R; p++)
#pragma unroll
        for (int q = 0; q < WIDE_R; q++) {
            const uint i = i0 + ly + 16 * p, j = j0 + lx + 16 * q;
            if (i < n && j <= i) C[(ulong)i * ldc + j] = acc[p][q];
        }
}
#endif
