/* test_pass.c - PaSS variable selection (src/varsel/): the device path against the plain C path
 * (clstats_pass_fit_host), the same selections, criteria and histories on small and odd shapes
 * in both dtypes; the chosen model's criterion against one recomputed from scratch by plain
 * least squares (every criterion); the true model found on an easy sparse problem; a seed's
 * reproducibility; and the errors of bad input. */
#include "test_util.h"

#include "../src/varsel/varsel_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct problem {
    size_t n, p;
    double *x, *y; /* x row-major n x p */
};

/* y = sum_{i < r} (1 + i) x_i + noise with x_i correlated through a shared factor, so that the
 * argmaxes are far from ties. */
static struct problem make_problem(size_t n, size_t p, size_t r, double noise, uint64_t seed)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    struct problem pr = {n, p, malloc(n * p * sizeof(double)), malloc(n * sizeof(double))};
    for (size_t t = 0; t < n; t++) {
        const double shared = test_rng_normal(&rng);
        double y = noise * test_rng_normal(&rng);
        for (size_t i = 0; i < p; i++) {
            const double v = test_rng_normal(&rng) + 0.3 * shared + 0.01 * (double)i;
            pr.x[t * p + i] = v;
            if (i < r) y += (1.0 + (double)i) * v;
        }
        pr.y[t] = y + 5;
    }
    return pr;
}

static void free_problem(struct problem *pr)
{
    free(pr->x), free(pr->y);
}

struct outcome {
    int status;
    double *coef, *history, intercept, criterion;
    unsigned char *support;
    size_t n_selected;
};

static struct outcome fit(const struct problem *pr, int f64, const struct clstats_pass_options *o,
                          int device)
{
    void *x = malloc(pr->n * pr->p * (f64 ? 8 : 4)), *y = malloc(pr->n * (f64 ? 8 : 4));
    for (size_t i = 0; i < pr->n * pr->p; i++)
        if (f64) ((double *)x)[i] = pr->x[i];
        else ((float *)x)[i] = (float)pr->x[i];
    for (size_t t = 0; t < pr->n; t++)
        if (f64) ((double *)y)[t] = pr->y[t];
        else ((float *)y)[t] = (float)pr->y[t];
    const enum clstats_dtype dt = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32;
    struct clstats_array xa = {.host = x, .dtype = dt, .nx = pr->p, .ny = pr->n};
    struct clstats_array ya = {.host = y, .dtype = dt, .nx = pr->n, .ny = 1};
    struct outcome out = {.coef = calloc(pr->p ? pr->p : 1, 8),
                          .history = calloc(o->n_iter + 1, 8),
                          .support = calloc(pr->p ? pr->p : 1, 1)};
    struct clstats_pass_result res = {.coef = out.coef, .support = out.support,
                                      .history = out.history};
    void *x_before = malloc(pr->n * pr->p * (f64 ? 8 : 4));
    memcpy(x_before, x, pr->n * pr->p * (f64 ? 8 : 4));
    out.status = device ? clstats_pass_fit(test_ctx(), &xa, &ya, o, &res)
                        : clstats_pass_fit_host(NULL, &xa, &ya, o, &res);
    /* X is the caller's: never written (CPU devices work on the caller's memory itself). */
    ck_assert(memcmp(x_before, x, pr->n * pr->p * (f64 ? 8 : 4)) == 0);
    free(x_before);
    out.intercept = res.intercept, out.criterion = res.criterion, out.n_selected = res.n_selected;
    free(x), free(y);
    return out;
}

static void free_outcome(struct outcome *o)
{
    free(o->coef), free(o->history), free(o->support);
}

/* The criterion of a support from scratch: centred columns, modified Gram-Schmidt. */
static double plain_criterion(const struct problem *pr, const unsigned char *support,
                              const struct clstats_pass_options *o)
{
    const size_t n = pr->n, p = pr->p;
    double *q = malloc(n * p * sizeof *q), *r = malloc(n * sizeof *r);
    size_t k = 0;
    double ym = 0;
    for (size_t t = 0; t < n; t++) ym += pr->y[t];
    for (size_t t = 0; t < n; t++) r[t] = pr->y[t] - ym / (double)n;
    for (size_t i = 0; i < p; i++) {
        if (!support[i]) continue;
        double *c = q + k * n, m = 0, norm = 0;
        for (size_t t = 0; t < n; t++) m += pr->x[t * p + i];
        for (size_t t = 0; t < n; t++) c[t] = pr->x[t * p + i] - m / (double)n;
        for (int pass = 0; pass < 2; pass++)
            for (size_t l = 0; l < k; l++) {
                double s = 0;
                for (size_t t = 0; t < n; t++) s += q[l * n + t] * c[t];
                for (size_t t = 0; t < n; t++) c[t] -= s * q[l * n + t];
            }
        for (size_t t = 0; t < n; t++) norm += c[t] * c[t];
        for (size_t t = 0; t < n; t++) c[t] /= sqrt(norm);
        double s = 0;
        for (size_t t = 0; t < n; t++) s += c[t] * r[t];
        for (size_t t = 0; t < n; t++) r[t] -= s * c[t];
        k++;
    }
    double rss = 0;
    for (size_t t = 0; t < n; t++) rss += r[t] * r[t];
    free(q), free(r);
    const double nn = (double)n, pp = (double)p, kk = (double)k, fit = nn * log(rss / nn);
    switch (o->criterion) {
    case CLSTATS_VARSEL_AIC: return fit + 2 * kk;
    case CLSTATS_VARSEL_BIC: return fit + kk * log(nn);
    case CLSTATS_VARSEL_EBIC:
        return fit + kk * log(nn) +
               2 * o->gamma * (lgamma(pp + 1) - lgamma(kk + 1) - lgamma(pp - kk + 1));
    case CLSTATS_VARSEL_HDBIC: return fit + kk * log(nn) * log(pp);
    case CLSTATS_VARSEL_HDHQC: return fit + 2 * kk * log(log(nn)) * log(pp);
    }
    return NAN;
}

static void options(struct clstats_pass_options *o, unsigned particles, unsigned iters,
                    uint64_t seed)
{
    clstats_pass_default_options(o);
    o->n_particles = particles, o->n_iter = iters, o->seed = seed;
}

static void check_same(size_t n, size_t p, size_t r, int f64, unsigned particles,
                       unsigned iters, enum clstats_varsel_criterion crit, uint64_t seed)
{
    struct problem pr = make_problem(n, p, r, 0.5, seed);
    struct clstats_pass_options o;
    options(&o, particles, iters, seed);
    o.criterion = crit;
    o.p_forward[0] = 0.2, o.p_forward[1] = 0.6, o.p_forward[2] = 0.2;
    o.p_backward[0] = 0.6, o.p_backward[1] = 0.4;
    struct outcome dev = fit(&pr, f64, &o, 1), host = fit(&pr, f64, &o, 0);
    ck_assert_msg(dev.status == 0, "device: %s", clstats_ctx_message(test_ctx()));
    ck_assert_int_eq(host.status, 0);
    ck_assert_msg(memcmp(dev.support, host.support, p) == 0,
                  "n %zu p %zu f64 %d K %u seed %llu: selections differ", n, p, f64, particles,
                  (unsigned long long)seed);
    ck_assert(dev.criterion == host.criterion);
    ck_assert(memcmp(dev.history, host.history, (iters + 1) * 8) == 0);
    for (size_t i = 0; i < p; i++) ck_assert(dev.coef[i] == host.coef[i]);
    free_outcome(&dev), free_outcome(&host), free_problem(&pr);
}

START_TEST(pass_device_matches_host)
{
    const uint64_t seed = test_seed();
    check_same(40, 12, 3, 1, 16, 12, CLSTATS_VARSEL_HDBIC, seed);
    check_same(40, 12, 3, 0, 16, 12, CLSTATS_VARSEL_BIC, seed + 1);
    check_same(61, 300, 4, 1, 33, 10, CLSTATS_VARSEL_EBIC, seed + 2);
    check_same(61, 300, 4, 0, 7, 10, CLSTATS_VARSEL_HDHQC, seed + 3);
    check_same(3, 1, 1, 1, 1, 3, CLSTATS_VARSEL_AIC, seed + 4);   /* tiniest */
    check_same(5, 2, 1, 0, 5, 4, CLSTATS_VARSEL_AIC, seed + 5);   /* K > p */
    check_same(9, 517, 2, 1, 3, 9, CLSTATS_VARSEL_HDBIC, seed + 6); /* p >> n, odd */
    check_same(700, 90, 6, 0, 24, 14, CLSTATS_VARSEL_HDBIC, seed + 7); /* long columns */
}
END_TEST

/* The same bits as the plain C engine at two more shapes and criteria (EBIC, HDBIC). */
START_TEST(pass_more_shapes_match_host)
{
    check_same(61, 300, 4, 0, 33, 10, CLSTATS_VARSEL_EBIC, test_seed() + 60);
    check_same(700, 90, 6, 1, 19, 14, CLSTATS_VARSEL_HDBIC, test_seed() + 61);
}
END_TEST

/* A device without fp64 standardises X and takes the inner products on the host instead: the
 * same selection still. */
START_TEST(pass_without_fp64_matches_host)
{
    clstats_ctx *ctx = test_ctx();
    const bool had = ctx->has_fp64;
    ctx->has_fp64 = false;
    check_same(61, 300, 4, 0, 7, 10, CLSTATS_VARSEL_HDHQC, test_seed() + 50);
    check_same(300, 40, 5, 0, 16, 12, CLSTATS_VARSEL_BIC, test_seed() + 51);
    ctx->has_fp64 = had;
}
END_TEST

/* Runs engine steps on a device engine (its own inner products, or with fp64 switched off the
 * host's) and on the plain C engine, and compares the chosen variables and their inner products,
 * which must be equal bit for bit. The device engine steps three times over the same models, so
 * that the later steps take their Gram rows from its cache, and with caches of every size from
 * one row (the residuals' GEMM for most models, the cache afresh for the rest) up. */
static void compare_step(struct pass_engine *dev, const struct pass_data *d, size_t K, size_t cap,
                         const int32_t *idx, const int32_t *size, const double *beta,
                         const int32_t *want, bool fp64, const int32_t *b, const double *gb);

static void check_step(const struct pass_data *d, const struct pass_data *dh, size_t K, size_t cap,
                       const int32_t *idx, const int32_t *size, const double *beta,
                       const int32_t *want, bool fp64, bool every_tile)
{
    clstats_ctx *ctx = test_ctx();
    struct pass_engine host;
    ck_assert_int_eq(clstats__engine_host(NULL, dh, K, cap, &host), 0);
    int32_t *b = calloc(K, 4);
    double *gb = calloc(K * PASS_GRAM(cap), 8);
    ck_assert_int_eq(host.step(&host, idx, size, beta, want, b, gb), 0);
    const size_t rows[] = {0, 1, 2, cap + 1};
    for (size_t c = 0; c < sizeof rows / sizeof *rows; c++) {
        struct pass_data dc = *d;
        dc.cache_rows = rows[c];
        /* pass_scan's variables a work-group: its own choice, and a few, so that a particle's
         * scan spans several work-groups (pass_scan_fold) at the tests' p too. */
        dc.scan_span = c % 2 ? 37 : 0;
        const bool had = ctx->has_fp64;
        if (!fp64) ctx->has_fp64 = false;
        struct pass_engine dev;
        const int made = clstats__engine_device(ctx, &dc, K, cap, &dev);
        ctx->has_fp64 = had;
        ck_assert_msg(made == 0, "%s", clstats_ctx_message(ctx));
        for (int again = 0; again < 3; again++)
            compare_step(&dev, d, K, cap, idx, size, beta, want, fp64, b, gb);
        dev.release(&dev);
    }
    /* The new Gram rows by pass_gram_rows instead of CLBlast's GEMM (tuning pass.gram_rows),
     * with a cache of two rows (afresh each step), one of cap + 1, and one of p - 1 that holds
     * every model's variables (most models' only there) without taking the whole Gram matrix
     * at once (CLBlast's); where every_tile, in each of pass.gram_tile's tiles (on CPU devices,
     * where PoCL builds each tile's program slowly, one of each of pass_gram_rows's bodies: the
     * plain, "d" and "w" tiles) and x's rows split among work-groups (pass.gram_split) as auto
     * does, not at all, in three (the last split shorter at odd n) and in as many as n allows;
     * else the auto tile, split as auto does and as much as n allows. */
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_rows", "on"), 0);
    const char *every[][2] = {{"auto", "0"},       {"auto", "8"},       {"auto", "1"},
                              {"auto", "3"},       {"64x64x8", "3"},    {"64x128x8w", "3"},
                              {"64x32x8", "0"},    {"64x256x8w", "0"},  {"64x64", "0"},
                              {"64x128", "0"},     {"128x128", "0"},    {"64x64x32", "0"},
                              {"64x64x8", "0"},    {"64x64x8d", "0"},   {"64x64x16d", "0"},
                              {"64x128x8d", "0"},  {"64x128x8w", "0"},  {"64x128x32m", "3"},
                              {"64x256x32m", "0"}, {"64x128x32h", "0"}, {"64x256x32h", "3"}};
    const size_t runs = !every_tile ? 2 : ctx->device_class == CLASS_CPU ? 8 : 21;
    const size_t on_rows[] = {2, cap + 1, d->p > 1 ? d->p - 1 : 1};
    for (size_t run = 0; run < runs; run++) {
        ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_tile", every[run][0]), 0);
        ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_split", every[run][1]), 0);
        for (size_t c = 0; c < sizeof on_rows / sizeof *on_rows; c++) {
            struct pass_data dc = *d;
            dc.cache_rows = on_rows[c];
            dc.scan_span = c % 2 ? 37 : 0;
            struct pass_engine dev;
            ck_assert_int_eq(clstats__engine_device(ctx, &dc, K, cap, &dev), 0);
            for (int again = 0; again < 2; again++)
                compare_step(&dev, d, K, cap, idx, size, beta, want, fp64 && ctx->has_fp64, b,
                             gb);
            dev.release(&dev);
        }
    }
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_tile", "auto"), 0);
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_split", "0"), 0);
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_rows", "auto"), 0);
    host.release(&host);
    free(b), free(gb);
}

static void compare_step(struct pass_engine *dev, const struct pass_data *d, size_t K, size_t cap,
                         const int32_t *idx, const int32_t *size, const double *beta,
                         const int32_t *want, bool fp64, const int32_t *b, const double *gb)
{
    int32_t *a = calloc(K, 4);
    double *ga = calloc(K * PASS_GRAM(cap), 8);
    ck_assert_int_eq(dev->step(dev, idx, size, beta, want, a, ga), 0);
    for (size_t j = 0; j < K; j++) {
        if (want[j] == PASS_NONE) continue;
        ck_assert_msg(a[j] == b[j], "n %zu p %zu f64 %d fp64 %d particle %zu: %d vs %d", d->n,
                      d->p, d->f64, fp64, j, a[j], b[j]);
        for (int32_t m = 0; a[j] >= 0 && m < size[j] + 2; m++)
            ck_assert_msg(ga[j * PASS_GRAM(cap) + (size_t)m] == gb[j * PASS_GRAM(cap) + (size_t)m],
                          "particle %zu product %d: %.17g vs %.17g", j, m,
                          ga[j * PASS_GRAM(cap) + (size_t)m], gb[j * PASS_GRAM(cap) + (size_t)m]);
    }
    free(a), free(ga);
}

/* The engines alone on coefficients that are not the LS fit, so that variables inside the models
 * have large |X_i^T R| and must be passed over; columns repeated make exact ties (lowest index);
 * particles that take the argmax, that name their variable, and that take nothing. */
static void engines_agree_on(struct test_rng *rng, size_t n, size_t p, size_t K, bool every_tile)
{
    const size_t cap = p < 6 ? p : 6;
    for (int f64 = 0; f64 <= 1; f64++) {
        double *xs = malloc(n * p * 8), *ys = malloc(n * 8), *beta = calloc(K * cap, 8);
        void *xr = malloc(n * p * (f64 ? 8 : 4));
        for (size_t i = 0; i < n * p; i++)
            xs[i] = i >= 2 * n && i < 3 * n ? xs[i - n] : test_rng_normal(rng);
        if (!f64) /* the values the device holds */
            for (size_t i = 0; i < n * p; i++) xs[i] = (double)(float)xs[i];
        for (size_t i = 0; i < p; i++)
            for (size_t t = 0; t < n; t++)
                if (f64) ((double *)xr)[t * p + i] = xs[i * n + t];
                else ((float *)xr)[t * p + i] = (float)xs[i * n + t];
        for (size_t t = 0; t < n; t++) ys[t] = test_rng_normal(rng); /* double on both */
        if (p >= 3) /* y along column 1 = column 2: empty models tie between them */
            for (size_t t = 0; t < n; t++) ys[t] = xs[n + t];
        int32_t *idx = calloc(K * cap, 4), *size = calloc(K, 4), *want = calloc(K, 4);
        for (size_t j = 0; j < K; j++) {
            size[j] = (int32_t)(test_rng_next(rng) % (cap + 1));
            if (j == 0) size[j] = (int32_t)cap; /* all variables, where p <= 6 */
            if (j % 2) size[j] = 0;
            for (int32_t m = 0; m < size[j]; m++) {
                idx[j * cap + m] = (int32_t)((j + (size_t)m * 7) % p);
                for (int32_t l = 0; l < m; l++)
                    if (idx[j * cap + l] == idx[j * cap + m]) idx[j * cap + m] = -1;
                beta[j * cap + m] = (double)(float)(5 * test_rng_normal(rng));
            }
            int32_t kept = 0; /* drop the repeats */
            for (int32_t m = 0; m < size[j]; m++)
                if (idx[j * cap + m] >= 0)
                    idx[j * cap + kept] = idx[j * cap + m], beta[j * cap + kept++] = beta[j * cap + m];
            size[j] = kept;
            want[j] = j % 3 == 2 ? (int32_t)(test_rng_next(rng) % p)
                                 : j % 5 == 4 ? PASS_NONE : PASS_ARGMAX;
        }
        struct pass_data d = {.n = n, .p = p, .f64 = f64, .xr = xr, .ys = ys};
        struct pass_data dh = d;
        dh.xs = xs;
        check_step(&d, &dh, K, cap, idx, size, beta, want, true, every_tile && !f64);
        if (!f64) check_step(&d, &dh, K, cap, idx, size, beta, want, false, false);
        free(xs), free(xr), free(ys), free(beta), free(idx), free(size), free(want);
    }
}

START_TEST(pass_engines_agree)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 40);
    /* n, p, K, and whether pass_gram_rows goes through every tile (odd n and p: edges) */
    const size_t shapes[][4] = {
        {7, 5, 3, 0}, {33, 260, 9, 0}, {4, 1, 1, 0}, {51, 701, 17, 1}, {200, 30, 5, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        engines_agree_on(&rng, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
}
END_TEST

/* Many particles, so that many of pass.cl's work-groups (256 work-items, on PoCL's threads too)
 * run at once, each step repeated: PoCL 3.1's pthread device has let work-groups run at once
 * share kernel-scope local arrays (kernels/background/box_stats.cl met it), a fault that shows
 * as a wrong argmax or product now and then, so only repetition can catch it. */
START_TEST(pass_engines_agree_with_many_groups_at_once)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 41);
    engines_agree_on(&rng, 300, 900, 96, false);
}
END_TEST

/* Variable v's Gram row from a device engine (one step of the particles' models taking the
 * argmax) against the plain one in double: the largest error as a fraction of sum_t |x_tv x_ti|,
 * over the models' variables; equal columns 1 and 3 must make equal rows and equal values. */
static double gram_rows_error(const struct pass_data *d, size_t K, size_t cap, const int32_t *idx,
                              const int32_t *size, const double *beta, const int32_t *want,
                              const char *by, float **rows_out)
{
    clstats_ctx *ctx = test_ctx();
    const size_t n = d->n, p = d->p;
    const float *x = d->xr;
    struct pass_data dc = *d;
    dc.cache_rows = p - 1; /* not the whole Gram matrix at once (CLBlast's) */
    struct pass_engine dev;
    ck_assert_msg(clstats__engine_device(ctx, &dc, K, cap, &dev) == 0, "%s",
                  clstats_ctx_message(ctx));
    ck_assert_str_eq(clstats__engine_device_rows_by(&dev), by);
    int32_t *a = calloc(K, 4);
    double *ga = calloc(K * PASS_GRAM(cap), 8), *row = malloc(p * 8), *row1 = malloc(p * 8);
    ck_assert_int_eq(dev.step(&dev, idx, size, beta, want, a, ga), 0);
    float *rows = calloc(K * cap * p, 4); /* each model position's row, for the callers' bits */
    double worst = 0;
    for (size_t j = 0; j < K; j++)
        for (int32_t m = 0; m < size[j]; m++) {
            const int32_t v = idx[j * cap + (size_t)m];
            ck_assert_int_eq(clstats__engine_device_gram_row(&dev, v, row), 0);
            for (size_t i = 0; i < p; i++) {
                double want_g = 0, scale = 0;
                for (size_t t = 0; t < n; t++) {
                    const double ab = (double)x[t * p + (size_t)v] * x[t * p + i];
                    want_g += ab, scale += fabs(ab);
                }
                const double err = fabs(row[i] - want_g) / scale;
                if (err > worst) worst = err;
                rows[(j * cap + (size_t)m) * p + i] = (float)row[i];
            }
            ck_assert_msg(row[1] == row[3], "%s: variable %d: columns 1 and 3 differ", by, v);
            if (v == 3 && clstats__engine_device_gram_row(&dev, 1, row1) == 0)
                ck_assert_msg(memcmp(row, row1, p * 8) == 0, "%s: rows 1 and 3 differ", by);
        }
    dev.release(&dev);
    free(a), free(ga), free(row), free(row1);
    *rows_out = rows;
    return worst;
}

/* The new Gram rows on NVIDIA's tensor cores (pass_mma.cl, forced by its tiles) against the plain
 * sums in double, beside pass_gram_rows (float32 FMAs): 3xTF32 keeps them near float32's
 * accuracy (a single TF32 product, or a 3xTF32 sum short of a_lo b_hi, errs by ~2^-12 of a b,
 * over 2^-17 of sum |a b| at n = 1001 on random data), and the same bits on every run. Rows of 64
 * in two row tiles (the second partial), x's rows split in three (the last shorter), p a multiple
 * of 4 (16-byte loads) and odd. Elsewhere the tiles fall back to pass_gram_rows. */
START_TEST(pass_gram_rows_on_tensor_cores)
{
    clstats_ctx *ctx = test_ctx();
    const bool mma = ctx->device_class == CLASS_NVIDIA && ctx->nv_compute_major >= 8;
    if (!mma)
        printf("tensor-core Gram rows: %s has none; their tiles must fall back\n",
               ctx->device_name);
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 60);
    const size_t n = 1001, K = 17, cap = 5, ps[] = {700, 517};
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_rows", "on"), 0);
    for (size_t c = 0; c < 2; c++) {
        const size_t p = ps[c];
        float *x = malloc(n * p * 4);
        double *ys = malloc(n * 8), *beta = calloc(K * cap, 8);
        for (size_t t = 0; t < n; t++) {
            for (size_t i = 0; i < p; i++)
                x[t * p + i] = (float)test_rng_normal(&rng);
            x[t * p + 3] = x[t * p + 1];
            ys[t] = test_rng_normal(&rng);
        }
        int32_t *idx = calloc(K * cap, 4), *size = calloc(K, 4), *want = calloc(K, 4);
        for (size_t j = 0; j < K; j++) { /* 81 distinct variables, 1 and 3 among them */
            size[j] = j == 0 ? 1 : (int32_t)cap;
            for (int32_t m = 0; m < size[j]; m++)
                idx[j * cap + (size_t)m] =
                    j == 0 ? 3 : (int32_t)((j - 1) * cap + (size_t)m) * 7 % (int32_t)p;
            want[j] = PASS_ARGMAX;
        }
        const struct pass_data d = {.n = n, .p = p, .f64 = 0, .xr = x, .ys = ys};
        float *plain_rows, *rows, *again;
        ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_split", "3"), 0);
        ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_tile", "64x128x8d"), 0);
        const double plain =
            gram_rows_error(&d, K, cap, idx, size, beta, want, "pass_gram_rows", &plain_rows);
        const char *tiles[] = {"64x128x32m", "64x256x32m", "64x128x32h", "64x256x32h"};
        for (size_t tl = 0; tl < sizeof tiles / sizeof *tiles; tl++) {
            ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_tile", tiles[tl]), 0);
            const char *by = mma ? "pass_gram_rows_mma" : "pass_gram_rows";
            const double err = gram_rows_error(&d, K, cap, idx, size, beta, want, by, &rows);
            gram_rows_error(&d, K, cap, idx, size, beta, want, by, &again);
            printf("Gram rows at n %zu p %zu, largest error / sum |ab|: %s %.3g, pass_gram_rows "
                   "%.3g\n",
                   n, p, tiles[tl], err, plain);
            ck_assert_msg(err <= 0x1p-20, "%s: error %.3g of sum |ab| (pass_gram_rows %.3g)",
                          tiles[tl], err, plain);
            ck_assert_msg(memcmp(rows, again, K * cap * p * 4) == 0, "%s: runs differ", tiles[tl]);
            free(rows), free(again);
        }
        free(plain_rows);
        free(x), free(ys), free(beta), free(idx), free(size), free(want);
    }
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_tile", "auto"), 0);
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_split", "0"), 0);
    ck_assert_int_eq(clstats_ctx_tune(ctx, "pass.gram_rows", "auto"), 0);
}
END_TEST

/* The Gram cache's book: each model position's row holds its variable; new variables take
 * consecutive rows after the old; the book starts afresh where they do not fit beside the old,
 * and refuses models with more distinct variables than rows. */
START_TEST(pass_cache_book)
{
    struct pass_cache c;
    ck_assert_int_eq(clstats__cache_init(NULL, &c, 10, 4), 0);
    const size_t cap = 3;
    int32_t idx[] = {1, 2, 0, 2, 5, 0, 7, 8, 9}, size[] = {2, 2, 3}, slot[9];
    const int32_t rows01[] = {0, 1}, rows1[] = {1}, rows2[] = {2}, rows02[] = {0, 2};
    ck_assert(clstats__cache_plan(&c, idx, size, rows01, 2, cap, slot)); /* 1, 2, 5 */
    ck_assert_uint_eq(c.n_fresh, 3);
    ck_assert_uint_eq(c.first_fresh, 0);
    ck_assert_int_eq(slot[0], 0); ck_assert_int_eq(slot[1], 1);
    ck_assert_int_eq(slot[3], 1); ck_assert_int_eq(slot[4], 2);
    ck_assert(clstats__cache_plan(&c, idx, size, rows1, 1, cap, slot)); /* nothing new */
    ck_assert_uint_eq(c.n_fresh, 0);
    ck_assert_int_eq(slot[3], 1); ck_assert_int_eq(slot[4], 2);
    ck_assert(clstats__cache_plan(&c, idx, size, rows2, 1, cap, slot)); /* 7, 8, 9: afresh */
    ck_assert_uint_eq(c.n_fresh, 3);
    ck_assert_uint_eq(c.first_fresh, 0);
    ck_assert_int_eq(c.slot_of[1], -1);
    ck_assert_int_eq(slot[6], 0); ck_assert_int_eq(slot[7], 1); ck_assert_int_eq(slot[8], 2);
    ck_assert(clstats__cache_plan(&c, idx, size, rows1, 1, cap, slot)); /* 2, 5: afresh */
    ck_assert_uint_eq(c.used, 2);
    ck_assert_int_eq(c.var_of[slot[3]], 2); ck_assert_int_eq(c.var_of[slot[4]], 5);
    ck_assert(!clstats__cache_plan(&c, idx, size, rows02, 2, cap, slot)); /* 5 variables */
    ck_assert_uint_eq(c.used, 2);
    ck_assert_uint_eq(c.n_fresh, 0);
    ck_assert_int_eq(c.slot_of[2], 0);
    ck_assert_int_eq(c.slot_of[5], 1);                                  /* the book kept */
    ck_assert(clstats__cache_plan(&c, idx, size, rows1, 1, cap, slot)); /* still there */
    ck_assert_uint_eq(c.n_fresh, 0);
    clstats__cache_free(&c);
}
END_TEST

START_TEST(pass_criterion_matches_plain_ls)
{
    const uint64_t seed = test_seed() + 10;
    for (int c = CLSTATS_VARSEL_HDBIC; c <= CLSTATS_VARSEL_AIC; c++) {
        struct problem pr = make_problem(80, 60, 5, 1.0, seed + (uint64_t)c);
        struct clstats_pass_options o;
        options(&o, 24, 30, seed + (uint64_t)c);
        o.criterion = (enum clstats_varsel_criterion)c;
        o.gamma = 0.5;
        o.p_backward[0] = 0.5, o.p_backward[1] = 0.5; /* many removals: downdates */
        struct outcome got = fit(&pr, 1, &o, 1);
        ck_assert_int_eq(got.status, 0);
        const double want = plain_criterion(&pr, got.support, &o);
        ck_assert_msg(fabs(got.criterion - want) <= 1e-9 * fabs(want), "criterion %d: %.17g vs %.17g",
                      c, got.criterion, want);
        for (unsigned i = 1; i <= o.n_iter; i++) ck_assert(got.history[i] <= got.history[i - 1]);
        free_outcome(&got), free_problem(&pr);
    }
}
END_TEST

START_TEST(pass_finds_true_model)
{
    struct problem pr = make_problem(120, 400, 5, 0.5, test_seed() + 20);
    struct clstats_pass_options o;
    options(&o, 32, 16, 7);
    for (int f64 = 0; f64 <= 1; f64++) {
        struct outcome got = fit(&pr, f64, &o, 1);
        ck_assert_int_eq(got.status, 0);
        ck_assert_uint_eq(got.n_selected, 5);
        for (size_t i = 0; i < 5; i++) {
            ck_assert(got.support[i]);
            ck_assert_msg(fabs(got.coef[i] - (1.0 + (double)i)) < 0.2, "coef %zu %g", i, got.coef[i]);
        }
        free_outcome(&got);
    }
    free_problem(&pr);
}
END_TEST

START_TEST(pass_seed_reproducible)
{
    struct problem pr = make_problem(50, 90, 3, 2.0, test_seed() + 30);
    struct clstats_pass_options o;
    options(&o, 8, 20, 99);
    o.p_forward[0] = 0.3, o.p_forward[1] = 0.3, o.p_forward[2] = 0.4;
    struct outcome a = fit(&pr, 0, &o, 1), b = fit(&pr, 0, &o, 1);
    ck_assert(memcmp(a.support, b.support, pr.p) == 0);
    ck_assert(memcmp(a.history, b.history, (o.n_iter + 1) * 8) == 0);
    free_outcome(&a), free_outcome(&b), free_problem(&pr);
}
END_TEST

/* pr's x and y in buffers of the test context, x at an offset with rows padded (stride p + 3),
 * y as a column at an offset; row t of x with column `bad` at row `bad_t` set to NaN where
 * bad_t < n. */
static struct outcome fit_buffers(const struct problem *pr, int f64,
                                  const struct clstats_pass_options *o, int device, size_t bad_t,
                                  size_t bad)
{
    clstats_ctx *ctx = test_ctx();
    const size_t es = f64 ? 8 : 4, stride = pr->p + 3, off = 5;
    char *xh = calloc(off + pr->n * stride, es), *yh = calloc(off + pr->n, es);
    for (size_t t = 0; t < pr->n; t++) {
        for (size_t i = 0; i < pr->p; i++) {
            const double v = t == bad_t && i == bad ? NAN : pr->x[t * pr->p + i];
            if (f64) ((double *)xh)[off + t * stride + i] = v;
            else ((float *)xh)[off + t * stride + i] = (float)v;
        }
        if (f64) ((double *)yh)[off + t] = pr->y[t];
        else ((float *)yh)[off + t] = (float)pr->y[t];
    }
    cl_int err;
    cl_mem xb = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               (off + pr->n * stride) * es, xh, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_mem yb = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               (off + pr->n) * es, yh, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    const enum clstats_dtype dt = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32;
    struct clstats_array xa = {.buffer = xb, .offset = off, .dtype = dt, .nx = pr->p, .ny = pr->n,
                               .stride = stride};
    struct clstats_array ya = {.buffer = yb, .offset = off, .dtype = dt, .nx = 1, .ny = pr->n};
    struct outcome out = {.coef = calloc(pr->p, 8), .history = calloc(o->n_iter + 1, 8),
                          .support = calloc(pr->p, 1)};
    struct clstats_pass_result res = {.coef = out.coef, .support = out.support,
                                      .history = out.history};
    out.status = device ? clstats_pass_fit(ctx, &xa, &ya, o, &res)
                        : clstats_pass_fit_host(ctx, &xa, &ya, o, &res);
    /* The caller's buffer is never written. */
    char *back = malloc((off + pr->n * stride) * es);
    ck_assert_int_eq(clEnqueueReadBuffer(ctx->queue, xb, CL_TRUE, 0, (off + pr->n * stride) * es,
                                         back, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert(memcmp(back, xh, (off + pr->n * stride) * es) == 0);
    out.intercept = res.intercept, out.criterion = res.criterion, out.n_selected = res.n_selected;
    clReleaseMemObject(xb), clReleaseMemObject(yb);
    free(xh), free(yh), free(back);
    return out;
}

/* X and y already on the device (buffers, at offsets, rows padded): the same selection as from
 * host memory, on the device path (X standardised where it lies; without fp64 read down) and
 * the plain C path; a NaN in the buffer reported with its value. */
START_TEST(pass_device_arrays_match_host)
{
    clstats_ctx *ctx = test_ctx();
    const bool had = ctx->has_fp64;
    for (int f64 = 0; f64 <= 1; f64++)
        for (int fp64 = had; fp64 >= 0; fp64--) {
            if (f64 && !fp64) continue;
            struct problem pr = make_problem(61, 300, 4, 0.5, test_seed() + 60 + (uint64_t)f64);
            struct clstats_pass_options o;
            options(&o, 19, 10, test_seed() + 61);
            ctx->has_fp64 = fp64;
            struct outcome dev = fit_buffers(&pr, f64, &o, 1, pr.n, 0);
            ctx->has_fp64 = had;
            struct outcome host = fit(&pr, f64, &o, 0), hb = fit_buffers(&pr, f64, &o, 0, pr.n, 0);
            ck_assert_msg(dev.status == 0, "%s", clstats_ctx_message(ctx));
            ck_assert_int_eq(host.status, 0);
            ck_assert_int_eq(hb.status, 0);
            ck_assert(memcmp(dev.support, host.support, pr.p) == 0);
            ck_assert(memcmp(hb.support, host.support, pr.p) == 0);
            ck_assert(dev.criterion == host.criterion && hb.criterion == host.criterion);
            ck_assert(memcmp(dev.history, host.history, (o.n_iter + 1) * 8) == 0);
            for (size_t i = 0; i < pr.p; i++) ck_assert(dev.coef[i] == host.coef[i]);
            ck_assert(dev.intercept == host.intercept);
            free_outcome(&dev), free_outcome(&host), free_outcome(&hb);
            ctx->has_fp64 = fp64;
            struct outcome bad = fit_buffers(&pr, f64, &o, 1, 7, 123);
            ctx->has_fp64 = had;
            ck_assert_int_eq(bad.status, CLSTATS_ERR_NAN);
            ck_assert_msg(strstr(clstats_ctx_message(ctx), "x[7, 123] is nan") != NULL, "%s",
                          clstats_ctx_message(ctx));
            free_outcome(&bad), free_problem(&pr);
        }
}
END_TEST

static int status_of(struct problem *pr, const struct clstats_pass_options *o)
{
    struct outcome got = fit(pr, 1, o, 1);
    const int s = got.status;
    free_outcome(&got);
    return s;
}

START_TEST(pass_bad_input)
{
    struct clstats_pass_options o;
    options(&o, 4, 4, 1);
    struct problem pr = make_problem(20, 6, 2, 1.0, 1);
    pr.p = 0;
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_ARG); /* p = 0 */
    pr.p = 6, pr.n = 2;
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_ARG); /* n < 3 */
    pr.n = 20;
    ck_assert_int_eq(status_of(&pr, &o), 0);
    for (size_t t = 0; t < 20; t++) pr.x[t * 6 + 4] = 3.5; /* constant column 4 */
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_SINGULAR);
    ck_assert(strstr(clstats_ctx_message(test_ctx()), "column 4") != NULL);
    pr.x[3 * 6 + 4] = NAN;
    pr.x[5 * 6 + 1] = INFINITY;
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_NAN);
    ck_assert_msg(strstr(clstats_ctx_message(test_ctx()), "x[3, 4] is nan") != NULL, "%s",
                  clstats_ctx_message(test_ctx())); /* the first in row order */
    free_problem(&pr);
    pr = make_problem(20, 6, 2, 1.0, 2);
    pr.y[7] = NAN;
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_NAN);
    for (size_t t = 0; t < 20; t++) pr.y[t] = 1;
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_SINGULAR); /* constant y */
    free_problem(&pr);
    pr = make_problem(20, 6, 2, 1.0, 3);
    o.p_forward[0] = 0.5; /* sums to 1.5 */
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_ARG);
    options(&o, 0, 4, 1);
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_ARG);
    options(&o, 4, 4, 1);
    o.max_size = 19; /* more than n - 2 */
    ck_assert_int_eq(status_of(&pr, &o), CLSTATS_ERR_ARG);
    free_problem(&pr);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass");
    TCase *tc = tcase_create("pass");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, pass_device_matches_host);
    tcase_add_test(tc, pass_without_fp64_matches_host);
    tcase_add_test(tc, pass_more_shapes_match_host);
    tcase_add_test(tc, pass_engines_agree);
    tcase_add_test(tc, pass_engines_agree_with_many_groups_at_once);
    tcase_add_test(tc, pass_gram_rows_on_tensor_cores);
    tcase_add_test(tc, pass_cache_book);
    tcase_add_test(tc, pass_criterion_matches_plain_ls);
    tcase_add_test(tc, pass_finds_true_model);
    tcase_add_test(tc, pass_seed_reproducible);
    tcase_add_test(tc, pass_bad_input);
    tcase_add_test(tc, pass_device_arrays_match_host);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
