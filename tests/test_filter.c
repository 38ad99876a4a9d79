/* test_filter.c - clstats_median_filter against the plain C reference, bit for bit: random data
 * with NaNs, ties, constant regions and infinities, tiny and odd shapes, windows wider than the
 * image, every boundary mode; plus argument checks and the boundary definitions themselves. */
#include "../kernels/common/even_mean.h"
#include "filter_fills.h"
#include "reference_filter.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs the device and the reference on one case; returns the number of mismatching pixels. */
static size_t run_case(size_t nx, size_t ny, size_t stride, int width, enum clstats_boundary mode,
                       float cval, enum fill kind, double nan_frac, uint64_t seed)
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

static const enum clstats_boundary all_modes[] = {CLSTATS_BOUNDARY_REFLECT, CLSTATS_BOUNDARY_MIRROR,
                                                  CLSTATS_BOUNDARY_NEAREST,
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
                bad += run_case(shapes[s][0], shapes[s][1], shapes[s][0], widths[wi], all_modes[m],
                                1.5f, FILL_NORMAL, 0.1, seed++);
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
                bad += run_case(29, 23, 29, w, all_modes[m], -2.0f, (enum fill)kind, 0.05, seed++);
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
        bad +=
            run_case(40, 36, 41, 31, CLSTATS_BOUNDARY_REFLECT, 0.0f, (enum fill)kind, 0.02, seed++);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The library picks the bisection design on GPUs where its local-memory tile fits, else the
 * binned one; each design is judged here on the same cases, whatever the device. */
static size_t design_cases(const char *design, uint64_t seed)
{
    size_t bad = 0;
    test_tune("filter.path", design);
    for (int m = 0; m < 5; m++) {
        bad += run_case(33, 17, 35, 5, all_modes[m], 1.5f, FILL_NORMAL, 0.1, seed++);
        bad += run_case(7, 5, 7, 11, all_modes[m], 1.5f, FILL_INTEGERS, 0.1, seed++);
        bad += run_case(9, 1, 9, 3, all_modes[m], 1.5f, FILL_SPARSE, 0.0, seed++);
    }
    bad += run_case(40, 36, 41, 31, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_HEAVY_TAIL, 0.02, seed++);
    bad += run_case(23, 19, 23, 11, CLSTATS_BOUNDARY_WRAP, 0.0f, FILL_CONSTANT, 0.05, seed++);
    test_tune("filter.path", NULL);
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
    test_tune("filter.path", "rank");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
            bad += run_case(shapes[s][0], shapes[s][1], shapes[s][0] + 3, widths[wi],
                            all_modes[(s + wi) % 5], 0.5f, (enum fill)((s + wi) % 5), 0.1, seed++);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Images of many tiles: cursors and counts carried along long snake sweeps, NaNs and ties
 * entering and leaving all the way. */
START_TEST(rank_design_exact_on_images_of_many_tiles)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 11000;
    test_tune("filter.path", "rank");
    bad += run_case(211, 157, 213, 11, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_NORMAL, 0.02, seed++);
    bad += run_case(190, 170, 190, 21, CLSTATS_BOUNDARY_NEAREST, 0.0f, FILL_INTEGERS, 0.05, seed++);
    bad += run_case(160, 140, 161, 5, CLSTATS_BOUNDARY_MIRROR, 0.0f, FILL_SPARSE, 0.0, seed++);
    bad +=
        run_case(150, 130, 150, 15, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_HEAVY_TAIL, 0.1, seed++);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Windows with no valid value, even counts from NaNs, -0 beside +0 (equal values, other bits),
 * subnormal deviations, and middles whose sum overflows (their mean is still finite);
 * constant mode with a NaN cval makes the border missing data too. */
START_TEST(rank_design_exact_on_nan_blocks_signed_zeros_and_huge_values)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 9000;
    test_tune("filter.path", "rank");
    for (int kind = FILL_SPARSE; kind <= FILL_HUGE; kind++) {
        for (int w = 1; w <= 11; w += 2) {
            bad += run_case(45, 38, 45, w, CLSTATS_BOUNDARY_CONSTANT, NAN, (enum fill)kind, 0.1,
                            seed++);
            bad += run_case(38, 45, 40, w, all_modes[w % 5], -0.0f, (enum fill)kind, 0.0, seed++);
        }
    }
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Large windows on small images: the tile's halo is most of its input, and windows hold
 * hundreds or thousands of values with ties, tails and NaNs. */
START_TEST(rank_design_exact_for_wide_windows_on_small_images)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 10000;
    test_tune("filter.path", "rank");
    for (int kind = FILL_NORMAL; kind <= FILL_HUGE; kind++) {
        bad += run_case(37, 29, 37, 31, all_modes[kind % 5], 2.0f, (enum fill)kind, 0.05, seed++);
        bad +=
            run_case(23, 41, 25, 51, all_modes[(kind + 2) % 5], NAN, (enum fill)kind, 0.05, seed++);
    }
    bad += run_case(9, 7, 9, 101, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_INTEGERS, 0.1, seed++);
    /* Where the tile outgrows local memory (PoCL: w above about 150; NVIDIA: above about 30)
     * it lies in global scratch, one per group of a launch, launches in short bands. */
    bad += run_case(19, 13, 20, 201, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_NORMAL, 0.05, seed++);
    bad += run_case(7, 30, 7, 255, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_INTEGERS, 0.1, seed++);
    bad +=
        run_case(3, 2, 3, CLSTATS_MAX_WIDTH, CLSTATS_BOUNDARY_WRAP, 0.0f, FILL_NORMAL, 0.1, seed++);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Tiles in global scratch side by side: sweeps of NaN-free tiles beside tiles with NaNs (the
 * kernel's two sweeps), bands of groups, and tiles cut by the image's edges. A forced 16-pixel
 * tile keeps a w = 221 tile beyond local memory while making many of them on a small image;
 * the default tile (256 outputs a side there) is cut by a 270-pixel-wide image. */
START_TEST(rank_design_exact_across_tiles_in_global_memory)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 12000;
    test_tune("filter.path", "rank");
    test_tune("filter.shape_tx", "16");
    bad += run_case(45, 37, 46, 221, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_NORMAL, 0.0, seed++);
    bad += run_case(40, 35, 40, 161, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_INTEGERS, 0.02, seed++);
    test_tune("filter.shape_tx", NULL);
    bad += run_case(270, 5, 270, 201, CLSTATS_BOUNDARY_NEAREST, 0.0f, FILL_HEAVY_TAIL, 0.0, seed++);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Several output rows a sweep (filter.shape_px; default 4 from 41 window rows): the windows
 * of a band share their middle rows and keep their own in bitsets of their own, bands step
 * down that many rows, and the last band of a tile holds the remainder. Heights leave every
 * remainder, tiles are cut by the image, and a forced 16-pixel tile makes many tiles of a
 * w = 161 window in global memory. */
START_TEST(rank_design_exact_with_several_rows_a_sweep)
{
    static const size_t shapes[][2] = {{37, 29}, {23, 7}, {9, 1}, {40, 2}, {70, 67}, {5, 18}};
    static const int widths[] = {3, 5, 11, 21};
    static const char *const rows[] = {"2", "3", "4", "5"};
    size_t bad = 0;
    uint64_t seed = test_seed() + 13000;
    test_tune("filter.path", "rank");
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
        test_tune("filter.shape_px", rows[ri]);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int w = widths[(s + ri) % 4];
            const enum fill kind = (enum fill)((s + 3 * ri) % (FILL_HUGE + 1));
            bad += run_case(shapes[s][0], shapes[s][1], shapes[s][0] + 2, w,
                            all_modes[(s + ri) % 5], s % 2 ? NAN : 1.5f, kind, 0.1, seed++);
        }
    }
    test_tune("filter.shape_px", "3");
    bad += run_case(60, 45, 60, 51, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_INTEGERS, 0.05, seed++);
    test_tune("filter.shape_px", "7");
    test_tune("filter.shape_tx", "16");
    bad += run_case(40, 35, 41, 161, CLSTATS_BOUNDARY_MIRROR, 0.0f, FILL_HEAVY_TAIL, 0.05, seed++);
    test_tune("filter.shape_tx", NULL);
    test_tune("filter.shape_px", NULL);
    /* The default rows: four at w = 51 in local memory, at w = 201 in global memory. */
    bad += run_case(66, 70, 66, 51, CLSTATS_BOUNDARY_NEAREST, 0.0f, FILL_NORMAL, 0.05, seed++);
    bad += run_case(21, 30, 21, 201, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_SPARSE, 0.1, seed++);
    test_tune("filter.path", NULL);
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
    static const char *shapes[][3] = {
        {"32", "8", "2"}, {"8", "2", "3"}, {"4", "4", "1"}, {"16", "1", "4"}};
    size_t bad = 0;
    uint64_t seed = test_seed() + 7500;
    test_tune("filter.path", "sorted");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        test_tune("filter.shape_tx", shapes[i][0]);
        test_tune("filter.shape_ty", shapes[i][1]);
        test_tune("filter.shape_px", shapes[i][2]);
        bad += run_case(37, 29, 40, 7, all_modes[i % 5], 2.0f, FILL_NORMAL, 0.05, seed++);
        bad += run_case(31, 9, 31, 11, all_modes[(i + 1) % 5], 2.0f, FILL_INTEGERS, 0.1, seed++);
        bad += run_case(20, 21, 20, 3, all_modes[(i + 2) % 5], 2.0f, FILL_SPARSE, 0.0, seed++);
        bad +=
            run_case(19, 23, 19, 15, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_HEAVY_TAIL, 0.1, seed++);
    }
    test_tune("filter.shape_tx", NULL);
    test_tune("filter.shape_ty", NULL);
    test_tune("filter.shape_px", NULL);
    bad += run_case(70, 66, 70, 51, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_NORMAL, 0.01, seed++);
    bad += run_case(45, 40, 45, 63, CLSTATS_BOUNDARY_MIRROR, 0.0f, FILL_INTEGERS, 0.02, seed++);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* Every width the sorted design serves: each builds its own sorting code (one network up to
 * 16 keys, blocks of networks merged above: src/filter/sort_network.c), and every one must build on
 * every compiler and sort exactly, with NaNs, ties, infinities and -0 in the segments. */
START_TEST(sorted_design_exact_at_every_width)
{
    size_t bad = 0;
    uint64_t seed = test_seed() + 7800;
    test_tune("filter.path", "sorted");
    for (int w = 1; w <= 63; w += 2) {
        const enum fill kind = (enum fill)(w / 2 % (FILL_HUGE + 1));
        bad += run_case(21, 19, 22, w, all_modes[w / 2 % 5], 1.0f, kind, 0.1, seed++);
    }
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(runs_design_matches_reference)
{
    ck_assert_uint_eq(design_cases("runs", test_seed() + 7900), 0);
}
END_TEST

/* The runs design (the GPUs' large windows) builds each column's runs by removing and inserting
 * keys as it walks down: chunks of rows that start and end inside the image, bands cut by its
 * edges, NaNs, ties, infinities and -0 leaving and entering; tiny, odd and ordinary shapes at
 * the widths it serves, and pixels walking several rows (filter.shape_px). */
START_TEST(runs_design_exact_at_large_widths_and_odd_shapes)
{
    static const size_t shapes[][2] = {{1, 1}, {1, 70}, {70, 1}, {3, 2}, {13, 9}, {41, 83}};
    static const int widths[] = {37, 51, 101, 255};
    size_t bad = 0;
    uint64_t seed = test_seed() + 7950;
    test_tune("filter.path", "runs");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            /* The reference sorts every window: the largest image only with smaller ones. */
            if (shapes[s][0] * shapes[s][1] > 200 && widths[wi] > 51) continue;
            const enum fill kind = (enum fill)((s * 4 + wi) % (FILL_HUGE + 1));
            bad += run_case(shapes[s][0], shapes[s][1], shapes[s][0] + 1, widths[wi],
                            all_modes[(s + wi) % 5], (s + wi) % 2 ? NAN : -1.0f, kind, 0.1,
                            seed++);
        }
    test_tune("filter.shape_px", "3");
    bad += run_case(50, 47, 50, 41, CLSTATS_BOUNDARY_REFLECT, 0.0f, FILL_INTEGERS, 0.05, seed++);
    bad += run_case(23, 31, 25, 63, CLSTATS_BOUNDARY_CONSTANT, NAN, FILL_HEAVY_TAIL, 0.2, seed++);
    test_tune("filter.shape_px", NULL);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The runs design's MAD searches each run only within brackets its row's pixels share around
 * their deviation intervals' ends, guessed from the pixel above or the runs' spreads: where the
 * noise's level and scale jump between rows and along them, guesses miss and the counts must
 * stay exact outside the brackets as well as inside. */
START_TEST(runs_design_mad_exact_where_first_guesses_miss)
{
    static const int widths[] = {37, 51, 101};
    size_t bad = 0;
    uint64_t seed = test_seed() + 7980;
    test_tune("filter.path", "runs");
    for (int px = 1; px <= 3; px += 2) {
        test_tune("filter.shape_px", px == 1 ? "1" : "3");
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            const size_t nx = widths[wi] > 51 ? 40 : 70, ny = widths[wi] > 51 ? 24 : 45;
            bad += run_case(nx, ny, nx + 3, widths[wi], all_modes[(wi + px) % 5], 5.0f,
                            FILL_SCALE_STEPS, px == 1 ? 0.0 : 0.05, seed++);
        }
    }
    test_tune("filter.shape_px", NULL);
    test_tune("filter.path", NULL);
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

/* Mismatches between the maps of bands of 1, 4 and 13 rows and the whole image's (windows taller
 * than the strip or than the image among them), at each width and boundary mode, in the design
 * the context takes. */
static size_t bands_against_whole(const int *widths, size_t n_widths, uint64_t seed)
{
    const size_t nx = 19, ny = 13, stride = 21;
    static const size_t heights[] = {1, 4, 13};
    float *img = malloc(stride * ny * sizeof *img);
    float *med = malloc(nx * ny * sizeof *med), *mad = malloc(nx * ny * sizeof *mad);
    float *want_med = malloc(nx * ny * sizeof *med), *want_mad = malloc(nx * ny * sizeof *mad);
    size_t bad = 0;
    for (int m = 0; m < 5; m++) {
        for (size_t wi = 0; wi < n_widths; wi++) {
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
    free(img), free(med), free(mad), free(want_med), free(want_mad);
    return bad;
}

/* Strips of every height in every mode give the same bits as the one-piece call. */
START_TEST(bands_give_the_whole_image_maps_bit_for_bit)
{
    static const int widths[] = {1, 3, 11, 31};
    ck_assert_uint_eq(bands_against_whole(widths, 4, test_seed() + 7000), 0);
}
END_TEST

/* The runs design's bands: its column walks start at a band's first row. */
START_TEST(runs_design_bands_give_the_whole_image_maps)
{
    static const int widths[] = {37, 41};
    test_tune("filter.path", "runs");
    const size_t bad = bands_against_whole(widths, 2, test_seed() + 7060);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
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
    struct clstats_filter_params p = {
        .width = 3, .boundary = CLSTATS_BOUNDARY_CONSTANT, .cval = NAN};
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 1, 1, 1, &p, &med, &mad), CLSTATS_OK);
    ck_assert_float_eq(med, 4.0f);
    ck_assert_float_eq(mad, 0.0f);
    /* cval 0: eight zeros and a 4. */
    p.cval = 0.0f;
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 1, 1, 1, &p, &med, &mad), CLSTATS_OK);
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
    struct clstats_filter_params q = {
        .width = 5, .boundary = CLSTATS_BOUNDARY_CONSTANT, .cval = NAN};
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
        struct clstats_filter_params p = {.width = 3, .boundary = all_modes[m], .cval = INFINITY};
        ck_assert_int_eq(clstats_median_filter(test_ctx(), img, 3, 1, 3, &p, med, mad), CLSTATS_OK);
        reference_median_filter(img, 3, 1, 3, &p, rmed, rmad);
        bad += test_compare_bits(med, rmed, 3, 3, "inf median");
        bad += test_compare_bits(mad, rmad, 3, 3, "inf MAD");
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The designs tests force (tuning filter.path), and NULL for the device's own choice. */
static const char *const designs[] = {NULL, "sorted", "bisect", "binned", "rank", "runs"};
#define NDESIGNS (sizeof designs / sizeof designs[0])

static void use_design(const char *design)
{
    if (design)
        test_tune("filter.path", design);
    else
        test_tune("filter.path", NULL);
}

/* Host arrays streamed through the pinned slots (src/core/staging.c, on by default on GPUs,
 * forced here): slots smaller than a band and bands smaller than a slot, strided inputs,
 * every boundary mode (wrap needs the image's last rows for its first band), either map
 * alone, and the band entry point, each bit for bit against the reference. */
static int streamed_calls;
static void count_streamed(void *user, const char *line)
{
    (void)user;
    if (strstr(line, "streamed through pinned slots")) streamed_calls++;
}

START_TEST(streamed_transfers_match_reference)
{
    static const size_t shapes[][3] = {{300, 517, 301}, {64, 3, 64}, {1, 40, 1}, {700, 90, 703}};
    static const int widths[] = {1, 3, 11};
    static const char *const slots[] = {"64", "4096"};
    size_t bad = 0;
    uint64_t seed = test_seed();
    test_tune("transfer.stream", "on");
    clstats_ctx_set_log(test_ctx(), count_streamed, NULL);
    streamed_calls = 0;
    for (size_t d = 0; d < NDESIGNS; d++) {
        use_design(designs[d]);
        for (size_t k = 0; k < (d == 0 ? 2 : 1); k++) {
            test_tune("transfer.slot_kb", slots[k]);
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
                    for (int m = 0; m < 5; m += d == 0 ? 1 : 2)
                        bad += run_case(shapes[s][0], shapes[s][1], shapes[s][2], widths[wi],
                                        all_modes[m], 2.5f, FILL_NORMAL, 0.05, seed++);
        }
    }
    /* One map alone, and a band of an image. */
    const size_t nx = 257, ny = 301, w = 5;
    float *img = malloc(nx * ny * sizeof *img), *med = malloc(nx * ny * sizeof *med),
          *mad = malloc(nx * ny * sizeof *mad), *ref_med = malloc(nx * ny * sizeof *med),
          *ref_mad = malloc(nx * ny * sizeof *mad), *one = malloc(nx * ny * sizeof *one);
    ck_assert(img && med && mad && ref_med && ref_mad && one);
    fill_image(img, nx, ny, nx, FILL_NORMAL, 0.1, seed);
    struct clstats_filter_params p = {.width = (int)w, .boundary = CLSTATS_BOUNDARY_REFLECT};
    use_design(NULL);
    test_tune("transfer.slot_kb", "64");
    ck_assert_int_eq(reference_median_filter(img, nx, ny, nx, &p, ref_med, ref_mad), 0);
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, nx, ny, nx, &p, one, NULL), CLSTATS_OK);
    bad += test_compare_bits(one, ref_med, nx * ny, nx, "streamed median alone");
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, nx, ny, nx, &p, NULL, one), CLSTATS_OK);
    bad += test_compare_bits(one, ref_mad, nx * ny, nx, "streamed MAD alone");
    const size_t row0 = 100, rows = 150;
    float *band = make_band(img, ny, nx, row0, rows, (int)w, CLSTATS_BOUNDARY_REFLECT);
    ck_assert_int_eq(
        clstats_median_filter_band(test_ctx(), band, nx, ny, nx, row0, rows, &p, med, mad),
        CLSTATS_OK);
    bad += test_compare_bits(med, ref_med + row0 * nx, rows * nx, nx, "streamed band median");
    bad += test_compare_bits(mad, ref_mad + row0 * nx, rows * nx, nx, "streamed band MAD");
    free(band), free(img), free(med), free(mad), free(ref_med), free(ref_mad), free(one);
    clstats_ctx_set_log(test_ctx(), NULL, NULL);
    test_tune("transfer.slot_kb", NULL);
    test_tune("transfer.stream", NULL);
    ck_assert_uint_eq(bad, 0);
    ck_assert_int_gt(streamed_calls, 100); /* the path under test was the one taken */
}
END_TEST

/* The float nearest the exact mean, through double (clstats.h's words for clstats_median). */
static float mean_through_double(float a, float b)
{
    return (float)(((double)a + (double)b) * 0.5);
}

static uint32_t bits_of(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

/* kernels/even_mean.h's float rule, which the filter kernels and the host's medians share, is
 * the double formula clstats.h documents, bit for bit, over pairs of every class. */
START_TEST(even_mean_is_the_double_formula_on_random_pairs)
{
    enum { N = 1 << 21 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    ck_assert(a && b);
    test_float_pairs(a, b, N, test_seed() + 12000);
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        const float got = mean_of_middles(a[i], b[i]), want = mean_through_double(a[i], b[i]);
        if (bits_of(got) == bits_of(want) || (isnan(got) && isnan(want))) continue;
        if (bad++ < 5) fprintf(stderr, "mean of %a and %a: %a, want %a\n", a[i], b[i], got, want);
    }
    ck_assert_uint_eq(bad, 0);
    free(a), free(b);
}
END_TEST

/* Every design's even-count median is that mean: a row a0 b0 NaN a1 b1 NaN ... filtered with
 * 3 x 3 windows and NaN outside holds two values in every window (a_i b_i, or b_i a_(i+1)),
 * judged by the reference and, for the pairs themselves, by the double formula. */
START_TEST(even_count_windows_give_the_rounded_mean_in_every_design)
{
    enum { PAIRS = 4000, NX = 3 * PAIRS };
    float *a = malloc(PAIRS * sizeof *a), *b = malloc(PAIRS * sizeof *b);
    float *img = malloc(NX * sizeof *img), *med = malloc(NX * sizeof *med);
    float *mad = malloc(NX * sizeof *mad), *ref_med = malloc(NX * sizeof *ref_med);
    float *ref_mad = malloc(NX * sizeof *ref_mad);
    ck_assert(a && b && img && med && mad && ref_med && ref_mad);
    const uint64_t seed = test_seed() + 12100;
    test_float_pairs(a, b, PAIRS, seed);
    for (size_t i = 0; i < PAIRS; i++) {
        img[3 * i] = a[i];
        img[3 * i + 1] = b[i];
        img[3 * i + 2] = NAN;
    }
    struct clstats_filter_params p = {
        .width = 3, .boundary = CLSTATS_BOUNDARY_CONSTANT, .cval = NAN};
    ck_assert_int_eq(reference_median_filter(img, NX, 1, NX, &p, ref_med, ref_mad), 0);
    size_t bad = 0;
    for (size_t d = 0; d < NDESIGNS; d++) {
        use_design(designs[d]);
        ck_assert_int_eq(clstats_median_filter(test_ctx(), img, NX, 1, NX, &p, med, mad),
                         CLSTATS_OK);
        char what[80];
        snprintf(what, sizeof what, "pairs seed=%llu %s median", (unsigned long long)seed,
                 designs[d] ? designs[d] : "default");
        bad += test_compare_bits(med, ref_med, NX, NX, what);
        memcpy(what + strlen(what) - 6, "MAD   ", 6);
        bad += test_compare_bits(mad, ref_mad, NX, NX, what);
        for (size_t i = 0; i < PAIRS; i++) {
            /* A zero mean is +0, whatever the middles' signs. */
            const float mean = mean_through_double(a[i], b[i]), want = mean == 0.0f ? 0.0f : mean;
            if (!(bits_of(med[3 * i]) == bits_of(want) || (isnan(want) && isnan(med[3 * i]))) &&
                bad++ < 5)
                fprintf(stderr, "%s: window %a %a: median %a, want %a\n", what, a[i], b[i],
                        med[3 * i], want);
        }
    }
    use_design(NULL);
    ck_assert_uint_eq(bad, 0);
    free(a), free(b), free(img), free(med), free(mad), free(ref_med), free(ref_mad);
}
END_TEST

/* Windows of one to three values with known answers, numpy's nanmedian of the window and of
 * |x - m| (inf - inf is NaN, left out), zeros of either sign giving +0, in every design. */
START_TEST(small_windows_give_numpy_answers_in_every_design)
{
    const float big = 3.0e38f, big2 = 3.0001e38f, huge = 0x1.fffffep127f;
    const struct {
        int n;
        float v[3], med, mad;
    } cases[] = {
        /* The median infinite: values equal to it drop out of the MAD, others lie +inf away. */
        {1, {INFINITY}, INFINITY, NAN},
        {1, {-INFINITY}, -INFINITY, NAN},
        {3, {INFINITY, INFINITY, INFINITY}, INFINITY, NAN},
        {3, {1.0f, INFINITY, INFINITY}, INFINITY, INFINITY},
        {3, {-INFINITY, -INFINITY, 5.0f}, -INFINITY, INFINITY},
        {2, {5.0f, INFINITY}, INFINITY, INFINITY},
        {2, {-INFINITY, -2.0f}, -INFINITY, INFINITY},
        /* -inf and +inf as middles: NaN, and so the MAD. */
        {2, {-INFINITY, INFINITY}, NAN, NAN},
        /* A finite median: infinite values are +inf away, like any far value. */
        {3, {-INFINITY, 1.0f, 2.0f}, 1.0f, 1.0f},
        {3, {-INFINITY, 1.0f, INFINITY}, 1.0f, INFINITY},
        /* Middles whose sum overflows: their mean, not +inf. */
        {2, {huge, huge}, huge, 0.0f},
        {3, {-big, big, big}, big, 0.0f},
        /* Zeros: equal as numbers, and a zero result is +0. */
        {1, {-0.0f}, 0.0f, 0.0f},
        {2, {-0.0f, -0.0f}, 0.0f, 0.0f},
        {2, {-0.0f, 0.0f}, 0.0f, 0.0f},
        {3, {-0.0f, -0.0f, 0.0f}, 0.0f, 0.0f},
        {3, {-0.0f, -0.0f, 1.0f}, 0.0f, 0.0f},
        {3, {-1.0f, -0.0f, 1.0f}, 0.0f, 1.0f},
        {2, {-0x1p-149f, 0x1p-149f}, 0.0f, 0x1p-149f},
    };
    size_t bad = 0;
    for (size_t d = 0; d < NDESIGNS; d++) {
        use_design(designs[d]);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            /* A row of n values, 3 x 3 windows, NaN outside: the middle pixel sees them all. */
            const int n = cases[c].n;
            float med[3], mad[3];
            struct clstats_filter_params p = {
                .width = 3, .boundary = CLSTATS_BOUNDARY_CONSTANT, .cval = NAN};
            ck_assert_int_eq(clstats_median_filter(test_ctx(), cases[c].v, (size_t)n, 1, (size_t)n,
                                                   &p, med, mad),
                             CLSTATS_OK);
            const int x = (n - 1) / 2;
            const bool med_ok = isnan(cases[c].med) ? bits_of(med[x]) == 0x7fc00000u
                                                    : bits_of(med[x]) == bits_of(cases[c].med);
            const bool mad_ok = isnan(cases[c].mad) ? bits_of(mad[x]) == 0x7fc00000u
                                                    : bits_of(mad[x]) == bits_of(cases[c].mad);
            if (!med_ok || !mad_ok) {
                bad++;
                fprintf(stderr,
                        "%s: window {%a, %a, %a}[..%d]: median %a (0x%08x), MAD %a (0x%08x); "
                        "want %a, %a\n",
                        designs[d] ? designs[d] : "default", cases[c].v[0], cases[c].v[1],
                        cases[c].v[2], n, med[x], bits_of(med[x]), mad[x], bits_of(mad[x]),
                        cases[c].med, cases[c].mad);
            }
        }
        /* Two finite middles near FLT_MAX: the rounded mean, and the MAD from it. */
        float two[2] = {big, big2}, med[2], mad[2];
        struct clstats_filter_params p = {
            .width = 3, .boundary = CLSTATS_BOUNDARY_CONSTANT, .cval = NAN};
        ck_assert_int_eq(clstats_median_filter(test_ctx(), two, 2, 1, 2, &p, med, mad), CLSTATS_OK);
        const float m = mean_through_double(big, big2);
        const float want_mad = mean_through_double(fabsf(big - m), fabsf(big2 - m));
        if (bits_of(med[0]) != bits_of(m) || bits_of(mad[0]) != bits_of(want_mad)) {
            bad++;
            fprintf(stderr, "%s: window {3e38, 3.0001e38}: median %a, MAD %a; want %a, %a\n",
                    designs[d] ? designs[d] : "default", med[0], mad[0], m, want_mad);
        }
    }
    use_design(NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The classes behind those cases, at random, judged by the reference in every design and
 * boundary mode: infinite medians (whole windows of one infinity, +inf among numbers, -inf
 * and +inf as middles), signed zeros and subnormals, and sums of middles that overflow. */
START_TEST(infinities_zeros_and_huge_values_match_reference_in_every_design)
{
    static const enum fill kinds[] = {FILL_INFINITE, FILL_ZERO_BLOCKS, FILL_ZEROS, FILL_HUGE};
    static const float cvals[] = {NAN, -0.0f, INFINITY, -3.0e38f};
    size_t bad = 0;
    uint64_t seed = test_seed() + 12200;
    for (size_t d = 0; d < NDESIGNS; d++) {
        use_design(designs[d]);
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            const enum clstats_boundary mode = all_modes[(d + k) % 5];
            bad += run_case(29, 23, 31, 3, mode, cvals[k], kinds[k], 0.05, seed++);
            bad += run_case(21, 18, 21, 5, CLSTATS_BOUNDARY_CONSTANT, cvals[(k + d) % 4], kinds[k],
                            0.1, seed++);
            bad +=
                run_case(17, 25, 17, 11, all_modes[(d + k + 2) % 5], 1.0f, kinds[k], 0.0, seed++);
        }
    }
    use_design(NULL);
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
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, NX, NY, NX, &p, med, NULL), CLSTATS_OK);
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, NX, NY, NX, &p, NULL, mad), CLSTATS_OK);
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
    struct clstats_filter_params p = {.width = 0};
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    ck_assert(strstr(clstats_ctx_message(ctx), "1 to 255") != NULL);
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

/* A stride whose rows' span overflows size_t is refused before anything is read: unchecked, the
 * span wrapped to a few elements, so a small buffer was uploaded and the kernels read rows at
 * wrapped addresses (and the call returned CLSTATS_OK). The image here is tiny on purpose. */
START_TEST(strides_whose_span_overflows_are_refused)
{
    float img[32] = {0}, med[32], mad[32];
    clstats_ctx *ctx = test_ctx();
    struct clstats_filter_params p = {.width = 3};
    /* 4 rows of 2^62 wrap to 0 elements (bytes too); 2^62 + 1 elements of 4 bytes to 4. */
    const size_t strides[] = {(size_t)1 << 62, SIZE_MAX / 4 + 1, SIZE_MAX, ((size_t)1 << 61) + 1};
    for (size_t i = 0; i < sizeof strides / sizeof strides[0]; i++) {
        for (size_t ny = 2; ny <= 5; ny += 3) {
            ck_assert_int_eq(clstats_median_filter(ctx, img, 4, ny, strides[i], &p, med, mad),
                             CLSTATS_ERR_ARG);
            ck_assert_msg(strstr(clstats_ctx_message(ctx), "larger than any array can be") != NULL,
                          "%s", clstats_ctx_message(ctx));
            /* A band of one output row holds three rows. */
            ck_assert_int_eq(
                clstats_median_filter_band(ctx, img, 4, ny, strides[i], 1, 1, &p, med, mad),
                CLSTATS_ERR_ARG);
            ck_assert_msg(strstr(clstats_ctx_message(ctx), "larger than any array can be") != NULL,
                          "%s", clstats_ctx_message(ctx));
        }
    }
    /* One row never steps by its stride, so any stride is fine there: pixel 0's window, reflected,
     * is 3 3 0 three times. */
    img[0] = 3.0f;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 1, SIZE_MAX, &p, med, NULL), CLSTATS_OK);
    ck_assert_float_eq(med[0], 3.0f);
}
END_TEST

/* The array form: an image in a device buffer at an offset, rows a stride apart, into outputs in
 * device buffers and in strided host memory, gives the host entry point's maps bit for bit. */
START_TEST(array_form_on_device_buffers_gives_the_same_maps)
{
    clstats_ctx *ctx = test_ctx();
    const size_t nx = 23, ny = 17, stride = 29, offset = 37, out_stride = 31, out_offset = 5;
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 9100);
    float *img = malloc(stride * ny * sizeof *img);
    for (size_t i = 0; i < stride * ny; i++)
        img[i] = test_rng_uniform(&rng) < 0.05 ? NAN : (float)(int)(8 * test_rng_normal(&rng));
    const struct clstats_filter_params p = {.width = 5, .boundary = CLSTATS_BOUNDARY_MIRROR};
    float *want_med = malloc(nx * ny * sizeof(float)), *want_mad = malloc(nx * ny * sizeof(float));
    ck_assert_int_eq(clstats_median_filter(ctx, img, nx, ny, stride, &p, want_med, want_mad),
                     CLSTATS_OK);

    cl_int err;
    const size_t in_elems = offset + stride * ny, out_elems = out_offset + out_stride * ny;
    cl_mem in = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_WRITE,
                               in_elems * sizeof(float), NULL, &err);
    cl_mem med = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_WRITE,
                                out_elems * sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clEnqueueWriteBuffer(clstats_ctx_cl_queue(ctx), in, CL_TRUE,
                                          offset * sizeof(float), stride * ny * sizeof(float), img,
                                          0, NULL, NULL),
                     CL_SUCCESS);
    float *mad_host = malloc(out_stride * ny * sizeof(float));
    const struct clstats_array
        image = {.buffer = in, .offset = offset, .nx = nx, .ny = ny, .stride = stride},
        median_out = {.buffer = med,
                      .offset = out_offset,
                      .nx = nx,
                      .ny = ny,
                      .stride = out_stride},
        mad_out = {.host = mad_host, .nx = nx, .ny = ny, .stride = out_stride};
    ck_assert_int_eq(clstats_median_filter_array(ctx, &image, &p, &median_out, &mad_out),
                     CLSTATS_OK);
    float *med_host = malloc(out_elems * sizeof(float));
    ck_assert_int_eq(clEnqueueReadBuffer(clstats_ctx_cl_queue(ctx), med, CL_TRUE, 0,
                                         out_elems * sizeof(float), med_host, 0, NULL, NULL),
                     CL_SUCCESS);
    size_t bad = 0;
    for (size_t y = 0; y < ny; y++) {
        bad += test_compare_bits(med_host + out_offset + y * out_stride, want_med + y * nx, nx, nx,
                                 "median (device array)");
        bad += test_compare_bits(mad_host + y * out_stride, want_mad + y * nx, nx, nx,
                                 "MAD (strided host array)");
    }
    ck_assert_uint_eq(bad, 0);

    /* What the array form refuses: outputs of another dtype than the image's, a uint8 image,
     * an output of another shape, a buffer too small for its offset, both homes at once. */
    struct clstats_array wrong = image;
    wrong.dtype = CLSTATS_FLOAT64;
    ck_assert_int_eq(clstats_median_filter_array(ctx, &wrong, &p, &median_out, NULL),
                     CLSTATS_ERR_ARG);
    wrong.dtype = CLSTATS_UINT8;
    ck_assert_int_eq(clstats_median_filter_array(ctx, &wrong, &p, &median_out, NULL),
                     CLSTATS_ERR_ARG);
    wrong = median_out;
    wrong.nx = nx - 1;
    ck_assert_int_eq(clstats_median_filter_array(ctx, &image, &p, &wrong, NULL), CLSTATS_ERR_ARG);
    wrong = image;
    wrong.offset = in_elems;
    ck_assert_int_eq(clstats_median_filter_array(ctx, &wrong, &p, &median_out, NULL),
                     CLSTATS_ERR_ARG);
    ck_assert_msg(strstr(clstats_ctx_message(ctx), "run past the buffer"), "%s",
                  clstats_ctx_message(ctx));
    wrong = image;
    wrong.host = img;
    ck_assert_int_eq(clstats_median_filter_array(ctx, &wrong, &p, &median_out, NULL),
                     CLSTATS_ERR_ARG);
    clReleaseMemObject(in);
    clReleaseMemObject(med);
    free(img), free(want_med), free(want_mad), free(mad_host), free(med_host);
}
END_TEST

/* The library's strips (clstats_filter_rows): a cube read through a source a few rows at a time
 * gives, strip by strip, the one-piece maps, SIGMA and SNR included; a source or sink that stops
 * ends it with CLSTATS_ERR_CALLBACK. */
struct rows_case {
    const float *cube;
    size_t nx, ny;
    float *median, *mad, *sigma, *snr; /* the whole cube's, gathered from the strips */
    size_t reads, stop_after;
};

static int rows_read(void *user, size_t plane, size_t row0, size_t rows, float *dst)
{
    struct rows_case *c = user;
    if (c->stop_after && ++c->reads > c->stop_after) return -1;
    memcpy(dst, c->cube + (plane * c->ny + row0) * c->nx, rows * c->nx * sizeof *dst);
    return 0;
}

static int rows_write(void *user, const struct clstats_strip *st)
{
    struct rows_case *c = user;
    const size_t at = (st->plane * c->ny + st->row0) * c->nx, n = st->rows * c->nx;
    memcpy(c->median + at, st->median, n * sizeof(float));
    memcpy(c->mad + at, st->mad, n * sizeof(float));
    memcpy(c->sigma + at, st->sigma, n * sizeof(float));
    memcpy(c->snr + at, st->snr, n * sizeof(float));
    return 0;
}

START_TEST(strips_of_rows_give_the_one_piece_maps)
{
    clstats_ctx *ctx = test_ctx();
    const size_t nx = 19, ny = 23, planes = 2, n = nx * ny * planes;
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 9500);
    float *cube = malloc(n * sizeof *cube);
    for (size_t i = 0; i < n; i++)
        cube[i] = test_rng_uniform(&rng) < 0.05 ? NAN : (float)(int)(10 * test_rng_normal(&rng));
    float *out = malloc(4 * n * sizeof *out), *want = malloc(4 * n * sizeof *want);
    struct rows_case c = {cube, nx, ny, out, out + n, out + 2 * n, out + 3 * n, 0, 0};
    struct clstats_rows_job job = {.nx = nx,
                                   .ny = ny,
                                   .planes = planes,
                                   .params = {.width = 7, .boundary = CLSTATS_BOUNDARY_WRAP},
                                   .maps = CLSTATS_MAP_MEDIAN | CLSTATS_MAP_MAD |
                                           CLSTATS_MAP_SIGMA | CLSTATS_MAP_SNR,
                                   .height = 4,
                                   .read = rows_read,
                                   .write = rows_write,
                                   .user = &c};
    ck_assert_int_eq(clstats_filter_rows(ctx, &job), CLSTATS_OK);
    ck_assert_uint_eq(job.n_strips, planes * ((ny + 3) / 4));
    size_t bad = 0;
    for (size_t p = 0; p < planes; p++) {
        const size_t at = p * nx * ny;
        ck_assert_int_eq(clstats_median_filter(ctx, cube + at, nx, ny, nx, &job.params, want + at,
                                               want + n + at),
                         CLSTATS_OK);
        clstats_sigma_snr(cube + at, want + at, want + n + at, nx * ny, want + 2 * n + at,
                          want + 3 * n + at);
    }
    bad += test_compare_bits(out, want, 4 * n, nx, "strips of rows");
    ck_assert_uint_eq(bad, 0);
    /* A reader that stops, a budget too small for one strip. */
    c.stop_after = 3;
    ck_assert_int_eq(clstats_filter_rows(ctx, &job), CLSTATS_ERR_CALLBACK);
    size_t height = 0;
    ck_assert_int_eq(clstats_filter_strip_height(ctx, nx, ny, 7, job.maps, 100, &height),
                     CLSTATS_ERR_NOMEM);
    ck_assert_int_eq(clstats_filter_strip_height(ctx, nx, ny, 7, job.maps, 1 << 20, &height),
                     CLSTATS_OK);
    ck_assert_uint_eq(height, ny);
    free(cube), free(out), free(want);
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
        {CLSTATS_BOUNDARY_REFLECT, 3, {2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1,
                                       2, 2, 1, 0, 0, 1, 2, 2, 1, 0}},
        {CLSTATS_BOUNDARY_REFLECT, 4, {0, 0, 1, 2, 3, 3, 2, 1, 0, 0, 1,
                                       2, 3, 3, 2, 1, 0, 0, 1, 2, 3, 3}},
        {CLSTATS_BOUNDARY_MIRROR, 2, {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}},
        {CLSTATS_BOUNDARY_MIRROR, 3, {1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1,
                                      2, 1, 0, 1, 2, 1, 0, 1, 2, 1}},
        {CLSTATS_BOUNDARY_MIRROR, 4, {3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1,
                                      2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0}},
        {CLSTATS_BOUNDARY_NEAREST, 3, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                       2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
        {CLSTATS_BOUNDARY_WRAP, 3, {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}},
        {CLSTATS_BOUNDARY_WRAP, 4, {3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1,
                                    2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0}},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        for (int i = -9; i < known[k].n + 9; i++)
            ck_assert_int_eq(reference_extend(i, known[k].n, known[k].mode), known[k].idx[i + 9]);
    for (int m = 0; m < 5; m++) /* one sample: every mode gives it */
        if (all_modes[m] != CLSTATS_BOUNDARY_CONSTANT)
            for (int i = -9; i < 10; i++)
                ck_assert_int_eq(reference_extend(i, 1, all_modes[m]), 0);
    ck_assert_int_eq(reference_extend(-1, 4, CLSTATS_BOUNDARY_CONSTANT), -1);
}
END_TEST

/* The library's public folding (what callers build bands with) against the reference's. */
/* SIGMA needs the MAD and an output, SNR also the pixels and the median: in both dtypes the
 * same check refuses a missing one, and takes what suffices. */
START_TEST(sigma_snr_refuse_missing_inputs_in_both_dtypes)
{
    const float px[2] = {1, 2}, med[2] = {1, 1}, mad[2] = {0, 1};
    float sigma[2], snr[2];
    const double px64[2] = {1, 2}, med64[2] = {1, 1}, mad64[2] = {0, 1};
    double sigma64[2], snr64[2];
    ck_assert_int_eq(clstats_sigma_snr(px, med, NULL, 2, sigma, snr), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr(px, med, mad, 2, NULL, NULL), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr(NULL, med, mad, 2, sigma, snr), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr(px, NULL, mad, 2, sigma, snr), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr(NULL, NULL, mad, 2, sigma, NULL), CLSTATS_OK);
    ck_assert_int_eq(clstats_sigma_snr_f64(px64, med64, NULL, 2, sigma64, snr64), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr_f64(px64, med64, mad64, 2, NULL, NULL), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr_f64(NULL, med64, mad64, 2, sigma64, snr64), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr_f64(px64, NULL, mad64, 2, sigma64, snr64), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_sigma_snr_f64(NULL, NULL, mad64, 2, sigma64, NULL), CLSTATS_OK);
    ck_assert_int_eq(clstats_sigma_snr_f64(px64, med64, mad64, 2, sigma64, snr64), CLSTATS_OK);
    ck_assert(isnan(snr64[0]) && snr64[1] == 1.0 / CLSTATS_MAD_TO_SIGMA);
}
END_TEST

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
    tcase_add_test(tc, array_form_on_device_buffers_gives_the_same_maps);
    tcase_add_test(tc, strips_of_rows_give_the_one_piece_maps);
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
    tcase_add_test(tc, rank_design_exact_across_tiles_in_global_memory);
    tcase_add_test(tc, rank_design_exact_with_several_rows_a_sweep);
    suite_add_tcase(s, tc);
    /* Infinite medians, signed zeros and sums that overflow, in every design (CK_RUN_CASE=numbers
     * runs these alone). */
    TCase *numbers = tcase_create("numbers");
    tcase_set_timeout(numbers, 600);
    tcase_add_test(numbers, even_mean_is_the_double_formula_on_random_pairs);
    tcase_add_test(numbers, even_count_windows_give_the_rounded_mean_in_every_design);
    tcase_add_test(numbers, small_windows_give_numpy_answers_in_every_design);
    tcase_add_test(numbers, infinities_zeros_and_huge_values_match_reference_in_every_design);
    tcase_add_test(numbers, sigma_snr_refuse_missing_inputs_in_both_dtypes);
    suite_add_tcase(s, numbers);
    /* Host arrays through the pinned slots (CK_RUN_CASE=streamed runs it alone). */
    TCase *streamed = tcase_create("streamed");
    tcase_set_timeout(streamed, 600);
    tcase_add_test(streamed, streamed_transfers_match_reference);
    suite_add_tcase(s, streamed);
    /* The large-window designs (CK_RUN_CASE=large runs these alone). */
    TCase *large = tcase_create("large");
    tcase_set_timeout(large, 600);
    tcase_add_test(large, runs_design_matches_reference);
    tcase_add_test(large, runs_design_exact_at_large_widths_and_odd_shapes);
    tcase_add_test(large, runs_design_mad_exact_where_first_guesses_miss);
    tcase_add_test(large, runs_design_bands_give_the_whole_image_maps);
    suite_add_tcase(s, large);
    TCase *sizes = tcase_create("sizes");
    tcase_add_test(sizes, strides_whose_span_overflows_are_refused);
    suite_add_tcase(s, sizes);
    return s;
}

int main(void)
{
    return test_run_suite(filter_suite());
}
