/* test_column_ranks.c - batched selection (clstats_column_smallest): the k-th smallest value of
 * each column, any k per column, bit for bit against sorting, and the sum of the k smallest
 * against a sorted sum; ties (small integers), NaNs, -0 and +0, one row, one column, strided
 * rows, float32 and float64, with one work-item a column (CPU devices) and with 256 (GPUs), in
 * one work-group a column and split over blocks of 4096 rows (columns.split); the sums are the
 * same bits in every design. */
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
    /* Up to three blocks of 4096 rows and a part of a fourth, so that the split design's
     * blocks and the sums' block order are met in both designs. */
    static const size_t shapes[][3] = {{1, 1, 1},      {1, 7, 9},    {5, 1, 1},
                                       {37, 13, 15},   {300, 40, 40}, {1000, 3, 4},
                                       {2049, 5, 5},   {4096, 2, 3},  {4097, 1, 1},
                                       {12289, 3, 3}};
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

START_TEST(kth_and_sums_split_columns)
{
    static const char *const wgs[] = {"1", "256"};
    test_tune("columns.split", "on");
    for (int i = 0; i < 2; i++) {
        test_tune("columns.wg", wgs[i]);
        all_shapes();
    }
    test_tune("columns.wg", NULL);
    test_tune("columns.split", NULL);
}
END_TEST

/* The sum below the k-th value is the same bits with 1, 64 and 256 work-items a column, in one
 * work-group a column or split, so that a fit built on it (the LTS objective) does not change
 * with the device's work-group size or the design its shape takes. */
static void sums_at(const char *wg, const char *split, const double *m, size_t rows, size_t cols,
                    const uint64_t *k, double *sum, double *kth)
{
    test_tune("columns.wg", wg);
    test_tune("columns.split", split);
    const struct clstats_array a = {.host = (void *)m, .dtype = CLSTATS_FLOAT64, .nx = cols,
                                    .ny = rows};
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, k, NULL, kth, sum), CLSTATS_OK);
    test_tune("columns.wg", NULL);
    test_tune("columns.split", NULL);
}

static void same_bits(size_t rows, size_t cols)
{
    static const char *const runs[][2] = {{"1", "off"}, {"64", "off"}, {"256", "off"},
                                          {"1", "on"},  {"64", "on"},  {"256", "on"}};
    enum { RUNS = sizeof runs / sizeof runs[0] };
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + rows);
    double *m = malloc(rows * cols * sizeof *m), *s = malloc(RUNS * cols * 8),
           *kth = malloc(RUNS * cols * 8);
    uint64_t *k = malloc(cols * sizeof *k);
    /* Magnitudes spread over many binades, so that a different order of the additions rounds
     * differently. */
    for (size_t i = 0; i < rows * cols; i++)
        m[i] = test_rng_normal(&rng) * exp(10 * test_rng_uniform(&rng));
    for (size_t c = 0; c < cols; c++)
        k[c] = 1 + (rows / 2 + c * (rows / 13)) % rows;
    for (int r = 0; r < RUNS; r++)
        sums_at(runs[r][0], runs[r][1], m, rows, cols, k, s + r * cols, kth + r * cols);
    for (int r = 1; r < RUNS; r++)
        for (size_t c = 0; c < cols; c++)
            ck_assert_msg(memcmp(&s[c], &s[r * cols + c], 8) == 0 &&
                              memcmp(&kth[c], &kth[r * cols + c], 8) == 0,
                          "seed %llu %zu rows col %zu: %.17g (wg 1) but %.17g (wg %s, split %s)",
                          (unsigned long long)test_seed(), rows, c, s[c], s[r * cols + c],
                          runs[r][0], runs[r][1]);
    free(m), free(s), free(kth), free(k);
}

START_TEST(sums_same_bits_at_every_work_group_size)
{
    same_bits(5003, 6);
    same_bits(3 * 4096 + 77, 4);
    same_bits(7, 3);
}
END_TEST

/* The regression's shape: a few columns of 10^5 rows and more, which the automatic choice
 * splits; its sums against a sum in the documented order (blocks of 4096 rows, 256 lanes). */
START_TEST(long_columns_sum_in_block_order)
{
    const size_t rows = 100003, cols = 2;
    struct test_rng rng;
    test_rng_seed(&rng, test_seed());
    double *m = malloc(rows * cols * sizeof *m), *col = malloc(rows * sizeof *col);
    for (size_t i = 0; i < rows * cols; i++) {
        const double r = test_rng_normal(&rng);
        m[i] = r * r * exp(8 * test_rng_uniform(&rng)); /* squared residuals, some large */
    }
    uint64_t k[2] = {rows / 2 + 1, rows - 3};
    double kth[2], sum[2];
    const struct clstats_array a = {.host = m, .dtype = CLSTATS_FLOAT64, .nx = cols, .ny = rows};
    ck_assert_int_eq(clstats_column_smallest(test_ctx(), &a, k, NULL, kth, sum), CLSTATS_OK);
    for (size_t c = 0; c < cols; c++) {
        for (size_t r = 0; r < rows; r++) col[r] = m[r * cols + c];
        qsort(col, rows, sizeof *col, cmp_d);
        const double t = col[k[c] - 1];
        ck_assert(memcmp(&kth[c], &t, 8) == 0);
        size_t below = 0;
        double total = 0;
        for (size_t from = 0; from < rows; from += 4096) {
            double lanes[256] = {0}, block = 0;
            for (size_t r = from; r < rows && r < from + 4096; r++)
                if (m[r * cols + c] < t) lanes[r % 256] += m[r * cols + c], below++;
            for (int j = 0; j < 256; j++) block += lanes[j];
            total += block;
        }
        const double want = total + (double)(k[c] - below) * t;
        ck_assert_msg(memcmp(&sum[c], &want, 8) == 0, "col %zu: %.17g, want %.17g", c, sum[c],
                      want);
    }
    free(m), free(col);
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
    tcase_add_test(tc, kth_and_sums_split_columns);
    tcase_add_test(tc, sums_same_bits_at_every_work_group_size);
    tcase_add_test(tc, long_columns_sum_in_block_order);
    tcase_add_test(tc, ties_take_their_multiplicity);
    tcase_add_test(tc, bad_k_and_nan_error);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
