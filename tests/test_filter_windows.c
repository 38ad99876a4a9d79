/* test_filter_windows.c - every window the filter takes besides odd squares, against the plain C
 * reference bit for bit: rectangles (1 x N, N x 1, even x odd), scipy's origins, circles, rings
 * and random footprints, each even-count rule (the MAD's included), masks, and float64 data;
 * with NaNs, ties, constant regions, infinities and signed zeros, in every boundary mode. */
#include "filter_fills.h"
#include "reference_filter.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum clstats_boundary all_modes[] = {CLSTATS_BOUNDARY_REFLECT, CLSTATS_BOUNDARY_MIRROR,
                                                  CLSTATS_BOUNDARY_NEAREST,
                                                  CLSTATS_BOUNDARY_CONSTANT, CLSTATS_BOUNDARY_WRAP};
static const char *const rule_name[] = {"mean", "lower", "upper"};

/* The device and the reference on one float32 case; returns the mismatching pixels. */
static size_t check_case(size_t nx, size_t ny, const struct clstats_filter_params *p,
                         enum fill kind, double nan_frac, uint64_t seed, const char *label)
{
    const size_t stride = nx + 3;
    float *img = malloc(stride * ny * sizeof *img);
    float *med = malloc(nx * ny * sizeof *med), *mad = malloc(nx * ny * sizeof *mad);
    float *ref_med = malloc(nx * ny * sizeof *med), *ref_mad = malloc(nx * ny * sizeof *mad);
    ck_assert(img && med && mad && ref_med && ref_mad);
    fill_image(img, nx, ny, stride, kind, nan_frac, seed);
    int status = clstats_median_filter(test_ctx(), img, nx, ny, stride, p, med, mad);
    ck_assert_msg(status == CLSTATS_OK, "%s: %s: %s", label, clstats_strerror(status),
                  clstats_ctx_message(test_ctx()));
    ck_assert_int_eq(reference_median_filter(img, nx, ny, stride, p, ref_med, ref_mad), 0);
    char what[200];
    snprintf(what, sizeof what, "%s %zux%zu %s %s %s seed=%llu median", label, nx, ny,
             clstats_boundary_name(p->boundary), fill_name[kind], rule_name[p->even],
             (unsigned long long)seed);
    size_t bad = test_compare_bits(med, ref_med, nx * ny, nx, what);
    memcpy(what + strlen(what) - 6, "MAD   ", 6);
    bad += test_compare_bits(mad, ref_mad, nx * ny, nx, what);
    free(img), free(med), free(mad), free(ref_med), free(ref_mad);
    return bad;
}

START_TEST(rectangles_match_reference_in_every_mode)
{
    static const int shapes[][2] = {{1, 7}, {9, 1}, {4, 3}, {3, 4}, {2, 2}, {6, 5}, {12, 7}};
    const uint64_t seed = test_seed();
    size_t bad = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t m = 0; m < 5; m++) {
            struct clstats_filter_params p = {.width = shapes[s][0],
                                              .height = shapes[s][1],
                                              .boundary = all_modes[m],
                                              .cval = m == 3 && s % 2 ? NAN : 1.5f};
            const enum fill kind = (enum fill)((s * 5 + m) % 10);
            bad += check_case(19, 13, &p, kind, 0.1, seed + s * 7 + m, "rectangle");
        }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(windows_wider_than_the_image_fold_like_scipy)
{
    const uint64_t seed = test_seed();
    size_t bad = 0;
    for (size_t m = 0; m < 5; m++) {
        struct clstats_filter_params p = {.width = 14, .height = 9, .boundary = all_modes[m]};
        bad += check_case(3, 2, &p, FILL_INTEGERS, 0.0, seed + m, "wide");
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(origins_shift_the_window_as_scipy_does)
{
    const uint64_t seed = test_seed();
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    size_t bad = 0;
    for (int t = 0; t < 8; t++) {
        const int w = 1 + (int)(test_rng_next(&rng) % 6), h = 1 + (int)(test_rng_next(&rng) % 6);
        struct clstats_filter_params p = {
            .width = w,
            .height = h,
            .origin_x = (int)(test_rng_next(&rng) % (unsigned)w) - w / 2,
            .origin_y = (int)(test_rng_next(&rng) % (unsigned)h) - h / 2,
            .boundary = all_modes[t % 5],
            .even = (enum clstats_even)(t % 3)};
        bad += check_case(11, 9, &p, (enum fill)(t % 10), 0.05, seed + (uint64_t)t, "origin");
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* scipy's own answers, worked by hand: a 4-wide window covers offsets -2 .. +1 at origin 0,
 * -3 .. 0 at origin 1; median_filter takes the upper middle (rank n // 2). */
START_TEST(even_windows_cover_scipys_offsets)
{
    const float row[6] = {1, 2, 3, 4, 5, 60};
    float med[6];
    struct clstats_filter_params p = {
        .width = 4, .height = 1, .boundary = CLSTATS_BOUNDARY_NEAREST, .even = CLSTATS_EVEN_UPPER};
    ck_assert_int_eq(clstats_median_filter(test_ctx(), row, 6, 1, 6, &p, med, NULL), CLSTATS_OK);
    /* x = 0 reads 1 1 1 2: upper middle 1; x = 2 reads 1 2 3 4: 3; x = 5 reads 4 5 60 60. */
    const float want0[6] = {1, 2, 3, 4, 5, 60};
    for (int i = 0; i < 6; i++)
        ck_assert_msg(med[i] == want0[i], "origin 0, x = %d: %g, want %g", i, med[i], want0[i]);
    p.origin_x = 1; /* x reads x - 3 .. x */
    ck_assert_int_eq(clstats_median_filter(test_ctx(), row, 6, 1, 6, &p, med, NULL), CLSTATS_OK);
    const float want1[6] = {1, 1, 2, 3, 4, 5};
    for (int i = 0; i < 6; i++)
        ck_assert_msg(med[i] == want1[i], "origin 1, x = %d: %g, want %g", i, med[i], want1[i]);
}
END_TEST

/* The MAD follows the median's even rule. A 4-cell window of 0 1 2 10: the mean rule gives
 * m = 1.5, deviations 0.5 0.5 1.5 8.5, MAD 1; lower: m = 1, deviations 0 1 1 9, MAD 1; upper:
 * m = 2, deviations 0 1 2 8, MAD 2. */
START_TEST(mad_takes_the_median_even_rule)
{
    const float row[4] = {0, 1, 2, 10};
    const float want_med[3] = {1.5f, 1.0f, 2.0f}, want_mad[3] = {1.0f, 1.0f, 2.0f};
    for (int rule = 0; rule < 3; rule++) {
        float med[4], mad[4];
        struct clstats_filter_params p = {.width = 4,
                                          .height = 1,
                                          .boundary = CLSTATS_BOUNDARY_WRAP,
                                          .even = (enum clstats_even)rule};
        ck_assert_int_eq(clstats_median_filter(test_ctx(), row, 4, 1, 4, &p, med, mad), CLSTATS_OK);
        for (int i = 0; i < 4; i++) /* wrap: every window holds the four values */
            ck_assert_msg(med[i] == want_med[rule] && mad[i] == want_mad[rule],
                          "%s rule at %d: median %g MAD %g, want %g %g", rule_name[rule], i, med[i],
                          mad[i], want_med[rule], want_mad[rule]);
    }
}
END_TEST

/* Odd squares too: NaNs leave even counts in them, which every rule resolves its own way. */
START_TEST(even_rules_match_reference_on_sparse_data)
{
    const uint64_t seed = test_seed();
    size_t bad = 0;
    for (int rule = 0; rule < 3; rule++)
        for (int w = 2; w <= 5; w++) {
            struct clstats_filter_params p = {
                .width = w, .boundary = all_modes[(rule + w) % 5], .even = (enum clstats_even)rule};
            bad +=
                check_case(17, 12, &p, FILL_SPARSE, 0.0, seed + (uint64_t)(rule * 9 + w), "rule");
            bad += check_case(17, 12, &p, FILL_ZEROS, 0.2, seed + (uint64_t)(rule * 9 + w), "rule");
        }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The designs' log lines, for the test below: the last one that names a design (on GPUs a line
 * on the streamed transfers follows it). */
static char last_design[200];
static void keep_design(void *user, const char *line)
{
    (void)user;
    if (strstr(line, "median filter:") && strstr(line, " design ("))
        snprintf(last_design, sizeof last_design, "%s", line);
}

/* Every cell of a rectangle, at any origin and under every even rule, goes to the fast designs
 * (an origin shifts the maps, a rectangle is segments of another height, a rule picks a rank),
 * each forced in turn and judged bit for bit; only true footprints take the footprint design.
 * Heights above 16 take the sorted design's blocks; NaN leaves even counts in odd windows. */
START_TEST(rectangles_origins_and_rules_take_every_fast_design)
{
    static const char *const designs[] = {"sorted", "bisect", "rank", "binned", "runs"};
    static const char *const files[] = {"median_filter_sorted.cl", "median_filter_bisect.cl",
                                        "median_filter_rank.cl", "median_filter.cl",
                                        "median_filter_runs.cl"};
    static const int shapes[][4] = {/* width, height, origin x, y */
                                    {1, 7, 0, 2},  {9, 1, -4, 0}, {4, 3, 1, -1},  {2, 2, -1, 0},
                                    {5, 5, 2, -2}, {3, 21, 1, -9}, {20, 3, -10, 1}};
    const uint64_t seed = test_seed();
    clstats_ctx_set_log(test_ctx(), keep_design, NULL);
    size_t bad = 0;
    for (size_t d = 0; d < 5; d++) {
        test_tune("filter.path", designs[d]);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int rule = (int)((s + d) % 3);
            struct clstats_filter_params p = {.width = shapes[s][0],
                                              .height = shapes[s][1],
                                              .origin_x = shapes[s][2],
                                              .origin_y = shapes[s][3],
                                              .boundary = all_modes[(s + d) % 5],
                                              .cval = s % 2 ? NAN : -2.5f,
                                              .even = (enum clstats_even)rule};
            const enum fill kind = (enum fill)((s * 3 + d) % 10);
            last_design[0] = '\0';
            bad += check_case(s % 3 ? 23 : 5, s % 2 ? 17 : 3, &p, kind, 0.15,
                              seed + d * 100 + s, designs[d]);
            ck_assert_msg(strstr(last_design, "rectangle design") &&
                              strstr(last_design, files[d]),
                          "%s forced, %d x %d: \"%s\"", designs[d], p.width, p.height,
                          last_design);
            /* The other rules on the same window, and a footprint of all ones (a rectangle). */
            p.even = (enum clstats_even)((rule + 1) % 3);
            bad += check_case(19, 11, &p, FILL_SPARSE, 0.05, seed + d * 100 + s + 50, designs[d]);
            p.even = (enum clstats_even)((rule + 2) % 3);
            unsigned char ones[21 * 21];
            memset(ones, 1, sizeof ones);
            p.footprint = ones;
            p.footprint_width = p.width;
            p.footprint_height = p.height;
            bad += check_case(13, 9, &p, FILL_ZEROS, 0.1, seed + d * 100 + s + 70, designs[d]);
            ck_assert_msg(strstr(last_design, files[d]), "all-ones footprint: \"%s\"",
                          last_design);
        }
    }
    test_tune("filter.path", NULL);
    /* A true footprint keeps the footprint design. */
    unsigned char plus[9];
    ck_assert_int_eq(clstats_footprint_circle(1.0, plus, 9), 3);
    struct clstats_filter_params p = {.footprint = plus, .footprint_width = 3, .footprint_height = 3};
    bad += check_case(9, 7, &p, FILL_NORMAL, 0.1, seed + 999, "plus");
    ck_assert_msg(strstr(last_design, "footprint design"), "plus: \"%s\"", last_design);
    clstats_ctx_set_log(test_ctx(), NULL, NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The large-window designs on tall and wide rectangles: the runs design (runs of one height,
 * windows of another width) and the rank design with its tile in global memory, under origins,
 * every rule and every mode. */
START_TEST(large_rectangles_in_the_large_window_designs)
{
    static const int shapes[][4] = {/* width, height, origin x, y */
                                    {101, 37, 20, -5}, {37, 151, -3, 40}, {64, 2, 0, 0},
                                    {2, 200, 0, -99}, {255, 40, 0, 0}};
    const uint64_t seed = test_seed() + 900;
    size_t bad = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct clstats_filter_params p = {.width = shapes[s][0],
                                          .height = shapes[s][1],
                                          .origin_x = shapes[s][2],
                                          .origin_y = shapes[s][3],
                                          .boundary = all_modes[s % 5],
                                          .cval = s % 2 ? NAN : 0.5f,
                                          .even = (enum clstats_even)(s % 3)};
        test_tune("filter.path", "runs");
        bad += check_case(s % 2 ? 17 : 37, s % 2 ? 23 : 11, &p, (enum fill)(s * 2 % 10), 0.1,
                          seed + s, "runs");
        if (s < 2) {
            test_tune("filter.path", "rank");
            bad += check_case(15, 9, &p, (enum fill)((s * 2 + 1) % 10), 0.1, seed + 50 + s,
                              "rank");
        }
    }
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The rank design with several output rows a sweep (filter.shape_px): rectangles whose height
 * the band's rows leave a remainder of, under origins, every rule and every mode. */
START_TEST(rank_design_sweeps_of_several_rows_on_rectangles)
{
    static const int shapes[][5] = {/* width, height, origin x, y, rows a sweep */
                                    {3, 7, 1, -3, 2}, {8, 5, -4, 2, 3}, {1, 9, 0, 4, 4},
                                    {6, 21, -2, -10, 5}, {17, 11, 8, 0, 6}, {4, 4, 0, 1, 2}};
    const uint64_t seed = test_seed() + 1300;
    size_t bad = 0;
    test_tune("filter.path", "rank");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        char rows[8];
        snprintf(rows, sizeof rows, "%d", shapes[s][4]);
        test_tune("filter.shape_px", rows);
        for (int rule = 0; rule < 3; rule++) {
            struct clstats_filter_params p = {.width = shapes[s][0],
                                              .height = shapes[s][1],
                                              .origin_x = shapes[s][2],
                                              .origin_y = shapes[s][3],
                                              .boundary = all_modes[(s + (size_t)rule) % 5],
                                              .cval = rule == 1 ? NAN : -2.5f,
                                              .even = (enum clstats_even)rule};
            bad += check_case(s % 2 ? 23 : 19, 13 + s, &p, (enum fill)((s * 3 + rule) % 10),
                              0.12, seed + s * 10 + (uint64_t)rule, "rank, rows a sweep");
        }
    }
    test_tune("filter.shape_px", NULL);
    test_tune("filter.path", NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(circles_and_rings_have_the_cells_they_promise)
{
    unsigned char cells[25];
    ck_assert_int_eq(clstats_footprint_circle(1.0, cells, 25), 3);
    const unsigned char plus[9] = {0, 1, 0, 1, 1, 1, 0, 1, 0};
    ck_assert(memcmp(cells, plus, 9) == 0);
    ck_assert_int_eq(clstats_footprint_ring(1.0, 2.0, cells, 25), 5);
    int count = 0;
    for (int i = 0; i < 25; i++)
        count += cells[i];
    /* distances in (1, 2]: the 4 diagonals at sqrt 2 and the 4 at 2 */
    ck_assert_int_eq(count, 8);
    ck_assert(!cells[12] && cells[0 * 5 + 2] && cells[1 * 5 + 1] && !cells[1 * 5 + 2]);
    ck_assert_int_eq(clstats_footprint_circle(2.0, cells, 24), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_footprint_ring(2.0, 2.0, cells, 25), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_footprint_circle(128.0, cells, 25), CLSTATS_ERR_ARG);
}
END_TEST

START_TEST(circles_rings_and_random_footprints_match_reference)
{
    const uint64_t seed = test_seed();
    static unsigned char cells[15 * 15];
    size_t bad = 0;
    const double circles[] = {1.0, 2.5, 4.0};
    for (size_t i = 0; i < 3; i++) {
        const int side = clstats_footprint_circle(circles[i], cells, sizeof cells);
        struct clstats_filter_params p = {.footprint = cells,
                                          .footprint_width = side,
                                          .footprint_height = side,
                                          .boundary = all_modes[i],
                                          .even = (enum clstats_even)i};
        bad += check_case(21, 14, &p, (enum fill)(i * 3), 0.1, seed + i, "circle");
    }
    const double rings[][2] = {{1.0, 3.0}, {2.0, 5.0}, {0.0, 1.5}};
    for (size_t i = 0; i < 3; i++) {
        const int side = clstats_footprint_ring(rings[i][0], rings[i][1], cells, sizeof cells);
        struct clstats_filter_params p = {.footprint = cells,
                                          .footprint_width = side,
                                          .footprint_height = side,
                                          .boundary = all_modes[i + 2]};
        bad += check_case(21, 14, &p, (enum fill)(i * 3 + 1), 0.1, seed + 10 + i, "ring");
    }
    struct test_rng rng;
    test_rng_seed(&rng, seed + 99);
    for (int t = 0; t < 5; t++) {
        const int w = 1 + (int)(test_rng_next(&rng) % 7), h = 1 + (int)(test_rng_next(&rng) % 7);
        for (int i = 0; i < w * h; i++)
            cells[i] = test_rng_uniform(&rng) < 0.5;
        cells[test_rng_next(&rng) % (unsigned)(w * h)] = 1;
        struct clstats_filter_params p = {.footprint = cells,
                                          .footprint_width = w,
                                          .footprint_height = h,
                                          .origin_x = (w - 1) / 2,
                                          .origin_y = -(h / 2),
                                          .boundary = all_modes[t],
                                          .cval = -2.0f,
                                          .even = (enum clstats_even)(t % 3)};
        bad +=
            check_case(13, 11, &p, (enum fill)(t * 2), 0.1, seed + 20 + (uint64_t)t, "footprint");
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* A masked pixel is missing, as NaN: the maps equal the reference's with the mask, and the
 * device's for the image with NaN written there; for odd squares (the square designs, through
 * the masked copy) and footprints. */
START_TEST(masked_pixels_are_missing_like_nan)
{
    const size_t nx = 23, ny = 16, n = nx * ny;
    const uint64_t seed = test_seed();
    float *img = malloc(n * sizeof *img), *holes = malloc(n * sizeof *holes);
    float *med = malloc(n * sizeof *med), *mad = malloc(n * sizeof *mad);
    float *med2 = malloc(n * sizeof *med), *mad2 = malloc(n * sizeof *mad);
    unsigned char *mask = malloc(n);
    ck_assert(img && holes && med && mad && med2 && mad2 && mask);
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    fill_image(img, nx, ny, nx, FILL_INTEGERS, 0.05, seed);
    for (size_t i = 0; i < n; i++) {
        mask[i] = test_rng_uniform(&rng) < 0.3 ? (unsigned char)(1 + test_rng_next(&rng) % 255) : 0;
        holes[i] = mask[i] ? NAN : img[i];
    }
    const struct clstats_array m = {.host = mask, .dtype = CLSTATS_UINT8, .nx = nx, .ny = ny};
    unsigned char circle[25];
    clstats_footprint_circle(2.0, circle, 25);
    size_t bad = 0;
    for (int t = 0; t < 3; t++) {
        struct clstats_filter_params p = {.width = 5, .boundary = all_modes[t + 1], .mask = &m};
        if (t == 1) p.even = CLSTATS_EVEN_UPPER;
        if (t == 2) p.footprint = circle, p.footprint_width = p.footprint_height = 5;
        ck_assert_int_eq(clstats_median_filter(test_ctx(), img, nx, ny, nx, &p, med, mad),
                         CLSTATS_OK);
        ck_assert_int_eq(reference_median_filter(img, nx, ny, nx, &p, med2, mad2), 0);
        bad += test_compare_bits(med, med2, n, nx, "masked median vs reference");
        bad += test_compare_bits(mad, mad2, n, nx, "masked MAD vs reference");
        p.mask = NULL;
        ck_assert_int_eq(clstats_median_filter(test_ctx(), holes, nx, ny, nx, &p, med2, mad2),
                         CLSTATS_OK);
        bad += test_compare_bits(med, med2, n, nx, "masked median vs NaN holes");
        bad += test_compare_bits(mad, mad2, n, nx, "masked MAD vs NaN holes");
    }
    /* Image and mask in buffers, each at its own offset and row stride: the masked copy reads
     * each through its own (the maps equal those of the host arrays above, last footprint). */
    {
        const size_t io = 5, is = nx + 3, mo = 11, ms = nx + 7;
        float *ib = calloc(io + ny * is, sizeof *ib);
        unsigned char *mb = calloc(mo + ny * ms, 1);
        ck_assert(ib && mb);
        for (size_t y = 0; y < ny; y++)
            for (size_t x = 0; x < nx; x++) {
                ib[io + y * is + x] = img[y * nx + x];
                mb[mo + y * ms + x] = mask[y * nx + x];
            }
        cl_context cc = clstats_ctx_cl_context(test_ctx());
        cl_int err1, err2;
        cl_mem ibuf = clCreateBuffer(cc, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                     (io + ny * is) * sizeof *ib, ib, &err1);
        cl_mem mbuf =
            clCreateBuffer(cc, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, mo + ny * ms, mb, &err2);
        ck_assert(err1 == CL_SUCCESS && err2 == CL_SUCCESS);
        const struct clstats_array ia = {.buffer = ibuf, .offset = io, .dtype = CLSTATS_FLOAT32,
                                         .nx = nx, .ny = ny, .stride = is},
                                   ma = {.buffer = mbuf, .offset = mo, .dtype = CLSTATS_UINT8,
                                         .nx = nx, .ny = ny, .stride = ms},
                                   mo_a = {.host = med2, .dtype = CLSTATS_FLOAT32, .nx = nx,
                                           .ny = ny},
                                   ao_a = {.host = mad2, .dtype = CLSTATS_FLOAT32, .nx = nx,
                                           .ny = ny};
        for (int t = 0; t < 2; t++) { /* the odd square, then the circle */
            struct clstats_filter_params p = {.width = 5, .boundary = all_modes[3], .mask = &m};
            if (t == 1) p.footprint = circle, p.footprint_width = p.footprint_height = 5;
            ck_assert_int_eq(clstats_median_filter(test_ctx(), img, nx, ny, nx, &p, med, mad),
                             CLSTATS_OK);
            p.mask = &ma;
            ck_assert_int_eq(clstats_median_filter_array(test_ctx(), &ia, &p, &mo_a, &ao_a),
                             CLSTATS_OK);
            bad += test_compare_bits(med2, med, n, nx, "buffer-masked median vs host-masked");
            bad += test_compare_bits(mad2, mad, n, nx, "buffer-masked MAD vs host-masked");
        }
        clReleaseMemObject(ibuf), clReleaseMemObject(mbuf);
        free(ib), free(mb);
    }
    ck_assert_uint_eq(bad, 0);
    /* A mask of another shape or type is refused. */
    struct clstats_array wrong = m;
    wrong.ny = ny - 1;
    struct clstats_filter_params p = {.width = 3, .mask = &wrong};
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, nx, ny, nx, &p, med, mad),
                     CLSTATS_ERR_ARG);
    wrong = m;
    wrong.dtype = CLSTATS_FLOAT32;
    ck_assert_int_eq(clstats_median_filter(test_ctx(), img, nx, ny, nx, &p, med, mad),
                     CLSTATS_ERR_ARG);
    free(img), free(holes), free(med), free(mad), free(med2), free(mad2), free(mask);
}
END_TEST

/* float64 images of every kind (values float32 cannot hold among them), each window kind and
 * rule, against the float64 reference. */
START_TEST(float64_matches_reference)
{
    struct clstats_device_limits lim;
    clstats_ctx_limits(test_ctx(), &lim);
    const size_t nx = 17, ny = 12, stride = 19, n = nx * ny;
    double *img = malloc(stride * ny * sizeof *img), *med = malloc(n * sizeof *med),
           *mad = malloc(n * sizeof *mad), *rmed = malloc(n * sizeof *rmed),
           *rmad = malloc(n * sizeof *rmad);
    float *f = malloc(stride * ny * sizeof *f);
    ck_assert(img && med && mad && rmed && rmad && f);
    if (!lim.has_fp64) {
        struct clstats_filter_params p = {.width = 3};
        ck_assert_int_eq(clstats_median_filter_f64(test_ctx(), img, nx, ny, stride, &p, med, mad),
                         CLSTATS_ERR_UNSUPPORTED);
        free(img), free(med), free(mad), free(rmed), free(rmad), free(f);
        return;
    }
    const uint64_t seed = test_seed();
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    unsigned char ring[49];
    clstats_footprint_ring(1.0, 3.0, ring, 49);
    size_t bad = 0;
    for (int t = 0; t < 10; t++) {
        fill_image(f, nx, ny, stride, (enum fill)t, 0.05, seed + (uint64_t)t);
        for (size_t i = 0; i < stride * ny; i++) {
            /* float32 values, and nearby ones only float64 holds (2^24 + 1 among them) */
            const double u = test_rng_uniform(&rng);
            img[i] = u < 0.3 && isfinite(f[i]) ? (double)f[i] * (1.0 + 0x1p-40)
                     : u < 0.35                ? 16777217.0
                                               : (double)f[i];
        }
        const double cval = 0.1;
        struct clstats_filter_params p = {.width = 3 + t % 4,
                                          .height = 2 + t % 3,
                                          .boundary = all_modes[t % 5],
                                          .cval_f64 = &cval,
                                          .even = (enum clstats_even)(t % 3)};
        if (t % 4 == 3) p.footprint = ring, p.footprint_width = p.footprint_height = 7;
        int status = clstats_median_filter_f64(test_ctx(), img, nx, ny, stride, &p, med, mad);
        ck_assert_msg(status == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
        ck_assert_int_eq(reference_median_filter_f64(img, nx, ny, stride, &p, rmed, rmad), 0);
        char what[120];
        snprintf(what, sizeof what, "float64 %s seed=%llu", fill_name[t],
                 (unsigned long long)(seed + (uint64_t)t));
        bad += test_compare_bits_f64(med, rmed, n, nx, what);
        bad += test_compare_bits_f64(mad, rmad, n, nx, what);
    }
    ck_assert_uint_eq(bad, 0);
    /* 2^24 + 1, which float32 reads as 2^24, comes back exactly. */
    const double big[3] = {16777217.0, 16777217.0, 5.0};
    struct clstats_filter_params p = {.width = 3, .height = 1, .boundary = CLSTATS_BOUNDARY_WRAP};
    ck_assert_int_eq(clstats_median_filter_f64(test_ctx(), big, 3, 1, 3, &p, med, NULL),
                     CLSTATS_OK);
    ck_assert(med[0] == 16777217.0);
    free(img), free(med), free(mad), free(rmed), free(rmad), free(f);
}
END_TEST

static float *strip_image;
static float *strip_med, *strip_mad;
static int strip_read(void *user, size_t plane, size_t row0, size_t rows, float *dst)
{
    (void)plane;
    const size_t nx = *(const size_t *)user;
    memcpy(dst, strip_image + row0 * nx, rows * nx * sizeof *dst);
    return 0;
}
static int strip_write(void *user, const struct clstats_strip *st)
{
    const size_t nx = *(const size_t *)user;
    memcpy(strip_med + st->row0 * nx, st->median, st->rows * nx * sizeof(float));
    memcpy(strip_mad + st->row0 * nx, st->mad, st->rows * nx * sizeof(float));
    return 0;
}

/* Strips of rows carry a rectangle's halo and origin: the same bits as one piece. */
START_TEST(strips_of_rows_serve_rectangles_and_origins)
{
    size_t nx = 15;
    const size_t ny = 23, n = nx * ny;
    strip_image = malloc(n * sizeof(float));
    strip_med = malloc(n * sizeof(float));
    strip_mad = malloc(n * sizeof(float));
    float *med = malloc(n * sizeof *med), *mad = malloc(n * sizeof *mad);
    ck_assert(strip_image && strip_med && strip_mad && med && mad);
    fill_image(strip_image, nx, ny, nx, FILL_NORMAL, 0.1, test_seed());
    for (size_t m = 0; m < 5; m++) {
        struct clstats_rows_job job = {
            .nx = nx,
            .ny = ny,
            .planes = 1,
            .params = {.width = 3, .height = 6, .origin_y = 2, .boundary = all_modes[m]},
            .maps = CLSTATS_MAP_MEDIAN | CLSTATS_MAP_MAD,
            .height = 4,
            .read = strip_read,
            .write = strip_write,
            .user = &nx};
        ck_assert_int_eq(clstats_filter_rows(test_ctx(), &job), CLSTATS_OK);
        ck_assert_int_eq(
            clstats_median_filter(test_ctx(), strip_image, nx, ny, nx, &job.params, med, mad),
            CLSTATS_OK);
        ck_assert_uint_eq(test_compare_bits(strip_med, med, n, nx, "strip median"), 0);
        ck_assert_uint_eq(test_compare_bits(strip_mad, mad, n, nx, "strip MAD"), 0);
    }
    free(strip_image), free(strip_med), free(strip_mad), free(med), free(mad);
}
END_TEST

START_TEST(bad_windows_are_refused_with_a_message)
{
    float img[16] = {0}, out[16];
    clstats_ctx *ctx = test_ctx();
    struct clstats_filter_params p = {.width = 4, .height = 256};
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    p.height = 3;
    p.origin_x = 2; /* a 4-wide window takes -2 .. 1 */
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    ck_assert(strstr(clstats_ctx_message(ctx), "origin") != NULL);
    p.origin_x = -2;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_OK);
    p.origin_y = -2; /* a 3-high window takes -1 .. 1 */
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &p, out, NULL), CLSTATS_ERR_ARG);
    const unsigned char none[4] = {0};
    struct clstats_filter_params f = {
        .footprint = none, .footprint_width = 2, .footprint_height = 2};
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &f, out, NULL), CLSTATS_ERR_ARG);
    f.footprint_width = 0;
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &f, out, NULL), CLSTATS_ERR_ARG);
    struct clstats_filter_params e = {.width = 3, .even = (enum clstats_even)3};
    ck_assert_int_eq(clstats_median_filter(ctx, img, 4, 4, 4, &e, out, NULL), CLSTATS_ERR_ARG);
    int w, h, left, top;
    struct clstats_filter_params r = {.width = 6, .height = 5, .origin_x = 1, .origin_y = -2};
    ck_assert_int_eq(clstats_filter_window(&r, &w, &h, &left, &top), CLSTATS_OK);
    ck_assert(w == 6 && h == 5 && left == 4 && top == 0);
}
END_TEST

/* The selection's mask: masked elements are left out as NaNs are. */
START_TEST(selection_leaves_masked_elements_out)
{
    const size_t nx = 37, ny = 5, n = nx * ny;
    float data[37 * 5], holes[37 * 5];
    unsigned char mask[37 * 5];
    struct test_rng rng;
    test_rng_seed(&rng, test_seed());
    for (size_t i = 0; i < n; i++) {
        data[i] = (float)(test_rng_next(&rng) % 50);
        mask[i] = test_rng_uniform(&rng) < 0.4;
        holes[i] = mask[i] ? NAN : data[i];
    }
    const struct clstats_array a = {.host = data, .dtype = CLSTATS_FLOAT32, .nx = nx, .ny = ny},
                               h = {.host = holes, .dtype = CLSTATS_FLOAT32, .nx = nx, .ny = ny},
                               m = {.host = mask, .dtype = CLSTATS_UINT8, .nx = nx, .ny = ny};
    for (int rule = 0; rule < 3; rule++) {
        struct clstats_select_options o = {.even = (enum clstats_even)rule, .mask = &m};
        uint64_t nan_count = 0;
        o.nan_count = &nan_count;
        double got, want;
        ck_assert_int_eq(clstats_median_array(test_ctx(), &a, &o, &got), CLSTATS_OK);
        o.mask = NULL;
        ck_assert_int_eq(clstats_median_array(test_ctx(), &h, &o, &want), CLSTATS_OK);
        ck_assert_msg(got == want, "%s rule: %g, want %g", rule_name[rule], got, want);
        o.mask = &m;
        ck_assert_int_eq(clstats_select_kth_array(test_ctx(), &a, 3, &o, &got), CLSTATS_OK);
        o.mask = NULL;
        ck_assert_int_eq(clstats_select_kth_array(test_ctx(), &h, 3, &o, &want), CLSTATS_OK);
        ck_assert(got == want);
    }
    /* A known answer: 1 2 3 100 200 with the last two masked has median 2 (unmasked: 3). */
    const float five[5] = {1, 2, 3, 100, 200};
    const unsigned char last_two[5] = {0, 0, 0, 1, 7};
    const struct clstats_array
        fa = {.host = (void *)five, .dtype = CLSTATS_FLOAT32, .nx = 5, .ny = 1},
        fm = {.host = (void *)last_two, .dtype = CLSTATS_UINT8, .nx = 5, .ny = 1};
    struct clstats_select_options o = {.mask = &fm};
    double got;
    ck_assert_int_eq(clstats_median_array(test_ctx(), &fa, &o, &got), CLSTATS_OK);
    ck_assert(got == 2.0);
    float f;
    ck_assert_int_eq(clstats_median(test_ctx(), five, 5, &o, &f), CLSTATS_OK);
    ck_assert(f == 2.0f);
}
END_TEST

static Suite *windows_suite(void)
{
    Suite *s = suite_create("filter_windows");
    TCase *tc = tcase_create("windows");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, bad_windows_are_refused_with_a_message);
    tcase_add_test(tc, even_windows_cover_scipys_offsets);
    tcase_add_test(tc, mad_takes_the_median_even_rule);
    tcase_add_test(tc, circles_and_rings_have_the_cells_they_promise);
    tcase_add_test(tc, rectangles_match_reference_in_every_mode);
    tcase_add_test(tc, windows_wider_than_the_image_fold_like_scipy);
    tcase_add_test(tc, origins_shift_the_window_as_scipy_does);
    tcase_add_test(tc, even_rules_match_reference_on_sparse_data);
    tcase_add_test(tc, rectangles_origins_and_rules_take_every_fast_design);
    tcase_add_test(tc, rank_design_sweeps_of_several_rows_on_rectangles);
    tcase_add_test(tc, circles_rings_and_random_footprints_match_reference);
    tcase_add_test(tc, masked_pixels_are_missing_like_nan);
    tcase_add_test(tc, float64_matches_reference);
    tcase_add_test(tc, strips_of_rows_serve_rectangles_and_origins);
    tcase_add_test(tc, selection_leaves_masked_elements_out);
    suite_add_tcase(s, tc);
    /* The large-window designs (CK_RUN_CASE=large runs these alone). */
    TCase *large = tcase_create("large");
    tcase_set_timeout(large, 600);
    tcase_add_test(large, large_rectangles_in_the_large_window_designs);
    suite_add_tcase(s, large);
    return s;
}

int main(void)
{
    return test_run_suite(windows_suite());
}
