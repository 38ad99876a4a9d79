/* test_tiny_kernels.c - every kernel family once, on inputs small enough for a simulator: the
 * four filter designs, whole-array selection by radix, cutting plane and sample (float32 and
 * float64), column medians by the radix kernel and the forced bracket, registers and streamed
 * paths, and tile medians, each judged bit for bit by the plain references; the regression's
 * kernels (batched Cholesky and solves, the one-group Cholesky block, batched column ranks, the
 * C-steps' residuals, subsets and chunked sums) judged by textbook loops. An ordinary suite
 * on any device; CI also runs it under Oclgrind (tools/test_oclgrind.sh), whose checks for
 * out-of-bounds accesses and data races need inputs this small to finish quickly. */
#include "column_cases.h"
#include "reference_background.h"
#include "reference_clipped.h"
#include "reference_filter.h"
#include "reference_gp.h"
#include "reference_linalg.h"
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

/* One design forced on every case; without want_mad a median alone (the bracket design's MAD
 * kernel is left out here: Oclgrind had not finished test_filter_bracket's small MAD case after
 * 15 minutes, which PoCL runs in seconds). */
static size_t check_design(const char *design, bool want_mad)
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
            clstats_median_filter(test_ctx(), img, c->nx, c->ny, c->stride, &p, med,
                                  want_mad ? mad : NULL);
        ck_assert_msg(st == CLSTATS_OK, "%s: %s", design, clstats_ctx_message(test_ctx()));
        ck_assert_int_eq(
            reference_median_filter(img, c->nx, c->ny, c->stride, &p, ref_med, ref_mad), 0);
        char what[96];
        snprintf(what, sizeof what, "%s %zux%zu w=%d %s median", design, c->nx, c->ny, c->width,
                 clstats_boundary_name(c->mode));
        bad += test_compare_bits(med, ref_med, n, c->nx, what);
        if (want_mad) bad += test_compare_bits(mad, ref_mad, n, c->nx, what);
        free(img), free(med), free(mad), free(ref_med), free(ref_mad);
    }
    test_tune("filter.path", NULL);
    return bad;
}

START_TEST(filter_designs_match_the_reference)
{
    static const char *designs[] = {"sorted", "bisect", "binned", "rank", "runs"};
    size_t bad = 0;
    for (size_t d = 0; d < sizeof designs / sizeof designs[0]; d++)
        bad += check_design(designs[d], true);
    bad += check_design("bracket", false);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The footprint kernel (a ring and a random footprint, with an origin and the upper rule),
 * float32 and float64, and the mask kernel (a masked square on a fast design): against the
 * reference, so that Oclgrind watches every kernel the windows of issue 19 added. */
START_TEST(footprints_and_masks_match_the_reference)
{
    enum { NX = 11, NY = 8, N = NX * NY };
    unsigned char ring[9 * 9], random_cells[3 * 4] = {1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1};
    ck_assert_int_eq(clstats_footprint_ring(1.5, 4.0, ring, sizeof ring), 9);
    unsigned char mask_cells[N];
    for (size_t i = 0; i < N; i++) mask_cells[i] = i % 5 == 0;
    const struct clstats_array mask = {.host = mask_cells, .dtype = CLSTATS_UINT8, .nx = NX,
                                       .ny = NY};
    struct clstats_filter_params cases[3] = {
        {.footprint = ring, .footprint_width = 9, .footprint_height = 9,
         .boundary = CLSTATS_BOUNDARY_REFLECT},
        {.footprint = random_cells, .footprint_width = 4, .footprint_height = 3, .origin_x = 1,
         .even = CLSTATS_EVEN_UPPER, .boundary = CLSTATS_BOUNDARY_CONSTANT, .cval = NAN},
        {.width = 3, .mask = &mask, .boundary = CLSTATS_BOUNDARY_WRAP},
    };
    float *img = hard_values(N, 700);
    double img64[N];
    for (size_t i = 0; i < N; i++) img64[i] = (double)img[i] * (1.0 + 0x1p-40);
    size_t bad = 0;
    for (int c = 0; c < 3; c++) {
        float med[N], mad[N], rmed[N], rmad[N];
        ck_assert_msg(clstats_median_filter(test_ctx(), img, NX, NY, NX, &cases[c], med, mad) ==
                          CLSTATS_OK,
                      "case %d: %s", c, clstats_ctx_message(test_ctx()));
        ck_assert_int_eq(reference_median_filter(img, NX, NY, NX, &cases[c], rmed, rmad), 0);
        bad += test_compare_bits(med, rmed, N, NX, "footprint/mask median");
        bad += test_compare_bits(mad, rmad, N, NX, "footprint/mask MAD");
        double m64[N], a64[N], r64[N], ra64[N];
        const int st = clstats_median_filter_f64(test_ctx(), img64, NX, NY, NX, &cases[c], m64,
                                                 a64);
        if (st == CLSTATS_ERR_UNSUPPORTED) continue;
        ck_assert_msg(st == CLSTATS_OK, "case %d f64: %s", c, clstats_ctx_message(test_ctx()));
        ck_assert_int_eq(reference_median_filter_f64(img64, NX, NY, NX, &cases[c], r64, ra64), 0);
        bad += memcmp(m64, r64, sizeof m64) != 0;
        bad += memcmp(a64, ra64, sizeof a64) != 0;
    }
    free(img);
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

/* A float64 device buffer holding host[0..count), and back. */
static cl_mem to_device(const double *host, size_t count)
{
    cl_int err;
    cl_mem m = clCreateBuffer(clstats_ctx_cl_context(test_ctx()),
                              CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, count * 8, (void *)host,
                              &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return m;
}

static void to_host(cl_mem m, double *host, size_t count)
{
    ck_assert_int_eq(clEnqueueReadBuffer(clstats_ctx_cl_queue(test_ctx()), m, CL_TRUE, 0,
                                         count * 8, host, 0, NULL, NULL),
                     CL_SUCCESS);
    clReleaseMemObject(m);
}

/* Batched Cholesky (one matrix not positive definite) and solves, and the one-group diagonal
 * block of the blocked Cholesky (n below its block), float64, against textbook loops. */
START_TEST(cholesky_matches_the_reference)
{
    const size_t p = 5, count = 3, n = 9;
    double a[3 * 5 * 5], l[3 * 5 * 5], b[3 * 5], x[3 * 5], big[9 * 9], lbig[9 * 9], ld[3];
    for (size_t i = 0; i < count; i++) ref_spd(a + i * p * p, p, test_seed() + 50 + i);
    a[p * p + 2 * p + 2] = -4.0; /* matrix 1: third pivot negative */
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 51);
    for (size_t i = 0; i < count * p; i++) b[i] = test_rng_uniform(&rng) - 0.5;
    cl_mem dl = to_device(a, count * p * p), dx = to_device(b, count * p);
    struct clstats_array A = {.buffer = dl, .dtype = CLSTATS_FLOAT64, .nx = p, .ny = count * p},
                         B = {.buffer = dx, .dtype = CLSTATS_FLOAT64, .nx = 1, .ny = count * p};
    int32_t info[3];
    ck_assert_msg(clstats_cholesky_batched(test_ctx(), &A, count, info, ld) == CLSTATS_OK, "%s",
                  clstats_ctx_message(test_ctx()));
    ck_assert(info[0] == 0 && info[2] == 0 && info[1] == 3);
    ck_assert_int_eq(clstats_cholesky_solve_batched(test_ctx(), &A, &B, count), CLSTATS_OK);
    to_host(dl, l, count * p * p);
    to_host(dx, x, count * p);
    for (size_t i = 0; i < count; i += 2) {
        double want[25], logdet, back[5];
        memcpy(want, a + i * p * p, sizeof want);
        ck_assert_int_eq(ref_cholesky(want, p, p, &logdet), 0);
        for (size_t r = 0; r < p; r++)
            for (size_t c = 0; c <= r; c++)
                ck_assert(fabs(l[i * p * p + r * p + c] - want[r * p + c]) <= 1e-12 * (1 + fabs(want[r * p + c])));
        ck_assert(fabs(ld[i] - logdet) <= 1e-12 * (1 + fabs(logdet)));
        ref_gemm(false, false, p, 1, p, 1.0, a + i * p * p, p, x + i * p, 1, 0.0, back, 1);
        for (size_t r = 0; r < p; r++) ck_assert(fabs(back[r] - b[i * p + r]) <= 1e-10);
    }
    ref_spd(big, n, test_seed() + 52);
    cl_mem dbig = to_device(big, n * n);
    struct clstats_array M = {.buffer = dbig, .dtype = CLSTATS_FLOAT64, .nx = n, .ny = n};
    double logdet_got, logdet;
    ck_assert_int_eq(clstats_cholesky(test_ctx(), &M, &logdet_got, NULL), CLSTATS_OK);
    to_host(dbig, lbig, n * n);
    ck_assert_int_eq(ref_cholesky(big, n, n, &logdet), 0);
    for (size_t r = 0; r < n; r++)
        for (size_t c = 0; c <= r; c++)
            ck_assert(fabs(lbig[r * n + c] - big[r * n + c]) <= 1e-12 * (1 + fabs(big[r * n + c])));
    ck_assert(fabs(logdet_got - logdet) <= 1e-12 * (1 + fabs(logdet)));
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Batched column ranks (float32 and float64 keys) over columns with ties, NaNs and signed zeros:
 * the k-th value to the bit and the sum of the k smallest against sorting. */
START_TEST(column_ranks_match_sorting)
{
    const size_t rows = 23, cols = 4;
    for (int f64 = 0; f64 < 2; f64++) {
        float *v = hard_values(rows * cols, 500 + f64);
        double m[23 * 4], col[23], kth[4], sum[4];
        uint64_t k[4];
        for (size_t i = 0; i < rows * cols; i++) m[i] = isinf(v[i]) ? 3.0 : v[i];
        for (size_t c = 0; c < cols; c++) {
            size_t nv = 0;
            for (size_t r = 0; r < rows; r++) nv += !isnan(m[r * cols + c]);
            k[c] = c == 0 ? 1 : c == 1 ? nv : 1 + (c * 7) % nv;
        }
        float m32[23 * 4];
        for (size_t i = 0; i < rows * cols; i++) m32[i] = (float)m[i];
        struct clstats_array a = {.host = f64 ? (void *)m : (void *)m32,
                                  .dtype = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32,
                                  .nx = cols,
                                  .ny = rows};
        ck_assert_msg(clstats_column_smallest(test_ctx(), &a, k, NULL, kth, sum) == CLSTATS_OK,
                      "%s", clstats_ctx_message(test_ctx()));
        for (size_t c = 0; c < cols; c++) {
            size_t nv = 0;
            for (size_t r = 0; r < rows; r++)
                if (!isnan(m[r * cols + c])) col[nv++] = m[r * cols + c];
            qsort(col, nv, sizeof *col, cmp_double);
            double want = col[k[c] - 1], s = 0, scale = 0;
            if (want == 0) want = 0.0;
            for (size_t i = 0; i < k[c]; i++) s += col[i], scale += fabs(col[i]);
            ck_assert_msg(kth[c] == want && !signbit(kth[c]) == !signbit(want),
                          "f64 %d column %zu k %llu: %g, want %g", f64, c,
                          (unsigned long long)k[c], kth[c], want);
            ck_assert(fabs(sum[c] - s) <= (f64 ? 1e-12 : 1e-5) * (1 + scale));
        }
        free(v);
    }
}
END_TEST

/* The C-steps' kernels through a small LTS fit, both ways of summing the column products (a
 * pair a work-item, a chunk a work-item): its objective is the sum of the h smallest squared
 * residuals of its raw fit, the support those h rows, and the two ways agree to the bit. */
START_TEST(csteps_match_the_reference)
{
    enum { N = 24 };
    double x[N], y[N], coef[2][1], raw[1], r2[N], sorted[N], crit[2];
    unsigned char support[2][N];
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 60);
    for (size_t i = 0; i < N; i++) {
        x[i] = floor(8 * test_rng_uniform(&rng));
        y[i] = 2 + 0.5 * x[i] + floor(3 * test_rng_uniform(&rng)) + (i % 5 == 0 ? 30 : 0);
    }
    const char *paths[] = {"pairs", "rows"};
    for (int pi = 0; pi < 2; pi++) {
        ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "regress.products", paths[pi]), CLSTATS_OK);
        struct clstats_array X = {.host = x, .dtype = CLSTATS_FLOAT64, .nx = 1, .ny = N},
                             Y = {.host = y, .dtype = CLSTATS_FLOAT64, .nx = 1, .ny = N};
        struct clstats_regress_options o = {.seed = 4, .n_subsets = 8, .no_reweight = 1};
        struct clstats_regress_result r = {.coef = coef[pi], .raw_coef = raw, .support = support[pi]};
        ck_assert_msg(clstats_lts_fit(test_ctx(), &X, &Y, &o, &r) == CLSTATS_OK, "%s",
                      clstats_ctx_message(test_ctx()));
        crit[pi] = r.crit;
        double t, s = 0;
        for (size_t i = 0; i < N; i++) {
            const double e = y[i] - (r.raw_intercept + raw[0] * x[i]);
            sorted[i] = r2[i] = e * e;
        }
        qsort(sorted, N, sizeof *sorted, cmp_double);
        for (size_t i = 0; i < r.h; i++) s += sorted[i];
        t = sorted[r.h - 1];
        ck_assert_msg(fabs(r.crit - s) <= 1e-9 * (1 + s), "%s: crit %.17g, want %.17g", paths[pi],
                      r.crit, s);
        size_t in = 0;
        for (size_t i = 0; i < N; i++) {
            in += support[pi][i];
            if (support[pi][i]) ck_assert(r2[i] <= t * (1 + 1e-12) + 1e-12);
        }
        ck_assert_uint_eq(in, r.h);
    }
    ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "regress.products", "auto"), CLSTATS_OK);
    ck_assert(crit[0] == crit[1] && coef[0][0] == coef[1][0] &&
              memcmp(support[0], support[1], N) == 0);
}
END_TEST

enum { TINY_SKY_NX = 37, TINY_SKY_NY = 26, TINY_SKY_N = TINY_SKY_NX * TINY_SKY_NY };

/* The mesh background's tiny sky: a gradient with noise, some NaN, a sparse mask. */
static void tiny_sky(uint64_t seed, float *img, uint8_t *mask)
{
    struct test_rng r;
    test_rng_seed(&r, seed);
    for (size_t i = 0; i < TINY_SKY_N; i++) {
        img[i] = (float)(50 + 0.5 * (i % TINY_SKY_NX) + 3 * test_rng_normal(&r));
        if (i % 17 == 0) img[i] = NAN;
        mask[i] = i % 23 == 0;
    }
}

/* The library's maps and globals on the tiny sky equal a reference's, bit for bit. */
static void tiny_sky_check(const float *img, const uint8_t *mask,
                           const struct clstats_background_options *o, const float *rb,
                           const float *rr, float gb, float gr)
{
    static float back[TINY_SKY_N], rms[TINY_SKY_N];
    struct clstats_array im = {.host = (void *)img, .dtype = CLSTATS_FLOAT32, .nx = TINY_SKY_NX,
                               .ny = TINY_SKY_NY};
    struct clstats_array ob = im, orr = im;
    ob.host = back;
    orr.host = rms;
    struct clstats_background *b = NULL;
    ck_assert_int_eq(clstats_background(test_ctx(), &im, mask, o, &b), CLSTATS_OK);
    ck_assert_int_eq(clstats_background_maps(test_ctx(), b, &ob, &orr), CLSTATS_OK);
    ck_assert_uint_eq(test_compare_bits(back, rb, TINY_SKY_N, TINY_SKY_NX, "background"), 0);
    ck_assert_uint_eq(test_compare_bits(rms, rr, TINY_SKY_N, TINY_SKY_NX, "rms"), 0);
    ck_assert(b->global_back == gb && b->global_rms == gr);
    clstats_background_free(b);
}

/* The mesh background's two kernel files on a sky of 3 x 2 boxes, a work-group of 8 items
 * sharing each box (reductions, the histogram's local atomics) and one item a box; the maps a
 * work-item a pixel (GPUs') with 8 items a box, a work-item a row (CPU devices') with one. */
START_TEST(background_matches_the_reference)
{
    enum { NX = TINY_SKY_NX, NY = TINY_SKY_NY, N = TINY_SKY_N };
    static float img[N], rb[N], rr[N];
    static uint8_t mask[N];
    tiny_sky(test_seed() + 27, img, mask);
    float gb, gr;
    const char *groups[] = {"1", "8"};
    for (int g = 0; g < 2; g++) {
        reference_background(img, NX, NY, NX, mask, 16, 16, 3, 3, 0.0, 3.0, 0, g ? 8 : 1, rb, rr,
                             &gb, &gr);
        test_tune("background.wg", groups[g]);
        test_tune("background.rows", g ? "off" : "on");
        struct clstats_background_options o = {.box_w = 16, .box_h = 16, .filter_w = 3,
                                               .filter_h = 3, .clip_sigma = 3.0};
        tiny_sky_check(img, mask, &o, rb, rr, gb, gr);
    }
    test_tune("background.wg", NULL);
    test_tune("background.rows", NULL);
}
END_TEST

/* The photutils mesh's two kernel files (clipped_stats.cl, zoom.cl) on a sky of 3 x 2 boxes
 * with NaN and a mask, the biweight estimators (the longest paths). */
START_TEST(clipped_background_matches_the_reference)
{
    enum { NX = TINY_SKY_NX, NY = TINY_SKY_NY, N = TINY_SKY_N };
    static float img[N], rb[N], rr[N];
    static uint8_t mask[N];
    tiny_sky(test_seed() + 28, img, mask);
    float gb, gr;
    reference_clipped(img, NX, NY, NX, mask, 16, 16, 3, 3, 0.0, 3.0, 10, 100.0, 4, 2, rb, rr,
                      NULL, NULL, &gb, &gr);
    struct clstats_background_options o = {.box_w = 16, .box_h = 16, .filter_w = 3,
                                           .filter_h = 3, .clip_sigma = 3.0,
                                           .estimator = CLSTATS_BKG_BIWEIGHT,
                                           .clipping = CLSTATS_CLIP_SIGMA,
                                           .rms_estimator = CLSTATS_RMS_BIWEIGHT,
                                           .clip_iters = 10, .exclude_percentile = 100.0};
    tiny_sky_check(img, mask, &o, rb, rr, gb, gr);
}
END_TEST

/* The Gaussian process's kernels on a few points: correlations, nugget, a population's
 * deviances, one with its gradient and prediction sums, each correlation against the plain
 * loops; then 70 points, across the blocked factorisation's 64-row block (its panel and both
 * trailing updates). */
START_TEST(gp_kernels_match_the_reference)
{
    enum { N = 5, D = 2, COUNT = 3 };
    double x[N * D], y[N], beta[COUNT * D], dev[COUNT], nug[COUNT], grad[D], mean[N];
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 70);
    for (size_t i = 0; i < N * D; i++) x[i] = test_rng_uniform(&rng);
    for (size_t i = 0; i < N; i++) y[i] = x[i * D] - 2 * x[i * D + 1] * x[i * D + 1];
    for (size_t i = 0; i < COUNT * D; i++) beta[i] = -1 + 2 * test_rng_uniform(&rng);
    for (int corr = 0; corr < 3; corr++) {
        struct clstats_gp_model m;
        clstats_gp_model_init(&m);
        m.corr = (enum clstats_gp_corr)corr;
        const struct clstats_gp_eval out = {.deviance = dev, .nugget = nug};
        ck_assert_msg(clstats_gp_deviance(test_ctx(), &m, x, y, N, D, beta, COUNT, &out) ==
                          CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
        for (int c = 0; c < COUNT; c++) {
            double mu, s2;
            const double want = reference_gp_deviance(&m, x, y, N, D, beta + c * D, nug[c], &mu,
                                                      &s2, NULL);
            ck_assert_msg(fabs(dev[c] - want) <= 1e-7 * (1 + fabs(want)), "%.17g %.17g", dev[c],
                          want);
        }
        m.nugget = 1e-6;
        double want_grad[D], mu, s2;
        const double want = reference_gp_deviance(&m, x, y, N, D, beta, m.nugget, &mu, &s2,
                                                  want_grad);
        const struct clstats_gp_eval one = {.deviance = dev, .gradient = grad};
        ck_assert_int_eq(clstats_gp_deviance(test_ctx(), &m, x, y, N, D, beta, 1, &one),
                         CLSTATS_OK);
        ck_assert(fabs(dev[0] - want) <= 1e-9 * (1 + fabs(want)));
        for (int k = 0; k < D; k++)
            ck_assert(fabs(grad[k] - want_grad[k]) <= 1e-7 * (1 + fabs(want_grad[k])));
        ck_assert_int_eq(clstats_gp_predict(test_ctx(), &m, x, y, N, D, beta, 0, x, N, mean,
                                            NULL),
                         CLSTATS_OK);
        for (int i = 0; i < N; i++) ck_assert(fabs(mean[i] - y[i]) <= 1e-6 * (1 + fabs(y[i])));
    }
    enum { BIG = 70 };
    double xb[BIG], yb[BIG], bb[2] = {0.3, 1.1}, db[2], nb[2];
    for (int i = 0; i < BIG; i++) {
        xb[i] = (i + test_rng_uniform(&rng)) / BIG;
        yb[i] = sin(5 * xb[i]);
    }
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    const struct clstats_gp_eval two = {.deviance = db, .nugget = nb};
    for (int u = 0; u < 2; u++) {
        test_tune("linalg.potrf_update", u ? "rows" : "tiles");
        ck_assert_int_eq(clstats_gp_deviance(test_ctx(), &m, xb, yb, BIG, 1, bb, 2, &two),
                         CLSTATS_OK);
        for (int c = 0; c < 2; c++) {
            double mu, s2;
            const double want =
                reference_gp_deviance(&m, xb, yb, BIG, 1, bb + c, nb[c], &mu, &s2, NULL);
            ck_assert_msg(fabs(db[c] - want) <= 1e-7 * (1 + fabs(want)), "%.17g %.17g", db[c],
                          want);
        }
    }
    test_tune("linalg.potrf_update", NULL);
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
        {"footprints", footprints_and_masks_match_the_reference},
        {"select", selection_methods_match_the_reference},
        {"columns", column_medians_match_the_reference_on_every_path},
        {"tiles", tile_medians_match_the_reference},
        {"cholesky", cholesky_matches_the_reference},
        {"column_ranks", column_ranks_match_sorting},
        {"csteps", csteps_match_the_reference},
        {"background", background_matches_the_reference},
        {"clipped_background", clipped_background_matches_the_reference},
        {"gp", gp_kernels_match_the_reference},
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
