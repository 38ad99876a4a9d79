/* clstats/linalg.h - dense linear algebra on device data (src/linalg/): CLBlast's GEMM, batched
 * GEMM, SYRK, TRSM and GEMV on the context's queue, and what CLBlast lacks, Cholesky
 * factorisations (one large matrix, blocked, or many small ones at once), log-determinants and
 * solves with several right-hand sides.
 *
 * Operands are struct clstats_array (include/clstats/core.h) in buffers of the context (host
 * arrays give CLSTATS_ERR_ARG: this layer is for data that stays on the device), all of one
 * dtype, float32 or float64. A matrix is row-major: ny rows of nx elements, row r at offset +
 * r * stride. Results are written in place; calls return when the device has finished. Shapes
 * that do not agree give CLSTATS_ERR_ARG with the shapes in clstats_ctx_message. */
#ifndef CLSTATS_LINALG_H
#define CLSTATS_LINALG_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum clstats_op {
    CLSTATS_OP_N = 0, /* the matrix as it is */
    CLSTATS_OP_T,     /* its transpose */
};

/* C = alpha op(A) op(B) + beta C. */
CLSTATS_API int clstats_gemm(clstats_ctx *ctx, enum clstats_op op_a, enum clstats_op op_b,
                             double alpha, const struct clstats_array *a,
                             const struct clstats_array *b, double beta,
                             const struct clstats_array *c);

/* `count` GEMMs of one shape: product i takes the arrays a, b and c with their offsets moved on
 * by i * a_step, i * b_step and i * c_step elements. */
CLSTATS_API int clstats_gemm_batched(clstats_ctx *ctx, enum clstats_op op_a,
                                     enum clstats_op op_b, double alpha,
                                     const struct clstats_array *a, size_t a_step,
                                     const struct clstats_array *b, size_t b_step, double beta,
                                     const struct clstats_array *c, size_t c_step,
                                     size_t count);

/* The lower triangle of C = alpha op(A) op(A)^T + beta C (op_a CLSTATS_OP_T: alpha A^T A +
 * beta C); C's strict upper triangle is not touched. */
CLSTATS_API int clstats_syrk(clstats_ctx *ctx, enum clstats_op op_a, double alpha,
                             const struct clstats_array *a, double beta,
                             const struct clstats_array *c);

/* B = alpha op(L)^-1 B, or with `right` set B = alpha B op(L)^-1, for L lower triangular with
 * its diagonal (the strict upper triangle is not read). */
CLSTATS_API int clstats_trsm(clstats_ctx *ctx, int right, enum clstats_op op_l, double alpha,
                             const struct clstats_array *l, const struct clstats_array *b);

/* y = alpha op(A) x + beta y; x and y are vectors (ny 1). */
CLSTATS_API int clstats_gemv(clstats_ctx *ctx, enum clstats_op op_a, double alpha,
                             const struct clstats_array *a, const struct clstats_array *x,
                             double beta, const struct clstats_array *y);

/* Cholesky A = L L^T of the symmetric positive-definite n x n A, in place: its lower triangle
 * becomes L (the strict upper triangle is neither read nor written). *logdet, when not NULL,
 * gets log det A. A pivot that is not positive gives CLSTATS_ERR_SINGULAR, its row in the
 * message and in *bad_row when not NULL (A is then partly overwritten). */
CLSTATS_API int clstats_cholesky(clstats_ctx *ctx, const struct clstats_array *a,
                                 double *logdet, size_t *bad_row);

/* Cholesky of `count` p x p matrices stacked in a (nx = p, ny = count * p), in place. info[i]
 * (host, count entries) is 0 where matrix i was factored, else its first bad pivot's row + 1;
 * logdet[i] (host, optional) its log-determinant, NaN where info[i] is set. Returns
 * CLSTATS_OK even where some matrices are not positive definite: info says which. */
CLSTATS_API int clstats_cholesky_batched(clstats_ctx *ctx, const struct clstats_array *a,
                                         size_t count, int32_t *info, double *logdet);

/* Solves A X = B in place of B (n x nrhs) from the factor L of clstats_cholesky (n x n). */
CLSTATS_API int clstats_cholesky_solve(clstats_ctx *ctx, const struct clstats_array *l,
                                       const struct clstats_array *b);

/* The same for `count` systems: l as clstats_cholesky_batched leaves it (count * p rows of p),
 * b count * p rows of nrhs. */
CLSTATS_API int clstats_cholesky_solve_batched(clstats_ctx *ctx, const struct clstats_array *l,
                                               const struct clstats_array *b, size_t count);

#ifdef __cplusplus
}
#endif
#endif
