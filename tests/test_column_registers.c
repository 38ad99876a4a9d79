/* test_column_registers.c - the column medians' one-launch path (src/select_columns_registers.c),
 * which GPUs take for columns of some thousands of rows, forced here
 * (CLSTATS_COLUMNS_METHOD=registers) with small groups so that CI's CPU device runs it on small
 * matrices: its medians against the sorting reference bit for bit under several shapes of its
 * kernel, data that takes it through several rounds, columns it leaves open (which must still
 * get the right medians from the radix kernel), and what it reports. */
#include "column_cases.h"
#include "reference_select.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Settings of the kernel: columns a group, its work-items, sample stride, log2 bins, sigmas,
 * list cap, rounds. */
struct setting {
    const char *cols, *wg, *stride, *log2_bins, *sigmas, *cap, *rounds;
};

static const struct setting settings[] = {
    {"4", "256", "4", "10", "4", "256", "8"}, /* the GPU default's shape, smaller groups */
    {"1", "64", "1", "5", "0", "1", "12"},    /* one column, 32 bins, no margin, lists of one */
    {"3", "96", "2", "7", "2", "8", "8"},     /* three columns a group, which divide no matrix */
    {"8", "128", "16", "9", "6", "512", "8"}, /* a sample of one key per column */
};
#define NSETTINGS ((int)(sizeof settings / sizeof settings[0]))

static void use(const struct setting *s)
{
    setenv("CLSTATS_COLUMNS_METHOD", "registers", 1);
    setenv("CLSTATS_REGISTERS_COLS", s->cols, 1);
    setenv("CLSTATS_REGISTERS_WG", s->wg, 1);
    setenv("CLSTATS_REGISTERS_SAMPLE_STRIDE", s->stride, 1);
    setenv("CLSTATS_REGISTERS_LOG2_BINS", s->log2_bins, 1);
    setenv("CLSTATS_REGISTERS_SIGMAS", s->sigmas, 1);
    setenv("CLSTATS_REGISTERS_CAP", s->cap, 1);
    setenv("CLSTATS_REGISTERS_ROUNDS", s->rounds, 1);
}

static void use_defaults(void)
{
    const char *names[] = {"COLS", "WG", "SAMPLE_STRIDE", "LOG2_BINS", "SIGMAS", "CAP", "ROUNDS"};
    char name[64];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(name, sizeof name, "CLSTATS_REGISTERS_%s", names[i]);
        unsetenv(name);
    }
    unsetenv("CLSTATS_COLUMNS_METHOD");
}

/* The most rows a setting takes: 64 keys a work-item (src/select_columns_registers.c). */
static size_t most_rows(const struct setting *s)
{
    return 64 * (size_t)(atoi(s->wg) / atoi(s->cols));
}

START_TEST(medians_every_setting)
{
    const size_t shapes[][3] = {{1000, 33, 40}, {517, 70, 70}, {64, 12, 13},  {1, 5, 5},
                                {2, 3, 3},      {3, 13, 13},   {1024, 16, 16}};
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    for (int t = 0; t < nshapes * NSETTINGS; t++) {
        const struct setting *s = &settings[t % NSETTINGS];
        const size_t *sh = shapes[t / NSETTINGS];
        if (sh[0] > most_rows(s)) continue;
        use(s);
        ck_assert(clstats__column_registers_fits(test_ctx(), sh[0], sh[1]));
        float *m = column_cases_matrix(sh[0], sh[1], sh[2], 60 + t);
        char what[96];
        snprintf(what, sizeof what, "registers, setting %d, %zu x %zu", t % NSETTINGS, sh[0],
                 sh[1]);
        column_cases_check(m, sh[0], sh[1], sh[2], what);
        free(m);
        /* Enough rounds in every setting: no column, hard or not, is left open. */
        m = column_cases_matrix(sh[0], sh[1], sh[1], 60 + t);
        const struct column_bracket_report rep =
            column_cases_run_path(clstats__column_registers, m, sh[0], sh[1]);
        ck_assert_msg(rep.missed == 0, "%s: %zu columns left open", what, rep.missed);
        free(m);
    }
    use_defaults();
}
END_TEST

/* Normal columns with the default-like setting: every column done in the path, and few keys
 * listed (the bins split a quarter of a column 1024 ways: well under 1% of it). */
START_TEST(normal_columns_stay_in_the_path)
{
    use(&settings[0]);
    const size_t rows = 4096, cols = 40;
    float *m = malloc(rows * cols * sizeof *m);
    struct test_rng r;
    test_rng_seed(&r, test_seed() + 9);
    for (size_t i = 0; i < rows * cols; i++)
        m[i] = (float)test_rng_normal(&r);
    const struct column_bracket_report rep =
        column_cases_run_path(clstats__column_registers, m, rows, cols);
    ck_assert_msg(rep.missed == 0, "%zu columns left open", rep.missed);
    ck_assert_msg(rep.listed > 0 && rep.listed < 0.01 * (double)(rows * cols), "%llu keys listed",
                  (unsigned long long)rep.listed);
    free(m);
    use_defaults();
}
END_TEST

/* Data that takes several rounds: a sample that sees only the smallest values (every rank
 * then lies above its range), a run of ties wider than any list, and keys that differ only in
 * their last bits. With lists of one key, no margin and 32 bins every round but the last must
 * narrow the range (32-bit keys, 5 bits a round: 2 + 33 / 5 rounds at most), and the medians
 * must still be exact. */
START_TEST(several_rounds)
{
    const struct setting narrow = {"1", "64", "1", "5", "0", "1", "12"};
    use(&narrow);
    const size_t rows = 2000, cols = 4;
    float *m = malloc(rows * cols * sizeof *m);
    for (size_t y = 0; y < rows; y++) {
        m[y * cols] = y < 1000 ? (float)y : 1e6f + (float)y;   /* skewed halves */
        m[y * cols + 1] = y % 10 < 7 ? 3.0f : (float)y;        /* 70% ties at 3 */
        m[y * cols + 2] = 1.0f + (float)(y % 64) * 0x1p-23f;   /* the last six mantissa bits */
        m[y * cols + 3] = y % 2 ? -1e-30f : 1e-30f * (float)y; /* across zero */
    }
    const struct column_bracket_report rep =
        column_cases_run_path(clstats__column_registers, m, rows, cols);
    ck_assert_msg(rep.missed == 0, "%zu columns left open", rep.missed);
    column_cases_check(m, rows, cols, cols, "registers, several rounds");
    free(m);
    use_defaults();
}
END_TEST

/* One round only and no margin: most columns are left open, reported, and answered by the
 * radix kernel, so that the public call still gives every median exactly. */
START_TEST(open_columns_fall_back)
{
    const struct setting one_round = {"4", "256", "1", "5", "0", "1", "1"};
    use(&one_round);
    const size_t rows = 3000, cols = 37;
    float *m = column_cases_matrix(rows, cols, cols, 21);
    const struct column_bracket_report rep =
        column_cases_run_path(clstats__column_registers, m, rows, cols);
    ck_assert_msg(rep.missed > cols / 2, "only %zu of %zu columns left open", rep.missed, cols);
    column_cases_check(m, rows, cols, cols, "registers, open columns");
    free(m);
    use_defaults();
}
END_TEST

/* A matrix inside a device buffer, from an element offset, rows ld apart (ld > cols). */
START_TEST(buffer_offset_and_stride)
{
    use(&settings[0]);
    column_cases_check_buffer("registers, buffer at an offset", 89);
    use_defaults();
}
END_TEST

/* Columns too long for the path's registers: not taken even when asked for (the radix kernel
 * answers), and the medians are right. */
START_TEST(too_long_columns_go_elsewhere)
{
    use(&settings[1]);
    const size_t rows = most_rows(&settings[1]) + 1, cols = 3;
    ck_assert(!clstats__column_registers_fits(test_ctx(), rows, cols));
    float *m = column_cases_matrix(rows, cols, cols, 5);
    column_cases_check(m, rows, cols, cols, "registers refused, radix");
    free(m);
    use_defaults();
}
END_TEST

/* Medium columns with no setting forced: GPUs with enough columns take the path by default,
 * CPU devices the radix kernel; either way the medians must be the reference's. */
START_TEST(medium_columns_by_default)
{
    use_defaults();
    const size_t rows = 4096, cols = 600;
    float *m = column_cases_matrix(rows, cols, cols, 78);
    column_cases_check(m, rows, cols, cols, "medium columns, default path");
    free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("column_registers");
    TCase *tc = tcase_create("column_registers");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, medians_every_setting);
    tcase_add_test(tc, normal_columns_stay_in_the_path);
    tcase_add_test(tc, several_rounds);
    tcase_add_test(tc, open_columns_fall_back);
    tcase_add_test(tc, buffer_offset_and_stride);
    tcase_add_test(tc, too_long_columns_go_elsewhere);
    tcase_add_test(tc, medium_columns_by_default);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
