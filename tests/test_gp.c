/* test_gp.c - Gaussian-process deviances on the device (src/gp/) against the plain loops of
 * tests/reference_gp.c: every correlation, both trailing updates of the factorisation (tiles
 * and rows, a population of four and one across 64-row blocks), the gradient also against
 * finite differences (at n = 300 across blocks and lauum's tiles too), GPfit's nugget on
 * duplicates and near-singular R, prediction at the design, a fit no worse than its starts,
 * and the errors of bad input. */
#include "reference_gp.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *uniform(struct test_rng *rng, size_t count)
{
    double *v = malloc(count * sizeof *v);
    for (size_t i = 0; i < count; i++) v[i] = test_rng_uniform(rng);
    return v;
}

static double *response(const double *x, size_t n, size_t d)
{
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t k = 0; k < d; k++) s += sin(3 * x[i * d + k] + k) * (k + 1);
        y[i] = s + 10;
    }
    return y;
}

/* The deviance's scale: where its two terms cancel, relative error means little. */
static void assert_close(double got, double want, double scale, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol * fmax(scale, 1)))
        ck_abort_msg("%s: got %.17g, want %.17g (tol %g x %g)", what, got, want, tol, scale);
}

static void check_deviances(enum clstats_gp_corr corr, size_t n, size_t d, double nugget,
                            uint64_t seed, const char *update, const char *step)
{
    clstats_ctx *ctx = test_ctx();
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    double *x = uniform(&rng, n * d), *y = response(x, n, d);
    enum { COUNT = 4 };
    double beta[COUNT * 10], dev[COUNT], mu[COUNT], s2[COUNT], nug[COUNT];
    for (size_t i = 0; i < COUNT * d; i++) beta[i] = -3 + 5 * test_rng_uniform(&rng);
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    m.corr = corr;
    m.nugget = nugget;
    test_tune("linalg.potrf_update", update);
    test_tune("linalg.potrf_step", step);
    const struct clstats_gp_eval out = {.deviance = dev, .mu = mu, .sigma2 = s2, .nugget = nug};
    const int status = clstats_gp_deviance(ctx, &m, x, y, n, d, beta, COUNT, &out);
    test_tune("linalg.potrf_update", NULL);
    test_tune("linalg.potrf_step", NULL);
    ck_assert_msg(status == CLSTATS_OK, "%s", clstats_ctx_message(ctx));
    /* The last vector alone: its correlations computed directly, not from the population's
     * distance table; the same sums, so the same deviance to R's rounding (times cond(S)). */
    double alone;
    const struct clstats_gp_eval one = {.deviance = &alone};
    const double *last = beta + (COUNT - 1) * d;
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, n, d, last, 1, &one), CLSTATS_OK);
    const double tol =
        fmax(1e-12, 1e-15 * reference_gp_condition(&m, x, n, d, last, nug[COUNT - 1]));
    ck_assert_msg(fabs(alone - dev[COUNT - 1]) <= tol * fmax(1, fabs(alone)),
                  "alone %.17g, in the population %.17g", alone, dev[COUNT - 1]);
    for (int c = 0; c < COUNT; c++) {
        const double want_nug = reference_gp_nugget(&m, x, n, d, beta + c * d);
        assert_close(nug[c], want_nug, want_nug, 1e-6, "nugget");
        double wmu, ws2;
        /* The reference at our nugget, so that the deviances compare to rounding. */
        const double want = reference_gp_deviance(&m, x, y, n, d, beta + c * d, nug[c], &wmu,
                                                  &ws2, NULL);
        const double scale = fabs(want - n * log(ws2 * n)) + n * fabs(log(ws2 * n));
        /* Two correct solvers differ by about eps cond(S) (R's rounding alone moves mu that
         * much), which reaches 1e-7 at GPfit's bound e^20: the bound, not our error; 1e-10
         * for the deviance and 1e-9 for mu and sigma2 where S is well conditioned. */
        const double cond = reference_gp_condition(&m, x, n, d, beta + c * d, nug[c]);
        const double tdev = fmax(1e-10, 1e-15 * cond), tmu = fmax(1e-9, 1e-15 * cond);
        char what[3][96];
        for (int w = 0; w < 3; w++)
            snprintf(what[w], sizeof what[w], "%s (corr %d, n %zu, d %zu, nugget %g, cond %.3g)",
                     (const char *[]){"deviance", "mu", "sigma2"}[w], (int)corr, n, d, nug[c],
                     cond);
        assert_close(dev[c], want, scale, tdev, what[0]);
        assert_close(mu[c], wmu, fabs(wmu), tmu, what[1]);
        assert_close(s2[c], ws2, ws2, tmu, what[2]);
    }
    free(x);
    free(y);
}

START_TEST(deviances_match_the_reference)
{
    /* 150: the blocked path across its 64-row blocks. */
    static const size_t shapes[][2] = {{2, 1},  {3, 2},   {7, 3},  {17, 1},
                                       {33, 5}, {40, 10}, {150, 4}};
    /* The factorisation's trailing update by GPUs' tiles and by CPU devices' rows, its block
     * and panel by one launch (the panel through the block's inverse), by GPUs' look-ahead
     * (the block factored in the update before it) and by CPU devices' substitution; the
     * single deviance beside each population takes the device's own designs, so the designs
     * are also compared with each other. */
    const char *paths[][2] = {
        {"tiles", "inverse"}, {"rows", "solve"}, {"rows", "inverse"}, {"tiles", "ahead"}};
    for (int corr = 0; corr < 3; corr++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (int p = 0; p < 4; p++) {
                check_deviances((enum clstats_gp_corr)corr, shapes[s][0], shapes[s][1], NAN,
                                test_seed() + 31 * s + corr, paths[p][0], paths[p][1]);
                check_deviances((enum clstats_gp_corr)corr, shapes[s][0], shapes[s][1], 1e-6,
                                test_seed() + 31 * s + corr + 7, paths[p][0], paths[p][1]);
            }
}
END_TEST

/* The look-ahead design gives the inverse design's bits (the same operations), also where
 * the rows 1' and y' below the matrix share the last update's first tile (n = 150) or have a
 * tile of their own (n = 128). */
START_TEST(ahead_gives_the_inverse_designs_deviances)
{
    static const size_t sizes[] = {40, 128, 150};
    enum { COUNT = 3, D = 3 };
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 11);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const size_t n = sizes[s];
        double *x = uniform(&rng, n * D), *y = response(x, n, D), beta[COUNT * D];
        double dev[2][COUNT], mu[2][COUNT];
        for (size_t i = 0; i < COUNT * D; i++) beta[i] = -2 + 3 * test_rng_uniform(&rng);
        struct clstats_gp_model m;
        clstats_gp_model_init(&m);
        m.nugget = 1e-6;
        const char *steps[] = {"inverse", "ahead"};
        for (int t = 0; t < 2; t++) {
            const struct clstats_gp_eval out = {.deviance = dev[t], .mu = mu[t]};
            test_tune("linalg.potrf_update", "tiles");
            test_tune("linalg.potrf_step", steps[t]);
            const int status = clstats_gp_deviance(test_ctx(), &m, x, y, n, D, beta, COUNT, &out);
            test_tune("linalg.potrf_update", NULL);
            test_tune("linalg.potrf_step", NULL);
            ck_assert_msg(status == CLSTATS_OK, "%s", clstats_ctx_message(test_ctx()));
        }
        for (int c = 0; c < COUNT; c++)
            ck_assert_msg(dev[0][c] == dev[1][c] && mu[0][c] == mu[1][c],
                          "n %zu: deviance %.17g vs %.17g, mu %.17g vs %.17g", n, dev[0][c],
                          dev[1][c], mu[0][c], mu[1][c]);
        free(x);
        free(y);
    }
}
END_TEST

static void check_gradient(clstats_ctx *ctx, struct test_rng *rng, size_t n, int corr,
                           double nugget)
{
    const size_t d = 3;
    double *x = uniform(rng, n * d), *y = response(x, n, d);
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    m.corr = (enum clstats_gp_corr)corr;
    m.nugget = nugget;
    const double beta[3] = {-0.5, 0.3, 1.1};
    double dev, grad[3], want_grad[3], mu, s2;
    const struct clstats_gp_eval out = {.deviance = &dev, .gradient = grad};
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, n, d, beta, 1, &out), CLSTATS_OK);
    reference_gp_deviance(&m, x, y, n, d, beta, m.nugget, &mu, &s2, want_grad);
    for (size_t k = 0; k < d; k++) {
        assert_close(grad[k], want_grad[k], fabs(want_grad[k]), 1e-9, "gradient");
        double bp[3] = {beta[0], beta[1], beta[2]}, bm[3] = {beta[0], beta[1], beta[2]};
        const double h = 1e-5;
        bp[k] += h;
        bm[k] -= h;
        double fp, fm;
        const struct clstats_gp_eval op = {.deviance = &fp}, om = {.deviance = &fm};
        ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, n, d, bp, 1, &op), CLSTATS_OK);
        ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, n, d, bm, 1, &om), CLSTATS_OK);
        assert_close(grad[k], (fp - fm) / (2 * h), fabs(grad[k]), 1e-5, "finite difference");
    }
    free(x);
    free(y);
}

START_TEST(gradient_matches_reference_and_finite_differences)
{
    clstats_ctx *ctx = test_ctx();
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 5);
    for (int corr = 0; corr < 3; corr++) check_gradient(ctx, &rng, 30, corr, 1e-8);
    /* The factor's inverse across 64-row blocks and lauum's 128-row tiles; a larger nugget
     * keeps S about as well conditioned as the small cases'. */
    check_gradient(ctx, &rng, 300, 0, 1e-3);
    /* The factor with its n extra rows by either design of block and panel. */
    const char *steps[] = {"inverse", "solve", "ahead"};
    for (int s = 0; s < 3; s++) {
        test_tune("linalg.potrf_step", steps[s]);
        check_gradient(ctx, &rng, 300, 0, 1e-3);
    }
    test_tune("linalg.potrf_step", NULL);
}
END_TEST

START_TEST(duplicates_take_the_nugget_or_fail_without_it)
{
    clstats_ctx *ctx = test_ctx();
    double x[] = {0.1, 0.1, 0.5, 0.9, 0.1}, y[] = {1, 1.5, 2, 0, 1.2};
    const double beta = 0.5;
    double dev, nug;
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    const struct clstats_gp_eval out = {.deviance = &dev, .nugget = &nug};
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 5, 1, &beta, 1, &out), CLSTATS_OK);
    ck_assert(nug > 0 && isfinite(dev));
    double mu, s2;
    assert_close(dev, reference_gp_deviance(&m, x, y, 5, 1, &beta, nug, &mu, &s2, NULL), 10,
                 1e-7, "duplicates' deviance"); /* cond(S) = e^20: see above */
    m.nugget = 0;
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 5, 1, &beta, 1, &out),
                     CLSTATS_ERR_SINGULAR);
    /* With its gradient, through the factor that prediction shares. */
    double grad;
    const struct clstats_gp_eval with_grad = {.deviance = &dev, .gradient = &grad};
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 5, 1, &beta, 1, &with_grad),
                     CLSTATS_ERR_SINGULAR);
}
END_TEST

START_TEST(prediction_interpolates_and_matches_at_new_points)
{
    clstats_ctx *ctx = test_ctx();
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 9);
    const size_t n = 12, d = 2;
    double *x = uniform(&rng, n * d), *y = response(x, n, d), mean[12], mse[12];
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    const double beta[2] = {0.2, 0.4};
    ck_assert_int_eq(clstats_gp_predict(ctx, &m, x, y, n, d, beta, 0, x, n, mean, mse),
                     CLSTATS_OK);
    for (size_t i = 0; i < n; i++) {
        assert_close(mean[i], y[i], fabs(y[i]), 1e-7, "mean at a design point");
        ck_assert(mse[i] < 1e-6);
    }
    /* Away from the design the variance is positive and the mean differs from mu. */
    double far[2] = {0.5, 2.0}, fm, fv;
    ck_assert_int_eq(clstats_gp_predict(ctx, &m, x, y, n, d, beta, 0, far, 1, &fm, &fv),
                     CLSTATS_OK);
    ck_assert(fv > 0 && isfinite(fm));
    free(x);
    free(y);
}
END_TEST

/* A fit's data (a uniform design of n x d, the smooth response), the default model and the
 * default options with start seed 3. */
static void fit_case(uint64_t seed_offset, size_t n, size_t d, double **x, double **y,
                     struct clstats_gp_model *m, struct clstats_gp_fit_options *o)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + seed_offset);
    *x = uniform(&rng, n * d);
    *y = response(*x, n, d);
    clstats_gp_model_init(m);
    clstats_gp_fit_options_init(o);
    o->seed = 3;
}

START_TEST(fit_is_no_worse_than_its_design)
{
    clstats_ctx *ctx = test_ctx();
    const size_t n = 20, d = 2;
    double *x, *y, beta[2];
    struct clstats_gp_model m;
    struct clstats_gp_fit_options o;
    fit_case(11, n, d, &x, &y, &m, &o);
    struct clstats_gp_fit_result r = {.beta = beta};
    ck_assert_msg(clstats_gp_fit(ctx, &m, x, y, n, d, &o, &r) == CLSTATS_OK, "%s",
                  clstats_ctx_message(ctx));
    /* No point of a grid over the start range is better than the optimum. */
    for (double a = -2; a <= 2.5; a += 0.25)
        for (double b = -2; b <= 2.5; b += 0.25) {
            const double g[2] = {a, b};
            double dev;
            const struct clstats_gp_eval out = {.deviance = &dev};
            ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, n, d, g, 1, &out), CLSTATS_OK);
            ck_assert_msg(r.deviance <= dev + 1e-6, "grid (%g, %g) %.10g < fit %.10g", a, b, dev,
                          r.deviance);
        }
    free(x);
    free(y);
}
END_TEST

/* The seed's optimiser: 100 x 20 deviances, the same bits again for a seed, others for another
 * seed, and within a small distance of the L-BFGS optimum on a smooth 2-d case. */
START_TEST(genetic_algorithm_is_deterministic_and_near_the_lbfgs_optimum)
{
    clstats_ctx *ctx = test_ctx();
    const size_t n = 20, d = 2;
    double *x, *y, b1[2], b2[2], b3[2], bl[2];
    struct clstats_gp_model m;
    struct clstats_gp_fit_options o;
    fit_case(13, n, d, &x, &y, &m, &o);
    struct clstats_gp_fit_result lbfgs = {.beta = bl};
    ck_assert_msg(clstats_gp_fit(ctx, &m, x, y, n, d, &o, &lbfgs) == CLSTATS_OK, "%s",
                  clstats_ctx_message(ctx));
    o.method = CLSTATS_GP_GENETIC;
    o.seed = 7;
    struct clstats_gp_fit_result r1 = {.beta = b1}, r2 = {.beta = b2}, r3 = {.beta = b3};
    ck_assert_msg(clstats_gp_fit(ctx, &m, x, y, n, d, &o, &r1) == CLSTATS_OK, "%s",
                  clstats_ctx_message(ctx));
    ck_assert_int_eq(clstats_gp_fit(ctx, &m, x, y, n, d, &o, &r2), CLSTATS_OK);
    o.seed = 8;
    ck_assert_int_eq(clstats_gp_fit(ctx, &m, x, y, n, d, &o, &r3), CLSTATS_OK);
    ck_assert_uint_eq(r1.evaluations, 100 * 20 + 1); /* and the fit's last evaluation */
    ck_assert(b1[0] == b2[0] && b1[1] == b2[1] && r1.deviance == r2.deviance);
    ck_assert(b1[0] != b3[0] || b1[1] != b3[1]);
    ck_assert_msg(r1.deviance >= lbfgs.deviance - 1e-6 * fabs(lbfgs.deviance) &&
                      r1.deviance <= lbfgs.deviance + 0.05,
                  "genetic %.10g (beta %g %g), L-BFGS %.10g (beta %g %g)", r1.deviance, b1[0],
                  b1[1], lbfgs.deviance, bl[0], bl[1]);
    ck_assert(fabs(b1[0] - bl[0]) < 0.1 && fabs(b1[1] - bl[1]) < 0.1);
    o.population = 1;
    ck_assert_int_eq(clstats_gp_fit(ctx, &m, x, y, n, d, &o, &r3), CLSTATS_ERR_ARG);
    free(x);
    free(y);
}
END_TEST

START_TEST(bad_input_gives_clear_errors)
{
    clstats_ctx *ctx = test_ctx();
    double x[4] = {0, 0.3, 0.6, 1}, y[4] = {1, 2, 0, 3}, beta = 0, dev;
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    const struct clstats_gp_eval out = {.deviance = &dev};
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 1, 1, &beta, 1, &out), CLSTATS_ERR_ARG);
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 4, 0, &beta, 1, &out), CLSTATS_ERR_ARG);
    x[2] = NAN;
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 4, 1, &beta, 1, &out), CLSTATS_ERR_ARG);
    x[2] = 0.6;
    beta = INFINITY;
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 4, 1, &beta, 1, &out), CLSTATS_ERR_ARG);
    beta = 0;
    const double flat[4] = {2, 2, 2, 2};
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, flat, 4, 1, &beta, 1, &out),
                     CLSTATS_ERR_ARG);
    m.power = 2.5;
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 4, 1, &beta, 1, &out), CLSTATS_ERR_ARG);
    m.power = 1.95;
    m.nugget = -1;
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 4, 1, &beta, 1, &out), CLSTATS_ERR_ARG);
    m.nugget = NAN;
    ck_assert_int_eq(clstats_gp_deviance(ctx, &m, x, y, 4, 1, &beta, 1, &out), CLSTATS_OK);
}
END_TEST

/* GPfit's rule where it adds a nugget (smooth correlations: R nearly singular) and where it
 * does not, past 256 rows (a GPU's work-group a matrix loops over its rows), its reduction on
 * the device and on the host: the eigenvalues against the reference's Jacobi rotations. */
START_TEST(rule_nugget_matches_the_reference_near_singular)
{
    clstats_ctx *ctx = test_ctx();
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 17);
    const size_t n = 300, d = 2;
    double *x = uniform(&rng, n * d), *y = response(x, n, d);
    const double beta[] = {-2.5, -2.0, -1.0, -0.5, 1.5, 1.8};
    double want[3], dev[3], nug[3];
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    for (int c = 0; c < 3; c++) want[c] = reference_gp_nugget(&m, x, n, d, beta + c * d);
    ck_assert_msg(want[0] > 0 && want[1] > 0 && want[2] == 0, "nuggets %g %g %g", want[0],
                  want[1], want[2]);
    const struct clstats_gp_eval out = {.deviance = dev, .nugget = nug};
    const char *places[] = {"device", "host"};
    for (int p = 0; p < 2; p++) {
        test_tune("linalg.eigen", places[p]);
        const int status = clstats_gp_deviance(ctx, &m, x, y, n, d, beta, 3, &out);
        test_tune("linalg.eigen", NULL);
        ck_assert_msg(status == CLSTATS_OK, "%s", clstats_ctx_message(ctx));
        for (int c = 0; c < 3; c++) {
            assert_close(nug[c], want[c], want[c], 1e-6, places[p]);
            ck_assert(isfinite(dev[c]));
        }
    }
    free(x);
    free(y);
}
END_TEST

/* GPfit's rule by shift and invert (gp.nugget=shift: Lanczos on R for lambda_max, on (R +
 * sI)^-1 through its factor for lambda_min) against the rule on the reference's Jacobi
 * eigenvalues and on the tridiagonal reduction's (gp.nugget=eigen). Tolerance 4 n eps
 * lambda_max: the device's R differs from the reference's by a few ulps an entry (its power
 * is exp(p log h)), which moves each eigenvalue by up to n times that, and a backward-stable
 * factor or reduction adds about as much; delta moves with lambda_min (times e/(e - 1)), and
 * nothing smaller than lambda_min's rounding can be asked of any method. The cases cover
 * delta > 0 with lambda_min well above that rounding (so delta differs from the shift s by far
 * more than the tolerance: a lambda_min found roughly fails), delta just above 0 and 0 at the
 * threshold's boundary, delta = 0 far from it, lambda_min at rounding (duplicate rows), tiny n
 * (the iteration ends at n steps) and a population against itself reversed (the same bits). */
/* Lines of the library's log saying a matrix left the shift path for the tridiagonal
 * reduction: its safety net, which none of these cases needs (R + s I is positive definite
 * for every one), so that the net cannot hide a wrong iteration (as it once hid Intel's
 * miscompiled subtraction: kernels/linalg/lanczos.cl). */
static void count_fallbacks(void *user, const char *line)
{
    if (strstr(line, "the tridiagonal reduction instead")) ++*(int *)user;
}

static void shift_case(size_t n, size_t d, const double *x, const double *beta, size_t count,
                       double thres, const char *what, double *got)
{
    clstats_ctx *ctx = test_ctx();
    double *y = response(x, n, d), dev[8], eig[8];
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    m.nug_thres = thres;
    const struct clstats_gp_eval out = {.deviance = dev, .nugget = got};
    int fallbacks = 0;
    clstats_ctx_set_log(ctx, count_fallbacks, &fallbacks);
    test_tune("gp.nugget", "shift");
    int status = clstats_gp_deviance(ctx, &m, x, y, n, d, beta, count, &out);
    test_tune("gp.nugget", NULL);
    clstats_ctx_set_log(ctx, NULL, NULL);
    ck_assert_msg(status == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(ctx));
    ck_assert_msg(fallbacks == 0, "%s: %d matrices left the shift path", what, fallbacks);
    const struct clstats_gp_eval by_eigen = {.nugget = eig};
    test_tune("gp.nugget", "eigen");
    status = clstats_gp_deviance(ctx, &m, x, y, n, d, beta, count, &by_eigen);
    test_tune("gp.nugget", NULL);
    ck_assert_msg(status == CLSTATS_OK, "%s: %s", what, clstats_ctx_message(ctx));
    const double e = exp(thres);
    for (size_t c = 0; c < count; c++) {
        double lo, hi;
        reference_gp_extremes(&m, x, n, d, beta + c * d, &lo, &hi);
        const double want = fmax(0, (hi - e * lo) / (e - 1)), tol = 4 * n * 0x1.0p-52 * hi;
        ck_assert_msg(fabs(got[c] - want) <= tol && fabs(got[c] - eig[c]) <= tol &&
                          isfinite(dev[c]),
                      "%s [%zu]: delta %.10g, Jacobi's %.10g, the reduction's %.10g (tol %.3g; "
                      "lambda %.6g .. %.6g), deviance %g",
                      what, c, got[c], want, eig[c], tol, lo, hi, dev[c]);
    }
    free(y);
}

START_TEST(rule_by_shift_and_invert_matches_the_eigenvalues)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 23);
    const size_t n = 300, d = 2;
    double *x = uniform(&rng, n * d), got[8];
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    /* cond R about 1.4e9, 5.5e8 (both past e^20), 8e6, and R singular to rounding. */
    const double beta[] = {-0.5, -0.5, -0.2, -0.2, 1, 1, -3, -3};
    shift_case(n, d, x, beta, 4, 20, "population", got);
    /* The look-ahead factorisation (GPUs' default) skips the identity's zero tiles: forced
     * here, so CPU devices check that path too. */
    double ahead[8];
    test_tune("linalg.potrf_step", "ahead");
    shift_case(n, d, x, beta, 4, 20, "population, look-ahead", ahead);
    test_tune("linalg.potrf_step", NULL);
    double lo, hi;
    reference_gp_extremes(&m, x, n, d, beta, &lo, &hi);
    const double s = hi / (exp(20) - 1);
    ck_assert_msg(got[0] > 0 && fabs(got[0] - s) > 1000 * 4 * n * 0x1.0p-52 * hi,
                  "case 0 should need lambda_min resolved: delta %g, s %g", got[0], s);
    ck_assert_msg(got[1] > 0 && got[2] == 0 && got[3] > 0, "nuggets %g %g %g", got[1], got[2],
                  got[3]);
    /* The population reversed: each matrix's iteration is its own, whatever its neighbours
     * (and whenever they stop), so the same bits. */
    double reversed[8], back[4];
    for (size_t c = 0; c < 4; c++)
        for (size_t k = 0; k < d; k++) reversed[(3 - c) * d + k] = beta[c * d + k];
    shift_case(n, d, x, reversed, 4, 20, "reversed", back);
    for (size_t c = 0; c < 4; c++)
        ck_assert_msg(back[3 - c] == got[c], "[%zu] reversed %.17g, in order %.17g", c,
                      back[3 - c], got[c]);
    /* The threshold's boundary at beta (1, 1): just inside, delta small but above the
     * tolerance; just outside, 0. */
    reference_gp_extremes(&m, x, n, d, beta + 4, &lo, &hi);
    shift_case(n, d, x, beta + 4, 1, log(hi / lo) - 1e-4, "boundary, inside", got);
    ck_assert_msg(got[0] > 4 * n * 0x1.0p-52 * hi, "boundary: delta %g", got[0]);
    shift_case(n, d, x, beta + 4, 1, log(hi / lo) + 1e-4, "boundary, outside", got);
    /* Duplicate rows: lambda_min 0 exactly. */
    for (size_t i = 0; i < 20; i++)
        for (size_t k = 0; k < d; k++) x[(2 * i + 1) * d + k] = x[2 * i * d + k];
    shift_case(n, d, x, beta + 4, 1, 20, "duplicates", got);
    ck_assert(got[0] > 0);
    /* Tiny n: Lanczos's T holds every eigenvalue at n steps. */
    const double tiny_beta[] = {-1, 0.5, 2};
    for (size_t t = 2; t <= 5; t += 3)
        shift_case(t, 1, x, tiny_beta, 3, 20, "tiny", got);
    free(x);
}
END_TEST

START_TEST(prediction_on_a_grid_matches_point_by_point)
{
    clstats_ctx *ctx = test_ctx();
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() + 23);
    enum { N = 40, SIDE = 20, M = SIDE * SIDE };
    const size_t d = 2;
    double *x = uniform(&rng, N * d), *y = response(x, N, d);
    static double grid[M * 2], mean[M], mse[M];
    for (size_t c = 0; c < M; c++) {
        grid[2 * c] = (double)(c % SIDE) / (SIDE - 1);
        grid[2 * c + 1] = (double)(c / SIDE) / (SIDE - 1);
    }
    const double beta[2] = {0.3, 0.6};
    for (int corr = 0; corr < 3; corr++) {
        struct clstats_gp_model m;
        clstats_gp_model_init(&m);
        m.corr = (enum clstats_gp_corr)corr;
        ck_assert_int_eq(clstats_gp_predict(ctx, &m, x, y, N, d, beta, 1e-10, grid, M, mean, mse),
                         CLSTATS_OK);
        for (size_t c = 0; c < M; c += 7) {
            double one_mean, one_mse;
            ck_assert_int_eq(clstats_gp_predict(ctx, &m, x, y, N, d, beta, 1e-10, grid + 2 * c, 1,
                                                &one_mean, &one_mse),
                             CLSTATS_OK);
            assert_close(mean[c], one_mean, fabs(one_mean), 1e-9, "grid mean");
            assert_close(mse[c], one_mse, 1e-3, 1e-9, "grid mse");
        }
    }
    free(x);
    free(y);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gp");
    TCase *tc = tcase_create("gp");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, deviances_match_the_reference);
    tcase_add_test(tc, ahead_gives_the_inverse_designs_deviances);
    tcase_add_test(tc, gradient_matches_reference_and_finite_differences);
    tcase_add_test(tc, duplicates_take_the_nugget_or_fail_without_it);
    tcase_add_test(tc, rule_nugget_matches_the_reference_near_singular);
    tcase_add_test(tc, prediction_interpolates_and_matches_at_new_points);
    tcase_add_test(tc, prediction_on_a_grid_matches_point_by_point);
    tcase_add_test(tc, fit_is_no_worse_than_its_design);
    tcase_add_test(tc, genetic_algorithm_is_deterministic_and_near_the_lbfgs_optimum);
    tcase_add_test(tc, bad_input_gives_clear_errors);
    suite_add_tcase(s, tc);
    /* A case of its own, so that CK_RUN_CASE=shift runs it alone on a GPU. */
    TCase *shift = tcase_create("shift");
    tcase_set_timeout(shift, 600);
    tcase_add_test(shift, rule_by_shift_and_invert_matches_the_eigenvalues);
    suite_add_tcase(s, shift);
    return test_run_suite(s);
}
