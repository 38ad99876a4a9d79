/* test_select.c - whole-array order statistics and column medians against the sorting
 * reference (tests/reference_select.c), bit for bit, for both methods: the distributions of
 * Beliakov's cutting-plane paper, ties, huge values, infinities, NaNs and tiny arrays. */
#include "../src/select/select_internal.h"
#include "reference_select.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum clstats_select_method methods[] = {
    CLSTATS_SELECT_RADIX, CLSTATS_SELECT_CUTTING_PLANE, CLSTATS_SELECT_SAMPLE, CLSTATS_SELECT_AUTO};
#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))
static const char *const method_names[] = {"auto", "radix", "cutting-plane", "sample"};

static int same32(float a, float b)
{
    return memcmp(&a, &b, 4) == 0;
}

static int same64(double a, double b)
{
    return memcmp(&a, &b, 8) == 0;
}

/* Checks median (all three even modes), k = 0, k = nv - 1 and a few random k of x[0..n)
 * with every method against the reference. */
static void check_f32(const float *x, size_t n, const char *what)
{
    size_t nv;
    float *s = ref_sorted_f32(x, n, &nv);
    float *copy = malloc(n * sizeof *copy);
    memcpy(copy, x, n * sizeof *copy);
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() ^ n);
    for (int mi = 0; mi < NMETHODS; mi++) {
        struct clstats_select_options o = {.method = methods[mi]};
        uint64_t nan = 0;
        o.nan_count = &nan;
        for (int e = 0; e < 3; e++) {
            o.even = (enum clstats_even)e;
            float got = 0, want = ref_median_f32(x, n, o.even);
            int st = clstats_median(test_ctx(), x, n, &o, &got);
            if (nv == 0) {
                ck_assert_int_eq(st, CLSTATS_ERR_EMPTY);
                continue;
            }
            ck_assert_msg(st == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(test_ctx()));
            ck_assert_msg(same32(got, want), "%s %s even=%d n=%zu: median %.9g (0x%08x), want %.9g",
                          what, method_names[methods[mi]], e, n, got, 0u, want);
            ck_assert_uint_eq(nan, n - nv);
        }
        if (nv == 0) continue;
        uint64_t ks[5] = {0, nv - 1, test_rng_next(&rng) % nv, test_rng_next(&rng) % nv, nv / 3};
        for (int i = 0; i < 5; i++) {
            float got = 0;
            int st = clstats_select_kth(test_ctx(), x, n, ks[i], &o, &got);
            ck_assert_msg(st == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(test_ctx()));
            ck_assert_msg(same32(got, ref_plus_zero_f32(s[ks[i]])),
                          "%s %s n=%zu k=%llu: got %.9g, want %.9g", what,
                          method_names[methods[mi]], n, (unsigned long long)ks[i], got, s[ks[i]]);
        }
    }
    ck_assert_msg(memcmp(copy, x, n * sizeof *copy) == 0, "%s: the input was modified", what);
    free(copy);
    free(s);
}

static void check_f64(const double *x, size_t n, const char *what)
{
    size_t nv;
    double *s = ref_sorted_f64(x, n, &nv);
    for (int mi = 0; mi < NMETHODS; mi++) {
        struct clstats_select_options o = {.method = methods[mi]};
        for (int e = 0; e < 3; e++) {
            o.even = (enum clstats_even)e;
            double got = 0, want = ref_median_f64(x, n, o.even);
            int st = clstats_median_f64(test_ctx(), x, n, &o, &got);
            if (nv == 0) {
                ck_assert_int_eq(st, CLSTATS_ERR_EMPTY);
                continue;
            }
            ck_assert_msg(st == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(test_ctx()));
            ck_assert_msg(same64(got, want), "%s %s even=%d n=%zu: median %.17g, want %.17g", what,
                          method_names[methods[mi]], e, n, got, want);
        }
        if (nv == 0) continue;
        uint64_t ks[3] = {0, nv - 1, nv / 3};
        for (int i = 0; i < 3; i++) {
            double got = 0;
            int st = clstats_select_kth_f64(test_ctx(), x, n, ks[i], &o, &got);
            ck_assert_msg(st == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(test_ctx()));
            ck_assert_msg(same64(got, ref_plus_zero_f64(s[ks[i]])),
                          "%s %s k=%llu: got %.17g, want %.17g", what, method_names[methods[mi]],
                          (unsigned long long)ks[i], got, s[ks[i]]);
        }
    }
    free(s);
}

/* ---- Inputs ------------------------------------------------------------------------------ */

enum dist { UNIFORM, NORMAL, HALF_NORMAL, BETA25, MIX_NORMAL, MIX_UNIFORM_NORMAL, NDIST };
static const char *const dist_names[] = {"uniform",   "normal",  "half-normal",
                                         "beta(2,5)", "mixture", "uniform+normal"};

static double draw(struct test_rng *r, enum dist d)
{
    switch (d) {
    case UNIFORM:
        return test_rng_uniform(r);
    case NORMAL:
        return test_rng_normal(r);
    case HALF_NORMAL:
        return fabs(test_rng_normal(r));
    case BETA25: { /* 2nd smallest of 6 uniforms is Beta(2, 5) */
        double u[6], lo1 = 2, lo2 = 2;
        for (int i = 0; i < 6; i++) {
            u[i] = test_rng_uniform(r);
            if (u[i] < lo1) {
                lo2 = lo1;
                lo1 = u[i];
            } else if (u[i] < lo2) {
                lo2 = u[i];
            }
        }
        return lo2;
    }
    case MIX_NORMAL: /* 90% N(0, 1), 10% N(100, 100^2): a heavy right tail */
        return test_rng_uniform(r) < 0.9 ? test_rng_normal(r) : 100 + 100 * test_rng_normal(r);
    case MIX_UNIFORM_NORMAL:
    default:
        return test_rng_uniform(r) < 0.5 ? test_rng_uniform(r) : 3 + test_rng_normal(r);
    }
}

static float *make_f32(size_t n, enum dist d, uint64_t salt)
{
    struct test_rng r;
    test_rng_seed(&r, test_seed() + salt);
    float *x = malloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)draw(&r, d);
    return x;
}

START_TEST(paper_distributions_f32)
{
    const size_t sizes[] = {100001, 262144};
    for (int d = 0; d < NDIST; d++) {
        for (int si = 0; si < 2; si++) {
            float *x = make_f32(sizes[si], (enum dist)d, (uint64_t)d * 7 + si);
            char what[64];
            snprintf(what, sizeof what, "%s n=%zu", dist_names[d], sizes[si]);
            check_f32(x, sizes[si], what);
            free(x);
        }
    }
}
END_TEST

START_TEST(paper_distributions_f64)
{
    struct clstats_ctx *ctx = test_ctx();
    double v;
    const double one = 1.0;
    if (clstats_median_f64(ctx, &one, 1, NULL, &v) == CLSTATS_ERR_UNSUPPORTED) {
        fprintf(stderr, "no fp64 on this device: float64 checks skipped\n");
        return;
    }
    const size_t n = 100000;
    double *x = malloc(n * sizeof *x);
    for (int d = 0; d < NDIST; d++) {
        struct test_rng r;
        test_rng_seed(&r, test_seed() + 100 + d);
        for (size_t i = 0; i < n; i++)
            x[i] = draw(&r, (enum dist)d);
        check_f64(x, n, dist_names[d]);
    }
    /* Edge cases in float64: ties, huge values, infinities and NaN. */
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(i % 100);
    check_f64(x, n, "f64 integers 0..99");
    for (size_t i = 0; i < n; i++)
        x[i] = i % 100 < 30 ? 1e300 : (double)i * 1e-300;
    check_f64(x, n, "f64 30% at 1e300");
    for (size_t i = 0; i < n; i++)
        x[i] = i % 3 == 0 ? -INFINITY : (i % 3 == 1 ? INFINITY : NAN);
    check_f64(x, n, "f64 inf and NaN");
    x[0] = 1.7976931348623157e308;
    x[1] = 1.7976931348623157e308;
    check_f64(x, 2, "f64 two maxima");
    x[0] = -1.7976931348623157e308;
    x[1] = 1.7976931348623157e308;
    check_f64(x, 2, "f64 -max and max");
    free(x);
}
END_TEST

START_TEST(ties_and_few_values)
{
    const size_t n = 200000;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = 3.25f;
    check_f32(x, n, "all equal");
    for (size_t i = 0; i < n; i++)
        x[i] = (i * 7919) % 2 ? 1.0f : 2.0f;
    check_f32(x, n, "two values");
    check_f32(x, n - 1, "two values, odd n");
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((i * 7919) % 100);
    check_f32(x, n, "integers 0..99");
    for (size_t i = 0; i < n; i++)
        x[i] = (i % 2) ? -0.0f : 0.0f;
    check_f32(x, n, "signed zeros");
    /* exactly half at each of two values: the median is their mean */
    for (size_t i = 0; i < n; i++)
        x[i] = i < n / 2 ? -1.0f : 5.0f;
    check_f32(x, n, "two halves");
    free(x);
}
END_TEST

START_TEST(huge_values)
{
    const size_t n = 150000;
    for (int pct = 1; pct <= 30; pct += 29) {
        float *x = make_f32(n, NORMAL, 300 + pct);
        struct test_rng r;
        test_rng_seed(&r, test_seed() + 400 + pct);
        for (size_t i = 0; i < n; i++)
            if (test_rng_uniform(&r) < pct / 100.0) x[i] = 1e30f;
        char what[48];
        snprintf(what, sizeof what, "%d%% at 1e30", pct);
        check_f32(x, n, what);
        free(x);
    }
    float y[4] = {3.4028235e38f, 3.4028235e38f, -3.4028235e38f, 1.0f};
    check_f32(y, 2, "two FLT_MAX");
    check_f32(y + 1, 2, "-FLT_MAX and FLT_MAX");
    check_f32(y, 4, "extremes");
}
END_TEST

/* The mean of two middle values is the float nearest the exact mean (clstats.h), also where
 * their sum overflows: columns of two values from the classes where that can go wrong (near
 * +-FLT_MAX, subnormal, +-0, +-inf), and whole arrays of two, against the double formula. */
START_TEST(medians_of_two_values_are_the_rounded_mean)
{
    enum { N = 20000, WHOLE = 64 };
    float *m = malloc(2 * N * sizeof *m), *got = malloc(N * sizeof *got);
    float *want = malloc(N * sizeof *want);
    ck_assert(m && got && want);
    test_float_pairs(m, m + N, N, test_seed() + 1500);
    ck_assert_int_eq(clstats_column_medians(test_ctx(), m, 2, N, N, NULL, got), CLSTATS_OK);
    ref_column_medians(m, 2, N, N, CLSTATS_EVEN_MEAN, want);
    ck_assert_uint_eq(test_compare_bits(got, want, N, N, "column of two"), 0);
    for (size_t c = 0; c < N; c++) {
        const float mean = ref_plus_zero_f32((float)(((double)m[c] + (double)m[N + c]) * 0.5));
        ck_assert_msg(same32(got[c], mean) || (isnan(got[c]) && isnan(mean)),
                      "column {%a, %a}: %a, want %a", m[c], m[N + c], got[c], mean);
    }
    for (int mi = 0; mi < NMETHODS; mi++) {
        struct clstats_select_options o = {.method = methods[mi]};
        for (size_t c = 0; c < WHOLE; c++) {
            const float two[2] = {m[c], m[N + c]};
            float v;
            ck_assert_int_eq(clstats_median(test_ctx(), two, 2, &o, &v), CLSTATS_OK);
            ck_assert_msg(same32(v, got[c]), "%s: median of {%a, %a}: %a, want %a",
                          method_names[methods[mi]], two[0], two[1], v, got[c]);
        }
    }
    free(m), free(got), free(want);
}
END_TEST

/* Every zero result is +0 (clstats.h), whatever zeros the data holds and whichever entry,
 * method or even-count rule gives it: whole arrays of -0, and -0/+0 mixes whose middles are
 * -0, as the median, k-th value, percentile, column, tile and device-buffer results. */
static bool plus_zero(double v)
{
    return memcmp(&v, &(double){0.0}, sizeof v) == 0;
}

START_TEST(zero_results_are_plus_zero)
{
    clstats_ctx *ctx = test_ctx();
    enum { N = 999, COLS = 3 };
    /* All -0; -0 with a few +0 (the middles are -0); -0 between negatives and positives. */
    static float arrays[3][N];
    for (size_t i = 0; i < N; i++) {
        arrays[0][i] = -0.0f;
        arrays[1][i] = i % 7 ? -0.0f : 0.0f;
        arrays[2][i] = i < N / 3 ? -1.0f : i < 2 * N / 3 + 1 ? -0.0f : 2.0f;
    }
    const double q[4] = {50, 0, 75, 100}; /* all zeros in the first two arrays, q = 50 in all */
    size_t bad = 0;
    for (int a = 0; a < 3; a++) {
        const float *x = arrays[a];
        for (int mi = 0; mi < NMETHODS; mi++) {
            for (int e = 0; e < 3; e++) {
                struct clstats_select_options o = {.method = methods[mi],
                                                   .even = (enum clstats_even)e};
                for (size_t n = N - 1; n <= N; n++) { /* an even count, then an odd one */
                    float v = 1;
                    ck_assert_int_eq(clstats_median(ctx, x, n, &o, &v), CLSTATS_OK);
                    bad += !plus_zero(v);
                }
            }
            struct clstats_select_options o = {.method = methods[mi]};
            float v = 1;
            ck_assert_int_eq(clstats_select_kth(ctx, x, N, N / 2, &o, &v), CLSTATS_OK);
            bad += !plus_zero(v);
        }
        const size_t nq = a == 2 ? 1 : 4;
        float pct[4];
        ck_assert_int_eq(clstats_percentiles(ctx, x, N, q, nq, NULL, pct), CLSTATS_OK);
        for (size_t i = 0; i < nq; i++)
            bad += !plus_zero(pct[i]);
        /* Columns and tiles: the array as a matrix of N / COLS rows, and as one image tile. */
        float cols[COLS], tile;
        ck_assert_int_eq(clstats_column_medians(ctx, x, N / COLS, COLS, COLS, NULL, cols),
                         CLSTATS_OK);
        for (int c = 0; c < COLS; c++)
            bad += !plus_zero(cols[c]);
        ck_assert_int_eq(clstats_tile_medians(ctx, x, N, 1, N, N, 1, NULL, &tile), CLSTATS_OK);
        bad += !plus_zero(tile);
        /* The same on a device buffer. */
        cl_int err;
        cl_mem buf =
            clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                           sizeof arrays[a], (void *)x, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
        double d = 1;
        ck_assert_int_eq(clstats_median_buffer(ctx, buf, 0, N, CLSTATS_FLOAT32, NULL, &d),
                         CLSTATS_OK);
        bad += !plus_zero(d);
        ck_assert_int_eq(
            clstats_select_kth_buffer(ctx, buf, 0, N, CLSTATS_FLOAT32, N / 2, NULL, &d),
            CLSTATS_OK);
        bad += !plus_zero(d);
        ck_assert_int_eq(
            clstats_column_medians_buffer(ctx, buf, 0, N / COLS, COLS, COLS, NULL, cols),
            CLSTATS_OK);
        for (int c = 0; c < COLS; c++)
            bad += !plus_zero(cols[c]);
        ck_assert_int_eq(clstats_tile_medians_buffer(ctx, buf, 0, N, 1, N, N, 1, NULL, &tile),
                         CLSTATS_OK);
        bad += !plus_zero(tile);
        clReleaseMemObject(buf);
        if (ctx->has_fp64) { /* internal.h: the context is white-box here */
            double xd[N], dq[4];
            for (size_t i = 0; i < N; i++)
                xd[i] = x[i];
            for (size_t n = N - 1; n <= N; n++) {
                ck_assert_int_eq(clstats_median_f64(ctx, xd, n, NULL, &d), CLSTATS_OK);
                bad += !plus_zero(d);
            }
            ck_assert_int_eq(clstats_select_kth_f64(ctx, xd, N, N / 2, NULL, &d), CLSTATS_OK);
            bad += !plus_zero(d);
            ck_assert_int_eq(clstats_percentiles_f64(ctx, xd, N, q, nq, NULL, dq), CLSTATS_OK);
            for (size_t i = 0; i < nq; i++)
                bad += !plus_zero(dq[i]);
        }
        if (bad) fprintf(stderr, "array %d: %zu zero results that are not +0 so far\n", a, bad);
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(infinities_and_nan)
{
    const size_t n = 100000;
    float *x = make_f32(n, UNIFORM, 500);
    for (size_t i = 0; i < n; i += 10)
        x[i] = INFINITY;
    for (size_t i = 5; i < n; i += 10)
        x[i] = -INFINITY;
    check_f32(x, n, "+-inf");
    for (size_t i = 3; i < n; i += 7)
        x[i] = NAN;
    for (size_t i = 4; i < n; i += 97)
        x[i] = -NAN;
    check_f32(x, n, "inf and NaN");
    /* NaN payloads other than the canonical one */
    uint32_t odd_nan = 0x7f800001u, neg_nan = 0xffffffffu;
    memcpy(&x[1], &odd_nan, 4);
    memcpy(&x[2], &neg_nan, 4);
    check_f32(x, n, "NaN payloads");
    for (size_t i = 0; i < n; i++)
        x[i] = i % 2 ? INFINITY : -INFINITY;
    check_f32(x, n, "only infinities");
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
    check_f32(x, n, "only NaN");
    free(x);
}
END_TEST

START_TEST(nan_policy_error)
{
    float x[5] = {1, 2, NAN, 4, 5}, got = 0;
    uint64_t nan = 0;
    for (int mi = 0; mi < NMETHODS; mi++) {
        struct clstats_select_options o = {
            .method = methods[mi], .nan_policy = CLSTATS_NAN_ERROR, .nan_count = &nan};
        ck_assert_int_eq(clstats_median(test_ctx(), x, 5, &o, &got), CLSTATS_ERR_NAN);
        ck_assert_uint_eq(nan, 1);
        ck_assert_int_eq(clstats_median(test_ctx(), x, 2, &o, &got), CLSTATS_OK);
        ck_assert(same32(got, 1.5f));
        o.nan_policy = CLSTATS_NAN_OMIT;
        ck_assert_int_eq(clstats_median(test_ctx(), x, 5, &o, &got), CLSTATS_OK);
        ck_assert(same32(got, 3.0f)); /* mean of 2 and 4 */
        ck_assert_int_eq(clstats_select_kth(test_ctx(), x, 5, 4, &o, &got), CLSTATS_ERR_ARG);
        ck_assert_int_eq(clstats_select_kth(test_ctx(), x, 5, 3, &o, &got), CLSTATS_OK);
        ck_assert(same32(got, 5.0f));
    }
    ck_assert_int_eq(clstats_median(test_ctx(), x, 0, NULL, &got), CLSTATS_ERR_EMPTY);
}
END_TEST

START_TEST(sorted_and_tiny)
{
    const size_t n = 123457;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)i * 0.5f - 1000.0f;
    check_f32(x, n, "sorted");
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(n - i) * 0.25f;
    check_f32(x, n, "reverse sorted");
    const float tiny[3] = {2.5f, -1.0f, 7.0f};
    check_f32(tiny, 1, "n=1");
    check_f32(tiny, 2, "n=2");
    check_f32(tiny, 3, "n=3");
    const float sub[4] = {1e-45f, -1e-45f, 1.17549435e-38f, 0.0f};
    check_f32(sub, 4, "subnormals");
    free(x);
}
END_TEST

/* Sizes that straddle tiles, the compaction threshold and the cutting plane's gather size. */
/* The sample bracket reads every (n / 8192)-th value: data laid out so those are all small
 * makes its bracket miss the median, and the run must fall back to the radix passes; data
 * where the bracket holds most values (ties) overflows its gather and falls back too. */
START_TEST(sample_bracket_misses_fall_back)
{
    const size_t n = 8192 * 6;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (i % 6 == 3) ? -(float)i : 1000.0f + (float)(i % 977);
    check_f32(x, n, "sample sees only the small values");
    for (size_t i = 0; i < n; i++)
        x[i] = (i % 6 == 3) ? (float)(i % 5) : NAN;
    check_f32(x, n, "sample sees the only valid values");
    for (size_t i = 0; i < n; i++)
        x[i] = (i % 6 == 3) ? NAN : (float)(i % 7);
    check_f32(x, n, "sample sees only NaN");
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(i % 3);
    check_f32(x, n, "three values: the bracket holds too many");
    free(x);
}
END_TEST

/* The sample only steers, so a wrong quantile would cost speed and no test above would fail:
 * this looks inside (src/select/select_internal.h) that the bracket held, the data read once, and
 * that it is as narrow as the sample promises: 5 standard deviations of a quantile of SAMPLE
 * keys (2048 for float32, 1024 for float64) either side, plus 4 keys. */
START_TEST(sample_bracket_holds_and_is_narrow)
{
    clstats_ctx *ctx = test_ctx();
    const size_t n = (size_t)1 << 20;
    struct ask {
        int mode; /* as struct select_request */
        uint64_t k;
        double p;
    } asks[] = {{1, 0, 0.5}, {0, n / 10, 0.1}, {0, n - n / 50, 0.98}};
    const enum dist dists[] = {UNIFORM, NORMAL, MIX_NORMAL};
    double *x = malloc(n * sizeof *x);
    float *xf = malloc(n * sizeof *xf);
    for (int f64 = 0; f64 < 2; f64++) {
        if (f64 && !ctx->has_fp64) break; /* internal.h: the context is white-box here */
        const double sample = f64 ? 1024 : 2048;
        for (int di = 0; di < 3; di++) {
            struct test_rng r;
            test_rng_seed(&r, test_seed() + 800 + di);
            for (size_t i = 0; i < n; i++) {
                x[i] = draw(&r, dists[di]);
                xf[i] = (float)x[i];
            }
            cl_int err;
            cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(ctx),
                                        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        n * (f64 ? 8 : 4), f64 ? (void *)x : (void *)xf, &err);
            ck_assert_int_eq(err, CL_SUCCESS);
            for (int a = 0; a < 3; a++) {
                struct select_request req = {
                    .method = CLSTATS_SELECT_SAMPLE, .mode = asks[a].mode, .k = asks[a].k};
                struct select_result res;
                ck_assert_int_eq(clstats__select_run(ctx, buf, 0, n, f64, &req, &res), CLSTATS_OK);
                const double p = asks[a].p;
                const double want = 2 * (5 * sqrt(sample * p * (1 - p)) + 4) / sample * (double)n;
                ck_assert_msg(res.passes == 1 && res.gathered > 0.5 * want &&
                                  res.gathered < 1.5 * want,
                              "%s %s p=%g: passes %u, %llu values in the bracket, want about %.0f",
                              f64 ? "float64" : "float32", dist_names[dists[di]], p, res.passes,
                              (unsigned long long)res.gathered, want);
            }
            clReleaseMemObject(buf);
        }
    }
    free(xf);
    free(x);
}
END_TEST

START_TEST(sizes_around_thresholds)
{
    const size_t sizes[] = {2047, 2048, 2049, 65535, 65537, (1u << 20) + 3};
    for (int i = 0; i < 6; i++) {
        float *x = make_f32(sizes[i], MIX_NORMAL, 600 + i);
        char what[32];
        snprintf(what, sizeof what, "n=%zu", sizes[i]);
        check_f32(x, sizes[i], what);
        free(x);
    }
}
END_TEST

START_TEST(buffer_api)
{
    clstats_ctx *ctx = test_ctx();
    const size_t n = 100003, off = 17;
    float *x = make_f32(n + off + 5, HALF_NORMAL, 700);
    cl_int err;
    cl_mem buf =
        clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                       (n + off + 5) * sizeof *x, x, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    for (int mi = 0; mi < NMETHODS; mi++) {
        struct clstats_select_options o = {.method = methods[mi]};
        double got;
        ck_assert_int_eq(clstats_median_buffer(ctx, buf, off, n, CLSTATS_FLOAT32, &o, &got),
                         CLSTATS_OK);
        ck_assert(same32((float)got, ref_median_f32(x + off, n, CLSTATS_EVEN_MEAN)));
        size_t nv;
        float *s = ref_sorted_f32(x + off, n, &nv);
        ck_assert_int_eq(
            clstats_select_kth_buffer(ctx, buf, off, n, CLSTATS_FLOAT32, 12345, &o, &got),
            CLSTATS_OK);
        ck_assert(same32((float)got, ref_plus_zero_f32(s[12345])));
        free(s);
        ck_assert_int_eq(clstats_median_buffer(ctx, buf, off, n + 6, CLSTATS_FLOAT32, &o, &got),
                         CLSTATS_ERR_ARG);
    }
    /* Column medians of a 997 x 91 matrix (ld 100) that starts at off, read in place and
     * through a transposed copy. */
    const size_t rows = 997, cols = 91, ld = 100;
    float got_cols[91], want_cols[91];
    ref_column_medians(x + off, rows, cols, ld, CLSTATS_EVEN_MEAN, want_cols);
    for (int transposed = 0; transposed < 2; transposed++) {
        test_tune("columns.transpose", transposed ? "on" : "off");
        ck_assert_int_eq(
            clstats_column_medians_buffer(ctx, buf, off, rows, cols, ld, NULL, got_cols),
            CLSTATS_OK);
        ck_assert_uint_eq(test_compare_bits(got_cols, want_cols, cols, cols, "column median"), 0);
    }
    test_tune("columns.transpose", NULL);
    ck_assert_int_eq(clstats_column_medians_buffer(ctx, buf, off, 1001, cols, ld, NULL, got_cols),
                     CLSTATS_ERR_ARG);
    clReleaseMemObject(buf);
    free(x);
}
END_TEST

START_TEST(percentiles_follow_numpy_through_infinities)
{
    /* numpy 1.24 and 2.x: np.percentile(x, q) for these x and q (its _lerp gives NaN wherever an
     * infinite order statistic takes part, even at g = 0, and at q = 100 where both are the
     * maximum). Every NaN is the quiet 0x7fc00000. */
    const double q[5] = {0, 5, 50, 95, 100};
    const struct {
        float x[3];
        size_t n;
        float want[5];
    } cases[] = {
        {{1, INFINITY}, 2, {NAN, INFINITY, NAN, NAN, NAN}},
        {{-INFINITY, 1}, 2, {NAN, NAN, -INFINITY, -INFINITY, 1}},
        {{INFINITY, INFINITY}, 2, {NAN, NAN, NAN, NAN, NAN}},
        {{-INFINITY, INFINITY}, 2, {NAN, NAN, NAN, NAN, NAN}},
        {{INFINITY}, 1, {NAN, NAN, NAN, NAN, NAN}},
        {{1, 2, INFINITY}, 3, {1, 1.1f, NAN, NAN, NAN}},
        {{-INFINITY, 3, 2}, 3, {NAN, NAN, 2, 2.9f, 3}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        float got[5];
        double got64[5], x64[3];
        for (size_t i = 0; i < cases[c].n; i++)
            x64[i] = cases[c].x[i];
        ck_assert_int_eq(clstats_percentiles(test_ctx(), cases[c].x, cases[c].n, q, 5, NULL, got),
                         CLSTATS_OK);
        ck_assert_int_eq(clstats_percentiles_f64(test_ctx(), x64, cases[c].n, q, 5, NULL, got64),
                         CLSTATS_OK);
        for (int i = 0; i < 5; i++) {
            const float want = cases[c].want[i];
            ck_assert_msg(same32(got[i], want), "case %zu q %g: %a, numpy %a", c, q[i], got[i],
                          want);
            const double want64 = isnan(want) ? NAN : (double)want;
            const bool near = isnan(want) ? same64(got64[i], NAN)
                                          : got64[i] == want64 || (float)got64[i] == want;
            ck_assert_msg(near, "case %zu q %g (f64): %a, numpy %a", c, q[i], got64[i], want64);
        }
    }
}
END_TEST

/* The array forms: a strided 2-D host array and the same rows in a device buffer at an offset,
 * a stride apart, give the median, k-th value and percentiles of their nx x ny elements only
 * (the gaps between rows hold values that would change every answer). */
START_TEST(array_forms_take_strided_rows_on_the_host_and_the_device)
{
    clstats_ctx *ctx = test_ctx();
    const size_t nx = 37, ny = 11, stride = 50, offset = 13;
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 9300);
    float *grid = malloc(stride * ny * sizeof *grid), *packed = malloc(nx * ny * sizeof *packed);
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < stride; x++) {
            const float v = (float)(int)(20 * test_rng_normal(&rng));
            grid[y * stride + x] = x < nx ? v : 1e30f; /* the gaps: never part of an answer */
            if (x < nx) packed[y * nx + x] = v;
        }
    packed[5] = grid[5] = NAN;
    const float want_median = ref_median_f32(packed, nx * ny, CLSTATS_EVEN_MEAN);
    cl_int err;
    cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_WRITE,
                                (offset + stride * ny) * sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clEnqueueWriteBuffer(clstats_ctx_cl_queue(ctx), buf, CL_TRUE,
                                          offset * sizeof(float), stride * ny * sizeof(float),
                                          grid, 0, NULL, NULL),
                     CL_SUCCESS);
    const struct clstats_array arrays[3] = {
        {.host = grid, .nx = nx, .ny = ny, .stride = stride},
        {.buffer = buf, .offset = offset, .nx = nx, .ny = ny, .stride = stride},
        {.buffer = buf, .offset = offset, .nx = nx, .ny = 1}, /* one row: no copy, an offset */
    };
    for (int i = 0; i < 3; i++) {
        const size_t n = arrays[i].nx * arrays[i].ny;
        const float want = i < 2 ? want_median : ref_median_f32(packed, n, CLSTATS_EVEN_MEAN);
        double median, kth, pct[2];
        const double q[2] = {0, 100};
        ck_assert_int_eq(clstats_median_array(ctx, &arrays[i], NULL, &median), CLSTATS_OK);
        ck_assert_msg(same32((float)median, want), "array %d: median %g, want %g", i, median,
                      want);
        ck_assert_int_eq(clstats_select_kth_array(ctx, &arrays[i], 0, NULL, &kth), CLSTATS_OK);
        ck_assert_int_eq(clstats_percentiles_array(ctx, &arrays[i], q, 2, NULL, pct), CLSTATS_OK);
        ck_assert_msg(kth == pct[0] && pct[1] < 1e29, "array %d: min %g, max %g", i, kth, pct[1]);
    }
    struct clstats_array past = arrays[1];
    past.ny = ny + 1; /* a row past the buffer's end */
    double v;
    ck_assert_int_eq(clstats_median_array(ctx, &past, NULL, &v), CLSTATS_ERR_ARG);
    clReleaseMemObject(buf);
    free(grid);
    free(packed);
}
END_TEST

START_TEST(percentiles_linear)
{
    const size_t n = 54321;
    float *x = make_f32(n, MIX_UNIFORM_NORMAL, 800);
    for (size_t i = 0; i < n; i += 13)
        x[i] = NAN;
    size_t nv;
    float *s = ref_sorted_f32(x, n, &nv);
    double *sd = malloc(nv * sizeof *sd);
    for (size_t i = 0; i < nv; i++)
        sd[i] = s[i];
    const double q[7] = {0, 1, 25, 50, 62.5, 99.9, 100};
    float got[7];
    ck_assert_int_eq(clstats_percentiles(test_ctx(), x, n, q, 7, NULL, got), CLSTATS_OK);
    for (int i = 0; i < 7; i++) {
        float want = (float)ref_percentile_sorted(sd, nv, q[i]);
        ck_assert_msg(same32(got[i], want), "q=%g: got %.9g want %.9g", q[i], got[i], want);
    }
    double qbad = 101;
    ck_assert_int_eq(clstats_percentiles(test_ctx(), x, n, &qbad, 1, NULL, got), CLSTATS_ERR_ARG);
    free(sd);
    free(s);
    free(x);
}
END_TEST

START_TEST(column_medians)
{
    /* Columns are staged in local memory when they fit; the second round caps that at 1000
     * rows, so the first and last shapes take the global-memory path on every device. The
     * third round reads a transposed copy (GPUs do for many columns, CPU devices never), staged
     * and not. The fourth runs 64 work-items per column with 11-bit digits, as GPUs do (CPU
     * devices run one), so the shared histogram search is tested here too. */
    const size_t shapes[][3] = {{1001, 37, 40}, {1000, 64, 64}, {1, 5, 5}, {2, 3, 7}, {4097, 9, 9}};
    for (int t = 0; t < 20; t++) {
        if (t == 5) test_tune("columns.local_rows", "1000");
        if (t == 10) test_tune("columns.transpose", "on");
        if (t == 15) {
            test_tune("columns.transpose", NULL);
            test_tune("columns.wg", "64");
            test_tune("columns.bits", "11");
        }
        const size_t rows = shapes[t % 5][0], cols = shapes[t % 5][1], ld = shapes[t % 5][2];
        float *m = make_f32(rows * ld, (enum dist)(t % NDIST), 900 + t);
        for (size_t r = 0; r < rows; r++) {
            m[r * ld + 0] = (float)(r % 3);      /* ties */
            if (cols > 2) m[r * ld + 2] = NAN;   /* an all-NaN column */
            if (r % 5 == 0) m[r * ld + 1] = NAN; /* some NaN */
            if (cols > 3 && r % 2) m[r * ld + 3] = INFINITY;
            /* Keys sharing a prefix (the digits start below it), all equal, and signed zeros. */
            if (cols > 4) m[r * ld + 4] = 7.5f;
            if (cols > 5) m[r * ld + 5] = 1024.0f + (float)(r % 7) * 0.125f;
            if (cols > 6) m[r * ld + 6] = r % 3 ? -0.0f : 0.0f;
        }
        float *got = malloc(cols * sizeof *got), *want = malloc(cols * sizeof *want);
        for (int e = 0; e < 3; e++) {
            struct clstats_select_options o = {.even = (enum clstats_even)e};
            ck_assert_int_eq(clstats_column_medians(test_ctx(), m, rows, cols, ld, &o, got),
                             CLSTATS_OK);
            ref_column_medians(m, rows, cols, ld, o.even, want);
            ck_assert_uint_eq(test_compare_bits(got, want, cols, cols, "column median"), 0);
        }
        struct clstats_select_options oe = {.nan_policy = CLSTATS_NAN_ERROR};
        ck_assert_int_eq(clstats_column_medians(test_ctx(), m, rows, cols, ld, &oe, got),
                         CLSTATS_ERR_NAN);
        free(got);
        free(want);
        free(m);
    }
    test_tune("columns.local_rows", NULL);
    test_tune("columns.wg", NULL);
    test_tune("columns.bits", NULL);
}
END_TEST

/* Paints a w x h block of the image with one of the cases tiles must get right (kind 0-4). */
static void paint(float *m, size_t stride, size_t x0, size_t y0, size_t w, size_t h, int kind)
{
    for (size_t y = y0; y < y0 + h; y++)
        for (size_t x = x0; x < x0 + w; x++) {
            float *v = &m[y * stride + x];
            switch (kind) {
            case 0:
                *v = NAN;
                break; /* all missing */
            case 1:
                *v = 3.25f;
                break; /* constant */
            case 2:
                *v = (float)((x + y) % 4);
                break; /* ties */
            case 3:
                *v = (x + y) % 2 ? INFINITY : -INFINITY;
                break; /* even: mean of -inf, inf */
            case 4:
                if ((x * 7 + y) % 3 == 0) *v = NAN;
                break; /* a third missing */
            }
        }
}

START_TEST(tile_medians)
{
    /* Shapes: nx, ny, stride, tw, th. Edge tiles cut short, tiles larger than the image,
     * tiles one pixel wide (columns) or one row high, and tiles of more pixels than are
     * staged in local memory (the second half caps that at 1000; the last rounds run 64
     * work-items per tile with 11-bit digits, as GPUs do). */
    const size_t shapes[][5] = {
        {300, 211, 303, 64, 64}, {37, 5, 37, 8, 3},      {3, 2, 4, 5, 5}, {150, 90, 150, 1, 90},
        {200, 33, 201, 200, 1},  {129, 70, 129, 40, 35}, {1, 1, 1, 1, 1}};
    const int nshapes = sizeof shapes / sizeof shapes[0];
    for (int t = 0; t < 3 * nshapes; t++) {
        if (t == nshapes) test_tune("columns.local_rows", "1000");
        if (t == 2 * nshapes) {
            test_tune("columns.local_rows", NULL);
            test_tune("columns.wg", "64");
            test_tune("columns.bits", "11");
        }
        const size_t *sh = shapes[t % nshapes];
        const size_t nx = sh[0], ny = sh[1], stride = sh[2], tw = sh[3], th = sh[4];
        const size_t ntiles = ((nx + tw - 1) / tw) * ((ny + th - 1) / th);
        float *m = make_f32(ny * stride, (enum dist)(t % NDIST), 1300 + t);
        /* Special tiles: the first five tiles of the first row, where there are so many. */
        for (int k = 0; k < 5 && (size_t)k * tw < nx && ntiles > 1; k++) {
            const size_t x0 = k * tw, w = nx - x0 < tw ? nx - x0 : tw, h = ny < th ? ny : th;
            paint(m, stride, x0, 0, w, h, k);
        }
        float *got = malloc(ntiles * sizeof *got), *want = malloc(ntiles * sizeof *want);
        for (int e = 0; e < 3; e++) {
            struct clstats_select_options o = {.even = (enum clstats_even)e};
            ck_assert_msg(clstats_tile_medians(test_ctx(), m, nx, ny, stride, tw, th, &o, got) ==
                              CLSTATS_OK,
                          "%s", clstats_ctx_message(test_ctx()));
            ref_tile_medians(m, nx, ny, stride, tw, th, o.even, want);
            ck_assert_uint_eq(test_compare_bits(got, want, ntiles, ntiles, "tile median"), 0);
        }
        free(got);
        free(want);
        free(m);
    }
    test_tune("columns.wg", NULL);
    test_tune("columns.bits", NULL);
}
END_TEST

START_TEST(tile_medians_buffer_and_errors)
{
    clstats_ctx *ctx = test_ctx();
    const size_t nx = 250, ny = 120, stride = 256, off = 9, tw = 32, th = 50;
    const size_t ntiles = 8 * 3, total = off + ny * stride;
    float *m = make_f32(total, NORMAL, 1400);
    paint(m + off, stride, 0, 0, 32, 50, 4);
    float got[24], want[24];
    ref_tile_medians(m + off, nx, ny, stride, tw, th, CLSTATS_EVEN_MEAN, want);
    cl_int err;
    cl_mem buf =
        clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                       total * sizeof *m, m, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    uint64_t nan = 0;
    struct clstats_select_options o = {.nan_count = &nan};
    ck_assert_int_eq(clstats_tile_medians_buffer(ctx, buf, off, nx, ny, stride, tw, th, &o, got),
                     CLSTATS_OK);
    ck_assert_uint_eq(test_compare_bits(got, want, ntiles, ntiles, "tile median"), 0);
    size_t nans = 0;
    for (size_t i = 0; i < ny * stride; i++)
        nans += isnan(m[off + i]) && i % stride < nx;
    ck_assert_uint_eq(nan, nans);
    struct clstats_select_options oe = {.nan_policy = CLSTATS_NAN_ERROR};
    ck_assert_int_eq(clstats_tile_medians(ctx, m + off, nx, ny, stride, tw, th, &oe, got),
                     CLSTATS_ERR_NAN);
    /* Past the buffer's end, zero tiles, a stride below the width, a NULL image. */
    ck_assert_int_eq(
        clstats_tile_medians_buffer(ctx, buf, off + 7, nx, ny, stride, tw, th, NULL, got),
        CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_tile_medians(ctx, m, nx, ny, stride, 0, th, NULL, got),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_tile_medians(ctx, m, nx, ny, nx - 1, tw, th, NULL, got),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_tile_medians(ctx, NULL, nx, ny, stride, tw, th, NULL, got),
                     CLSTATS_ERR_ARG);
    clReleaseMemObject(buf);
    free(m);
}
END_TEST

/* The message of the last error holds `words`. */
static void assert_message(const char *words)
{
    const char *m = clstats_ctx_message(test_ctx());
    ck_assert_msg(strstr(m, words) != NULL, "message \"%s\" lacks \"%s\"", m, words);
}

/* Counts, strides and offsets whose sizes overflow, or pass any array's, are refused by every
 * entry before anything is read: unchecked, n * 4 or the rows' span wrapped to a few elements,
 * so a tiny buffer was uploaded (or passed the buffer's bounds check) and the kernels read at
 * wrapped addresses, far past it. The arrays here are tiny on purpose. */
START_TEST(counts_whose_size_overflows_are_refused)
{
    clstats_ctx *ctx = test_ctx();
    float x[16] = {0}, v;
    double xd[16] = {0}, d;
    const double q[2] = {50, 90};
    float pct[2];
    const size_t f32_wraps = ((size_t)1 << 62) + 1, f64_wraps = ((size_t)1 << 61) + 1;
    for (size_t n = f32_wraps; n != 0; n = n == f32_wraps ? SIZE_MAX : 0) {
        ck_assert_int_eq(clstats_median(ctx, x, n, NULL, &v), CLSTATS_ERR_ARG);
        assert_message("larger than any array");
        ck_assert_int_eq(clstats_select_kth(ctx, x, n, 0, NULL, &v), CLSTATS_ERR_ARG);
        ck_assert_int_eq(clstats_percentiles(ctx, x, n, q, 2, NULL, pct), CLSTATS_ERR_ARG);
    }
    /* Float64 overflows at half the count; the host refuses before asking for fp64. */
    for (size_t n = f64_wraps; n != 0; n = n == f64_wraps ? SIZE_MAX : 0) {
        ck_assert_int_eq(clstats_median_f64(ctx, xd, n, NULL, &d), CLSTATS_ERR_ARG);
        ck_assert_int_eq(clstats_select_kth_f64(ctx, xd, n, 0, NULL, &d), CLSTATS_ERR_ARG);
        ck_assert_int_eq(clstats_percentiles_f64(ctx, xd, n, q, 2, NULL, (double[2]){0}),
                         CLSTATS_ERR_ARG);
        assert_message("larger than any array");
    }
    /* A number of percentiles whose results would not fit any array. */
    ck_assert_int_eq(clstats_percentiles(ctx, x, 16, q, SIZE_MAX / 4, NULL, pct), CLSTATS_ERR_ARG);
    assert_message("percentiles");
}
END_TEST

START_TEST(strides_whose_span_overflows_are_refused)
{
    clstats_ctx *ctx = test_ctx();
    float m[64] = {0}, out[16];
    /* 4 rows of 2^62 wrap to 0 elements, 2 rows of 2^61 + 1 to 32 bytes. */
    const size_t strides[][2] = {
        {(size_t)1 << 62, 5}, {((size_t)1 << 61) + 1, 2}, {SIZE_MAX, 3}, {(size_t)1 << 62, 2}};
    for (size_t i = 0; i < sizeof strides / sizeof strides[0]; i++) {
        const size_t ld = strides[i][0], rows = strides[i][1];
        ck_assert_int_eq(clstats_column_medians(ctx, m, rows, 4, ld, NULL, out), CLSTATS_ERR_ARG);
        assert_message("larger than any array");
        ck_assert_int_eq(clstats_tile_medians(ctx, m, 4, rows, ld, 2, 2, NULL, out),
                         CLSTATS_ERR_ARG);
        assert_message("larger than any array");
    }
    /* One row never steps by its stride. */
    m[0] = 3.0f, m[1] = 5.0f;
    ck_assert_int_eq(clstats_column_medians(ctx, m, 1, 2, SIZE_MAX, NULL, out), CLSTATS_OK);
    ck_assert(out[0] == 3.0f && out[1] == 5.0f);
}
END_TEST

/* The same on a device buffer of 64 floats: strides whose span overflows, and offsets whose
 * sum with the span (or with n) wraps past SIZE_MAX, which the bounds check must not miss. */
START_TEST(buffer_spans_and_offsets_that_overflow_are_refused)
{
    clstats_ctx *ctx = test_ctx();
    float m[64] = {0}, out[16];
    double d;
    cl_int err;
    cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(ctx),
                                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof m, m, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    const size_t big = (size_t)1 << 62, wraps = SIZE_MAX - 2; /* wraps + 4 = 1 */
    ck_assert_int_eq(clstats_column_medians_buffer(ctx, buf, 0, 5, 4, big, NULL, out),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_column_medians_buffer(ctx, buf, wraps, 2, 2, 2, NULL, out),
                     CLSTATS_ERR_ARG);
    assert_message("past the end");
    ck_assert_int_eq(clstats_tile_medians_buffer(ctx, buf, 0, 4, 5, big, 2, 2, NULL, out),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_tile_medians_buffer(ctx, buf, wraps, 2, 2, 2, 2, 2, NULL, out),
                     CLSTATS_ERR_ARG);
    assert_message("past the end");
    ck_assert_int_eq(clstats_median_buffer(ctx, buf, wraps, 4, CLSTATS_FLOAT32, NULL, &d),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_select_kth_buffer(ctx, buf, 2, SIZE_MAX, CLSTATS_FLOAT32, 0, NULL, &d),
                     CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_median_buffer(ctx, buf, 0, 64, CLSTATS_FLOAT64, NULL, &d),
                     CLSTATS_ERR_ARG);
    clReleaseMemObject(buf);
}
END_TEST

/* More than 2^31 values, where the device can hold them (not PoCL's 2 GiB buffers). */
START_TEST(beyond_2_to_31)
{
    clstats_ctx *ctx = test_ctx();
    const size_t n = ((size_t)1 << 31) + 1001;
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(clstats_ctx_cl_device(ctx), CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc,
                    &max_alloc, NULL);
    if (max_alloc < n * sizeof(float) || !getenv("CLSTATS_TEST_BIG")) {
        fprintf(stderr, "beyond_2_to_31 skipped (needs CLSTATS_TEST_BIG=1 and %zu MiB buffers)\n",
                n * sizeof(float) >> 20);
        return;
    }
    /* Values i mod 1000003 scrambled: the median and ranks follow from counting. */
    float *x = malloc(n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((i * 2654435761u) % 1000003u);
    /* The wanted median by counting: i -> i a mod p runs through every residue once per p
     * consecutive i, so each value occurs n / p times, plus once for the first n mod p i's. */
    const size_t p = 1000003u, q = n / p, extra = n % p;
    unsigned *count = malloc(p * sizeof *count);
    ck_assert_ptr_nonnull(count);
    for (size_t v = 0; v < p; v++) count[v] = (unsigned)q;
    for (size_t j = 0; j < extra; j++) count[(j * 2654435761u) % p]++;
    size_t below = 0, v0 = 0, v1 = 0;
    for (size_t v = 0; v < p; v++) {
        if (below <= (n - 1) / 2 && (n - 1) / 2 < below + count[v]) v0 = v;
        if (below <= n / 2 && n / 2 < below + count[v]) v1 = v;
        below += count[v];
    }
    free(count);
    const float want = v0 == v1 ? (float)v0 : (float)(((double)v0 + (double)v1) * 0.5);
    for (int mi = 0; mi < NMETHODS; mi++) {
        struct clstats_select_options o = {.method = methods[mi]};
        float got;
        ck_assert_int_eq(clstats_select_kth(ctx, x, n, n - 1, &o, &got), CLSTATS_OK);
        ck_assert(got == 1000002.0f);
        ck_assert_int_eq(clstats_select_kth(ctx, x, n, 0, &o, &got), CLSTATS_OK);
        ck_assert(got == 0.0f);
        ck_assert_int_eq(clstats_median(ctx, x, n, &o, &got), CLSTATS_OK);
        fprintf(stderr, "n = %zu, %s: median %.9g, want %.9g\n", n, method_names[methods[mi]],
                got, want);
        ck_assert(got == want);
    }
    free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("select");
    TCase *tc = tcase_create("select");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, nan_policy_error);
    tcase_add_test(tc, sorted_and_tiny);
    tcase_add_test(tc, ties_and_few_values);
    tcase_add_test(tc, huge_values);
    tcase_add_test(tc, infinities_and_nan);
    tcase_add_test(tc, medians_of_two_values_are_the_rounded_mean);
    tcase_add_test(tc, zero_results_are_plus_zero);
    tcase_add_test(tc, paper_distributions_f32);
    tcase_add_test(tc, sizes_around_thresholds);
    tcase_add_test(tc, sample_bracket_misses_fall_back);
    tcase_add_test(tc, sample_bracket_holds_and_is_narrow);
    tcase_add_test(tc, buffer_api);
    tcase_add_test(tc, percentiles_linear);
    tcase_add_test(tc, array_forms_take_strided_rows_on_the_host_and_the_device);
    tcase_add_test(tc, percentiles_follow_numpy_through_infinities);
    tcase_add_test(tc, column_medians);
    tcase_add_test(tc, tile_medians);
    tcase_add_test(tc, tile_medians_buffer_and_errors);
    tcase_add_test(tc, paper_distributions_f64);
    tcase_add_test(tc, beyond_2_to_31);
    suite_add_tcase(s, tc);
    /* CK_RUN_CASE=sizes runs these alone. */
    TCase *sizes = tcase_create("sizes");
    tcase_add_test(sizes, counts_whose_size_overflows_are_refused);
    tcase_add_test(sizes, strides_whose_span_overflows_are_refused);
    tcase_add_test(sizes, buffer_spans_and_offsets_that_overflow_are_refused);
    suite_add_tcase(s, sizes);
    return test_run_suite(s);
}
