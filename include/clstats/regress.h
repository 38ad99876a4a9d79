/* clstats/regress.h - high-breakdown linear regression on the device (src/regress/): Least
 * Trimmed Squares by FAST-LTS (Rousseeuw and Van Driessen 2006) and Least Median of Squares,
 * the application of the cutting-plane paper's section VI.
 *
 * The model is y = intercept + X coef + e, X n rows of p features. LTS minimises the sum of the
 * h smallest squared residuals; LMS their h-th smallest. h = floor((n + q + 1) / 2) by default,
 * q = p + 1 with an intercept (p without): robustbase's h.alpha.n for alpha 0.5, and
 * 2 n2 - n + 2 (n - n2) alpha for another alpha in [0.5, 1], n2 = floor((n + q + 1) / 2).
 *
 * FAST-LTS: n_subsets random q-row subsets (500) give exact fits, each improved by two C-steps
 * (refitting LS to the h rows with the smallest residuals); the best 10 are C-stepped until their
 * objective stops falling. From 600 rows on, as robustbase: up to 5 disjoint groups of up to 300
 * rows drawn from the data (merged, at most 1500) each take n_subsets / groups starts with two
 * C-steps in the group, their best 10 each get two C-steps in the merged set, and that set's best
 * 10 go on to the whole data, or its best one from 5001 rows on (robustbase's nrep = 1 there;
 * where robustbase then stops after k3 = 100 down to one C-step as n p grows, we C-step that
 * one to convergence, at most 100 steps: the objective is never higher than after its k3). The subsets come from xoshiro256** seeded by splitmix64 from
 * `seed`: the same seed gives the same fit on every run and every device. Residuals, selections
 * and refits run on the device in float64 (a device without fp64 gives CLSTATS_ERR_UNSUPPORTED);
 * only coefficients and objectives cross to the host, and once each the final residuals.
 *
 * Scale and reweighting as robustbase's ltsReg: raw scale sqrt(crit / h) with its consistency
 * factor and small-sample correction; weights 1 where |r| <= qnorm(0.9875) raw scale; the
 * weighted LS fit; its scale sqrt(sum w r^2 / (sum w - 1)) with the same kinds of factors; the
 * outliers, the rows whose residual exceeds qnorm(0.9875) times that scale. LMS: raw scale
 * sqrt(crit) / qnorm((h + n) / 2n) (1 + 5 / (n - q)) (Rousseeuw and Leroy), the same
 * reweighting without the small-sample factors. */
#ifndef CLSTATS_REGRESS_H
#define CLSTATS_REGRESS_H

#include "core.h"
#include "select.h"

#ifdef __cplusplus
extern "C" {
#endif

enum clstats_regress_method {
    CLSTATS_REGRESS_LTS = 0,
    CLSTATS_REGRESS_LMS,
};

/* Options; a zeroed struct (or NULL) means the defaults. */
struct clstats_regress_options {
    enum clstats_regress_method method;
    double alpha;        /* in [0.5, 1]; 0 means 0.5 */
    size_t h;            /* rows of the subset; 0: from alpha. From q + 1... n, else ERR_ARG */
    unsigned n_subsets;  /* random starts; 0 means 500 */
    int no_intercept;    /* fit without an intercept (the default fits one) */
    int no_reweight;     /* coef, intercept and scale are the raw fit's */
    uint64_t seed;       /* of the random subsets */
    enum clstats_nan_policy nan_policy; /* OMIT: rows with a NaN in x or y are left out */
};

/* What a fit gives. The caller provides coef (p entries) and may provide raw_coef (p), support
 * and outliers (n each, one byte a row of the input: 1 or 0; rows left out for NaN get 0). */
struct clstats_regress_result {
    double *coef;
    double intercept;    /* 0 without one */
    double *raw_coef;
    double raw_intercept;
    double scale;        /* reweighted (or raw, with no_reweight) */
    double raw_scale;
    double crit;         /* LTS: sum of the h smallest squared residuals of the raw fit; LMS:
                            the h-th smallest */
    size_t h;
    size_t n_used;       /* rows without NaN */
    unsigned char *support;  /* the raw fit's h-subset */
    unsigned char *outliers; /* rows the final fit flags */
};

/* Fits y on x: x a matrix of n rows (ny) and p features (nx, at least 1), y n values (a row of n
 * or a column of n rows); either dtype, in host memory or on the device. Errors: CLSTATS_ERR_ARG
 * for shapes, options or h out of range and for fewer rows than q + 1 (with the numbers in the
 * message); CLSTATS_ERR_NAN for a NaN with nan_policy CLSTATS_NAN_ERROR; CLSTATS_ERR_SINGULAR
 * where x (with the intercept column) is rank-deficient, or a constant feature with the
 * intercept. */
CLSTATS_API int clstats_regress_fit(clstats_ctx *ctx, const struct clstats_array *x,
                                    const struct clstats_array *y,
                                    const struct clstats_regress_options *opts,
                                    struct clstats_regress_result *out);

/* The same with the method fixed: LTS or LMS (opts->method is ignored). */
CLSTATS_API int clstats_lts_fit(clstats_ctx *ctx, const struct clstats_array *x,
                                const struct clstats_array *y,
                                const struct clstats_regress_options *opts,
                                struct clstats_regress_result *out);
CLSTATS_API int clstats_lms_fit(clstats_ctx *ctx, const struct clstats_array *x,
                                const struct clstats_array *y,
                                const struct clstats_regress_options *opts,
                                struct clstats_regress_result *out);

#ifdef __cplusplus
}
#endif
#endif
