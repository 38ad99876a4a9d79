/* test_background.c - the mesh background (src/background/, kernels/background/) against the
 * plain reference (reference_background.c), bit for bit: random skies with gradients, sources,
 * NaN, ties, constant regions and masks, shapes tiny and odd, every work-group size, float64,
 * strided rows and device buffers; photutils' sigma clipping with every estimator against
 * reference_clipped.c, bit for bit too; and the arguments refused. SEP and photutils themselves
 * are the judges in python/tests/test_background.py. */
#include "../src/background/idw.h"
#include "reference_background.h"
#include "reference_clipped.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sky {
    size_t nx, ny;
    float *img;
    uint8_t *mask;
};

/* A sky of level 100 with a gradient, noise, a few bright stars, some NaN, rounding to ties
 * where asked and a constant block. */
static struct sky make_sky(size_t nx, size_t ny, uint64_t seed, int ties, double nan_frac,
                           int with_mask)
{
    struct test_rng r;
    test_rng_seed(&r, seed);
    struct sky s = {nx, ny, malloc(nx * ny * sizeof(float)), NULL};
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < nx; x++) {
            double v = 100 + 0.3 * x + 0.2 * y + 5 * test_rng_normal(&r);
            if (test_rng_uniform(&r) < 0.002) v += 1e4 * test_rng_uniform(&r);
            if (ties) v = round(v);
            if (test_rng_uniform(&r) < nan_frac) v = NAN;
            s.img[y * nx + x] = (float)v;
        }
    for (size_t y = ny / 3; y < ny / 3 + ny / 5; y++)
        for (size_t x = 0; x < nx / 4; x++)
            s.img[y * nx + x] = 42.0f;
    if (with_mask) {
        s.mask = calloc(nx * ny, 1);
        for (size_t i = 0; i < nx * ny; i++)
            s.mask[i] = test_rng_uniform(&r) < 0.1 || (i % nx > nx / 2 && i / nx > ny / 2);
    }
    return s;
}

static void free_sky(struct sky *s)
{
    free(s->img);
    free(s->mask);
}

/* What a reference gave: the maps, the filtered mesh (NULL where not compared), the globals. */
struct wanted {
    const float *back, *rms, *mesh_back, *mesh_rms;
    float global_back, global_rms;
};

/* The library's maps, mesh and globals on the sky equal the reference's, bit for bit. */
static void compare_library(const struct sky *s, struct clstats_background_options o,
                            const struct wanted *want, const char *what)
{
    const size_t n = s->nx * s->ny;
    float *back = malloc(n * 4), *rms = malloc(n * 4);
    struct clstats_array im = {.host = s->img, .dtype = CLSTATS_FLOAT32, .nx = s->nx, .ny = s->ny};
    struct clstats_array ob = {.host = back, .dtype = CLSTATS_FLOAT32, .nx = s->nx, .ny = s->ny};
    struct clstats_array orr = ob;
    orr.host = rms;
    struct clstats_background *b = NULL;
    int st = clstats_background(test_ctx(), &im, s->mask, &o, &b);
    ck_assert_msg(st == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(test_ctx()));
    st = clstats_background_maps(test_ctx(), b, &ob, &orr);
    ck_assert_msg(st == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(test_ctx()));
    if (want->mesh_back) {
        ck_assert_msg(test_compare_bits(b->back, want->mesh_back, b->nx * b->ny, b->nx, what) == 0,
                      "%s: background mesh", what);
        ck_assert_msg(test_compare_bits(b->rms, want->mesh_rms, b->nx * b->ny, b->nx, what) == 0,
                      "%s: rms mesh", what);
    }
    ck_assert_msg(test_compare_bits(back, want->back, n, s->nx, what) == 0, "%s: background",
                  what);
    ck_assert_msg(test_compare_bits(rms, want->rms, n, s->nx, what) == 0, "%s: rms", what);
    ck_assert_msg(b->global_back == want->global_back && b->global_rms == want->global_rms,
                  "%s: globals %g %g, want %g %g", what, b->global_back, b->global_rms,
                  want->global_back, want->global_rms);
    clstats_background_free(b);
    free(back), free(rms);
}

/* SExtractor's way against reference_background.c, the library's boxes measured by `group`
 * work-items a box (background.wg, set by the caller). */
static void check_sky_group(const struct sky *s, struct clstats_background_options o, size_t group,
                            const char *what)
{
    const size_t n = s->nx * s->ny;
    float *rb = malloc(n * 4), *rr = malloc(n * 4);
    struct wanted want = {rb, rr, NULL, NULL, 0, 0};
    reference_background(s->img, s->nx, s->ny, s->nx, s->mask, o.box_w, o.box_h, o.filter_w,
                         o.filter_h, o.filter_threshold, o.clip_sigma, (int)o.estimator, group, rb,
                         rr, &want.global_back, &want.global_rms);
    compare_library(s, o, &want, what);
    free(rb), free(rr);
}

/* The same with the tuning table's group size (src/core/tuning.c): one work-item a box on CPU
 * devices, 256 on GPUs. */
static void check_sky(const struct sky *s, struct clstats_background_options o, const char *what)
{
    struct clstats_device_limits lim;
    ck_assert_int_eq(clstats_ctx_limits(test_ctx(), &lim), CLSTATS_OK);
    check_sky_group(s, o, lim.is_cpu ? 1 : 256, what);
}

static struct clstats_background_options opts(size_t bw, size_t bh, size_t fw, size_t fh)
{
    struct clstats_background_options o = {.box_w = bw, .box_h = bh, .filter_w = fw,
                                           .filter_h = fh, .clip_sigma = 3.0};
    return o;
}

START_TEST(background_equals_reference_on_random_skies)
{
    const size_t shapes[][2] = {{256, 256}, {301, 177}, {64, 64}, {65, 1}, {1, 90}, {7, 5},
                                {130, 66}, {33, 400}};
    const size_t boxes[][4] = {{64, 64, 3, 3}, {32, 16, 5, 3}, {10, 13, 1, 1}, {3, 3, 3, 5}};
    /* the maps a work-item a pixel (GPUs' design) and a row (CPU devices', into the caller's
     * arrays in place), on every device */
    const char *designs[] = {"off", "on"};
    char what[160];
    for (int d = 0; d < 2; d++) {
        test_tune("background.rows", designs[d]);
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
            for (size_t k = 0; k < sizeof boxes / sizeof *boxes; k++) {
                struct sky s = make_sky(shapes[i][0], shapes[i][1], test_seed() + i * 7 + k,
                                        (int)(k % 2), i % 3 ? 0.01 : 0.0, i % 2);
                snprintf(what, sizeof what, "%zux%zu box %zux%zu filter %zux%zu rows %s", s.nx,
                         s.ny, boxes[k][0], boxes[k][1], boxes[k][2], boxes[k][3], designs[d]);
                check_sky(&s, opts(boxes[k][0], boxes[k][1], boxes[k][2], boxes[k][3]), what);
                free_sky(&s);
            }
    }
    test_tune("background.rows", NULL);
}
END_TEST

/* Every group size gives the reference's bits, each several times over: several work-items a
 * box once gave wrong boxes now and then on PoCL's threads (its kernel-scope local arrays shared
 * between work-groups run at once; box_stats.cl now takes them as arguments), a fault that only
 * repetition shows. */
START_TEST(background_every_group_size_gives_the_same_bits)
{
    struct sky s = make_sky(200, 150, test_seed() + 99, 1, 0.02, 1);
    struct sky plain = make_sky(203, 161, test_seed() + 98, 0, 0.0, 0);
    const char *sizes[] = {"1", "2", "8", "64", "256"};
    char what[64];
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        test_tune("background.wg", sizes[i]);
        for (int rep = 0; rep < 8; rep++) {
            snprintf(what, sizeof what, "group %s, run %d", sizes[i], rep);
            check_sky_group(&s, opts(48, 40, 3, 3), strtoul(sizes[i], NULL, 10), what);
            check_sky_group(&plain, opts(16, 16, 3, 3), strtoul(sizes[i], NULL, 10), what);
        }
    }
    test_tune("background.wg", NULL);
    free_sky(&s);
    free_sky(&plain);
}
END_TEST

START_TEST(background_estimators_threshold_and_clip)
{
    struct sky s = make_sky(180, 190, test_seed() + 5, 0, 0.0, 0);
    struct clstats_background_options o = opts(32, 32, 3, 3);
    for (int e = 0; e < 3; e++) {
        o.estimator = (enum clstats_bkg_estimator)e;
        check_sky(&s, o, "estimator");
    }
    o.estimator = CLSTATS_BKG_SEXTRACTOR;
    o.filter_threshold = 1.5;
    o.clip_sigma = 2.5;
    check_sky(&s, o, "fthresh and clip");
    free_sky(&s);
}
END_TEST

START_TEST(background_bad_and_constant_boxes)
{
    /* all missing but one box; all missing; all one value */
    struct sky s = make_sky(150, 150, test_seed() + 11, 0, 0.0, 0);
    for (size_t i = 0; i < 150 * 150; i++)
        if (i % 150 >= 50 || i / 150 >= 50) s.img[i] = NAN;
    check_sky(&s, opts(50, 50, 3, 3), "one good box");
    for (size_t i = 0; i < 150 * 150; i++)
        s.img[i] = NAN;
    check_sky(&s, opts(50, 50, 3, 3), "no good box");
    for (size_t i = 0; i < 150 * 150; i++)
        s.img[i] = 7.0f;
    check_sky(&s, opts(50, 50, 3, 3), "constant");
    free_sky(&s);
}
END_TEST

START_TEST(background_float64_strided_and_buffers)
{
    struct sky s = make_sky(120, 90, test_seed() + 3, 0, 0.01, 0);
    const size_t n = s.nx * s.ny, stride = s.nx + 13;
    double *d = calloc(stride * s.ny, sizeof *d);
    for (size_t y = 0; y < s.ny; y++)
        for (size_t x = 0; x < s.nx; x++)
            d[y * stride + x] = s.img[y * s.nx + x];
    struct clstats_array im = {.host = d, .dtype = CLSTATS_FLOAT64, .nx = s.nx, .ny = s.ny,
                               .stride = stride};
    struct clstats_background_options o = opts(32, 32, 3, 3);
    struct clstats_background *b = NULL;
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_OK);
    float *rb = malloc(n * 4), *rr = malloc(n * 4), *got = malloc(n * 4), gb, gr;
    struct clstats_device_limits lim;
    ck_assert_int_eq(clstats_ctx_limits(test_ctx(), &lim), CLSTATS_OK);
    reference_background(s.img, s.nx, s.ny, s.nx, NULL, 32, 32, 3, 3, 0.0, 3.0, 0,
                         lim.is_cpu ? 1 : 256, rb, rr, &gb, &gr);
    cl_int err;
    cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(test_ctx()), CL_MEM_READ_WRITE,
                                (n + 5) * 4, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    struct clstats_array out = {.buffer = buf, .offset = 5, .dtype = CLSTATS_FLOAT32, .nx = s.nx,
                                .ny = s.ny};
    ck_assert_int_eq(clstats_background_maps(test_ctx(), b, NULL, &out), CLSTATS_OK);
    ck_assert_int_eq(clEnqueueReadBuffer(clstats_ctx_cl_queue(test_ctx()), buf, CL_TRUE, 20,
                                         n * 4, got, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_uint_eq(test_compare_bits(got, rr, n, s.nx, "float64 rms in a buffer"), 0);
    ck_assert(b->global_back == gb);
    clReleaseMemObject(buf);
    clstats_background_free(b);
    free(d), free(rb), free(rr), free(got);
    free_sky(&s);
}
END_TEST

/* photutils' clipping: the maps, the filtered mesh and the globals equal the reference's. */
static void check_clipped(const struct sky *s, struct clstats_background_options o,
                          const char *what)
{
    const size_t n = s->nx * s->ny,
                 nb = ((s->nx - 1) / o.box_w + 1) * ((s->ny - 1) / o.box_h + 1);
    float *rb = malloc(n * 4), *rr = malloc(n * 4), *mb = malloc(nb * 4), *mr = malloc(nb * 4);
    struct wanted want = {rb, rr, mb, mr, 0, 0};
    reference_clipped(s->img, s->nx, s->ny, s->nx, s->mask, o.box_w, o.box_h, o.filter_w,
                      o.filter_h, o.filter_threshold, o.clip_sigma, o.clip_iters,
                      o.exclude_percentile < 0 ? 0.0 : o.exclude_percentile, (int)o.estimator,
                      (int)o.rms_estimator, rb, rr, mb, mr, &want.global_back, &want.global_rms);
    compare_library(s, o, &want, what);
    free(rb), free(rr), free(mb), free(mr);
}

static struct clstats_background_options clipped_opts(size_t bw, size_t bh, size_t f, int est,
                                                      int rms)
{
    struct clstats_background_options o = opts(bw, bh, f, f);
    o.clipping = CLSTATS_CLIP_SIGMA;
    o.estimator = (enum clstats_bkg_estimator)est;
    o.rms_estimator = (enum clstats_bkg_rms)rms;
    o.clip_iters = 10;
    o.exclude_percentile = 10.0;
    return o;
}

START_TEST(clipped_every_estimator_equals_reference)
{
    const size_t shapes[][2] = {{256, 192}, {301, 177}, {7, 5}, {65, 1}, {130, 66}};
    char what[160];
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        struct sky s = make_sky(shapes[i][0], shapes[i][1], test_seed() + 300 + i, (int)(i % 2),
                                i % 2 ? 0.003 : 0.0, i == 1);
        if (i == 4) /* infinities are missing pixels to photutils */
            for (size_t k = 0; k < s.nx * s.ny; k += 97)
                s.img[k] = k % 2 ? INFINITY : -INFINITY;
        const size_t box = i == 2 ? 3 : 32;
        for (int e = 0; e <= CLSTATS_BKG_BIWEIGHT; e++)
            for (int r = 0; r <= CLSTATS_RMS_BIWEIGHT; r++) {
                struct clstats_background_options o = clipped_opts(box, box, 3, e, r);
                /* all boxes kept but empty ones, so that estimators meet every box */
                o.exclude_percentile = 100.0;
                snprintf(what, sizeof what, "%zux%zu estimator %d rms %d", s.nx, s.ny, e, r);
                check_clipped(&s, o, what);
            }
        free_sky(&s);
    }
}
END_TEST

START_TEST(clipped_exclusion_filter_and_iterations)
{
    struct sky s = make_sky(200, 170, test_seed() + 400, 0, 0.02, 1);
    struct clstats_background_options o = clipped_opts(40, 34, 3, 0, 0);
    check_clipped(&s, o, "photutils' defaults");
    o.exclude_percentile = -1; /* photutils' 0: any missing pixel makes a box bad */
    check_clipped(&s, o, "exclude 0");
    o.exclude_percentile = 35;
    o.filter_threshold = 150.0; /* photutils' rule: filter only boxes above 150 */
    check_clipped(&s, o, "exclude 35, threshold");
    o.filter_threshold = 0;
    o.clip_iters = 1;
    o.clip_sigma = 1.5;
    check_clipped(&s, o, "one round at 1.5 sd");
    o.clip_iters = -1;
    check_clipped(&s, o, "rounds until none clipped");
    test_tune("background.band_kib", "1"); /* a launch a row of boxes */
    check_clipped(&s, o, "a row of boxes a launch");
    test_tune("background.band_kib", "120"); /* two rows a launch, then one */
    check_clipped(&s, o, "bands of a few rows");
    test_tune("background.band_kib", NULL);
    o = clipped_opts(50, 50, 5, 4, 2);
    for (size_t i = 0; i < s.nx * s.ny; i++)
        s.img[i] = (float)(i % 7 == 0 ? 3.0 : 2.0); /* MAD 0: the median, scale 0 */
    check_clipped(&s, o, "MAD 0");
    free_sky(&s);
}
END_TEST

START_TEST(clipped_float64_is_used_as_is)
{
    /* float64 pixels that are not floats: the sigma mode keeps them in double (photutils does)
     * and gives what their float32 rounding does not */
    const size_t nx = 96, ny = 64, n = nx * ny;
    double *d = malloc(n * sizeof *d);
    float *f = malloc(n * sizeof *f);
    struct test_rng r;
    test_rng_seed(&r, test_seed() + 500);
    for (size_t i = 0; i < n; i++) {
        d[i] = 1e4 + 1e-3 * test_rng_normal(&r);
        f[i] = (float)d[i];
    }
    struct clstats_background_options o = clipped_opts(32, 32, 1, 2, 0);
    struct clstats_array im = {.host = d, .dtype = CLSTATS_FLOAT64, .nx = nx, .ny = ny};
    struct clstats_array imf = {.host = f, .dtype = CLSTATS_FLOAT32, .nx = nx, .ny = ny};
    struct clstats_background *b = NULL, *bf = NULL;
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_OK);
    ck_assert_int_eq(clstats_background(test_ctx(), &imf, NULL, &o, &bf), CLSTATS_OK);
    ck_assert_msg(fabs(b->rms[0] - 1e-3) < 2e-4, "rms %g, want about 1e-3", b->rms[0]);
    ck_assert_msg(bf->rms[0] != b->rms[0], "the float64 image was rounded to float32");
    clstats_background_free(b);
    clstats_background_free(bf);
    free(d), free(f);
}
END_TEST

/* NaN blocks that empty whole boxes at the corners, along the edges and inside: SEP's rule
 * (the mean of the nearest good boxes) and photutils' (inverse-distance weighting) fill them. */
static void nan_blocks(struct sky *s, size_t bw, size_t bh)
{
    const size_t nx = s->nx, ny = s->ny;
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < nx; x++) {
            const bool corner = (x < bw && y < bh) || (x >= nx - 2 * bw && y >= ny - bh);
            const bool edge = y < bh && x >= 3 * bw && x < 4 * bw;
            const bool inner = x >= 2 * bw && x < 4 * bw && y >= 2 * bh && y < 3 * bh;
            if (corner || edge || inner) s->img[y * nx + x] = NAN;
        }
}

START_TEST(excluded_boxes_at_edges_and_corners)
{
    struct sky s = make_sky(330, 250, test_seed() + 600, 0, 0.01, 0);
    nan_blocks(&s, 32, 32);
    check_sky(&s, opts(32, 32, 3, 3), "SEP, NaN blocks");
    struct clstats_background_options o = clipped_opts(32, 32, 3, 0, 0);
    check_clipped(&s, o, "photutils, NaN blocks");
    s.mask = calloc(s.nx * s.ny, 1);
    for (size_t y = 0; y < s.ny; y++) /* a masked band down the right edge, a third of a box */
        for (size_t x = s.nx - 11; x < s.nx; x++)
            s.mask[y * s.nx + x] = 1;
    o.exclude_percentile = 5;
    check_clipped(&s, o, "photutils, mask and exclude 5");
    check_sky(&s, opts(32, 32, 5, 3), "SEP, mask");
    free_sky(&s);
}
END_TEST

/* The inverse-distance fill against the plain sum where no tie at the tenth distance decides:
 * meshes with at most ten good boxes (all of them count), and a lone bad corner box (its ten
 * nearest are at distances 1, 1, sqrt 2, 2, 2, sqrt 5, sqrt 5, sqrt 8, 3, 3; then sqrt 10). */
START_TEST(idw_fill_without_ties)
{
    struct test_rng r;
    test_rng_seed(&r, test_seed() + 700);
    for (int trial = 0; trial < 60; trial++) {
        const size_t nx = 2 + trial % 9, ny = 1 + trial % 7, n = nx * ny;
        float *b = malloc(n * 4), *s = malloc(n * 4), *b0 = malloc(n * 4), *s0 = malloc(n * 4);
        unsigned char *good = calloc(n, 1);
        const bool corner = trial % 2 && nx >= 4 && ny >= 4;
        size_t ngood = 0;
        for (size_t i = 0; i < n; i++) {
            b[i] = b0[i] = (float)(100 + 10 * test_rng_normal(&r));
            s[i] = s0[i] = (float)(5 + test_rng_uniform(&r));
            good[i] = corner ? i != (trial % 4 ? n - 1 : 0)
                             : ngood < 10 && test_rng_uniform(&r) < 0.5;
            ngood += good[i];
        }
        if (!ngood || ngood == n) goto next;
        ck_assert(clstats__mesh_idw_fill(b, s, good, nx, ny));
        for (size_t i = 0; i < n; i++) {
            if (good[i]) {
                ck_assert(b[i] == b0[i] && s[i] == s0[i]);
                continue;
            }
            double d[256], wb[256], ws[256];
            size_t m = 0;
            for (size_t j = 0; j < n; j++)
                if (good[j]) {
                    const double dx = (double)(j % nx) - (double)(i % nx),
                                 dy = (double)(j / nx) - (double)(i / nx);
                    d[m] = sqrt(dx * dx + dy * dy), wb[m] = b0[j], ws[m++] = s0[j];
                }
            /* the ten nearest: none tied across the tenth in these meshes */
            double tw = 0, tb = 0, ts = 0;
            for (size_t k = 0; k < m && k < 10; k++) {
                size_t best = k;
                for (size_t j = k + 1; j < m; j++)
                    if (d[j] < d[best]) best = j;
                double t = d[k]; d[k] = d[best]; d[best] = t;
                t = wb[k]; wb[k] = wb[best]; wb[best] = t;
                t = ws[k]; ws[k] = ws[best]; ws[best] = t;
                tw += 1 / d[k], tb += wb[k] / d[k], ts += ws[k] / d[k];
            }
            ck_assert_msg(m <= 10 || d[9] < d[10], "trial %d: a tie decides", trial);
            ck_assert_msg(fabs(b[i] - tb / tw) <= 1e-5 * fabs(tb / tw) &&
                              fabs(s[i] - ts / tw) <= 1e-5 * fabs(ts / tw),
                          "trial %d box %zu: %g %g, want %g %g", trial, i, b[i], s[i], tb / tw,
                          ts / tw);
        }
    next:
        free(b), free(s), free(b0), free(s0), free(good);
    }
}
END_TEST

START_TEST(background_refuses_bad_arguments)
{
    float img[64] = {0};
    struct clstats_array im = {.host = img, .dtype = CLSTATS_FLOAT32, .nx = 8, .ny = 8};
    struct clstats_background *b = (void *)1;
    struct clstats_background_options o = opts(4, 4, 2, 3);
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_ERR_ARG);
    ck_assert_ptr_null(b);
    o = opts(4, 4, 3, 3);
    o.clip_sigma = -1;
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_ERR_ARG);
    o = opts(4, 4, 3, 3);
    o.estimator = CLSTATS_BKG_MMM; /* photutils' estimators need its clipping */
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_ERR_ARG);
    o = opts(4, 4, 3, 3);
    o.rms_estimator = CLSTATS_RMS_MAD_STD;
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_ERR_ARG);
    o.clipping = CLSTATS_CLIP_SIGMA;
    o.exclude_percentile = 101;
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_ERR_ARG);
    o.exclude_percentile = 100;
    o.estimator = (enum clstats_bkg_estimator)9;
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_ERR_ARG);
    o = opts(4, 4, 3, 3);
    ck_assert_int_eq(clstats_background(test_ctx(), &im, NULL, &o, &b), CLSTATS_OK);
    struct clstats_array wrong = {.host = img, .dtype = CLSTATS_FLOAT32, .nx = 7, .ny = 8};
    ck_assert_int_eq(clstats_background_maps(test_ctx(), b, &wrong, NULL), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_background_maps(test_ctx(), b, NULL, NULL), CLSTATS_OK);
    clstats_background_free(b);
    ck_assert_int_eq(clstats_background(test_ctx(), NULL, NULL, &o, &b), CLSTATS_ERR_ARG);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("background");
    TCase *tc = tcase_create("background");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, background_equals_reference_on_random_skies);
    tcase_add_test(tc, background_every_group_size_gives_the_same_bits);
    tcase_add_test(tc, background_estimators_threshold_and_clip);
    tcase_add_test(tc, background_bad_and_constant_boxes);
    tcase_add_test(tc, background_float64_strided_and_buffers);
    tcase_add_test(tc, clipped_every_estimator_equals_reference);
    tcase_add_test(tc, clipped_exclusion_filter_and_iterations);
    tcase_add_test(tc, clipped_float64_is_used_as_is);
    tcase_add_test(tc, excluded_boxes_at_edges_and_corners);
    tcase_add_test(tc, idw_fill_without_ties);
    tcase_add_test(tc, background_refuses_bad_arguments);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
