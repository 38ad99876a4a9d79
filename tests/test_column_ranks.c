/* test_column_ranks.c - batched selection (clstats_column_smallest): the k-th smallest value of
 * each column, any k per column, bit for bit against sorting, and the sum of the k smallest
 * against a sorted sum; ties (small integers), NaNs, -0 and +0, one row, one column, strided
 * rows, float32 and float64, with one work-item a column (CPU devices) and with 256 (GPUs). */
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    /* -0 below +0, as the library's keys order them */
    if (x == y) return signbit(y) - signbit(x);
    return x < y ? -1 : 1;
}

/* kinds: 0 uniform, 1 small integers (many ties), 2 integers with NaNs and signed zeros */
static double value(struct test_rng *rng, int kind)
{
    const double u = test_rng_uniform(rng);
    if (kind == 0) return test_rng_normal(rng) * 1e3;
    if (kind == 1) return (double)(int)(u * 5) - 2;
    if (u < 0.15) return NAN;
    if (u < 0.25) return u < 0.2 ? -0.0 : 0.0;
    return (double)(int)(u * 7) - 3;
}

static void check_shape(size_t rows, size_t cols, size_t ld, bool f64, int kind, uint64_t seed)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    double *m = malloc(rows * ld * sizeof *m), *col = malloc(rows * sizeof *col);
    float *m32 = malloc(rows * ld * sizeof *m32);
    for (size_t i = 0; i < rows * ld; i++) {
        m[i] = value(&rng, kind);
        m32[i] = (float)m[i];
        if (!f64) m[i] = m32[i];
    }
    uint64_t *k = malloc(cols * sizeof *k);
    double *kth = malloc(cols * 8), *sum = malloc(cols * 8);
    for (size_t c = 0; c < cols; c++) {
        size_t nv = 0;
        for (size_t r = 0; r < rows; r++) nv += !isnan(m[r * ld + c]);
        k[c] = nv ? 1 + test_rng_next(&rng) % nv : 1;
        if (c == 0 && nv) k[c] = nv; /* the largest */
        if (c == 1 && nv) k[c] = 1;  /* the smallest */
    }
    struct clstats_array a = {.host = f64 ? (void *)m : (void *)m32,
                              .dtype = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32,
                              .nx = cols,
                              .ny = rows,
                              .stride = ld};
    uint64_t nan = 0;
    struct clstats_select_options o = {.nan_count = &nan};
    const int st = clstats_column_smallest(test_ctx(), &a, k, &o, kth, sum);
    size_t empty = 0;
    for (size_t c = 0; c < cols; c++) {
        size_t nv = 0;
        for (size_t r = 0; r < rows; r++)
            if (!isnan(m[r * ld + c])) col[nv++] = m[r * ld + c];
        if (nv == 0) {
            empty++;
            ck_assert(isnan(kth[c]) && isnan(sum[c]));
            continue;
        }
        qsort(col, nv, sizeof *col, cmp_d);
        double want = col[k[c] - 1], s = 0, scale = 0;
        if (want == 0) want = 0.0; /* +0 */
        for (size_t i = 0; i < k[c]; i++) s += col[i], scale += fabs(col[i]);
        ck_assert_msg(memcmp(&kth[c], &want, 8) == 0,
                      "%zux%zu f64 %d kind %d col %zu k %llu: %g, want %g", rows, cols, f64, kind,
                      c, (unsigned long long)k[c], kth[c], want);
        ck_assert_msg(fabs(sum[c] - s) <= (f64 ? 1e-12 : 1e-5) * (1 + scale),
                      "col %zu sum of %llu: %.17g, want %.17g", c, (unsigned long long)k[c],
                      sum[c], s);
    }
    ck_assert_int_eq(st, empty ? CLSTATS_ERR_EMPTY : CLSTATS_OK);
    free(m), free(m32), free(col), free(k), free(kth), free(sum);
}

static void all_shapes(void)
{
    static const size_t shapes[][3] = {{1, 1, 1},   {1, 7, 9},    {5, 1, 1},   {37, 13, 15},
                                       {300, 40, 40}, {1000, 3, 4}, {2049, 5, 5}};
    for (int f = 0; f < 2; f++)
        for (int kind = 0; kind < 3; kind++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                check_shape(shapes[s][0], shapes[s][1], shapes[s][2], f, kind,
                            test_seed() + 100 * s + kind);
}

START_TEST(kth_and_sums_one_item_a_column)
{
    test_tune("columns.wg", "1");
    all_shapes();
    test_tune("columns.wg", NULL);
}
END_TEST

START_TEST(kth_and_sums_256_items_a_column)
{
    test_tune("columns.wg", "256");
    all_shapes();
    test_tune("columns.wg", NULL);
}
END_TEST

/* The sum below the k-th value is the same bits with 1, 64 and 256 work-items a column, so a fit
 * built on it (the LTS objective) does not change with the device's work-group size. */
static void sums_at(const char *wg, const double *m, size_t rows, size_t cols, const uint64_t *k,
                    double *sum)
{
    double *kth = malloc(cols * sizeof *kth);
    test_tune("columns.wg", wg);
    const struct clstats_array a = {.host = (void *)m, .dtype = CLSTATS_FLOAT64, .nx = cols,
                                    .ny = rows};
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, k, NULL, kth, sum), CLSTATS_OK);
    test_tune("columns.wg", NULL);
    free(kth);
}

START_TEST(sums_same_bits_at_every_work_group_size)
{
    const size_t rows = 5003, cols = 6;
    struct test_rng rng;
    test_rng_seed(&rng, test_seed());
    double *m = malloc(rows * cols * sizeof *m), *s1 = malloc(cols * 8), *s64 = malloc(cols * 8),
           *s256 = malloc(cols * 8);
    uint64_t k[6];
    /* Magnitudes spread over many binades, so that a different order of the additions rounds
     * differently. */
    for (size_t i = 0; i < rows * cols; i++)
        m[i] = test_rng_normal(&rng) * exp(10 * test_rng_uniform(&rng));
    for (size_t c = 0; c < cols; c++)
        k[c] = rows / 2 + c * 400;
    sums_at("1", m, rows, cols, k, s1);
    sums_at("64", m, rows, cols, k, s64);
    sums_at("256", m, rows, cols, k, s256);
    for (size_t c = 0; c < cols; c++)
        ck_assert_msg(memcmp(&s1[c], &s256[c], 8) == 0 && memcmp(&s64[c], &s256[c], 8) == 0,
                      "seed %llu col %zu: %.17g (1), %.17g (64), %.17g (256)",
                      (unsigned long long)test_seed(), c, s1[c], s64[c], s256[c]);
    free(m), free(s1), free(s64), free(s256);
}
END_TEST

START_TEST(ties_take_their_multiplicity)
{
    /* 2 2 2 2 1 and k = 3: t = 2, one value below; the sum is 1 + 2 + 2. */
    const double m[5] = {2, 2, 2, 2, 1};
    struct clstats_array a = {.host = (void *)m, .dtype = CLSTATS_FLOAT64, .nx = 1, .ny = 5};
    uint64_t k = 3;
    double kth, sum;
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, &k, NULL, &kth, &sum), CLSTATS_OK);
    ck_assert(kth == 2 && sum == 5);
}
END_TEST

START_TEST(bad_k_and_nan_error)
{
    const double m[4] = {1, NAN, 3, 4};
    struct clstats_array a = {.host = (void *)m, .dtype = CLSTATS_FLOAT64, .nx = 2, .ny = 2};
    uint64_t k[2] = {0, 1};
    double kth[2], sum[2];
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, k, NULL, kth, sum), CLSTATS_ERR_ARG);
    k[0] = 3;
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, k, NULL, kth, sum), CLSTATS_ERR_ARG);
    k[0] = 2;
    struct clstats_select_options o = {.nan_policy = CLSTATS_NAN_ERROR};
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, k, &o, kth, sum), CLSTATS_ERR_NAN);
    /* column 1 has one valid value: k 2 is too many */
    k[1] = 2;
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, k, NULL, kth, sum), CLSTATS_ERR_EMPTY);
    ck_assert(kth[0] == 3 && isnan(kth[1]));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("column_ranks");
    TCase *tc = tcase_create("column_ranks");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, kth_and_sums_one_item_a_column);
    tcase_add_test(tc, kth_and_sums_256_items_a_column);
    tcase_add_test(tc, sums_same_bits_at_every_work_group_size);
    tcase_add_test(tc, ties_take_their_multiplicity);
    tcase_add_test(tc, bad_k_and_nan_error);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
