/* test_filter_bracket.c - the bracket design (kernels/filter/median_filter_bracket.cl, the GPUs'
 * median for wide windows) against the plain C reference, bit for bit: squares and rectangles
 * with origins, every boundary mode, NaN and finite cvals, every even rule, on random data with
 * NaNs, ties, constant regions, infinities, signed zeros and huge values, tiny and odd shapes;
 * and lists so small that first brackets miss and overflow, so that every round is taken; the
 * same for its MAD, forced and where GPUs choose it (wide windows). */
#include "filter_fills.h"
#include "reference_filter.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum clstats_boundary all_modes[] = {CLSTATS_BOUNDARY_REFLECT, CLSTATS_BOUNDARY_MIRROR,
                                                  CLSTATS_BOUNDARY_NEAREST,
                                                  CLSTATS_BOUNDARY_CONSTANT, CLSTATS_BOUNDARY_WRAP};
static const char *const rule_name[] = {"mean", "lower", "upper"};

/* The median map, and with want_mad the MAD map too, from the device and from the reference;
 * returns the mismatching pixels. BRACKET_TRACE in the environment names each case before its
 * call (a crash then says where). */
static size_t filter_case(size_t nx, size_t ny, const struct clstats_filter_params *p,
                          enum fill kind, double nan_frac, uint64_t seed, bool want_mad)
{
    const size_t stride = nx + 2;
    float *img = malloc(stride * ny * sizeof *img);
    float *med = malloc(nx * ny * sizeof *med), *ref = malloc(nx * ny * sizeof *ref);
    float *mad = malloc(nx * ny * sizeof *mad), *ref_mad = malloc(nx * ny * sizeof *ref_mad);
    ck_assert(img && med && ref && mad && ref_mad);
    fill_image(img, nx, ny, stride, kind, nan_frac, seed);
    if (getenv("BRACKET_TRACE"))
        fprintf(stderr, "case %zux%zu %dx%d %s seed=%llu\n", nx, ny, p->width, p->height,
                fill_name[kind], (unsigned long long)seed);
    const int status =
        clstats_median_filter(test_ctx(), img, nx, ny, stride, p, med, want_mad ? mad : NULL);
    ck_assert_msg(status == CLSTATS_OK, "%s: %s", clstats_strerror(status),
                  clstats_ctx_message(test_ctx()));
    ck_assert_int_eq(reference_median_filter(img, nx, ny, stride, p, ref, ref_mad), 0);
    char what[200];
    snprintf(what, sizeof what, "%zux%zu %dx%d at (%d,%d) %s cval %g %s %s seed=%llu median", nx,
             ny, p->width, p->height, p->origin_x, p->origin_y, clstats_boundary_name(p->boundary),
             (double)p->cval, fill_name[kind], rule_name[p->even], (unsigned long long)seed);
    size_t bad = test_compare_bits(med, ref, nx * ny, nx, what);
    if (want_mad) {
        strcat(what, " (MAD)");
        bad += test_compare_bits(mad, ref_mad, nx * ny, nx, what);
    }
    free(img), free(med), free(ref), free(mad), free(ref_mad);
    return bad;
}

/* Each shape of shapes[] at each of the five widths[], every fill, mode and rule in turn, NaN
 * and finite cvals; the mismatching pixels. With want_mad the MAD too, one rule a width (each
 * width and rule is a kernel build of its own); without, the larger images only with the
 * smaller windows (the reference sorts every window). */
static size_t square_cases(const size_t (*shapes)[2], size_t n_shapes, const int *widths,
                           uint64_t seed, bool want_mad)
{
    size_t bad = 0;
    test_tune("filter.path", "bracket");
    for (size_t s = 0; s < n_shapes; s++)
        for (size_t wi = 0; wi < 5; wi++) {
            if (!want_mad && shapes[s][0] * shapes[s][1] > 1000 && widths[wi] > 51) continue;
            const size_t c = s * 5 + wi;
            const struct clstats_filter_params p = {
                .width = widths[wi],
                .boundary = all_modes[c % 5],
                .cval = c % 2 ? NAN : -1.0f,
                .even = (enum clstats_even)((want_mad ? wi : c) % 3)};
            bad += filter_case(shapes[s][0], shapes[s][1], &p,
                               (enum fill)(c % (FILL_SCALE_STEPS + 1)), 0.1, seed++, want_mad);
        }
    test_tune("filter.path", NULL);
    return bad;
}

/* Odd shapes (single rows and columns, smaller and larger than a 32 x 32 tile, several tiles)
 * at the widths the design serves, and small ones; every fill, mode and rule. */
START_TEST(bracket_design_matches_reference)
{
    static const size_t shapes[][2] = {{1, 1},   {1, 40},  {45, 1}, {3, 2},
                                       {33, 31}, {70, 41}, {29, 67}};
    static const int widths[] = {1, 11, 37, 101, 255};
    ck_assert_uint_eq(square_cases(shapes, 7, widths, test_seed() + 11000, false), 0);
}
END_TEST

/* Rectangles, tall and wide, with origins, under every rule. */
START_TEST(bracket_design_serves_rectangles_and_origins)
{
    static const int shapes[][4] = {/* width, height, origin x, y */
                                    {101, 37, 20, -5}, {37, 151, -3, 40}, {64, 2, 0, 0},
                                    {2, 200, 0, -99},  {255, 40, 0, 0},   {40, 255, 7, 3},
                                    {36, 1, 0, 0},     {1, 36, 0, 0}};
    size_t bad = 0;
    uint64_t seed = test_seed() + 11500;
    test_tune("filter.path", "bracket");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const struct clstats_filter_params p = {.width = shapes[s][0],
                                                .height = shapes[s][1],
                                                .origin_x = shapes[s][2],
                                                .origin_y = shapes[s][3],
                                                .boundary = all_modes[s % 5],
                                                .cval = s % 2 ? NAN : 0.5f,
                                                .even = (enum clstats_even)(s % 3)};
        bad += filter_case(s % 2 ? 17 : 37, s % 2 ? 23 : 11, &p, (enum fill)(s * 3 % 11), 0.1,
                           seed++, false);
    }
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Lists of 1 to 64 elements (filter.shape_tx): the first bracket overflows and is halved, in
 * element order even where every key ties (constant blocks, integers); most pixels miss it and
 * take further brackets below and above, where the level jumps (scale steps, huge values,
 * infinite blocks) and where NaN blocks empty windows. */
/* Each forced list capacity of caps[] with each fill of fills[] (small images, windows of 3 to 63
 * rows or columns, every mode, rule and cval in turn); the mismatching pixels. */
static size_t small_list_cases(const char *const *caps, size_t n_caps, const enum fill *fills,
                               size_t n_fills, uint64_t seed, bool want_mad)
{
    static const int widths[] = {3, 37, 63};
    size_t bad = 0;
    test_tune("filter.path", "bracket");
    for (size_t c = 0; c < n_caps; c++) {
        test_tune("filter.shape_tx", caps[c]);
        for (size_t f = 0; f < n_fills; f++) {
            /* With a MAD, one window and rule a capacity: each is a kernel build of its own, and
             * the MAD's take PoCL many seconds. */
            const size_t i = c * n_fills + f, shape = want_mad ? c : i;
            const struct clstats_filter_params p = {.width = widths[shape % 3],
                                                    .height = widths[(shape + 1) % 3],
                                                    .boundary = all_modes[i % 5],
                                                    .cval = i % 2 ? NAN : 3.0f,
                                                    .even = (enum clstats_even)(shape % 3)};
            bad += filter_case(c == 0 ? 21 : 45, c == 0 ? 19 : 38, &p, fills[f], 0.05, seed++,
                               want_mad);
        }
    }
    test_tune("filter.shape_tx", NULL);
    test_tune("filter.path", NULL);
    return bad;
}

START_TEST(bracket_design_exact_when_brackets_overflow_and_miss)
{
    static const char *const caps[] = {"1", "16", "64"};
    static const enum fill fills[] = {FILL_SCALE_STEPS, FILL_INTEGERS, FILL_CONSTANT,
                                      FILL_HUGE,        FILL_INFINITE, FILL_NAN_BLOCKS,
                                      FILL_ZERO_BLOCKS, FILL_NORMAL};
    ck_assert_uint_eq(small_list_cases(caps, 3, fills, 8, test_seed() + 12000, false), 0);
}
END_TEST

/* The MAD through the forced design: odd shapes at the widths it serves and small ones, every
 * fill (ties, infinities, signed zeros, NaN blocks, scale steps), mode and rule, NaN and finite
 * cvals; both maps bit for bit. */
START_TEST(bracket_mad_matches_reference)
{
    static const size_t shapes[][2] = {{1, 1}, {1, 40}, {45, 1}, {3, 2}, {33, 31}, {70, 41}};
    static const int widths[] = {1, 4, 11, 37, 64};
    ck_assert_uint_eq(square_cases(shapes, 6, widths, test_seed() + 13000, true), 0);
}
END_TEST

/* The MAD for rectangles, tall and wide, with origins, every rule in turn. */
START_TEST(bracket_mad_serves_rectangles_and_origins)
{
    static const int shapes[][4] = {/* width, height, origin x, y */
                                    {51, 37, 20, -5}, {37, 61, -3, 20}, {64, 2, 0, 0},
                                    {2, 100, 0, -49}, {36, 1, 0, 0},    {1, 36, 0, 0}};
    size_t bad = 0;
    uint64_t seed = test_seed() + 13500;
    test_tune("filter.path", "bracket");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int fill = 0; fill < 3; fill++) {
            const int rule = (int)s % 3; /* one kernel build a shape */
            const struct clstats_filter_params p = {.width = shapes[s][0],
                                                    .height = shapes[s][1],
                                                    .origin_x = shapes[s][2],
                                                    .origin_y = shapes[s][3],
                                                    .boundary = all_modes[(s + fill) % 5],
                                                    .cval = (s + fill) % 2 ? NAN : 0.5f,
                                                    .even = (enum clstats_even)rule};
            bad += filter_case(s % 2 ? 17 : 37, s % 2 ? 23 : 11, &p,
                               (enum fill)((s * 3 + fill) % 11), 0.1, seed++, true);
        }
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Lists of 2 to 64 elements (filter.shape_tx): the MAD's brackets overflow and are halved, and
 * most pixels' deviations fall outside them, so that they take the direct count; with 256 most
 * are answered from the lists, some at the lists' ends. Fills whose levels jump, ties
 * everywhere, infinite medians (all equal or not), zeros of both signs. */
START_TEST(bracket_mad_exact_when_lists_overflow_and_miss)
{
    static const char *const caps[] = {"2", "16", "64", "256"};
    static const enum fill fills[] = {FILL_SCALE_STEPS, FILL_INTEGERS, FILL_CONSTANT,
                                      FILL_HUGE,        FILL_INFINITE, FILL_NAN_BLOCKS,
                                      FILL_ZERO_BLOCKS, FILL_NORMAL,   FILL_HEAVY_TAIL,
                                      FILL_ZEROS,       FILL_SPARSE};
    ck_assert_uint_eq(small_list_cases(caps, 4, fills, 11, test_seed() + 14000, true), 0);
}
END_TEST

/* The MAD's search with few probes a round (filter.shape_ty: 2 and 3), so that each pixel's
 * search takes many rounds, its hints widening past the end probe where the crossing lies
 * outside what its lists first held; with lists of 16 and 64 (filter.shape_tx) its ranks miss
 * them and march several brackets a round, below and above, and the brackets overflow. Fills
 * whose levels jump, ties, NaN blocks and infinities; one window and rule a build. */
START_TEST(bracket_mad_search_takes_many_rounds_and_marches)
{
    static const struct {
        const char *probes, *cap;
        int width, height;
        enum clstats_even even;
    } builds[] = {{"2", "16", 37, 41, CLSTATS_EVEN_MEAN}, {"3", "64", 63, 31, CLSTATS_EVEN_UPPER}};
    static const enum fill fills[] = {FILL_SCALE_STEPS, FILL_INTEGERS, FILL_NAN_BLOCKS,
                                      FILL_INFINITE,    FILL_NORMAL,   FILL_HEAVY_TAIL};
    size_t bad = 0;
    uint64_t seed = test_seed() + 14500;
    test_tune("filter.path", "bracket");
    for (size_t b = 0; b < sizeof builds / sizeof builds[0]; b++) {
        test_tune("filter.shape_ty", builds[b].probes);
        test_tune("filter.shape_tx", builds[b].cap);
        for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
            const struct clstats_filter_params p = {.width = builds[b].width,
                                                    .height = builds[b].height,
                                                    .boundary = all_modes[(b + f) % 5],
                                                    .cval = f % 2 ? NAN : 3.0f,
                                                    .even = builds[b].even};
            bad += filter_case(b ? 45 : 38, b ? 37 : 50, &p, fills[f], 0.05, seed++, true);
        }
    }
    test_tune("filter.shape_ty", NULL);
    test_tune("filter.shape_tx", NULL);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The whole public path: the device's own choice at a wide window (with want_mad, one where
 * GPUs take the bracket design's MAD), and the design forced, for the whole image and a strip
 * at a time through the band entry point, against the reference. */
static void wide_window_calls_match_reference(int w, bool want_mad, uint64_t seed)
{
    const size_t nx = 50, ny = 70, n = nx * ny;
    float *img = malloc(n * sizeof *img), *med = malloc(n * sizeof *med),
          *ref = malloc(n * sizeof *ref), *mad = malloc(n * sizeof *mad),
          *ref_mad = malloc(n * sizeof *ref_mad);
    ck_assert(img && med && ref && mad && ref_mad);
    fill_image(img, nx, ny, nx, FILL_SCALE_STEPS, 0.05, seed);
    const struct clstats_filter_params p = {.width = w, .boundary = CLSTATS_BOUNDARY_MIRROR};
    ck_assert_int_eq(reference_median_filter(img, nx, ny, nx, &p, ref, ref_mad), 0);
    float *mad_out = want_mad ? mad : NULL;
    for (int forced = 0; forced < 2; forced++) {
        test_tune("filter.path", forced ? "bracket" : NULL);
        memset(med, 0, n * sizeof *med);
        memset(mad, 0, n * sizeof *mad);
        ck_assert_int_eq(clstats_median_filter(test_ctx(), img, nx, ny, nx, &p, med, mad_out),
                         CLSTATS_OK);
        ck_assert_uint_eq(test_compare_bits(med, ref, n, nx, "whole"), 0);
        if (want_mad) ck_assert_uint_eq(test_compare_bits(mad, ref_mad, n, nx, "whole MAD"), 0);
        /* Bands of 20 rows: each band's buffer holds the rows its windows read. */
        memset(med, 0, n * sizeof *med);
        memset(mad, 0, n * sizeof *mad);
        for (size_t row0 = 0; row0 < ny; row0 += 20) {
            const size_t rows = ny - row0 < 20 ? ny - row0 : 20;
            const long first = (long)row0 - w / 2;
            float *band = malloc(nx * (rows + w - 1) * sizeof *band);
            ck_assert(band);
            for (size_t j = 0; j < rows + w - 1; j++) {
                const long r = clstats_boundary_index(first + (long)j, ny, p.boundary);
                memcpy(band + j * nx, img + (size_t)r * nx, nx * sizeof *band);
            }
            ck_assert_int_eq(clstats_median_filter_band(test_ctx(), band, nx, ny, nx, row0, rows,
                                                        &p, med + row0 * nx,
                                                        want_mad ? mad + row0 * nx : NULL),
                             CLSTATS_OK);
            free(band);
        }
        ck_assert_uint_eq(test_compare_bits(med, ref, n, nx, "bands"), 0);
        if (want_mad) ck_assert_uint_eq(test_compare_bits(mad, ref_mad, n, nx, "bands MAD"), 0);
    }
    test_tune("filter.path", NULL);
    free(img), free(med), free(ref), free(mad), free(ref_mad);
}

START_TEST(median_only_calls_at_wide_windows_match_reference)
{
    wide_window_calls_match_reference(45, false, test_seed() + 12600);
}
END_TEST

START_TEST(mad_calls_at_wide_windows_match_reference)
{
    wide_window_calls_match_reference(91, true, test_seed() + 12700);
}
END_TEST

/* The MAD on every device, CPUs included (where the other MAD cases are taken only when asked):
 * a small window (9 x 7, mean rule) over small images with NaNs (scattered, in blocks, NaN
 * cvals), ties, infinities and zeros of both signs, with lists of 64 (brackets overflow and
 * ranks march beyond them) and then the device's own, and 3 probes a round, so that searches
 * take several rounds, each walk starting where the last left off; both maps bit for bit. Two
 * kernel builds (about a second each on PoCL, which builds the design unoptimised). */
START_TEST(bracket_mad_small_window_on_every_device)
{
    static const enum fill fills[] = {FILL_INTEGERS, FILL_NAN_BLOCKS, FILL_INFINITE,
                                      FILL_ZERO_BLOCKS, FILL_NORMAL, FILL_SPARSE};
    size_t bad = 0;
    uint64_t seed = test_seed() + 14800;
    test_tune("filter.path", "bracket");
    test_tune("filter.shape_ty", "3");
    const size_t n_fills = sizeof fills / sizeof fills[0];
    for (size_t f = 0; f < 2 * n_fills; f++) {
        /* Lists of 64 (overflowing, marching), then the device's own (holding every rank). */
        test_tune("filter.shape_tx", f < n_fills ? "64" : NULL);
        const struct clstats_filter_params p = {.width = 9,
                                                .height = 7,
                                                .boundary = all_modes[f % 5],
                                                .cval = f % 2 ? NAN : 3.0f,
                                                .even = CLSTATS_EVEN_MEAN};
        bad += filter_case(f % 2 ? 37 : 23, f % 2 ? 19 : 40, &p, fills[f % n_fills], 0.1, seed++,
                           true);
    }
    test_tune("filter.shape_ty", NULL);
    test_tune("filter.shape_tx", NULL);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Whether to take the MAD's larger cases: always on GPUs; on CPU devices only when asked
 * (CK_RUN_CASE naming them, or CLSTATS_TEST_BRACKET_MAD set), for PoCL runs their unoptimised
 * kernels for minutes (bench/RESULTS.md) and CPUs never choose the design. */
static bool mad_cases_wanted(void)
{
    const char *run_case = getenv("CK_RUN_CASE");
    if (getenv("CLSTATS_TEST_BRACKET_MAD") || (run_case && strstr(run_case, "mad"))) return true;
    struct clstats_device_limits limits;
    if (clstats_ctx_limits(test_ctx(), &limits) == CLSTATS_OK && !limits.is_cpu) return true;
    fprintf(stderr, "the MAD's larger cases left out on this CPU device (CLSTATS_TEST_BRACKET_MAD=1 "
                    "or CK_RUN_CASE=mad, mad_rounds take them)\n");
    return false;
}

static Suite *bracket_suite(void)
{
    Suite *s = suite_create("filter_bracket");
    TCase *tc = tcase_create("bracket");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, bracket_design_exact_when_brackets_overflow_and_miss);
    tcase_add_test(tc, bracket_design_serves_rectangles_and_origins);
    tcase_add_test(tc, median_only_calls_at_wide_windows_match_reference);
    suite_add_tcase(s, tc);
    /* The MAD's one case on every device (CK_RUN_CASE=mad_small runs it alone). */
    TCase *mad_small = tcase_create("mad_small");
    tcase_set_timeout(mad_small, 0);
    tcase_add_test(mad_small, bracket_mad_small_window_on_every_device);
    suite_add_tcase(s, mad_small);
    if (mad_cases_wanted()) {
        /* The MAD (CK_RUN_CASE=mad runs these alone). */
        TCase *mad = tcase_create("mad");
        tcase_set_timeout(mad, 0);
        tcase_add_test(mad, bracket_mad_exact_when_lists_overflow_and_miss);
        tcase_add_test(mad, bracket_mad_serves_rectangles_and_origins);
        tcase_add_test(mad, bracket_mad_matches_reference);
        tcase_add_test(mad, mad_calls_at_wide_windows_match_reference);
        suite_add_tcase(s, mad);
        /* The MAD search's many rounds (CK_RUN_CASE=mad_rounds runs it alone). */
        TCase *rounds = tcase_create("mad_rounds");
        tcase_set_timeout(rounds, 0);
        tcase_add_test(rounds, bracket_mad_search_takes_many_rounds_and_marches);
        suite_add_tcase(s, rounds);
    }
    /* The widest windows (CK_RUN_CASE=large runs these alone). */
    TCase *large = tcase_create("large");
    tcase_set_timeout(large, 0);
    tcase_add_test(large, bracket_design_matches_reference);
    suite_add_tcase(s, large);
    return s;
}

int main(void)
{
    return test_run_suite(bracket_suite());
}
