/* test_column_bracket.c - the column medians' bracket path (src/select/select_columns_bracket.c),
 * which GPUs take for long columns, forced here (tuning columns.method=bracket) with small
 * samples so that CI's CPU device runs it on small matrices: its medians against the sorting
 * reference bit for bit, under several shapes of its kernels; what it reports (a miss only
 * costs speed, so no median would show a sample that always missed); and the misses data can
 * force, each of which must still give the right medians through the radix kernel. */
#include "../src/select/select_internal.h"
#include "column_cases.h"
#include "reference_select.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Settings of the path's kernels: sample, sample group, cells, lanes, chunk rows, count
 * groups, finish group. */
struct setting {
    const char *sample, *sample_wg, *cells, *lanes, *chunk, *groups, *finish_wg;
};

static const struct setting settings[] = {
    {"64", "32", "16", "8", "128", "1024", "256"}, /* GPU-like groups */
    {"128", "1", "1", "1", "3", "1", "4"},         /* one cell, one lane, chunks of 3, one slice */
    {"256", "16", "3", "3", "6", "100000", "64"},  /* lanes that do not divide 32, many slices */
    {"32", "16", "256", "4", "32", "64", "32"},    /* more cells than sampled keys */
};
#define NSETTINGS ((int)(sizeof settings / sizeof settings[0]))

static void use(const struct setting *s)
{
    test_tune("columns.method", "bracket");
    test_tune("bracket.sample", s->sample);
    test_tune("bracket.sample_wg", s->sample_wg);
    test_tune("bracket.cells", s->cells);
    test_tune("bracket.lanes", s->lanes);
    test_tune("bracket.chunk", s->chunk);
    test_tune("bracket.groups", s->groups);
    test_tune("bracket.finish_wg", s->finish_wg);
}

static void use_defaults(void)
{
    const char *names[] = {"columns.method", "bracket.sample", "bracket.sample_wg",
                           "bracket.cells",  "bracket.lanes",  "bracket.chunk",
                           "bracket.groups", "bracket.finish_wg", "bracket.finish_cap"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        test_tune(names[i], NULL);
}

/* Whether this device runs the path (src/select/select_columns_bracket.c refuses PoCL 5.0, whose
 * work-group compiler miscounts); if not, says so, and the test has nothing to check. */
static bool path_runs(void)
{
    if (clstats__column_bracket_fits(test_ctx(), 4096, 64)) return true;
    printf("column bracket path refused on %s: nothing to test\n",
           clstats_ctx_device_name(test_ctx()));
    return false;
}

START_TEST(medians_every_setting)
{
    if (!path_runs()) return;
    const size_t shapes[][3] = {{2001, 70, 70}, {1000, 33, 40}, {4097, 12, 13}, {517, 64, 64}};
    for (int t = 0; t < 4 * NSETTINGS; t++) {
        use(&settings[t % NSETTINGS]);
        const size_t *sh = shapes[(t / NSETTINGS + t) % 4];
        float *m = column_cases_matrix(sh[0], sh[1], sh[2], 40 + t);
        char what[96];
        snprintf(what, sizeof what, "bracket, setting %d, %zu x %zu", t % NSETTINGS, sh[0], sh[1]);
        column_cases_check(m, sh[0], sh[1], sh[2], what);
        struct clstats_select_options oe = {.nan_policy = CLSTATS_NAN_ERROR};
        float *got = malloc(sh[1] * sizeof *got);
        ck_assert_int_eq(clstats_column_medians(test_ctx(), m, sh[0], sh[1], sh[2], &oe, got),
                         CLSTATS_ERR_NAN);
        free(got);
        free(m);
    }
    use_defaults();
}
END_TEST

/* Normal columns: no miss, and about as many keys listed as the sample promises (5 standard
 * deviations of a median of 256 keys either side, plus 2 keys: 86 of 256). */
START_TEST(bracket_holds_and_is_narrow)
{
    if (!path_runs()) return;
    use(&(struct setting){"256", "64", "32", "8", "128", "256", "128"});
    const size_t rows = 4096, cols = 40;
    float *m = column_cases_normal(rows, cols, 7);
    const struct column_bracket_report rep =
        column_cases_run_path(clstats__column_bracket, m, rows, cols);
    const double want = (2.0 * 42 + 2) / 256 * (double)(rows * cols);
    ck_assert_msg(rep.missed == 0 && rep.listed > 0.8 * want && rep.listed < 1.2 * want,
                  "%zu columns missed, %llu keys listed, want about %.0f", rep.missed,
                  (unsigned long long)rep.listed, want);
    free(m);
    use_defaults();
}
END_TEST

/* Ties: the middle ranks fall on boundaries t_j (counted, not listed), and must not miss:
 * two values (the ranks on t_0 and on t_CELLS), three, integers 0..99, a constant. */
START_TEST(ties_hold)
{
    if (!path_runs()) return;
    use(&(struct setting){"256", "64", "32", "8", "128", "256", "128"});
    const size_t rows = 4096, cols = 4;
    float *m = malloc(rows * cols * sizeof *m);
    for (size_t y = 0; y < rows; y++) {
        m[y * cols] = (float)(y % 2);
        m[y * cols + 1] = (float)(y % 3);
        m[y * cols + 2] = (float)(y * 7919 % 100);
        m[y * cols + 3] = 7.5f;
    }
    const struct column_bracket_report rep =
        column_cases_run_path(clstats__column_bracket, m, rows, cols);
    ck_assert_msg(rep.missed == 0, "%zu columns missed", rep.missed);
    free(m);
    use_defaults();
}
END_TEST

/* The row of sample key i (kernels/sample_rows.cl, sample_row). */
static size_t sample_row(uint32_t i, size_t rows, size_t sample)
{
    uint32_t h = i * 0x9e3779b9u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return (size_t)(((uint64_t)i * rows + (((uint64_t)h * rows) >> 32)) / sample);
}

/* Data that defeats the sample: each case must be reported as missed by every column, and
 * the public call must still give the right medians (through the radix kernel). */
START_TEST(misses_fall_back)
{
    if (!path_runs()) return;
    /* One slice of all the rows, so that a region has room for about 67% of them. */
    const struct setting one_slice = {"256", "64", "16", "8", "128", "1", "128"};
    const size_t rows = 3000, cols = 35, sample = 256;
    float *m = malloc(rows * cols * sizeof *m);
    for (int kind = 0; kind < 4; kind++) {
        use(&one_slice);
        for (size_t y = 0; y < rows; y++) {
            bool sampled = false; /* is row y one the sample reads? */
            for (uint32_t i = 0; i < sample && !sampled; i++)
                sampled = sample_row(i, rows, sample) == y;
            for (size_t c = 0; c < cols; c++) {
                const float v = (float)(y * cols + c);
                m[y * cols + c] = kind == 0 ? (sampled ? -v : v) /* sample all below */
                                  : kind == 1
                                      ? (sampled ? (float)y : 1500.25f + v * 1e-4f) /* all listed */
                                  : kind == 2 ? (sampled ? NAN : v) /* sample sees no number */
                                              : v;                  /* cells over FINISH_CAP */
            }
        }
        if (kind == 3) test_tune("bracket.finish_cap", "2");
        const struct column_bracket_report rep =
            column_cases_run_path(clstats__column_bracket, m, rows, cols);
        ck_assert_msg(rep.missed == cols, "kind %d: %zu of %zu columns missed", kind, rep.missed,
                      cols);
        char what[48];
        snprintf(what, sizeof what, "bracket miss, kind %d", kind);
        column_cases_check(m, rows, cols, cols, what);
    }
    free(m);
    use_defaults();
}
END_TEST

/* A matrix inside a device buffer, from an element offset, rows ld apart (ld > cols). */
START_TEST(buffer_offset_and_stride)
{
    if (!path_runs()) return;
    use(&settings[0]);
    column_cases_check_buffer("bracket, buffer at an offset", 88);
    use_defaults();
}
END_TEST

/* Long columns with no setting forced: GPUs take the path by default from 32768 rows, CPU
 * devices the radix kernel; either way the medians must be the reference's. */
START_TEST(long_columns_by_default)
{
    use_defaults();
    const size_t rows = 32768, cols = 40;
    float *m = column_cases_matrix(rows, cols, cols, 77);
    column_cases_check(m, rows, cols, cols, "long columns, default path");
    free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("column_bracket");
    TCase *tc = tcase_create("column_bracket");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, medians_every_setting);
    tcase_add_test(tc, bracket_holds_and_is_narrow);
    tcase_add_test(tc, ties_hold);
    tcase_add_test(tc, misses_fall_back);
    tcase_add_test(tc, buffer_offset_and_stride);
    tcase_add_test(tc, long_columns_by_default);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
