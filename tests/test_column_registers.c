/* test_column_registers.c - the column medians' one-launch paths (src/select/select_columns_registers.c),
 * registers and streamed, which GPUs take for columns of some thousands of rows, forced here
 * (tuning columns.method=registers or streamed) with small groups so that CI's CPU device runs
 * them on small matrices: their medians against the sorting reference bit for bit under several
 * shapes of the kernel, data that takes it through several rounds, first-pass lists that
 * overflow, columns it leaves open (which must still get the right medians from the radix
 * kernel), and what it reports. */
#include "column_cases.h"
#include "reference_select.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Settings of the kernel: columns a group, its work-items, sample stride, log2 bins, sigmas,
 * list cap, rounds; streamed ones also the sample keys a work-item holds, loads in flight and
 * the first pass's list cap. */
struct setting {
    const char *cols, *wg, *stride, *log2_bins, *sigmas, *cap, *rounds;
    const char *held, *stream, *pass_cap; /* NULL: the registers path */
};

static const struct setting settings[] = {
    {"4", "256", "4", "10", "4", "256", "8", NULL, NULL,
     NULL}, /* the GPU default's shape, smaller groups */
    {"1", "64", "1", "5", "0", "1", "12", NULL, NULL,
     NULL}, /* one column, 32 bins, no margin, lists of one */
    {"3", "96", "2", "7", "2", "8", "8", NULL, NULL,
     NULL}, /* three columns a group, which divide no matrix */
    {"8", "128", "16", "9", "6", "512", "8", NULL, NULL, NULL}, /* a sample of one key per column */
    /* Streamed: the default's shape, smaller, with first-pass lists that often overflow (the
     * later rounds read the matrix again) ... */
    {"8", "256", "4", "7", "3", "128", "8", "4", "8", "256"},
    /* ... one column, lists of one, no margin, so that ranks often miss the first range ... */
    {"1", "64", "1", "5", "0", "1", "12", "1", "1", "64"},
    /* ... and three columns a group, whose first-pass lists hold what later rounds need. */
    {"3", "96", "2", "7", "2", "8", "8", "2", "3", "2048"},
};
#define NSETTINGS ((int)(sizeof settings / sizeof settings[0]))

static void use(const struct setting *s)
{
    test_tune("columns.method", s->held ? "streamed" : "registers");
    if (s->held) {
        test_tune("registers.held", s->held);
        test_tune("registers.stream", s->stream);
        test_tune("registers.pass_cap", s->pass_cap);
    }
    test_tune("registers.cols", s->cols);
    test_tune("registers.wg", s->wg);
    test_tune("registers.sample_stride", s->stride);
    test_tune("registers.log2_bins", s->log2_bins);
    test_tune("registers.sigmas", s->sigmas);
    test_tune("registers.cap", s->cap);
    test_tune("registers.rounds", s->rounds);
}

static void use_defaults(void)
{
    const char *names[] = {"cols", "wg",     "sample_stride", "log2_bins", "sigmas",  "cap",
                           "rounds", "held", "stream",        "pass_cap",  "index64", "l2_hint"};
    char name[64];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(name, sizeof name, "registers.%s", names[i]);
        test_tune(name, NULL);
    }
    test_tune("columns.method", NULL);
}

/* The most rows a setting takes: 64 keys a work-item (src/select/select_columns_registers.c), or any
 * number streamed. */
static size_t most_rows(const struct setting *s)
{
    return s->held ? SIZE_MAX : 64 * (size_t)(atoi(s->wg) / atoi(s->cols));
}

/* The path a setting forces. */
static clstats__column_path path_of(const struct setting *s)
{
    return s->held ? clstats__column_streamed : clstats__column_registers;
}

static bool path_fits(const struct setting *s, size_t rows, size_t cols)
{
    return s->held ? clstats__column_streamed_fits(test_ctx(), rows, cols)
                   : clstats__column_registers_fits(test_ctx(), rows, cols);
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
        ck_assert(path_fits(s, sh[0], sh[1]));
        float *m = column_cases_matrix(sh[0], sh[1], sh[2], 60 + t);
        char what[96];
        snprintf(what, sizeof what, "%s, setting %d, %zu x %zu", s->held ? "streamed" : "registers",
                 t % NSETTINGS, sh[0], sh[1]);
        column_cases_check(m, sh[0], sh[1], sh[2], what);
        free(m);
        /* Enough rounds in every setting: no column, hard or not, is left open. */
        m = column_cases_matrix(sh[0], sh[1], sh[1], 60 + t);
        const struct column_bracket_report rep = column_cases_run_path(path_of(s), m, sh[0], sh[1]);
        ck_assert_msg(rep.missed == 0, "%s: %zu columns left open", what, rep.missed);
        free(m);
    }
    use_defaults();
}
END_TEST

/* The tests below run once a path (Check's loop index _i): 0 registers, 1 streamed. */
#define PATH_NAME(i) ((i) ? "streamed" : "registers")

/* Normal columns with the default-like setting: every column done in the path, and few keys
 * listed (the bins split a quarter of a column 1024 ways, or streamed a few per cent of it 128
 * ways: well under 1% of it). */
START_TEST(normal_columns_stay_in_the_path)
{
    const struct setting *s = &settings[_i ? 4 : 0];
    use(s);
    const size_t rows = 4096, cols = 40;
    float *m = column_cases_normal(rows, cols, 9);
    const struct column_bracket_report rep = column_cases_run_path(path_of(s), m, rows, cols);
    ck_assert_msg(rep.missed == 0, "%s: %zu columns left open", PATH_NAME(_i), rep.missed);
    ck_assert_msg(rep.listed > 0 && rep.listed < 0.01 * (double)(rows * cols),
                  "%s: %llu keys listed", PATH_NAME(_i), (unsigned long long)rep.listed);
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
    const struct setting narrow[] = {{"1", "64", "1", "5", "0", "1", "12", NULL, NULL, NULL},
                                     {"1", "64", "1", "5", "0", "1", "12", "1", "2", "64"}};
    use(&narrow[_i]);
    const size_t rows = 2000, cols = 4;
    float *m = malloc(rows * cols * sizeof *m);
    for (size_t y = 0; y < rows; y++) {
        m[y * cols] = y < 1000 ? (float)y : 1e6f + (float)y;   /* skewed halves */
        m[y * cols + 1] = y % 10 < 7 ? 3.0f : (float)y;        /* 70% ties at 3 */
        m[y * cols + 2] = 1.0f + (float)(y % 64) * 0x1p-23f;   /* the last six mantissa bits */
        m[y * cols + 3] = y % 2 ? -1e-30f : 1e-30f * (float)y; /* across zero */
    }
    const struct column_bracket_report rep =
        column_cases_run_path(path_of(&narrow[_i]), m, rows, cols);
    ck_assert_msg(rep.missed == 0, "%s: %zu columns left open", PATH_NAME(_i), rep.missed);
    column_cases_check(m, rows, cols, cols, PATH_NAME(_i));
    free(m);
    use_defaults();
}
END_TEST

/* Streamed, lists of at most 8 keys and three rounds: the median's bin after the first pass
 * holds more, so the second round counts again, in the first pass's list (with the count
 * below that list's range), and the third lists and ranks. Counted wrong there, the ranks would
 * leave the list's range, and the rounds would run out. */
START_TEST(later_rounds_read_the_first_list)
{
    const struct setting tight = {"3", "96", "2", "7", "2", "8", "3", "2", "3", "2048"};
    use(&tight);
    const size_t rows = 2000, cols = 30;
    float *m = column_cases_normal(rows, cols, 13);
    const struct column_bracket_report rep =
        column_cases_run_path(clstats__column_streamed, m, rows, cols);
    ck_assert_msg(rep.missed == 0, "%zu columns left open", rep.missed);
    free(m);
    use_defaults();
}
END_TEST

/* One round only and no margin: most columns are left open, reported, and answered by the
 * radix kernel, so that the public call still gives every median exactly. */
START_TEST(open_columns_fall_back)
{
    const struct setting one_round[] = {{"4", "256", "1", "5", "0", "1", "1", NULL, NULL, NULL},
                                        {"4", "256", "1", "5", "0", "1", "1", "1", "4", "64"}};
    use(&one_round[_i]);
    const size_t rows = 3000, cols = 37;
    float *m = column_cases_matrix(rows, cols, cols, 21);
    const struct column_bracket_report rep =
        column_cases_run_path(path_of(&one_round[_i]), m, rows, cols);
    ck_assert_msg(rep.missed > cols / 2, "%s: only %zu of %zu columns left open", PATH_NAME(_i),
                  rep.missed, cols);
    column_cases_check(m, rows, cols, cols, PATH_NAME(_i));
    free(m);
    use_defaults();
}
END_TEST

/* A matrix inside a device buffer, from an element offset, rows ld apart (ld > cols). */
/* Loop index _i: the path (_i % 2), and the loads: 32-bit indices (as every matrix small
 * enough allows), 64-bit ones, or with the L2 hint asked for (NVIDIA's inline PTX; a device
 * that refuses it must build the plain loads instead). */
START_TEST(buffer_offset_and_stride)
{
    use(&settings[_i % 2 ? 4 : 0]);
    if (_i / 2 == 1) test_tune("registers.index64", "on");
    if (_i / 2 == 2) test_tune("registers.l2_hint", "on");
    column_cases_check_buffer(PATH_NAME(_i % 2), 89);
    use_defaults();
}
END_TEST

/* Columns too long for the path: for the registers, past 64 keys a work-item; streamed, where
 * the sample that would narrow the first range to some 600 keys needs more than 64 keys a
 * work-item (5000 rows over 8 work-items a column). Not taken even when asked for (the radix
 * kernel answers), and the medians are right. */
START_TEST(too_long_columns_go_elsewhere)
{
    size_t rows = 5000;
    if (_i) {
        use_defaults();
        test_tune("columns.method", "streamed");
        test_tune("registers.cols", "8");
        test_tune("registers.wg", "64");
        ck_assert(clstats__column_streamed_fits(test_ctx(), 4000, 3));
    } else {
        use(&settings[1]);
        rows = most_rows(&settings[1]) + 1;
    }
    const size_t cols = 3;
    ck_assert(!path_fits(_i ? &settings[4] : &settings[1], rows, cols));
    float *m = column_cases_matrix(rows, cols, cols, 5);
    column_cases_check(m, rows, cols, cols, PATH_NAME(_i));
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
    tcase_add_loop_test(tc, normal_columns_stay_in_the_path, 0, 2);
    tcase_add_loop_test(tc, several_rounds, 0, 2);
    tcase_add_test(tc, later_rounds_read_the_first_list);
    tcase_add_loop_test(tc, open_columns_fall_back, 0, 2);
    tcase_add_loop_test(tc, buffer_offset_and_stride, 0, 6);
    tcase_add_loop_test(tc, too_long_columns_go_elsewhere, 0, 2);
    tcase_add_test(tc, medium_columns_by_default);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
