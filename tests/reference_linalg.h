/* reference_linalg.h - the judge for the linear-algebra layer: textbook loops in double, row-major
 * (element (i, j) of a matrix with row stride ld at a[i ld + j]), sharing nothing with CLBlast or
 * the kernels. */
#ifndef REFERENCE_LINALG_H
#define REFERENCE_LINALG_H

#include <stdbool.h>
#include <stddef.h>

/* C = alpha op(A) op(B) + beta C, C m x n, k the inner size. */
void ref_gemm(bool ta, bool tb, size_t m, size_t n, size_t k, double alpha, const double *a,
              size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc);
/* Lower triangle of C = alpha op(A) op(A)^T + beta C, C n x n, op(A) n x k. */
void ref_syrk(bool ta, size_t n, size_t k, double alpha, const double *a, size_t lda, double beta,
              double *c, size_t ldc);
/* B = alpha op(L)^-1 B (left; L m x m) or alpha B op(L)^-1 (right; L n x n), B m x n. */
void ref_trsm(bool right, bool tl, size_t m, size_t n, double alpha, const double *l, size_t ldl,
              double *b, size_t ldb);
/* Lower Cholesky in place; returns 0 or the bad pivot's row + 1; *logdet. */
int ref_cholesky(double *a, size_t n, size_t lda, double *logdet);
/* A symmetric positive-definite n x n matrix (B B^T + n I from uniform B) into a. */
void ref_spd(double *a, size_t n, unsigned long long seed);

#endif
