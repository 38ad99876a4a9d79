/* test_filter.c - clstats_median_filter against the plain C reference, bit for bit: random data
 * with NaNs, ties, constant regions and infinities, tiny and odd shapes, windows wider than the
 * image, every boundary mode; plus argument checks and the boundary definitions themselves. */
#include "reference_filter.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fill {
    FILL_NORMAL,     /* smooth noise, few ties */
    FILL_INTEGERS,   /* 0..4: ties everywhere */
    FILL_CONSTANT,   /* constant blocks on noise */
    FILL_HEAVY_TAIL, /* noise with 10% of values at +-1e30 and some infinities */
    FILL_SPARSE,     /* 70% NaN: many empty and even-count windows */
    FILL_NAN_BLOCKS, /* noise with NaN rectangles: windows with no valid value, or a few */
    FILL_ZEROS,      /* -0, +0, +-1 and the smallest subnormals: ties of equal values, other bits */
    FILL_HUGE,       /* values near +-FLT_MAX and infinities: middles whose sum overflows */
};

static const char *fill_name[] = {"normal", "integers",   "constant", "heavy-tail",
                                  "sparse", "nan-blocks", "zeros",    "huge"};

/* NaNs of either sign and with payloads, as real data has: every one is missing data. */
static float odd_nan(uint64_t bits)
{
    uint32_t u = 0x7f800001u | (uint32_t)(bits & 0x807fffffu);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static void fill_image(float *img, size_t nx, size_t ny, size_t stride, enum fill kind,
                       double nan_fraction, uint64_t seed)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    for (size_t y = 0; y < ny; y++) {
        for (size_t x = 0; x < stride; x++) {
            float v;
            double u = test_rng_uniform(&rng);
            switch (kind) {
            case FILL_INTEGERS: v = (float)(test_rng_next(&rng) % 5); break;
            case FILL_CONSTANT:
                v = ((x / 7 + y / 5) % 2) ? 3.25f : (float)test_rng_normal(&rng);
                break;
            case FILL_HEAVY_TAIL:
                v = (float)test_rng_normal(&rng);
                if (u < 0.05) v = 1e30f;
                else if (u < 0.10) v = -1e30f;
                else if (u < 0.12) v = INFINITY;
                else if (u < 0.13) v = -INFINITY;
                break;
            case FILL_SPARSE:
                v = u < 0.7 ? NAN : (float)(test_rng_normal(&rng) * 100.0);
                break;
            case FILL_NAN_BLOCKS:
                v = ((x / 13) % 3 == 1 && (y / 9) % 2 == 1) ? NAN : (float)test_rng_normal(&rng);
                break;
            case FILL_ZEROS: {
                static const float zeros[] = {-0.0f, 0.0f, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f};
                v = zeros[test_rng_next(&rng) % 6];
                break;
            }
            case FILL_HUGE:
                v = (float)(3.0e38 + 2.0e37 * test_rng_uniform(&rng));
                if (u < 0.4)
                    v = -v;
                else if (u < 0.45)
                    v = INFINITY;
                else if (u < 0.5)
                    v = -INFINITY;
                else if (u < 0.6)
                    v = 1.0f;
                break;
            default: v = (float)(test_rng_normal(&rng) * 10.0 + 100.0); break;
            }
            if (kind != FILL_SPARSE && test_rng_uniform(&rng) < nan_fraction) v = NAN;
            if (isnan(v)) v = odd_nan(test_rng_next(&rng));
            /* Padding past nx must never be read: poison it. */
            img[y * stride + x] = x < nx ? v : -12345.0f;
        }
    }
}

/* Runs the device and the reference on one case; returns the number of mismatching pixels. */
static size_t run_case(size_t nx, size_t ny, size_t stride, int width,
                       enum clstats_boundary mode, float cval, enum fill kind, double nan_frac,
                       uint64_t seed)
{
    float *img = malloc(stride * ny * sizeof *img);
    float *med = malloc(nx * ny * sizeof *med), *mad = malloc(nx * ny * sizeof *mad);
    float *ref_med = malloc(nx * ny * sizeof *med), *ref_mad = malloc(nx * ny * sizeof *mad);
    ck_assert(img && med && mad && ref_med && ref_mad);
    fill_image(img, nx, ny, stride, kind, nan_frac, seed);

    struct clstats_filter_params p = {.width = width, .boundary = mode, .cval = cval};
    int status = clstats_median_filter(test_ctx(), img, nx, ny, stride, &p, med, mad);
    ck_assert_msg(status == CLSTATS_OK, "filter failed: %s: %s", clstats_strerror(status),
                  clstats_ctx_message(test_ctx()));
    ck_assert_int_eq(reference_median_filter(img, nx, ny, stride, &p, ref_med, ref_mad), 0);

    char what[160];
    snprintf(what, sizeof what, "%zux%zu w=%d %s %s seed=%llu median", nx, ny, width,
             clstats_boundary_name(mode), fill_name[kind], (unsigned long long)seed);
    size_t bad = test_compare_bits(med, ref_med, nx * ny, nx, what);
    memcpy(what + strlen(what) - 6, "MAD   ", 6);
    bad += test_compare_bits(mad, ref_mad, nx * ny, nx, what);
    free(img), free(med), free(mad), free(ref_med), free(ref_mad);
    return bad;
}

static const enum clstats_boundary all_modes[] = {
    CLSTATS_BOUNDARY_REFLECT, CLSTATS_BOUNDARY_MIRROR, CLSTATS_BOUNDARY_NEAREST,
    CLSTATS_BOUNDARY_CONSTANT, CLSTATS_BOUNDARY_WRAP};

START_TEST(median_mad_match_reference_every_mode_and_shape)
{
    static const size_t shapes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {7, 5}, {33, 17}, {64, 3}};
    static const int widths[] = {1, 3, 5, 11};
    size_t bad = 0;
    uint64_t seed = test_seed();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
            for (int m = 0; m < 5; m++)
                bad += run_case(shapes[s][0], shapes[s][1], shapes[s][0], widths[wi],
                                all_modes[m], 1.5f, FILL_NORMAL, 0.1, seed++);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(median_mad_exact_on_ties_constants_and_infinities)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 1000;
    for (int kind = FILL_INTEGERS; kind <= FILL_SPARSE; kind++)
        for (int m = 0; m < 5; m++)
            for (int w = 3; w <= 11; w += 8)
                bad += run_case(29, 23, 29, w, all_modes[m], -2.0f, (enum fill)kind, 0.05,
                                seed++);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Large windows put more values in the median's bin than fit in registers, so they exercise
 * the narrowing in key space; heavy tails and integer ties make it work hardest. */
START_TEST(large_windows_take_the_exact_fallback)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 2000;
    for (int kind = FILL_NORMAL; kind <= FILL_HEAVY_TAIL; kind++)
        bad += run_case(40, 36, 41, 31, CLSTATS_BOUNDARY_REFLECT, 0.0f, (enum fill)kind, 0.02,
                        seed++);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The library picks the bisection design on GPUs where its local-memory tile fits, else the
 * binned one; each design is judged here on the same cases, whatever the device. */
static size_t design_cases(const char *design, uint64_t seed)
{
    size_t bad = 0;
    setenv("CLSTATS_FILTER_PATH", design, 1);
    for (int m = 0; m < 5; m++) {
        bad += run_case(33, 17, 35, 5, all_modes[m], 1.5f, FILL_NORMAL, 0.1, seed++);
        bad += run_case(7, 5, 7, 11, all_modes[m], 1.5f, FILL_INTEGERS, 0.1, seed++);
        bad += run_case(9, 1, 9, 3, all_modes[m], 1.5f, FILL_SPARSE, 0.0, seed++);
    }
    bad += run_case(40, 36, 41, 31, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_HEAVY_TAIL, 0.02, seed++);
    bad += run_case(23, 19, 23, 11, CLSTATS_BOUNDARY_WRAP, 0.0f, FILL_CONSTANT, 0.05, seed++);
    unsetenv("CLSTATS_FILTER_PATH");
    return bad;
}

START_TEST(rank_design_matches_reference)
{
    ck_assert_uint_eq(design_cases("rank", test_seed() + 7000), 0);
}
END_TEST

/* The rank design sweeps tiles of the image, so sizes around and between tiles, single rows
 * and columns and windows wider than the image are where it could go wrong. */
START_TEST(rank_design_exact_at_tile_edges_and_odd_shapes)
{
    static const size_t shapes[][2] = {{1, 1},   {1, 100}, {100, 1}, {2, 77},  {77, 2},
                                       {31, 33}, {33, 31}, {65, 9},  {70, 67}, {129, 5}};
    static const int widths[] = {1, 3, 11, 21};
    size_t bad = 0;
    uint64_t seed = test_seed() + 8000;
    setenv("CLSTATS_FILTER_PATH", "rank", 1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
            bad += run_case(shapes[s][0], shapes[s][1], shapes[s][0] + 3, widths[wi],
                            all_modes[(s + wi) % 5], 0.5f, (enum fill)((s + wi) % 5), 0.1, seed++);
    unsetenv("CLSTATS_FILTER_PATH");
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Images of many tiles: cursors and counts carried along long snake sweeps, NaNs and ties
 * entering and leaving all the way. */
START_TEST(rank_design_exact_on_images_of_many_tiles)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 11000;
    setenv("CLSTATS_FILTER_PATH", "rank", 1);
    bad += run_case(211, 157, 213, 11, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_NORMAL, 0.02, seed++);
    bad += run_case(190, 170, 190, 21, CLSTATS_BOUNDARY_NEAREST, 0.0f, FILL_INTEGERS, 0.05, seed++);
    bad += run_case(160, 140, 161, 5, CLSTATS_BOUNDARY_MIRROR, 0.0f, FILL_SPARSE, 0.0, seed++);
    bad +=
        run_case(150, 130, 150, 15, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_HEAVY_TAIL, 0.1, seed++);
    unsetenv("CLSTATS_FILTER_PATH");
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Windows with no valid value, even counts from NaNs, -0 beside +0 (equal values, other bits),
 * subnormal deviations, and middles whose sum overflows (the MAD then measures from an
 * infinite median); constant mode with a NaN cval makes the border missing data too. */
START_TEST(rank_design_exact_on_nan_blocks_signed_zeros_and_huge_values)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 9000;
    setenv("CLSTATS_FILTER_PATH", "rank", 1);
    for (int kind = FILL_SPARSE; kind <= FILL_HUGE; kind++) {
        for (int w = 1; w <= 11; w += 2) {
            bad += run_case(45, 38, 45, w, CLSTATS_BOUNDARY_CONSTANT, NAN, (enum fill)kind, 0.1,
                            seed++);
            bad += run_case(38, 45, 40, w, all_modes[w % 5], -0.0f, (enum fill)kind, 0.0, seed++);
        }
    }
    unsetenv("CLSTATS_FILTER_PATH");
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Large windows on small images: the tile's halo is most of its input, and windows hold
 * hundreds or thousands of values with ties, tails and NaNs. */
START_TEST(rank_design_exact_for_wide_windows_on_small_images)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 10000;
    setenv("CLSTATS_FILTER_PATH", "rank", 1);
    for (int kind = FILL_NORMAL; kind <= FILL_HUGE; kind++) {
        bad += run_case(37, 29, 37, 31, all_modes[kind % 5], 2.0f, (enum fill)kind, 0.05, seed++);
        bad +=
            run_case(23, 41, 25, 51, all_modes[(kind + 2) % 5], NAN, (enum fill)kind, 0.05, seed++);
    }
    bad += run_case(9, 7, 9, 101, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_INTEGERS, 0.1, seed++);
    /* The widest window: where the rank tile cannot fit, the plan falls back to binned. */
    bad +=
        run_case(3, 2, 3, CLSTATS_MAX_WIDTH, CLSTATS_BOUNDARY_WRAP, 0.0f, FILL_NORMAL, 0.1, seed++);
    unsetenv("CLSTATS_FILTER_PATH");
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(bisect_design_matches_reference)
{
    ck_assert_uint_eq(design_cases("bisect", test_seed() + 6000), 0);
}
END_TEST

START_TEST(sorted_design_matches_reference)
{
    ck_assert_uint_eq(design_cases("sorted", test_seed() + 7000), 0);
}
END_TEST

/* The sorted design's work-group shapes: groups cut by the image's edges, several pixels per
 * work-item, shapes larger and smaller than the window. */
START_TEST(sorted_design_shapes_match_reference)
{
    static const char *shapes[] = {"32,8,2", "8,2,3", "4,4,1", "16,1,4"};
    size_t bad = 0;
    uint64_t seed = test_seed() + 7500;
    setenv("CLSTATS_FILTER_PATH", "sorted", 1);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        setenv("CLSTATS_FILTER_SHAPE", shapes[i], 1);
        bad += run_case(37, 29, 40, 7, all_modes[i % 5], 2.0f, FILL_NORMAL, 0.05, seed++);
        bad += run_case(31, 9, 31, 11, all_modes[(i + 1) % 5], 2.0f, FILL_INTEGERS, 0.1, seed++);
        bad += run_case(20, 21, 20, 3, all_modes[(i + 2) % 5], 2.0f, FILL_SPARSE, 0.0, seed++);
        bad += run_case(19, 23, 19, 15, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_HEAVY_TAIL, 0.1,
                        seed++);
    }
    unsetenv("CLSTATS_FILTER_SHAPE");
    bad += run_case(70, 66, 70, 51, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_NORMAL, 0.01, seed++);
    bad += run_case(45, 40, 45, 63, CLSTATS_BOUNDARY_MIRROR, 0.0f, FILL_INTEGERS, 0.02, seed++);
    unsetenv("CLSTATS_FILTER_PATH");
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Every width the sorted design serves: each builds its own sorting code (one network up to
 * 16 keys, blocks of networks merged above: src/sort_network.c), and every one must build on
 * every compiler and sort exactly, with NaNs, ties, infinities and -0 in the segments. */
START_TEST(sorted_design_exact_at_every_width)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 7800;
    setenv("CLSTATS_FILTER_PATH", "sorted", 1);
    for (int w = 1; w <= 63; w += 2) {
        const enum fill kind = (enum fill)(w / 2 % (FILL_HUGE + 1));
        bad += run_case(21, 19, 22, w, all_modes[w / 2 % 5], 1.0f, kind, 0.1, seed++);
    }
    unsetenv("CLSTATS_FILTER_PATH");
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(binned_design_matches_reference)
{
    ck_assert_uint_eq(design_cases("binned", test_seed() + 5000), 0);
}
END_TEST

START_TEST(window_wider_than_image_folds_like_scipy)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 3000;
    for (int m = 0; m < 5; m++) {
        bad += run_case(3, 4, 3, 11, all_modes[m], 7.0f, FILL_NORMAL, 0.0, seed++);
        bad += run_case(5, 2, 6, 31, all_modes[m], 7.0f, FILL_INTEGERS, 0.1, seed++);
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* A band as clstats_median_filter_band wants it: band row j is the image row that window
 * position row0 + j - w/2 stands for; the constant's rows get junk, which must never be read. */
static float *make_band(const float *img, size_t ny, size_t stride, size_t row0, size_t rows, int w,
                        enum clstats_boundary mode)
{
    size_t band_rows = rows + (size_t)w - 1;
    float *band = malloc(band_rows * stride * sizeof *band);
    ck_assert_ptr_nonnull(band);
    for (size_t j = 0; j < band_rows; j++) {
        long src = clstats_boundary_index((long)(row0 + j) - w / 2, ny, mode);
        for (size_t x = 0; x < stride; x++)
            band[j * stride + x] = src < 0 ? -777.0f : img[(size_t)src * stride + x];
    }
    return band;
}

/* Strips of every height (one row, several, the whole image, and windows taller than the
 * strip or than the image) in every mode give the same bits as the one-piece call. */
START_TEST(bands_give_the_whole_image_maps_bit_for_bit)
{
    const size_t nx = 19, ny = 13, stride = 21;
    static const int widths[] = {1, 3, 11, 31};
    static const size_t heights[] = {1, 4, 13};
    float *img = malloc(stride * ny * sizeof *img);
    float *med = malloc(nx * ny * sizeof *med), *mad = malloc(nx * ny * sizeof *mad);
    float *want_med = malloc(nx * ny * sizeof *med), *want_mad = malloc(nx * ny * sizeof *mad);
    uint64_t seed = test_seed() + 7000;
    size_t bad = 0;
    for (int m = 0; m < 5; m++) {
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            const int w = widths[wi];
            fill_image(img, nx, ny, stride, m % 2 ? FILL_INTEGERS : FILL_NORMAL, 0.1, seed++);
            struct clstats_filter_params p = {.width = w, .boundary = all_modes[m], .cval = 2.0f};
            ck_assert_int_eq(
                clstats_median_filter(test_ctx(), img, nx, ny, stride, &p, want_med, want_mad),
                CLSTATS_OK);
            for (size_t hi = 0; hi < sizeof heights / sizeof heights[0]; hi++) {
                memset(med, 0xff, nx * ny * sizeof *med);
                memset(mad, 0xff, nx * ny * sizeof *mad);
                for (size_t y0 = 0; y0 < ny; y0 += heights[hi]) {
                    size_t rows = ny - y0 < heights[hi] ? ny - y0 : heights[hi];
                    float *band = make_band(img, ny, stride, y0, rows, w, all_modes[m]);
                    int status = clstats_median_filter_band(test_ctx(), band, nx, ny, stride, y0,
                                                            rows, &p, med + y0 * nx, mad + y0 * nx);
                    ck_assert_msg(status == CLSTATS_OK, "band: %s",
                                  clstats_ctx_message(test_ctx()));
                    free(band);
                }
                char what[120];
                snprintf(what, sizeof what, "%s w=%d strips of %zu", fill_name[m % 2], w,
                         heights[hi]);
                bad += test_compare_bits(med, want_med, nx * ny, nx, what);
                bad += test_compare_bits(mad, want_mad, nx * ny, nx, what);
            }
        }
    }
    ck_assert_uint_eq(bad, 0);
    free(img), free(med), free(mad), free(want_med), free(want_mad);
}
END_TEST

START_TEST(band_rows_outside_the_image_are_refused)
{
    float band[4 * 7] = {0}, out[4 * 3];
    clstats_ctx *ctx = test_ctx();
    struct clstats_filter_params p = {.width = 3};
    ck_assert_int_eq(clstats_median_filter_band(ctx, band, 4, 5, 4, 3, 3, &p, out, NULL),
                     CLSTATS_ERR_ARG);
    ck_assert(strstr(clstats_ctx_message(ctx), "not rows") != NULL);
    ck_assert_int_eq(clstats_median_filter_band(ctx, band, 4, 5, 4, 0, 0, &p, out, NULL),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_median_filter_band(ctx, band, 4, 5, 4, 5, 1, &p, out, NULL),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_median_filter_band(ctx, band, 4, 5, 4, 2, 3, &p, out, NULL),
                     CLSTATS_OK);
}
END_TEST

START_TEST(constant_mode_nan_cval_means_missing)
{
    /* cval NaN: outside counts as missing, so a 1x1 image's median is itself. */
    float img[1] = {4.0f}, med, mad;
    struct clstats_filter_params p = {.width = 3, .boundary = CLSTATS_BOUNDARY_CONSTANT,
                                      .cval = NAN};
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 1, 1, 1, &p, &med, &mad),
                     CLSTATS_OK);
    ck_assert_float_eq(med, 4.0f);
    ck_assert_float_eq(mad, 0.0f);
    /* cval 0: eight zeros and a 4. */
    p.cval = 0.0f;
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 1, 1, 1, &p, &med, &mad),
                     CLSTATS_OK);
    ck_assert_float_eq(med, 0.0f);
    ck_assert_float_eq(mad, 0.0f);
}
END_TEST

START_TEST(all_nan_window_is_nan_and_even_count_takes_the_mean)
{
    /* Row of 4: NaN NaN 1 2 with w=3, nearest: pixel 0 sees NaN NaN NaN (x3 rows) -> NaN;
     * pixel 1 sees NaN NaN 1 -> 1; pixel 2 sees NaN 1 2 -> 1.5 (even count). */
    float img[4] = {NAN, NAN, 1.0f, 2.0f}, med[4], mad[4];
    struct clstats_filter_params p = {.width = 3, .boundary = CLSTATS_BOUNDARY_NEAREST};
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 4, 1, 4, &p, med, mad), CLSTATS_OK);
    ck_assert(isnan(med[0]) && isnan(mad[0]));
    ck_assert_float_eq(med[1], 1.0f);
    ck_assert_float_eq(med[2], 1.5f);
    ck_assert_float_eq(mad[2], 0.5f);
    uint32_t bits;
    memcpy(&bits, &med[0], 4);
    ck_assert_uint_eq(bits, 0x7fc00000u); /* one NaN on every device */

    /* Two equal middles give themselves: (3e38 + 3e38) / 2 would overflow to inf. */
    float big[6] = {1.0f, 3e38f, 3e38f, NAN, 3e38f, 2.0f}, bmed[6], bmad[6];
    struct clstats_filter_params q = {.width = 5, .boundary = CLSTATS_BOUNDARY_CONSTANT,
                                      .cval = NAN};
    ck_assert_int_eq(clstats_median_filter(test_ctx(), big, 6, 1, 6, &q, bmed, bmad), CLSTATS_OK);
    ck_assert_float_eq(bmed[2], 3e38f); /* window 1, 3e38, 3e38, 3e38 */
    ck_assert_float_eq(bmad[2], 0.0f);
}
END_TEST

START_TEST(median_of_infinities_and_mad_of_an_infinite_median)
{
    /* A 1x3 row with w=3, constant mode cval=+inf: window of pixel 0 is inf,inf,inf, -inf,
     * 5, 6, ... Checked against the reference rather than by hand. */
    float img[3] = {-INFINITY, 5.0f, INFINITY};
    size_t bad = 0;
    for (int m = 0; m < 5; m++) {
        float med[3], mad[3], rmed[3], rmad[3];
        struct clstats_filter_params p = {.width = 3, .boundary = all_modes[m],
                                          .cval = INFINITY};
        ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 3, 1, 3, &p, med, mad),
                         CLSTATS_OK);
        reference_median_filter(img, 3, 1, 3, &p, rmed, rmad);
        bad += test_compare_bits(med, rmed, 3, 3, "inf median");
        bad += test_compare_bits(mad, rmad, 3, 3, "inf MAD");
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(only_median_or_only_mad_gives_the_same_maps)
{
    enum { NX = 17, NY = 13 };
    float img[NX * NY], both_med[NX * NY], both_mad[NX * NY], med[NX * NY], mad[NX * NY];
    fill_image(img, NX, NY, NX, FILL_INTEGERS, 0.1, test_seed() + 4000);
    struct clstats_filter_params p = {.width = 5};
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, NX, NY, NX, &p, both_med, both_mad),
                     CLSTATS_OK);
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, NX, NY, NX, &p, med, NULL),
                     CLSTATS_OK);
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, NX, NY, NX, &p, NULL, mad),
                     CLSTATS_OK);
    ck_assert_uint_eq(test_compare_bits(med, both_med, NX * NY, NX, "median only"), 0);
    ck_assert_uint_eq(test_compare_bits(mad, both_mad, NX * NY, NX, "MAD only"), 0);
}
END_TEST

static int progress_calls;
static double progress_last;
static void count_progress(void *user, double fraction)
{
    (void)user;
    progress_calls++;
    ck_assert(fraction > progress_last && fraction <= 1.0);
    progress_last = fraction;
}

START_TEST(progress_reaches_one)
{
    float img[64], med[64];
    fill_image(img, 8, 8, 8, FILL_NORMAL, 0.0, 1);
    struct clstats_filter_params p = {.width = 3, .progress = count_progress};
    progress_calls = 0;
    progress_last = 0.0;
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 8, 8, 8, &p, med, NULL), CLSTATS_OK);
    ck_assert_int_ge(progress_calls, 1);
    ck_assert(progress_last == 1.0);
}
END_TEST

START_TEST(bad_arguments_are_refused_with_a_message)
{
    float img[16] = {0}, out[16];
    clstats_ctx *ctx = test_ctx();
    struct clstats_filter_params p = {.width = 4};
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    ck_assert(strstr(clstats_ctx_message(ctx), "odd") != NULL);
    p.width = 0;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    p.width = -3;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    p.width = CLSTATS_MAX_WIDTH + 2;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    p.width = 3;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 3, &p, out, NULL), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_median_filter(ctx, img, 0, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, NULL, NULL), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_median_filter(ctx, NULL, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_median_filter(NULL, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    p.boundary = (enum clstats_boundary)17;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
}
END_TEST

START_TEST(boundary_names_round_trip)
{
    enum clstats_boundary b;
    for (int m = 0; m < 5; m++) {
        ck_assert_int_eq(clstats_boundary_from_name(clstats_boundary_name(all_modes[m]), &b),
                         CLSTATS_OK);
        ck_assert_int_eq(b, all_modes[m]);
    }
    ck_assert_int_eq(clstats_boundary_from_name("reflective", &b), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_boundary_from_name(NULL, &b), CLSTATS_ERR_ARG);
}
END_TEST

/* scipy.ndimage's own answers (correlate1d with one tap at offset i, positions -9..n+8), so the
 * reference's folding is judged by scipy, not by us. */
START_TEST(reference_boundaries_match_scipy_known_answers)
{
    static const struct {
        enum clstats_boundary mode;
        int n;
        int idx[22];
    } known[] = {
        {CLSTATS_BOUNDARY_REFLECT, 2, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1}},
        {CLSTATS_BOUNDARY_REFLECT, 3,
         {2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0}},
        {CLSTATS_BOUNDARY_REFLECT, 4,
         {0, 0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3, 3}},
        {CLSTATS_BOUNDARY_MIRROR, 2, {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}},
        {CLSTATS_BOUNDARY_MIRROR, 3,
         {1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1}},
        {CLSTATS_BOUNDARY_MIRROR, 4,
         {3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0}},
        {CLSTATS_BOUNDARY_NEAREST, 3,
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
        {CLSTATS_BOUNDARY_WRAP, 3, {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}},
        {CLSTATS_BOUNDARY_WRAP, 4,
         {3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0}},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        for (int i = -9; i < known[k].n + 9; i++)
            ck_assert_int_eq(reference_extend(i, known[k].n, known[k].mode), known[k].idx[i + 9]);
    for (int m = 0; m < 5; m++) /* one sample: every mode gives it */
        if (all_modes[m] != CLSTATS_BOUNDARY_CONSTANT)
            for (int i = -9; i < 10; i++) ck_assert_int_eq(reference_extend(i, 1, all_modes[m]), 0);
    ck_assert_int_eq(reference_extend(-1, 4, CLSTATS_BOUNDARY_CONSTANT), -1);
}
END_TEST

/* The library's public folding (what callers build bands with) against the reference's. */
START_TEST(boundary_index_matches_the_reference)
{
    for (int m = 0; m < 5; m++)
        for (long n = 1; n <= 6; n++)
            for (long i = -40; i < n + 40; i++)
                ck_assert_int_eq(clstats_boundary_index(i, (size_t)n, all_modes[m]),
                                 reference_extend(i, n, all_modes[m]));
    ck_assert_int_eq(clstats_boundary_index(0, 0, CLSTATS_BOUNDARY_WRAP), -1);
    ck_assert_int_eq(clstats_boundary_index(0, 3, (enum clstats_boundary)9), -1);
}
END_TEST

static Suite *filter_suite(void)
{
    Suite *s = suite_create("median_filter");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, reference_boundaries_match_scipy_known_answers);
    tcase_add_test(tc, boundary_names_round_trip);
    tcase_add_test(tc, boundary_index_matches_the_reference);
    tcase_add_test(tc, band_rows_outside_the_image_are_refused);
    tcase_add_test(tc, bands_give_the_whole_image_maps_bit_for_bit);
    tcase_add_test(tc, bad_arguments_are_refused_with_a_message);
    tcase_add_test(tc, all_nan_window_is_nan_and_even_count_takes_the_mean);
    tcase_add_test(tc, constant_mode_nan_cval_means_missing);
    tcase_add_test(tc, median_of_infinities_and_mad_of_an_infinite_median);
    tcase_add_test(tc, only_median_or_only_mad_gives_the_same_maps);
    tcase_add_test(tc, progress_reaches_one);
    tcase_add_test(tc, median_mad_match_reference_every_mode_and_shape);
    tcase_add_test(tc, median_mad_exact_on_ties_constants_and_infinities);
    tcase_add_test(tc, window_wider_than_image_folds_like_scipy);
    tcase_add_test(tc, large_windows_take_the_exact_fallback);
    tcase_add_test(tc, binned_design_matches_reference);
    tcase_add_test(tc, bisect_design_matches_reference);
    tcase_add_test(tc, sorted_design_matches_reference);
    tcase_add_test(tc, sorted_design_shapes_match_reference);
    tcase_add_test(tc, sorted_design_exact_at_every_width);
    tcase_add_test(tc, rank_design_matches_reference);
    tcase_add_test(tc, rank_design_exact_at_tile_edges_and_odd_shapes);
    tcase_add_test(tc, rank_design_exact_on_images_of_many_tiles);
    tcase_add_test(tc, rank_design_exact_on_nan_blocks_signed_zeros_and_huge_values);
    tcase_add_test(tc, rank_design_exact_for_wide_windows_on_small_images);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(filter_suite());
}
