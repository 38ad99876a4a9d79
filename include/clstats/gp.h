/* clstats/gp.h - Gaussian-process emulators y(x) = mu + z(x) fitted by maximum likelihood as
 * GPfit does it (MacDonald, Ranjan and Chipman 2015; the seed's eq. 3-4), with every likelihood
 * computed on the device in float64: the correlation matrix R from the design, its Cholesky
 * factor (src/linalg), log|R|, the solves for 1 and Y, mu-hat, sigma-hat^2, GPfit's deviance
 * log|R + delta I| + n log((Y - 1 mu)' (R + delta I)^-1 (Y - 1 mu)) and its gradient.
 *
 * Parameters are GPfit's beta = log10(theta), one per input column. Designs x are host float64
 * arrays of n rows of d columns (row-major), y n values; GPfit assumes inputs scaled to [0, 1]
 * (its bounds and start design are chosen for that), the calls here accept any finite inputs.
 * A device without float64 gives CLSTATS_ERR_UNSUPPORTED. */
#ifndef CLSTATS_GP_H
#define CLSTATS_GP_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum clstats_gp_corr {
    /* R_ij = prod_k exp(-10^beta_k |x_ik - x_jk|^power), power in (0, 2] */
    CLSTATS_GP_POWER_EXPONENTIAL = 0,
    /* Matern nu = 3/2 and 5/2 in GPfit's scaling (Santner, Williams and Notz 2003): with
     * t = 2 sqrt(nu) 10^beta_k |x_ik - x_jk|, the factor (1 + t) e^-t, (1 + t + t^2/3) e^-t */
    CLSTATS_GP_MATERN32,
    CLSTATS_GP_MATERN52,
};

struct clstats_gp_model {
    enum clstats_gp_corr corr;
    double power;     /* power exponential's p, in (0, 2]; GPfit's default 1.95 */
    double nugget;    /* delta added to R's diagonal, >= 0; NaN: GPfit's rule below */
    double nug_thres; /* GPfit's rule: the smallest delta >= 0 with cond(R + delta I) <
                         e^nug_thres, cond the 2-norm condition number lambda_max/lambda_min
                         of R (default 20) */
};

/* p 1.95 power exponential, GPfit's nugget rule with threshold 20. */
CLSTATS_API void clstats_gp_model_init(struct clstats_gp_model *model);

/* One deviance evaluation's results (any pointer may be NULL). */
struct clstats_gp_eval {
    double *deviance; /* count values */
    double *gradient; /* count x d: d deviance / d beta_k at fixed nugget (count must be 1) */
    double *nugget;   /* count values: the delta used */
    double *mu;       /* count values: mu-hat = 1'S^-1 Y / 1'S^-1 1, S = R + delta I */
    double *sigma2;   /* count values: (Y - 1 mu)' S^-1 (Y - 1 mu) / n */
};

/* GPfit's deviance at `count` parameter vectors beta (count x d, row-major), all in one pass
 * of the blocked Cholesky (its launches do not grow with count). A gradient asks for count 1. Errors: n < 2, d = 0, a
 * non-finite x, y or beta (CLSTATS_ERR_ARG); R + delta I not positive definite, as duplicate
 * rows make it without a nugget (CLSTATS_ERR_SINGULAR, the row in the message); a constant y
 * has deviance -inf (its quadratic form is 0) and is refused (CLSTATS_ERR_ARG). */
CLSTATS_API int clstats_gp_deviance(clstats_ctx *ctx, const struct clstats_gp_model *model,
                                    const double *x, const double *y, size_t n, size_t d,
                                    const double *beta, size_t count,
                                    const struct clstats_gp_eval *out);

enum clstats_gp_optimiser {
    /* GPfit's GP_fit: multi-start bounded L-BFGS from a clustered start design */
    CLSTATS_GP_LBFGS = 0,
    /* the seed's genetic algorithm: `population` x `generations` deviances (100 x 20), one
     * population's pass on the device a generation (src/gp/genetic.c) */
    CLSTATS_GP_GENETIC,
};

/* Fitting options: the start design and the optimiser (GPfit's GP_fit). */
struct clstats_gp_fit_options {
    size_t n_search;   /* maximin Latin hypercube points evaluated first; 0: 200 d */
    size_t n_best;     /* the best of them clustered; 0: 80 d */
    size_t n_starts;   /* clusters, each giving its best point as a start; 0: 2 d */
    int diagonal;      /* also the diagonal search (GPfit: d >= 2), default 1 */
    size_t max_iter;   /* L-BFGS-B iterations per start; default 100 (GPfit's maxit) */
    double lower, upper; /* bounds of every beta_k; default -10, 10 */
    uint64_t seed;     /* the start design's random draws (and the genetic algorithm's) */
    enum clstats_gp_optimiser method; /* default CLSTATS_GP_LBFGS */
    size_t population; /* the genetic algorithm's; 0: 100 */
    size_t generations; /* the genetic algorithm's, the first included; 0: 20 */
};

CLSTATS_API void clstats_gp_fit_options_init(struct clstats_gp_fit_options *opts);

struct clstats_gp_fit_result {
    double *beta; /* d values (the caller's array) */
    double deviance, nugget, mu, sigma2;
    size_t evaluations; /* deviances computed, gradients included */
};

/* Multi-start box-constrained L-BFGS in beta: the start design evaluated in batches, its best
 * points clustered by clstats_kmeans, each cluster's best point and the diagonal search's
 * optimised; the best optimum is the fit. With method CLSTATS_GP_GENETIC, the genetic
 * algorithm's best member instead (n_search, n_best, n_starts, diagonal and max_iter unused). */
CLSTATS_API int clstats_gp_fit(clstats_ctx *ctx, const struct clstats_gp_model *model,
                               const double *x, const double *y, size_t n, size_t d,
                               const struct clstats_gp_fit_options *opts,
                               struct clstats_gp_fit_result *result);

/* Prediction at m new points xnew (m x d) from the fit at beta with nugget delta (GPfit's
 * predict.GP): mean[i] = mu + r' S^-1 (Y - 1 mu); mse[i] (may be NULL) = sigma2 (1 - r' S^-1 r
 * + (1 - 1' S^-1 r)^2 / 1' S^-1 1), r the correlations of xnew[i] with the design. */
CLSTATS_API int clstats_gp_predict(clstats_ctx *ctx, const struct clstats_gp_model *model,
                                   const double *x, const double *y, size_t n, size_t d,
                                   const double *beta, double nugget, const double *xnew,
                                   size_t m, double *mean, double *mse);

#ifdef __cplusplus
}
#endif
#endif
