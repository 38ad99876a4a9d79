/* column_cases.c - the hard columns the sample paths' suites share (column_cases.h). */
#include "column_cases.h"
#include "reference_select.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

float *column_cases_matrix(size_t rows, size_t cols, size_t ld, uint64_t salt)
{
    struct test_rng r;
    test_rng_seed(&r, test_seed() + salt);
    float *m = malloc(rows * ld * sizeof *m);
    for (size_t i = 0; i < rows * ld; i++)
        m[i] = (float)(test_rng_uniform(&r) < 0.9 ? test_rng_normal(&r) : 50 * test_rng_normal(&r));
    for (size_t y = 0; y < rows; y++) {
        float *row = m + y * ld;
        /* The random value the row already has in column c, where the row has one. */
#define RANDOM_AT(c) ((c) < ld ? row[c] : 0.0f)
        const float special[12] = {
            (float)(y % 3),                     /* three values: ranks at the boundaries */
            y % 5 == 0 ? NAN : RANDOM_AT(1),    /* some NaN */
            NAN,                                /* all NaN */
            y % 2 ? INFINITY : -RANDOM_AT(3),   /* half +inf */
            7.5f,                               /* constant */
            1024.0f + (float)(y % 7) * 0.125f,  /* keys sharing a long prefix */
            y % 3 ? -0.0f : 0.0f,               /* signed zeros */
            (float)(y % 100),                   /* integers 0..99 */
            y % 97 == 0 ? (float)y : NAN,       /* a few numbers among NaNs */
            (float)y,                           /* sorted */
            -(float)y,                          /* reverse sorted */
            y % 4 == 0 ? 1e30f : RANDOM_AT(11), /* a quarter huge */
        };
        for (size_t c = 0; c < cols && c < 12; c++)
            row[c] = special[c];
#undef RANDOM_AT
    }
    return m;
}

float *column_cases_normal(size_t rows, size_t cols, uint64_t salt)
{
    float *m = malloc(rows * cols * sizeof *m);
    ck_assert_ptr_nonnull(m);
    struct test_rng r;
    test_rng_seed(&r, test_seed() + salt);
    for (size_t i = 0; i < rows * cols; i++)
        m[i] = (float)test_rng_normal(&r);
    return m;
}

void column_cases_check(const float *m, size_t rows, size_t cols, size_t ld, const char *what)
{
    float *got = malloc(cols * sizeof *got), *want = malloc(cols * sizeof *want);
    for (int e = 0; e < 3; e++) {
        struct clstats_select_options o = {.even = (enum clstats_even)e};
        ck_assert_msg(clstats_column_medians(test_ctx(), m, rows, cols, ld, &o, got) == CLSTATS_OK,
                      "%s: %s", what, clstats_ctx_message(test_ctx()));
        ref_column_medians(m, rows, cols, ld, o.even, want);
        ck_assert_msg(test_compare_bits(got, want, cols, cols, what) == 0, "%s, even=%d", what, e);
    }
    free(got);
    free(want);
}

void column_cases_check_buffer(const char *what, uint64_t salt)
{
    const size_t rows = 3001, cols = 45, ld = 50, off = 77;
    float *m = column_cases_matrix(rows + 2, ld, ld, salt); /* some slack for the offset */
    float *got = malloc(cols * sizeof *got), *want = malloc(cols * sizeof *want);
    ref_column_medians(m + off, rows, cols, ld, CLSTATS_EVEN_MEAN, want);
    cl_int err;
    cl_mem buf =
        clCreateBuffer(clstats_ctx_cl_context(test_ctx()), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                       (rows + 2) * ld * sizeof *m, m, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clstats_column_medians_buffer(test_ctx(), buf, off, rows, cols, ld, NULL, got),
                     CLSTATS_OK);
    ck_assert_uint_eq(test_compare_bits(got, want, cols, cols, what), 0);
    clReleaseMemObject(buf);
    free(got);
    free(want);
    free(m);
}

struct column_bracket_report column_cases_run_path(clstats__column_path path, const float *m,
                                                   size_t rows, size_t cols)
{
    clstats_ctx *ctx = test_ctx();
    cl_int err;
    cl_mem buf =
        clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                       rows * cols * sizeof *m, (void *)m, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_uint *keys = malloc(3 * cols * sizeof *keys);
    bool *missed = malloc(cols * sizeof *missed);
    float *col = malloc(rows * sizeof *col);
    struct column_bracket_report report;
    ck_assert_int_eq(path(ctx, buf, 0, rows, cols, cols, keys, missed, &report, NULL), CLSTATS_OK);
    for (size_t c = 0; c < cols; c++) {
        if (missed[c]) continue;
        for (size_t y = 0; y < rows; y++)
            col[y] = m[y * cols + c];
        size_t nv;
        float *s = ref_sorted_f32(col, rows, &nv);
        ck_assert_uint_eq(keys[3 * c + 2], rows - nv);
        for (int h = 0; nv && h < 2; h++) {
            const float got = (float)clstats__value_of_key(keys[3 * c + h], false);
            const float want = s[h ? nv / 2 : (nv - 1) / 2];
            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0,
                          "column %zu: key %d %.9g, want %.9g", c, h, got, want);
        }
        free(s);
    }
    clReleaseMemObject(buf);
    free(col);
    free(missed);
    free(keys);
    return report;
}
