/* cholesky.cl - the dense factorisations CLBlast lacks (it has no LAPACK): Cholesky A = L L^T of
 * many small matrices at once, of one diagonal block inside a larger matrix (the blocked
 * factorisation in src/linalg/cholesky.c puts CLBlast's TRSM and SYRK around it), and solves
 * with L of several right-hand sides. Matrices are row-major, element (i, j) at a[i lda + j];
 * only the lower triangle (j <= i) is read and written, the strict upper is left as it was.
 *
 * Build options: -D REAL=float or double (double needs fp64), -D NB=rows of the diagonal block
 * (a work-group of NB work-items, the block in local memory).
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

/* The diagonal block of `nb` <= NB rows at row and column `at` of an n x n matrix, factored in
 * place by one work-group of NB items (item i owns row i) through local memory: the blocked
 * factorisation's one sequential step, every other step being CLBlast's. status[0] gets the
 * matrix's first bad pivot + 1 if this block has one (and no earlier block did), status is
 * left alone otherwise; logdet_part[block] = 2 sum log L_jj of the block. */
__kernel __attribute__((reqd_work_group_size(NB, 1, 1))) void
potrf_block(__global REAL *a, ulong off, uint lda, uint at, uint nb, uint block,
            __global int *status, __global REAL *logdet_part)
{
    __local REAL t[NB][NB + 1];
    __local int bad;
    const uint i = get_local_id(0);
    __global REAL *A = a + off + (ulong)at * lda + at;
    if (i == 0) bad = 0;
    for (uint j = 0; j < nb; j++)
        if (i < nb && j <= i) t[i][j] = A[(ulong)i * lda + j];
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
    for (uint j = 0; j < nb; j++)
        if (i < nb && j <= i) A[(ulong)i * lda + j] = t[i][j];
    if (i == 0) {
        REAL ld = 0;
        for (uint j = 0; j < nb; j++) ld += log(t[j][j]);
        logdet_part[block] = bad ? (REAL)NAN : 2 * ld;
        if (bad && status[0] == 0) status[0] = (int)(at + bad);
    }
}

