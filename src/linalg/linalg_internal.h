/* linalg_internal.h - the linear-algebra layer as other modules use it (src/regress/): CLBlast's
 * routines on device buffers, row-major, on the context's queue, each call's event kept for the
 * context's timing and its status turned into ours (src/linalg/blas.c); and our own kernels for
 * what CLBlast lacks (src/linalg/cholesky.c, extremes.c). No other folder includes CLBlast. */
#ifndef CLSTATS_LINALG_INTERNAL_H
#define CLSTATS_LINALG_INTERNAL_H

#include "internal.h"

/* A row-major matrix in a device buffer: element (i, j) at buf[off + i ld + j]. */
struct clstats__mat {
    cl_mem buf;
    size_t off, ld;
};

/* C = alpha op(A) op(B) + beta C; C is m x n, op(A) m x k, op(B) k x n. */
int clstats__gemm(clstats_ctx *ctx, bool f64, bool ta, bool tb, size_t m, size_t n, size_t k,
                  double alpha, struct clstats__mat a, struct clstats__mat b, double beta,
                  struct clstats__mat c);

/* The same with every matrix column-major (element (i, j) at off + i + j ld): CLBlast's kernels
 * make C column-major, so a row-major C costs a transpose of C after every call (k-means' 512 MiB
 * blocks of products: src/cluster/assign.c). */
int clstats__gemm_colmajor(clstats_ctx *ctx, bool f64, bool ta, bool tb, size_t m, size_t n,
                           size_t k, double alpha, struct clstats__mat a, struct clstats__mat b,
                           double beta, struct clstats__mat c);

/* count GEMMs of one shape; matrix i of A starts at a.off + a_offs[i] (likewise B and C). */
int clstats__gemm_batched(clstats_ctx *ctx, bool f64, bool ta, bool tb, size_t m, size_t n,
                          size_t k, double alpha, struct clstats__mat a, const size_t *a_offs,
                          struct clstats__mat b, const size_t *b_offs, double beta,
                          struct clstats__mat c, const size_t *c_offs, size_t count);

/* Lower triangle of the n x n C = alpha op(A) op(A)^T + beta C; op(A) is n x k (ta: A is
 * k x n, C = alpha A^T A + beta C). */
int clstats__syrk(clstats_ctx *ctx, bool f64, bool ta, size_t n, size_t k, double alpha,
                  struct clstats__mat a, double beta, struct clstats__mat c);

/* B = alpha op(L)^-1 B (left: L is m x m, B m x n) or alpha B op(L)^-1 (right: L n x n), L
 * lower triangular with its diagonal. */
int clstats__trsm(clstats_ctx *ctx, bool f64, bool right, bool tl, size_t m, size_t n,
                  double alpha, struct clstats__mat l, struct clstats__mat b);

/* y = alpha op(A) x + beta y; A is m x n; x and y step by one element. */
int clstats__gemv(clstats_ctx *ctx, bool f64, bool ta, size_t m, size_t n, double alpha,
                  struct clstats__mat a, cl_mem x, size_t xoff, double beta, cl_mem y,
                  size_t yoff);

/* Cholesky of `count` p x p matrices, matrix i at a.off + i step: info[i] 0 or the bad pivot
 * + 1, logdet[i]; both device buffers of count entries (int32, and the dtype). A work-item a
 * matrix below p = 32, a work-group a matrix from there (src/linalg/cholesky.c). */
int clstats__potrf_batched(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t step,
                           size_t p, size_t count, cl_mem info, cl_mem logdet);

/* Solves L L^T X = B in place for `count` systems: L p x p at l.off + i l_step, B p x nrhs at
 * b.off + i b_step. */
int clstats__potrs_batched(clstats_ctx *ctx, bool f64, struct clstats__mat l, size_t l_step,
                           size_t p, struct clstats__mat b, size_t b_step, size_t nrhs,
                           size_t count);

/* Blocked Cholesky of the n x n A in place (lower): *bad 0 or the first bad pivot + 1;
 * *logdet log det A (NaN when bad). `extra` rows below A (rows n .. n + extra - 1 of the same
 * buffer, columns 0 .. n - 1) are right-hand sides b' carried along: they end as (L^-1 b)',
 * the factorisation of [A b; b' *] stopped after n pivots. */
int clstats__potrf(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t n, size_t extra,
                   int *bad, double *logdet);

/* The same for `count` matrices at once (matrix m at a.off + m step, each with its extra
 * rows), enqueued only: info (count int32, device) gets each matrix's first bad pivot + 1 or
 * 0, parts (count x clstats__potrf_blocks(n) of the dtype, device) the log determinants of its
 * diagonal blocks, to be summed in block order. Launches: two (GPUs) or three (CPU devices) a
 * 64-row block step, for all the matrices together. */
int clstats__potrf_many(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t step,
                        size_t n, size_t extra, size_t count, cl_mem info, cl_mem parts);
size_t clstats__potrf_blocks(size_t n);
/* The same where the extra rows from row `ident` on (ident >= n) are the identity's (row
 * ident + t: e_t'), which end as L^-T: on GPUs (the look-ahead design) the panels' and
 * updates' tiles where those rows are still zero are skipped, the same bits in about 60% of
 * the work (n^3/2 multiply-adds, not 5 n^3/6). */
int clstats__potrf_many_identity(clstats_ctx *ctx, bool f64, struct clstats__mat a, size_t step,
                                 size_t n, size_t extra, size_t ident, size_t count, cl_mem info,
                                 cl_mem parts);

/* The lower triangle of C = U U^T (n x n) for U upper triangular, read on and right of its
 * diagonal only (LAPACK's lauum): with U = L^-T, the factored matrix's inverse. One launch,
 * 128 x 128 tiles (kernels/linalg/cholesky.cl lauum_upper). */
int clstats__lauum(clstats_ctx *ctx, bool f64, struct clstats__mat u, size_t n,
                   struct clstats__mat c);

/* The smallest (lo[m]) and largest (hi[m]) eigenvalues of `count` symmetric n x n float64
 * matrices, matrix m full at a.off + m step (a.ld = n), left unchanged: Householder's
 * tridiagonal reduction on the device, a work-group a matrix, Sturm bisection on the host
 * (src/linalg/extremes.c). */
int clstats__eig_extremes_many(clstats_ctx *ctx, struct clstats__mat a, size_t step, size_t n,
                               size_t count, double *lo, double *hi);

/* The largest eigenvalue of `count` symmetric positive semidefinite float64 operators by
 * Lanczos's iteration on the device, in lockstep (src/linalg/lanczos.c): LANCZOS_SYMMETRIC,
 * the full n x n matrix at a.off + m step (a.ld = n); LANCZOS_GRAM_UPPER, Y Y' for the upper
 * triangular Y there (Y = L^-T: (L L')^-1). At most kmax steps (and n); theta[m] the largest
 * Ritz value (never above the eigenvalue), err[m] its error estimate, kept once done(user, m,
 * theta, err) accepts them or at the last step. */
enum clstats__lanczos_op { LANCZOS_SYMMETRIC, LANCZOS_GRAM_UPPER };
typedef bool (*clstats__lanczos_done)(void *user, size_t m, double theta, double err);
int clstats__lanczos_top(clstats_ctx *ctx, enum clstats__lanczos_op op, struct clstats__mat a,
                         size_t step, size_t n, size_t count, size_t kmax,
                         clstats__lanczos_done done, void *user, double *theta, double *err);

/* dst (count x 2 n rows of n) = [A_m + shift_m I; I] for the full n x n matrices A_m at a.off
 * + m step (shift: count doubles on the device): factored with the identity's n rows carried
 * along (clstats__potrf_many's extra rows), the rows below end as L^-T. */
int clstats__shifted_with_identity(clstats_ctx *ctx, struct clstats__mat a, size_t step,
                                   size_t n, size_t count, cl_mem shift, cl_mem dst);

/* The eigenvalue of rank `which` (0 the smallest) of the n x n symmetric tridiagonal matrix
 * (diag, and off's n - 1) by bisection on Sturm counts inside Gershgorin's bounds
 * (src/linalg/extremes.c). */
double clstats__tridiagonal_eigenvalue(const double *diag, const double *off, size_t n,
                                       size_t which);

#endif
