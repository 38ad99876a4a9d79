/* test_tiny_kernels.c - every kernel family once, on inputs small enough for a simulator: the
 * four filter designs, whole-array selection by radix, cutting plane and sample (float32 and
 * float64), column medians by the radix kernel and the forced bracket, registers and streamed
 * paths, and tile medians, each judged bit for bit by the plain references. An ordinary suite
 * on any device; CI also runs it under Oclgrind (tools/test_oclgrind.sh), whose checks for
 * out-of-bounds accesses and data races need inputs this small to finish quickly. */
#include "column_cases.h"
#include "reference_background.h"
#include "reference_filter.h"
#include "reference_select.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values with what makes windows and arrays hard: ties, NaNs, infinities, -0 beside +0. */
static float hard_value(struct test_rng *rng)
{
    const double u = test_rng_uniform(rng);
    if (u < 0.10) return NAN;
    if (u < 0.13) return INFINITY;
    if (u < 0.15) return -INFINITY;
    if (u < 0.20) return -0.0f;
    if (u < 0.25) return 0.0f;
    if (u < 0.45) return (float)(test_rng_next(rng) % 4); /* ties */
    return (float)test_rng_normal(rng);
}

static float *hard_values(size_t n, uint64_t salt)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + salt);
    float *x = malloc((n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++)
        x[i] = hard_value(&rng);
    return x;
}

/* ---- Filter designs --------------------------------------------------------------------- */

struct filter_case {
    size_t nx, ny, stride;
    int width;
    enum clstats_boundary mode;
    float cval;
};

/* Small images; widths from 1 to one the sorted design sorts in merged blocks of runs (35),
 * and windows wider than the image; every boundary mode, the constant a number and NaN. */
static const struct filter_case filter_cases[] = {
    {13, 9, 15, 3, CLSTATS_BOUNDARY_REFLECT, 0.0f}, {7, 5, 7, 5, CLSTATS_BOUNDARY_CONSTANT, NAN},
    {1, 6, 1, 1, CLSTATS_BOUNDARY_NEAREST, 0.0f},   {9, 4, 9, 19, CLSTATS_BOUNDARY_WRAP, 0.0f},
    {6, 7, 8, 35, CLSTATS_BOUNDARY_MIRROR, 0.0f},   {10, 3, 10, 7, CLSTATS_BOUNDARY_CONSTANT, 2.5f},
};

static size_t check_design(const char *design)
{
    size_t bad = 0;
    test_tune("filter.path", design);
    for (size_t i = 0; i < sizeof filter_cases / sizeof filter_cases[0]; i++) {
        const struct filter_case *c = &filter_cases[i];
        float *img = hard_values(c->stride * c->ny, 100 + i);
        const size_t n = c->nx * c->ny;
        float *med = malloc(n * sizeof *med), *mad = malloc(n * sizeof *mad);
        float *ref_med = malloc(n * sizeof *med), *ref_mad = malloc(n * sizeof *mad);
        const struct clstats_filter_params p = {
            .width = c->width, .boundary = c->mode, .cval = c->cval};
        const int st =
            clstats_median_filter(test_ctx(), img, c->nx, c->ny, c->stride, &p, med, mad);
        ck_assert_msg(st == CLSTATS_OK, "%s: %s", design, clstats_ctx_message(test_ctx()));
        ck_assert_int_eq(
            reference_median_filter(img, c->nx, c->ny, c->stride, &p, ref_med, ref_mad), 0);
        char what[96];
        snprintf(what, sizeof what, "%s %zux%zu w=%d %s median", design, c->nx, c->ny, c->width,
                 clstats_boundary_name(c->mode));
        bad += test_compare_bits(med, ref_med, n, c->nx, what);
        bad += test_compare_bits(mad, ref_mad, n, c->nx, what);
        free(img), free(med), free(mad), free(ref_med), free(ref_mad);
    }
    test_tune("filter.path", NULL);
    return bad;
}

START_TEST(filter_designs_match_the_reference)
{
    static const char *designs[] = {"sorted", "bisect", "binned", "rank"};
    size_t bad = 0;
    for (size_t d = 0; d < sizeof designs / sizeof designs[0]; d++)
        bad += check_design(designs[d]);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* ---- Whole-array selection -------------------------------------------------------------- */

static const enum clstats_select_method methods[] = {
    CLSTATS_SELECT_RADIX, CLSTATS_SELECT_CUTTING_PLANE, CLSTATS_SELECT_SAMPLE};
static const char *const method_names[] = {"radix", "cutting-plane", "sample"};

START_TEST(selection_methods_match_the_reference)
{
    static const size_t sizes[] = {1, 6, 2049}; /* one, even, over a tile of 2048 */
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        float *x = hard_values(n, 200 + si);
        x[0] = 1.0f; /* at least one valid value */
        double *x64 = malloc(n * sizeof *x64);
        for (size_t i = 0; i < n; i++)
            x64[i] = (double)x[i] * (1.0 + 0x1p-40); /* float64 bits the float32 lack */
        size_t nv;
        float *s = ref_sorted_f32(x, n, &nv);
        double *s64 = ref_sorted_f64(x64, n, &nv);
        const uint64_t ks[] = {0, nv / 2, nv - 1};
        for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; mi++) {
            const struct clstats_select_options o = {.method = methods[mi]};
            float got, want = ref_median_f32(x, n, CLSTATS_EVEN_MEAN);
            double got64, want64 = ref_median_f64(x64, n, CLSTATS_EVEN_MEAN);
            ck_assert_int_eq(clstats_median(test_ctx(), x, n, &o, &got), CLSTATS_OK);
            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%s n=%zu: median %.9g, want %.9g",
                          method_names[mi], n, got, want);
            if (clstats_median_f64(test_ctx(), x64, n, &o, &got64) != CLSTATS_ERR_UNSUPPORTED)
                ck_assert_msg(memcmp(&got64, &want64, sizeof got64) == 0,
                              "%s n=%zu: float64 median %.17g, want %.17g", method_names[mi], n,
                              got64, want64);
            for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
                ck_assert_int_eq(clstats_select_kth(test_ctx(), x, n, ks[i], &o, &got), CLSTATS_OK);
                ck_assert_msg(memcmp(&got, &s[ks[i]], sizeof got) == 0, "%s n=%zu k=%llu",
                              method_names[mi], n, (unsigned long long)ks[i]);
                if (clstats_select_kth_f64(test_ctx(), x64, n, ks[i], &o, &got64) == CLSTATS_OK)
                    ck_assert_msg(memcmp(&got64, &s64[ks[i]], sizeof got64) == 0,
                                  "%s n=%zu k=%llu float64", method_names[mi], n,
                                  (unsigned long long)ks[i]);
            }
        }
        free(x), free(x64), free(s), free(s64);
    }
}
END_TEST

/* ---- Column and tile medians ------------------------------------------------------------ */

/* Small settings of the paths GPUs take (as tests/test_column_*.c force them), so that they
 * run on small matrices. */
static void use_path(const char *path)
{
    test_tune("columns.method", path);
    if (strcmp(path, "bracket") == 0) {
        test_tune("bracket.sample", "64");
        test_tune("bracket.sample_wg", "32");
        test_tune("bracket.cells", "16");
        test_tune("bracket.lanes", "8");
        test_tune("bracket.chunk", "32");
        test_tune("bracket.groups", "64");
        test_tune("bracket.finish_wg", "64");
    } else if (strcmp(path, "radix") != 0) {
        test_tune("registers.cols", "3");
        test_tune("registers.wg", "96");
        test_tune("registers.sample_stride", "2");
        test_tune("registers.log2_bins", "7");
        test_tune("registers.sigmas", "2");
        test_tune("registers.cap", "8");
        test_tune("registers.rounds", "8");
        test_tune("registers.held", "2");
        test_tune("registers.stream", "3");
        test_tune("registers.pass_cap", "64");
    }
}

static void use_default_paths(void)
{
    static const char *names[] = {"columns.method",          "bracket.sample",
                                  "bracket.sample_wg",       "bracket.cells",
                                  "bracket.lanes",           "bracket.chunk",
                                  "bracket.groups",          "bracket.finish_wg",
                                  "registers.cols",          "registers.wg",
                                  "registers.sample_stride", "registers.log2_bins",
                                  "registers.sigmas",        "registers.cap",
                                  "registers.rounds",        "registers.held",
                                  "registers.stream",        "registers.pass_cap"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        test_tune(names[i], NULL);
}

START_TEST(column_medians_match_the_reference_on_every_path)
{
    static const char *paths[] = {"radix", "bracket", "registers", "streamed"};
    const size_t rows = 200, cols = 14, ld = 15;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        use_path(paths[i]);
        float *m = column_cases_matrix(rows, cols, ld, 300 + i);
        column_cases_check(m, rows, cols, ld, paths[i]);
        free(m);
        /* The path itself, not a fallback to the radix kernel, gave those medians. */
        if (i > 0) {
            clstats__column_path path = i == 1   ? clstats__column_bracket
                                        : i == 2 ? clstats__column_registers
                                                 : clstats__column_streamed;
            m = column_cases_matrix(rows, cols, cols, 300 + i);
            const struct column_bracket_report rep = column_cases_run_path(path, m, rows, cols);
            ck_assert_msg(rep.missed < cols, "%s left every column to the radix kernel", paths[i]);
            free(m);
        }
    }
    use_default_paths();
}
END_TEST

START_TEST(tile_medians_match_the_reference)
{
    const size_t nx = 37, ny = 29, stride = 40, tw = 8, th = 6;
    const size_t ntx = (nx + tw - 1) / tw, nty = (ny + th - 1) / th;
    float *img = hard_values(stride * ny, 400);
    float *got = malloc(ntx * nty * sizeof *got), *want = malloc(ntx * nty * sizeof *want);
    ck_assert_int_eq(clstats_tile_medians(test_ctx(), img, nx, ny, stride, tw, th, NULL, got),
                     CLSTATS_OK);
    ref_tile_medians(img, nx, ny, stride, tw, th, CLSTATS_EVEN_MEAN, want);
    ck_assert_uint_eq(test_compare_bits(got, want, ntx * nty, ntx, "tile medians"), 0);
    free(img), free(got), free(want);
}
END_TEST

/* The mesh background's two kernel files on a sky of 3 x 2 boxes, a work-group of 8 items
 * sharing each box (reductions, the histogram's local atomics) and one item a box (on PoCL one
 * item only: see test_background.c). */
START_TEST(background_matches_the_reference)
{
    enum { NX = 37, NY = 26, N = NX * NY };
    static float img[N], back[N], rms[N], rb[N], rr[N];
    static uint8_t mask[N];
    struct test_rng r;
    test_rng_seed(&r, test_seed() + 27);
    for (size_t i = 0; i < N; i++) {
        img[i] = (float)(50 + 0.5 * (i % NX) + 3 * test_rng_normal(&r));
        if (i % 17 == 0) img[i] = NAN;
        mask[i] = i % 23 == 0;
    }
    float gb, gr;
    reference_background(img, NX, NY, NX, mask, 16, 16, 3, 3, 0.0, 3.0, 0, rb, rr, &gb, &gr);
    const char *groups[] = {"1", "8"};
    const bool pocl = strstr(clstats_ctx_device_name(test_ctx()), "Portable Computing") != NULL;
    for (int g = 0; g < (pocl ? 1 : 2); g++) {
        test_tune("background.wg", groups[g]);
        struct clstats_array im = {.host = img, .dtype = CLSTATS_FLOAT32, .nx = NX, .ny = NY};
        struct clstats_array ob = im, orr = im;
        ob.host = back;
        orr.host = rms;
        struct clstats_background_options o = {16, 16, 3, 3, 0.0, 3.0, CLSTATS_BKG_SEXTRACTOR};
        struct clstats_background *b = NULL;
        ck_assert_int_eq(clstats_background(test_ctx(), &im, mask, &o, &b), CLSTATS_OK);
        ck_assert_int_eq(clstats_background_maps(test_ctx(), b, &ob, &orr), CLSTATS_OK);
        ck_assert_uint_eq(test_compare_bits(back, rb, N, NX, "background"), 0);
        ck_assert_uint_eq(test_compare_bits(rms, rr, N, NX, "rms"), 0);
        ck_assert(b->global_back == gb && b->global_rms == gr);
        clstats_background_free(b);
    }
    test_tune("background.wg", NULL);
}
END_TEST

int main(void)
{
    /* A case a family, so that CK_RUN_CASE=NAME runs one (a simulator is slow). */
    const struct {
        const char *name;
        const TTest *test;
    } families[] = {
        {"filter", filter_designs_match_the_reference},
        {"select", selection_methods_match_the_reference},
        {"columns", column_medians_match_the_reference_on_every_path},
        {"tiles", tile_medians_match_the_reference},
        {"background", background_matches_the_reference},
    };
    Suite *s = suite_create("tiny_kernels");
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        TCase *tc = tcase_create(families[i].name);
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, families[i].test);
        suite_add_tcase(s, tc);
    }
    return test_run_suite(s);
}
