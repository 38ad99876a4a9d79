/* test_linalg.c - the linear-algebra layer (include/clstats/linalg.h) against the plain loops of
 * tests/reference_linalg.c: CLBlast's GEMM, batched GEMM, SYRK, TRSM and GEMV as wrapped, and our
 * Cholesky kernels, on odd shapes, offsets and row strides, float32 (relative error below
 * 1e-4 of the operands' scale) and float64 (below 1e-11). */
#include "reference_linalg.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL32 1e-4
#define TOL64 1e-11
#ifndef TRSM_M
#define TRSM_M 37
#endif
#ifndef GARBAGE
#define GARBAGE 1e30
#endif

/* A device buffer holding host[0..count) as the dtype, with `pad` elements before it. */
static cl_mem upload(const double *host, size_t count, bool f64, size_t pad)
{
    const size_t es = f64 ? 8 : 4, total = count + pad;
    unsigned char *raw = calloc(total ? total : 1, es);
    for (size_t i = 0; i < count; i++) {
        if (f64)
            ((double *)raw)[pad + i] = host[i];
        else
            ((float *)raw)[pad + i] = (float)host[i];
    }
    cl_int err;
    cl_mem m = clCreateBuffer(clstats_ctx_cl_context(test_ctx()),
                              CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, total * es, raw, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    free(raw);
    return m;
}

static void download(cl_mem m, double *host, size_t count, bool f64, size_t pad)
{
    const size_t es = f64 ? 8 : 4;
    unsigned char *raw = malloc((count + pad) * es);
    ck_assert_int_eq(clEnqueueReadBuffer(clstats_ctx_cl_queue(test_ctx()), m, CL_TRUE, 0,
                                         (count + pad) * es, raw, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t i = 0; i < count; i++)
        host[i] = f64 ? ((double *)raw)[pad + i] : (double)((float *)raw)[pad + i];
    free(raw);
}

static struct clstats_array arr(cl_mem m, size_t pad, bool f64, size_t rows, size_t cols,
                                size_t ld)
{
    return (struct clstats_array){.buffer = m,
                                  .offset = pad,
                                  .dtype = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32,
                                  .nx = cols,
                                  .ny = rows,
                                  .stride = ld};
}

static void fill(double *x, size_t n, struct test_rng *rng)
{
    for (size_t i = 0; i < n; i++) x[i] = test_rng_uniform(rng) * 2 - 1;
}

/* max |got - want| / (1 + max |want|) over n values. */
static double rel_err(const double *got, const double *want, size_t n)
{
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs(got[i] - want[i]));
        s = fmax(s, fabs(want[i]));
        if (isnan(got[i]) != isnan(want[i])) return INFINITY;
    }
    return e / (1 + s);
}

static const size_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 17, 65}, {64, 64, 64}, {3, 90, 2}};

START_TEST(gemm_matches_reference)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 1);
    for (int f = 0; f < 2; f++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 4; t++) {
                const bool f64 = f, ta = t & 1, tb = t & 2;
                const size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                const size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
                const size_t lda = ac + 3, ldb = bc + 1, ldc = n + 2, pad = 5;
                double *a = malloc(ar * lda * 8), *b = malloc(br * ldb * 8),
                       *c = malloc(m * ldc * 8), *got = malloc(m * ldc * 8);
                fill(a, ar * lda, &rng);
                fill(b, br * ldb, &rng);
                fill(c, m * ldc, &rng);
                cl_mem da = upload(a, ar * lda, f64, pad), db = upload(b, br * ldb, f64, 0),
                       dc = upload(c, m * ldc, f64, pad);
                struct clstats_array A = arr(da, pad, f64, ar, ac, lda),
                                     B = arr(db, 0, f64, br, bc, ldb),
                                     C = arr(dc, pad, f64, m, n, ldc);
                int st = clstats_gemm(test_ctx(), ta ? CLSTATS_OP_T : CLSTATS_OP_N,
                                      tb ? CLSTATS_OP_T : CLSTATS_OP_N, 1.5, &A, &B, -0.5, &C);
                ck_assert_msg(st == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
                download(dc, got, m * ldc, f64, pad);
                ref_gemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, -0.5, c, ldc);
                const double e = rel_err(got, c, m * ldc);
                ck_assert_msg(e < (f64 ? TOL64 : TOL32), "gemm %zux%zux%zu t%d f64 %d: error %g",
                              m, n, k, t, f, e);
                clReleaseMemObject(da);
                clReleaseMemObject(db);
                clReleaseMemObject(dc);
                free(a), free(b), free(c), free(got);
            }
}
END_TEST

START_TEST(gemm_batched_matches_reference)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 2);
    for (int f = 0; f < 2; f++) {
        const bool f64 = f;
        const size_t m = 5, n = 3, k = 7, count = 9, as = m * k + 4, bs = k * n, cs = m * n + 1;
        double *a = malloc(count * as * 8), *b = malloc(count * bs * 8), *c = malloc(count * cs * 8),
               *got = malloc(count * cs * 8);
        fill(a, count * as, &rng);
        fill(b, count * bs, &rng);
        fill(c, count * cs, &rng);
        cl_mem da = upload(a, count * as, f64, 0), db = upload(b, count * bs, f64, 0),
               dc = upload(c, count * cs, f64, 0);
        struct clstats_array A = arr(da, 0, f64, m, k, k), B = arr(db, 0, f64, k, n, n),
                             C = arr(dc, 0, f64, m, n, n);
        int st = clstats_gemm_batched(test_ctx(), CLSTATS_OP_N, CLSTATS_OP_N, 1.0, &A, as, &B, bs,
                                      1.0, &C, cs, count);
        ck_assert_msg(st == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
        download(dc, got, count * cs, f64, 0);
        for (size_t i = 0; i < count; i++)
            ref_gemm(false, false, m, n, k, 1.0, a + i * as, k, b + i * bs, n, 1.0, c + i * cs, n);
        const double e = rel_err(got, c, count * cs);
        ck_assert_msg(e < (f64 ? TOL64 : TOL32), "batched gemm f64 %d: error %g", f, e);
        clReleaseMemObject(da), clReleaseMemObject(db), clReleaseMemObject(dc);
        free(a), free(b), free(c), free(got);
    }
}
END_TEST

START_TEST(syrk_fills_lower_triangle_only)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 3);
    for (int f = 0; f < 2; f++)
        for (int t = 0; t < 2; t++) {
            const bool f64 = f, ta = t;
            const size_t n = 19, k = 40, ar = ta ? k : n, ac = ta ? n : k, ldc = n + 1;
            double *a = malloc(ar * ac * 8), *c = malloc(n * ldc * 8), *got = malloc(n * ldc * 8);
            fill(a, ar * ac, &rng);
            fill(c, n * ldc, &rng);
            cl_mem da = upload(a, ar * ac, f64, 0), dc = upload(c, n * ldc, f64, 0);
            struct clstats_array A = arr(da, 0, f64, ar, ac, ac), C = arr(dc, 0, f64, n, n, ldc);
            int st = clstats_syrk(test_ctx(), ta ? CLSTATS_OP_T : CLSTATS_OP_N, 2.0, &A, 0.5, &C);
            ck_assert_msg(st == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
            download(dc, got, n * ldc, f64, 0);
            ref_syrk(ta, n, k, 2.0, a, ac, 0.5, c, ldc);
            const double e = rel_err(got, c, n * ldc); /* the upper part: unchanged */
            ck_assert_msg(e < (f64 ? TOL64 : TOL32), "syrk t%d f64 %d: error %g", t, f, e);
            clReleaseMemObject(da), clReleaseMemObject(dc);
            free(a), free(c), free(got);
        }
}
END_TEST

START_TEST(trsm_solves_each_side)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 4);
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 4; v++) {
            const bool f64 = f, right = v & 1, tl = v & 2;
            const size_t m = TRSM_M, n = 11, s = right ? n : m, lds = s + 2, pad = 3;
            double *l = malloc(s * lds * 8), *b = malloc(m * n * 8), *got = malloc(m * n * 8);
            fill(l, s * lds, &rng);
            for (size_t i = 0; i < s; i++) l[i * lds + i] = 2 + fabs(l[i * lds + i]);
            fill(b, m * n, &rng);
            cl_mem dl = upload(l, s * lds, f64, pad), db = upload(b, m * n, f64, 0);
            struct clstats_array L = arr(dl, pad, f64, s, s, lds), B = arr(db, 0, f64, m, n, n);
            int st = clstats_trsm(test_ctx(), right, tl ? CLSTATS_OP_T : CLSTATS_OP_N, 0.75, &L,
                                  &B);
            ck_assert_msg(st == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
            download(db, got, m * n, f64, 0);
            ref_trsm(right, tl, m, n, 0.75, l, lds, b, n);
            const double e = rel_err(got, b, m * n);
            ck_assert_msg(e < (f64 ? TOL64 : TOL32), "trsm right %d t %d f64 %d: error %g", right,
                          tl, f, e);
            clReleaseMemObject(dl), clReleaseMemObject(db);
            free(l), free(b), free(got);
        }
}
END_TEST

START_TEST(gemv_matches_reference)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 5);
    for (int f = 0; f < 2; f++)
        for (int t = 0; t < 2; t++) {
            const bool f64 = f, ta = t;
            const size_t m = 23, n = 9, xl = ta ? m : n, yl = ta ? n : m;
            double *a = malloc(m * n * 8), *x = malloc(xl * 8), *y = malloc(yl * 8),
                   *got = malloc(yl * 8);
            fill(a, m * n, &rng), fill(x, xl, &rng), fill(y, yl, &rng);
            cl_mem da = upload(a, m * n, f64, 0), dx = upload(x, xl, f64, 2),
                   dy = upload(y, yl, f64, 1);
            struct clstats_array A = arr(da, 0, f64, m, n, n), X = arr(dx, 2, f64, 1, xl, 0),
                                 Y = arr(dy, 1, f64, 1, yl, 0);
            int st = clstats_gemv(test_ctx(), ta ? CLSTATS_OP_T : CLSTATS_OP_N, -1.0, &A, &X, 2.0,
                                  &Y);
            ck_assert_msg(st == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
            download(dy, got, yl, f64, 1);
            ref_gemm(ta, false, yl, 1, xl, -1.0, a, n, x, 1, 2.0, y, 1);
            const double e = rel_err(got, y, yl);
            ck_assert_msg(e < (f64 ? TOL64 : TOL32), "gemv t%d f64 %d: error %g", t, f, e);
            clReleaseMemObject(da), clReleaseMemObject(dx), clReleaseMemObject(dy);
            free(a), free(x), free(y), free(got);
        }
}
END_TEST

/* Many small factorisations, one of them not positive definite (info set, others intact);
 * from 32 rows a work-group a matrix (33, 70). */
START_TEST(cholesky_batched_flags_bad_matrices)
{
    const size_t sizes[] = {1, 2, 5, 11, 20, 33, 70};
    for (int f = 0; f < 2; f++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const bool f64 = f;
            const size_t p = sizes[si], count = 70;
            double *a = malloc(count * p * p * 8), *got = malloc(count * p * p * 8);
            for (size_t i = 0; i < count; i++) ref_spd(a + i * p * p, p, test_seed() + i);
            a[3 * p * p + (p - 1) * p + (p - 1)] = -1.0; /* matrix 3: last pivot negative */
            cl_mem da = upload(a, count * p * p, f64, 0);
            struct clstats_array A = arr(da, 0, f64, count * p, p, p);
            int32_t *info = malloc(count * sizeof *info);
            double *ld = malloc(count * 8);
            int st = clstats_cholesky_batched(test_ctx(), &A, count, info, ld);
            ck_assert_msg(st == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
            download(da, got, count * p * p, f64, 0);
            for (size_t i = 0; i < count; i++) {
                double want_ld;
                const int bad = ref_cholesky(a + i * p * p, p, p, &want_ld);
                ck_assert_int_eq(info[i], bad);
                ck_assert_int_eq(bad != 0, i == 3);
                if (bad) {
                    ck_assert(isnan(ld[i]));
                    continue;
                }
                for (size_t r = 0; r < p; r++)
                    for (size_t c = 0; c <= r; c++) {
                        const double w = a[i * p * p + r * p + c], g = got[i * p * p + r * p + c];
                        ck_assert_msg(fabs(g - w) <= (f64 ? TOL64 : TOL32) * (1 + fabs(w)),
                                      "p %zu matrix %zu (%zu,%zu): %g vs %g", p, i, r, c, g, w);
                    }
                ck_assert(fabs(ld[i] - want_ld) <= (f64 ? TOL64 : TOL32) * (1 + fabs(want_ld)));
            }
            clReleaseMemObject(da);
            free(a), free(got), free(info), free(ld);
        }
}
END_TEST

START_TEST(cholesky_solve_batched_several_rhs)
{
    for (int f = 0; f < 2; f++) {
        const bool f64 = f;
        const size_t p = 7, count = 13, nrhs = 3;
        double *a = malloc(count * p * p * 8), *b = malloc(count * p * nrhs * 8),
               *x = malloc(count * p * nrhs * 8);
        struct test_rng rng;
        test_rng_seed(&rng, test_seed() + 6);
        for (size_t i = 0; i < count; i++) ref_spd(a + i * p * p, p, test_seed() + 7 * i);
        fill(b, count * p * nrhs, &rng);
        cl_mem da = upload(a, count * p * p, f64, 0), db = upload(b, count * p * nrhs, f64, 0);
        struct clstats_array A = arr(da, 0, f64, count * p, p, p),
                             B = arr(db, 0, f64, count * p, nrhs, nrhs);
        int32_t info[13];
        ck_assert_int_eq(clstats_cholesky_batched(test_ctx(), &A, count, info, NULL), CLSTATS_OK);
        ck_assert_int_eq(clstats_cholesky_solve_batched(test_ctx(), &A, &B, count), CLSTATS_OK);
        download(db, x, count * p * nrhs, f64, 0);
        /* A x must give back b. */
        for (size_t i = 0; i < count; i++) {
            double *back = malloc(p * nrhs * 8);
            ref_gemm(false, false, p, nrhs, p, 1.0, a + i * p * p, p, x + i * p * nrhs, nrhs, 0.0,
                     back, nrhs);
            const double e = rel_err(back, b + i * p * nrhs, p * nrhs);
            ck_assert_msg(e < (f64 ? 1e-10 : 1e-3), "system %zu: residual %g", i, e);
            free(back);
        }
        clReleaseMemObject(da), clReleaseMemObject(db);
        free(a), free(b), free(x);
    }
}
END_TEST

/* The blocked factorisation: sizes below, at and across the 64-row block, a row stride and an
 * offset; then solves with several right-hand sides through the factor. */
START_TEST(cholesky_blocked_and_solve)
{
    const size_t sizes[] = {1, 31, 32, 33, 63, 64, 65, 97, 130, 200};
    /* Block and panel by substitution (CPU devices), in one launch through the block's
     * inverse, and each block factored inside the update before it (GPUs). */
    const char *steps[] = {"solve", "inverse", "ahead"};
    for (int f = 0; f < 6; f++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const bool f64 = f % 2;
            test_tune("linalg.potrf_step", steps[f / 2]);
            const size_t n = sizes[si], ld = n + 3, pad = 2, nrhs = 4;
            double *spd = malloc(n * n * 8), *a = malloc(n * ld * 8), *got = malloc(n * ld * 8);
            ref_spd(spd, n, test_seed() + n);
            for (size_t i = 0; i < n * ld; i++) a[i] = GARBAGE; /* never read: upper and padding */
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j <= i; j++) a[i * ld + j] = spd[i * n + j];
            cl_mem da = upload(a, n * ld, f64, pad);
            struct clstats_array A = arr(da, pad, f64, n, n, ld);
            double logdet;
            size_t bad = 99;
            int st = clstats_cholesky(test_ctx(), &A, &logdet, &bad);
            test_tune("linalg.potrf_step", NULL);
            ck_assert_msg(st == CLSTATS_OK, "n %zu %s: %s", n, steps[f / 2],
                          clstats_ctx_message(test_ctx()));
            download(da, got, n * ld, f64, pad);
            double want_ld;
            ck_assert_int_eq(ref_cholesky(a, n, ld, &want_ld), 0);
            const double tol = f64 ? TOL64 : 1e-3;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < ld; j++)
                    ck_assert_msg(fabs(got[i * ld + j] - a[i * ld + j]) <=
                                      tol * (1 + fabs(a[i * ld + j])),
                                  "n %zu (%zu,%zu): %g vs %g", n, i, j, got[i * ld + j],
                                  a[i * ld + j]);
            ck_assert_msg(fabs(logdet - want_ld) <= tol * fabs(want_ld), "logdet %g vs %g",
                          logdet, want_ld);
            double *b = malloc(n * nrhs * 8), *x = malloc(n * nrhs * 8), *back = malloc(n * nrhs * 8);
            struct test_rng rng;
            test_rng_seed(&rng, test_seed() + 8);
            fill(b, n * nrhs, &rng);
            cl_mem db = upload(b, n * nrhs, f64, 0);
            struct clstats_array B = arr(db, 0, f64, n, nrhs, nrhs);
            ck_assert_int_eq(clstats_cholesky_solve(test_ctx(), &A, &B), CLSTATS_OK);
            download(db, x, n * nrhs, f64, 0);
            ref_gemm(false, false, n, nrhs, n, 1.0, spd, n, x, nrhs, 0.0, back, nrhs);
            const double e = rel_err(back, b, n * nrhs);
            ck_assert_msg(e < (f64 ? 1e-10 : 1e-3), "n %zu: solve residual %g", n, e);
            clReleaseMemObject(da), clReleaseMemObject(db);
            free(spd), free(a), free(got), free(b), free(x), free(back);
        }
}
END_TEST

/* The look-ahead design factors each block and forms each panel by the inverse design's
 * operations (the update's tile subtracted in the same order), so the same bits, in float and
 * double, across whole, partial and single blocks. */
START_TEST(cholesky_ahead_gives_the_inverse_designs_bits)
{
    const size_t sizes[] = {1, 40, 64, 65, 130, 200};
    for (int f = 0; f < 2; f++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const bool f64 = f;
            const size_t n = sizes[si];
            double *a = malloc(n * n * 8), *got[2] = {malloc(n * n * 8), malloc(n * n * 8)};
            double ld[2];
            ref_spd(a, n, test_seed() + 3 * n);
            const char *steps[] = {"inverse", "ahead"};
            for (int s = 0; s < 2; s++) {
                cl_mem da = upload(a, n * n, f64, 0);
                struct clstats_array A = arr(da, 0, f64, n, n, n);
                size_t bad = 99;
                test_tune("linalg.potrf_step", steps[s]);
                const int st = clstats_cholesky(test_ctx(), &A, &ld[s], &bad);
                test_tune("linalg.potrf_step", NULL);
                ck_assert_msg(st == CLSTATS_OK, "n %zu %s: %s", n, steps[s],
                              clstats_ctx_message(test_ctx()));
                download(da, got[s], n * n, f64, 0);
                clReleaseMemObject(da);
            }
            ck_assert_msg(memcmp(got[0], got[1], n * n * 8) == 0, "n %zu f64 %d: factors differ",
                          n, f64);
            ck_assert_msg(memcmp(&ld[0], &ld[1], sizeof ld[0]) == 0, "n %zu: logdet %.17g vs %.17g",
                          n, ld[0], ld[1]);
            free(a), free(got[0]), free(got[1]);
        }
}
END_TEST

START_TEST(cholesky_reports_the_bad_row)
{
    const char *steps[] = {"solve", "inverse", "ahead"};
    for (int s = 0; s < 3; s++) {
        test_tune("linalg.potrf_step", steps[s]);
        const size_t n = 70;
        double *a = malloc(n * n * 8);
        ref_spd(a, n, 5);
        a[45 * n + 45] = -5; /* in the second block, as the first blocks leave it */
        cl_mem da = upload(a, n * n, true, 0);
        struct clstats_array A = arr(da, 0, true, n, n, n);
        size_t bad = 0;
        double ld = 0;
        ck_assert_int_eq(clstats_cholesky(test_ctx(), &A, &ld, &bad), CLSTATS_ERR_SINGULAR);
        ck_assert_uint_eq(bad, 45);
        ck_assert(isnan(ld));
        clReleaseMemObject(da);
        free(a);
    }
    test_tune("linalg.potrf_step", NULL);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    double h[16] = {0};
    cl_mem d = upload(h, 16, true, 0), s = upload(h, 16, false, 0);
    struct clstats_array A = arr(d, 0, true, 4, 4, 4), F = arr(s, 0, false, 4, 4, 4),
                         H = {.host = h, .dtype = CLSTATS_FLOAT64, .nx = 4, .ny = 4},
                         W = arr(d, 0, true, 3, 5, 5);
    ck_assert_int_eq(clstats_gemm(test_ctx(), 0, 0, 1, &A, &H, 0, &A), CLSTATS_ERR_ARG);
    ck_assert(strstr(clstats_ctx_message(test_ctx()), "host memory"));
    ck_assert_int_eq(clstats_gemm(test_ctx(), 0, 0, 1, &A, &F, 0, &A), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_gemm(test_ctx(), 0, 0, 1, &A, &W, 0, &A), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_cholesky(test_ctx(), &W, NULL, NULL), CLSTATS_ERR_ARG);
    int32_t info[2];
    ck_assert_int_eq(clstats_cholesky_batched(test_ctx(), &A, 3, info, NULL), CLSTATS_ERR_ARG);
    struct clstats_array past = arr(d, 8, true, 4, 4, 4);
    ck_assert_int_eq(clstats_syrk(test_ctx(), 0, 1, &past, 0, &A), CLSTATS_ERR_ARG);
    clReleaseMemObject(d), clReleaseMemObject(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("linalg");
    TCase *tc = tcase_create("linalg");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, gemm_matches_reference);
    tcase_add_test(tc, gemm_batched_matches_reference);
    tcase_add_test(tc, syrk_fills_lower_triangle_only);
    tcase_add_test(tc, trsm_solves_each_side);
    tcase_add_test(tc, gemv_matches_reference);
    tcase_add_test(tc, cholesky_batched_flags_bad_matrices);
    tcase_add_test(tc, cholesky_solve_batched_several_rhs);
    tcase_add_test(tc, cholesky_blocked_and_solve);
    tcase_add_test(tc, cholesky_ahead_gives_the_inverse_designs_bits);
    tcase_add_test(tc, cholesky_reports_the_bad_row);
    tcase_add_test(tc, bad_arguments_are_refused);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
