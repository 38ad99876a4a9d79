/* reference_linalg.c - plain loops for GEMM, SYRK, TRSM and Cholesky in double (see the header). */
#include "reference_linalg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static double at(const double *a, size_t ld, bool t, size_t i, size_t j)
{
    return t ? a[j * ld + i] : a[i * ld + j];
}

void ref_gemm(bool ta, bool tb, size_t m, size_t n, size_t k, double alpha, const double *a,
              size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t q = 0; q < k; q++) s += at(a, lda, ta, i, q) * at(b, ldb, tb, q, j);
            /* beta 0 does not read C, as in BLAS */
            c[i * ldc + j] = alpha * s + (beta == 0 ? 0.0 : beta * c[i * ldc + j]);
        }
}

void ref_syrk(bool ta, size_t n, size_t k, double alpha, const double *a, size_t lda, double beta,
              double *c, size_t ldc)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
            double s = 0;
            for (size_t q = 0; q < k; q++) s += at(a, lda, ta, i, q) * at(a, lda, ta, j, q);
            c[i * ldc + j] = alpha * s + beta * c[i * ldc + j];
        }
}

/* Element (i, j) of op(L), L lower. */
static double lower(const double *l, size_t ld, bool t, size_t i, size_t j)
{
    if (t) {
        size_t s = i;
        i = j;
        j = s;
    }
    return j <= i ? l[i * ld + j] : 0.0;
}

void ref_trsm(bool right, bool tl, size_t m, size_t n, double alpha, const double *l, size_t ldl,
              double *b, size_t ldb)
{
    const size_t s = right ? n : m;
    double *x = malloc(s * sizeof *x);
    /* Each column (left) or row (right) of B is one triangular system; op(L) is lower when
     * tl is false (solve forwards), upper when true (backwards). For right-side solves,
     * X op(L) = B is op(L)^T x^T = b^T. */
    const bool t = right ? !tl : tl;
    for (size_t v = 0; v < (right ? m : n); v++) {
        for (size_t i = 0; i < s; i++) x[i] = alpha * (right ? b[v * ldb + i] : b[i * ldb + v]);
        if (!t)
            for (size_t i = 0; i < s; i++) {
                for (size_t q = 0; q < i; q++) x[i] -= lower(l, ldl, t, i, q) * x[q];
                x[i] /= lower(l, ldl, t, i, i);
            }
        else
            for (size_t i = s; i-- > 0;) {
                for (size_t q = i + 1; q < s; q++) x[i] -= lower(l, ldl, t, i, q) * x[q];
                x[i] /= lower(l, ldl, t, i, i);
            }
        for (size_t i = 0; i < s; i++) *(right ? &b[v * ldb + i] : &b[i * ldb + v]) = x[i];
    }
    free(x);
}

int ref_cholesky(double *a, size_t n, size_t lda, double *logdet)
{
    double ld = 0;
    for (size_t j = 0; j < n; j++) {
        double d = a[j * lda + j];
        for (size_t k = 0; k < j; k++) d -= a[j * lda + k] * a[j * lda + k];
        if (!(d > 0)) {
            *logdet = NAN;
            return (int)j + 1;
        }
        a[j * lda + j] = sqrt(d);
        ld += 2 * log(a[j * lda + j]);
        for (size_t i = j + 1; i < n; i++) {
            double s = a[i * lda + j];
            for (size_t k = 0; k < j; k++) s -= a[i * lda + k] * a[j * lda + k];
            a[i * lda + j] = s / a[j * lda + j];
        }
    }
    *logdet = ld;
    return 0;
}

void ref_spd(double *a, size_t n, unsigned long long seed)
{
    double *b = malloc(n * n * sizeof *b);
    uint64_t s = seed;
    for (size_t i = 0; i < n * n; i++) {
        s += 0x9e3779b97f4a7c15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        b[i] = (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0 - 0.5;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double v = i == j ? (double)n : 0.0;
            for (size_t q = 0; q < n; q++) v += b[i * n + q] * b[j * n + q];
            a[i * n + j] = v;
        }
    free(b);
}
