/* test_regress.c - LTS and LMS (include/clstats/regress.h): against a plain reference that tries
 * every pair of rows as a start and C-steps each to convergence on the host (starsCYG, so the
 * optimum found there is the best any start reaches); against R's robustbase where Rscript has
 * it (skipped, saying so, where not); synthetic data with 0-45 % outliers (vertical and bad
 * leverage) where least squares breaks down; the same bits from the same seed; bad input. */
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* starsCYG (robustbase): log.Te, log.light of the 47 stars of CYG OB1. */
static const double stars[47][2] = {
    {4.37, 5.23},
    {4.56, 5.74},
    {4.26, 4.93},
    {4.56, 5.74},
    {4.3, 5.19},
    {4.46, 5.46},
    {3.84, 4.65},
    {4.57, 5.27},
    {4.26, 5.57},
    {4.37, 5.12},
    {3.49, 5.73},
    {4.43, 5.45},
    {4.48, 5.42},
    {4.01, 4.05},
    {4.29, 4.26},
    {4.42, 4.58},
    {4.23, 3.94},
    {4.42, 4.18},
    {4.23, 4.18},
    {3.49, 5.89},
    {4.29, 4.38},
    {4.29, 4.22},
    {4.42, 4.42},
    {4.49, 4.85},
    {4.38, 5.02},
    {4.42, 4.66},
    {4.29, 4.66},
    {4.38, 4.9},
    {4.22, 4.39},
    {3.48, 6.05},
    {4.38, 4.42},
    {4.56, 5.1},
    {4.45, 5.22},
    {3.49, 6.29},
    {4.23, 4.34},
    {4.62, 5.62},
    {4.53, 5.1},
    {4.45, 5.22},
    {4.53, 5.18},
    {4.43, 5.57},
    {4.38, 4.62},
    {4.45, 5.06},
    {4.5, 5.34},
    {4.45, 5.34},
    {4.55, 5.54},
    {4.45, 4.98},
    {4.42, 4.5},
};

struct fit {
    double coef[8], raw[8], intercept, raw_intercept, crit, scale, raw_scale;
    size_t h;
    unsigned char support[20000], outliers[20000];
};

static int run(const double *x, const double *y, size_t n, size_t p,
               const struct clstats_regress_options *o, struct fit *f)
{
    struct clstats_array X = {.host = (void *)x, .dtype = CLSTATS_FLOAT64, .nx = p, .ny = n},
                         Y = {.host = (void *)y, .dtype = CLSTATS_FLOAT64, .nx = 1, .ny = n};
    struct clstats_regress_result r = {
        .coef = f->coef, .raw_coef = f->raw, .support = f->support, .outliers = f->outliers};
    const int st = clstats_regress_fit(test_ctx(), &X, &Y, o, &r);
    f->intercept = r.intercept, f->raw_intercept = r.raw_intercept, f->crit = r.crit;
    f->scale = r.scale, f->raw_scale = r.raw_scale, f->h = r.h;
    return st;
}

/* ---- The plain reference: simple regression (intercept and slope) by C-steps on the host ---- */

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sum of the h smallest squared residuals of (a, b), and the LS fit of those h rows. */
static double cstep(const double (*d)[2], size_t n, size_t h, double *a, double *b)
{
    double r2[64], sorted[64];
    for (size_t i = 0; i < n; i++) {
        const double r = d[i][1] - *a - *b * d[i][0];
        r2[i] = sorted[i] = r * r;
    }
    qsort(sorted, n, sizeof *sorted, cmp_d);
    double obj = 0;
    for (size_t i = 0; i < h; i++) obj += sorted[i];
    const double t = sorted[h - 1];
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t k = 0;
    for (size_t i = 0; i < n && k < h; i++)
        if (r2[i] <= t) {
            sx += d[i][0], sy += d[i][1], sxx += d[i][0] * d[i][0], sxy += d[i][0] * d[i][1];
            k++;
        }
    *b = (k * sxy - sx * sy) / (k * sxx - sx * sx);
    *a = (sy - *b * sx) / k;
    return obj;
}

START_TEST(starscyg_matches_every_start_reference_and_robustbase)
{
    const size_t n = 47, h = 25;
    double best = INFINITY, ba = 0, bb = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (stars[i][0] == stars[j][0]) continue;
            double b = (stars[j][1] - stars[i][1]) / (stars[j][0] - stars[i][0]);
            double a = stars[i][1] - b * stars[i][0], prev = INFINITY, obj;
            while ((obj = cstep(stars, n, h, &a, &b)) < prev) prev = obj;
            if (prev < best) best = prev, ba = a, bb = b;
        }
    double x[47], y[47];
    for (size_t i = 0; i < n; i++) x[i] = stars[i][0], y[i] = stars[i][1];
    struct fit f;
    struct clstats_regress_options o = {.seed = 7};
    ck_assert_int_eq(run(x, y, n, 1, &o, &f), CLSTATS_OK);
    ck_assert_uint_eq(f.h, h);
    ck_assert_msg(f.crit <= best * (1 + 1e-12), "crit %.12g, every start's best %.12g", f.crit,
                  best);
    ck_assert(fabs(f.raw_intercept - ba) <= 1e-6 * fabs(ba) && fabs(f.raw[0] - bb) <= 1e-6 * fabs(bb));
    /* robustbase 0.99: ltsReg(log.light ~ log.Te, data = starsCYG) */
    ck_assert_msg(fabs(f.intercept + 8.500054884) < 1e-6 * 8.5 && fabs(f.coef[0] - 3.046156937) < 1e-6 * 3,
                  "%.10g %.10g", f.intercept, f.coef[0]);
    ck_assert(fabs(f.raw_intercept + 13.62399030) < 1e-6 * 13.6);
    ck_assert(fabs(f.scale - 0.4562335) < 1e-6 && fabs(f.raw_scale - 0.5344752) < 1e-6);
    const int want[] = {7, 9, 11, 20, 30, 34};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (f.outliers[i]) {
            ck_assert_msg(k < 6 && want[k] == (int)i + 1, "outlier %zu", i + 1);
            k++;
        }
    ck_assert_uint_eq(k, 6);
    size_t in = 0;
    for (size_t i = 0; i < n; i++) in += f.support[i];
    ck_assert_uint_eq(in, h);
}
END_TEST

/* robustbase's fit of a dataset through Rscript: h, raw coefficients, the objective of its raw
 * fit (sum of the h smallest squared residuals) and its outliers, printed with the data. */
static bool robustbase(const char *dataset, double *xy, size_t *n, size_t *p, size_t *h,
                       double *raw, double *obj, unsigned char *outl)
{
    if (access("/usr/bin/Rscript", X_OK) != 0) return false;
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "Rscript -e 'suppressMessages(library(robustbase)); data(%s); d <- %s; "
             "y <- d[[ncol(d)]]; X <- as.matrix(d[-ncol(d)]); f <- ltsReg(X, y); "
             "r <- y - cbind(1, X) %%*%% f$raw.coefficients; "
             "cat(nrow(X), ncol(X), f$quan, sprintf(\"%%.17g\", c(f$raw.coefficients, "
             "sum(sort(r^2)[1:f$quan]))), as.integer(f$lts.wt == 0), "
             "sprintf(\"%%.17g\", t(cbind(X, y))))' 2>/dev/null",
             dataset, dataset);
    FILE *pipe = popen(cmd, "r");
    if (!pipe) return false;
    bool ok = fscanf(pipe, "%zu %zu %zu", n, p, h) == 3;
    for (size_t j = 0; ok && j <= *p; j++) ok = fscanf(pipe, " %lf", &raw[j]) == 1;
    ok = ok && fscanf(pipe, " %lf", obj) == 1;
    for (size_t i = 0; ok && i < *n; i++) {
        int v;
        ok = fscanf(pipe, "%d", &v) == 1;
        outl[i] = (unsigned char)v;
    }
    for (size_t i = 0; ok && i < *n * (*p + 1); i++) ok = fscanf(pipe, " %lf", &xy[i]) == 1;
    return pclose(pipe) == 0 && ok;
}

START_TEST(matches_robustbase_on_stackloss_and_hbk)
{
    const char *sets[] = {"stackloss", "hbk", "starsCYG"};
    for (int s = 0; s < 3; s++) {
        static double xy[4096], x[4096], y[1024];
        double raw[8], obj;
        unsigned char outl[1024];
        size_t n, p, h;
        if (!robustbase(sets[s], xy, &n, &p, &h, raw, &obj, outl)) {
            fprintf(stderr, "skipped: no Rscript with robustbase for %s\n", sets[s]);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < p; j++) x[i * p + j] = xy[i * (p + 1) + j];
            y[i] = xy[i * (p + 1) + p];
        }
        struct fit f;
        /* hbk has several C-step optima within 0.5 % (2.9473, 2.9526, 2.9539, 2.9599): with 500
         * starts robustbase and we each reach one of them by chance of the draw, so the
         * comparison runs 3000 starts, where every seed tried reached the best. */
        struct clstats_regress_options o = {.seed = 11, .n_subsets = 3000};
        ck_assert_int_eq(run(x, y, n, p, &o, &f), CLSTATS_OK);
        ck_assert_uint_eq(f.h, h);
        ck_assert_msg(f.crit <= obj * (1 + 1e-9), "%s: crit %.12g, robustbase's %.12g", sets[s],
                      f.crit, obj);
        fprintf(stderr, "%s: our objective %.10g, robustbase's %.10g\n", sets[s], f.crit, obj);
        if (f.crit >= obj * (1 - 1e-9)) { /* the same optimum: the same fit */
            ck_assert(fabs(f.raw_intercept - raw[0]) <= 1e-6 * (1e-3 + fabs(raw[0])));
            for (size_t j = 0; j < p; j++)
                ck_assert_msg(fabs(f.raw[j] - raw[j + 1]) <= 1e-6 * (1e-3 + fabs(raw[j + 1])),
                              "%s coef %zu: %.10g vs %.10g", sets[s], j, f.raw[j], raw[j + 1]);
            for (size_t i = 0; i < n; i++) ck_assert_int_eq(f.outliers[i], outl[i]);
        }
    }
}
END_TEST

/* y = 2 + 3 x1 - x2 + 0.5 x3 + N(0, 0.1), a fraction of the rows vertical outliers (y + 50)
 * and bad leverage points (x1 far out, y on another line). */
static void synthetic(size_t n, double frac, uint64_t seed, double *x, double *y)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < 3; j++) x[i * 3 + j] = test_rng_normal(&rng);
        y[i] = 2 + 3 * x[i * 3] - x[i * 3 + 1] + 0.5 * x[i * 3 + 2] + 0.1 * test_rng_normal(&rng);
        if (i < (size_t)(frac * n)) {
            if (i % 2) {
                y[i] += 50 + test_rng_uniform(&rng);
            } else {
                x[i * 3] = 20 + test_rng_normal(&rng);
                y[i] = -30 + test_rng_normal(&rng);
            }
        }
    }
}

START_TEST(synthetic_outliers_recover_the_truth)
{
    const double fracs[] = {0, 0.2, 0.45};
    const size_t sizes[] = {400, 5000};
    const double truth[4] = {2, 3, -1, 0.5};
    static double x[3 * 5000], y[5000];
    for (int m = 0; m < 2; m++)
        for (size_t si = 0; si < 2; si++)
            for (size_t fi = 0; fi < 3; fi++) {
                const size_t n = sizes[si];
                synthetic(n, fracs[fi], test_seed() + n, x, y);
                struct fit f;
                struct clstats_regress_options o = {.seed = 3, .method = (enum clstats_regress_method)m};
                ck_assert_msg(run(x, y, n, 3, &o, &f) == CLSTATS_OK, "%s",
                              clstats_ctx_message(test_ctx()));
                const double got[4] = {f.intercept, f.coef[0], f.coef[1], f.coef[2]};
                for (int j = 0; j < 4; j++)
                    ck_assert_msg(fabs(got[j] - truth[j]) < 0.05,
                                  "%s n %zu outliers %.2f: coefficient %d is %g",
                                  m ? "LMS" : "LTS", n, fracs[fi], j, got[j]);
                size_t flagged = 0;
                for (size_t i = 0; i < (size_t)(fracs[fi] * n); i++) flagged += f.outliers[i];
                ck_assert_uint_eq(flagged, (size_t)(fracs[fi] * n));
                if (fracs[fi] > 0) { /* least squares is far off */
                    struct clstats_regress_options all = {.no_reweight = 1, .h = n};
                    struct fit ls;
                    ck_assert_int_eq(run(x, y, n, 3, &all, &ls), CLSTATS_OK);
                    ck_assert(fabs(ls.coef[0] - 3) > 0.5 || fabs(ls.intercept - 2) > 0.5);
                }
            }
}
END_TEST

START_TEST(same_seed_same_bits)
{
    static double x[3 * 3000], y[3000];
    synthetic(3000, 0.3, 99, x, y);
    struct fit a, b;
    struct clstats_regress_options o = {.seed = 5};
    ck_assert_int_eq(run(x, y, 3000, 3, &o, &a), CLSTATS_OK);
    ck_assert_int_eq(run(x, y, 3000, 3, &o, &b), CLSTATS_OK);
    ck_assert(memcmp(a.coef, b.coef, 3 * 8) == 0 && a.intercept == b.intercept &&
              a.crit == b.crit && memcmp(a.support, b.support, 3000) == 0);
}
END_TEST

/* Both ways of summing the subsets' column products (a work-item a pair of columns, or a chunk
 * of rows) add the same terms in the same order: the same fit to the bit, here on integer data
 * full of tied residuals, from 8000 rows (past 5000 only the best candidate of the merged
 * groups goes on to the whole data) and on 40 rows with the minimal h. */
START_TEST(product_paths_give_the_same_bits)
{
    static double x[2 * 8000], y[8000];
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 21);
    for (size_t i = 0; i < 8000; i++) {
        x[2 * i] = floor(7 * test_rng_uniform(&rng));
        x[2 * i + 1] = floor(5 * test_rng_uniform(&rng));
        y[i] = 1 + x[2 * i] - 2 * x[2 * i + 1] + floor(3 * test_rng_uniform(&rng)) +
               (i % 4 == 0 ? 40.0 : 0.0);
    }
    const size_t sizes[] = {8000, 40};
    for (size_t si = 0; si < 2; si++) {
        const size_t n = sizes[si];
        struct fit a, b;
        struct clstats_regress_options o = {.seed = 7, .h = si ? 4 : 0};
        ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "regress.products", "pairs"), CLSTATS_OK);
        ck_assert_msg(run(x, y, n, 2, &o, &a) == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
        ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "regress.products", "rows"), CLSTATS_OK);
        ck_assert_int_eq(run(x, y, n, 2, &o, &b), CLSTATS_OK);
        ck_assert_int_eq(clstats_ctx_tune(test_ctx(), "regress.products", "auto"), CLSTATS_OK);
        ck_assert_msg(memcmp(a.coef, b.coef, 2 * 8) == 0 && a.intercept == b.intercept &&
                          a.crit == b.crit && memcmp(a.support, b.support, n) == 0,
                      "n %zu: crit %.17g against %.17g", n, a.crit, b.crit);
        /* the raw fit is a C-step's fixed point: its h-subset's LS fit is itself */
        size_t in = 0;
        for (size_t i = 0; i < n; i++) in += a.support[i];
        ck_assert_uint_eq(in, a.h);
    }
}
END_TEST

/* Past 600 rows of host arrays without a NaN the device builds the data set from x and y
 * (regress.design on, GPUs' default); otherwise the host does. Both give the same fit to the
 * bit: the same data with a NaN row inserted (host-built, that row left out), the same data
 * host-built by the tuning, and float32 x read with a row stride beside y given as a row
 * (device-built) against their values as packed doubles. */
START_TEST(device_built_data_matches_host_built)
{
    enum { N = 6001, AT = 17 };
    static double x[3 * N], y[N], xn[3 * (N + 1)], yn[N + 1], xd[3 * N];
    static float xf[4 * N];
    synthetic(N, 0.3, test_seed() + 5, x, y);
    for (size_t i = 0, j = 0; i <= N; i++) {
        if (i == AT) {
            xn[3 * i] = 1, xn[3 * i + 1] = NAN, xn[3 * i + 2] = 2, yn[i] = 3;
            continue;
        }
        memcpy(xn + 3 * i, x + 3 * j, 3 * 8), yn[i] = y[j++];
    }
    struct clstats_regress_options o = {.seed = 11};
    struct fit a, b, h;
    test_tune("regress.design", "off");
    ck_assert_int_eq(run(x, y, N, 3, &o, &h), CLSTATS_OK);
    test_tune("regress.design", "on");
    ck_assert_msg(run(x, y, N, 3, &o, &a) == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
    ck_assert(memcmp(a.coef, h.coef, 3 * 8) == 0 && a.crit == h.crit && a.scale == h.scale &&
              memcmp(a.support, h.support, N) == 0 && memcmp(a.outliers, h.outliers, N) == 0);
    ck_assert_msg(run(xn, yn, N + 1, 3, &o, &b) == CLSTATS_OK, "%s",
                  clstats_ctx_message(test_ctx()));
    ck_assert_msg(memcmp(a.coef, b.coef, 3 * 8) == 0 && memcmp(a.raw, b.raw, 3 * 8) == 0 &&
                      a.intercept == b.intercept && a.crit == b.crit && a.scale == b.scale &&
                      a.raw_scale == b.raw_scale,
                  "device-built crit %.17g, host-built %.17g", a.crit, b.crit);
    for (size_t i = 0; i < N; i++) {
        const size_t k = i < AT ? i : i + 1;
        ck_assert(a.support[i] == b.support[k] && a.outliers[i] == b.outliers[k]);
    }
    ck_assert(b.support[AT] == 0 && b.outliers[AT] == 0);

    for (size_t k = 0; k < 3 * N; k++) {
        const float f = (float)x[k];
        xf[k / 3 * 4 + k % 3] = f;
        xd[k] = f;
    }
    struct clstats_array X = {.host = xf, .dtype = CLSTATS_FLOAT32, .nx = 3, .ny = N, .stride = 4},
                         Y = {.host = y, .dtype = CLSTATS_FLOAT64, .nx = N, .ny = 1};
    struct fit c;
    struct clstats_regress_result r = {.coef = c.coef, .support = c.support};
    ck_assert_int_eq(clstats_regress_fit(test_ctx(), &X, &Y, &o, &r), CLSTATS_OK);
    ck_assert_int_eq(run(xd, y, N, 3, &o, &b), CLSTATS_OK);
    test_tune("regress.design", NULL);
    ck_assert_msg(memcmp(c.coef, b.coef, 3 * 8) == 0 && r.intercept == b.intercept &&
                      r.crit == b.crit && memcmp(c.support, b.support, N) == 0,
                  "float32 strided x: crit %.17g coef %.17g, packed doubles %.17g %.17g", r.crit,
                  c.coef[0], b.crit, b.coef[0]);
}
END_TEST

/* The same seed gives the same fit with a GPU's settings (256 work-items a column, columns split
 * over work-groups, a pair of columns a work-item, the data set built on the device) as with a
 * CPU device's: every device's path, to the bit, on 20000 rows (5 blocks of the selection). */
START_TEST(gpu_settings_give_the_same_bits)
{
    enum { N = 20000 };
    static double x[3 * N], y[N];
    synthetic(N, 0.25, test_seed() + 8, x, y);
    static const char *const gpu[][2] = {{"columns.wg", "256"},
                                         {"columns.split", "on"},
                                         {"regress.products", "pairs"},
                                         {"regress.design", "on"}};
    static const char *const cpu[][2] = {{"columns.wg", "1"},
                                         {"columns.split", "off"},
                                         {"regress.products", "rows"},
                                         {"regress.design", "off"}};
    struct clstats_regress_options o = {.seed = 13};
    struct fit f[2];
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 4; i++) test_tune((k ? cpu : gpu)[i][0], (k ? cpu : gpu)[i][1]);
        ck_assert_msg(run(x, y, N, 3, &o, &f[k]) == CLSTATS_OK, "%s",
                      clstats_ctx_message(test_ctx()));
    }
    for (int i = 0; i < 4; i++) test_tune(gpu[i][0], NULL);
    ck_assert_msg(memcmp(f[0].coef, f[1].coef, 3 * 8) == 0 &&
                      memcmp(f[0].raw, f[1].raw, 3 * 8) == 0 && f[0].intercept == f[1].intercept &&
                      f[0].crit == f[1].crit &&
                      f[0].scale == f[1].scale && memcmp(f[0].support, f[1].support, N) == 0,
                  "GPU settings crit %.17g, CPU settings %.17g", f[0].crit, f[1].crit);
}
END_TEST

START_TEST(bad_input_gives_clear_errors)
{
    double x[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    double y[10] = {1, 3, 2, 5, 4, 7, 6, 9, 8, 20};
    struct fit f;
    /* 2 rows for 3 coefficients (4 rows needed) */
    ck_assert_int_eq(run(x, y, 2, 2, NULL, &f), CLSTATS_ERR_ARG);
    ck_assert(strstr(clstats_ctx_message(test_ctx()), "at least 4"));
    /* x with two equal columns (rows i: x[2i], x[2i+1] = 1,2 / 3,4 ... collinear) */
    double dup[20];
    for (int i = 0; i < 10; i++) dup[2 * i] = dup[2 * i + 1] = i;
    ck_assert_int_eq(run(dup, y, 10, 2, NULL, &f), CLSTATS_ERR_SINGULAR);
    /* a constant column with the intercept */
    double cst[10] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
    ck_assert_int_eq(run(cst, y, 10, 1, NULL, &f), CLSTATS_ERR_SINGULAR);
    struct clstats_regress_options o = {.h = 11};
    ck_assert_int_eq(run(x, y, 10, 1, &o, &f), CLSTATS_ERR_ARG);
    o = (struct clstats_regress_options){.alpha = 0.3};
    ck_assert_int_eq(run(x, y, 10, 1, &o, &f), CLSTATS_ERR_ARG);
    double yn[10];
    memcpy(yn, y, sizeof yn);
    yn[3] = NAN;
    o = (struct clstats_regress_options){.nan_policy = CLSTATS_NAN_ERROR};
    ck_assert_int_eq(run(x, yn, 10, 1, &o, &f), CLSTATS_ERR_NAN);
    /* omitted: the fit uses 9 rows and row 3 is in neither the support nor the outliers */
    ck_assert_int_eq(run(x, yn, 10, 1, NULL, &f), CLSTATS_OK);
    ck_assert(f.support[3] == 0 && f.outliers[3] == 0 && f.h == 6);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("regress");
    TCase *tc = tcase_create("regress");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, starscyg_matches_every_start_reference_and_robustbase);
    tcase_add_test(tc, matches_robustbase_on_stackloss_and_hbk);
    tcase_add_test(tc, synthetic_outliers_recover_the_truth);
    tcase_add_test(tc, same_seed_same_bits);
    tcase_add_test(tc, product_paths_give_the_same_bits);
    tcase_add_test(tc, device_built_data_matches_host_built);
    tcase_add_test(tc, gpu_settings_give_the_same_bits);
    tcase_add_test(tc, bad_input_gives_clear_errors);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
