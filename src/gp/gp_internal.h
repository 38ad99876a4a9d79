/* gp_internal.h - the Gaussian-process module's shared pieces (src/gp/): a design on the device
 * with its built program (job.c), deviances and the factor's inverse (deviance.c), GPfit's
 * nugget rule (nugget.c, nugget_shift.c), new points' correlations (cross.c), the bounded
 * L-BFGS (lbfgs.c). */
#ifndef CLSTATS_GP_INTERNAL_H
#define CLSTATS_GP_INTERNAL_H

#include "../linalg/linalg_internal.h"

/* A design checked and on the device, with the program for its correlation and width. */
struct gp_job {
    clstats_ctx *ctx;
    struct clstats_gp_model model;
    const double *x, *y;
    size_t n, d;
    cl_mem xbuf, ybuf;
    cl_mem table; /* the power exponential's distance table (deviance.c), once built */
    bool no_table; /* too large for the device: correlations computed directly */
    bool built;    /* a matrix was built without the table (distance_table's rule) */
    cl_program prog;
    size_t evaluations;
};

int clstats__gp_open(clstats_ctx *ctx, const struct clstats_gp_model *model, const double *x,
                     const double *y, size_t n, size_t d, struct gp_job *job);
void clstats__gp_close(struct gp_job *job);

/* Deviances at count parameter vectors (as clstats_gp_deviance). With `lenient`, a matrix that
 * is not positive definite gives a NaN deviance instead of CLSTATS_ERR_SINGULAR (the
 * optimiser's populations). */
int clstats__gp_eval(struct gp_job *job, const double *beta, size_t count,
                     const struct clstats_gp_eval *out, bool lenient);

/* One matrix factored blocked, the factor kept (*l, the scratch "gp.r") for the gradient and
 * prediction: u = L^-1 1 (n + 1 values: u[n] gets log|S|) and w = L^-1 (y - 1 mu) (n) on the
 * host, mu, Q = |w|^2 and the nugget used (NaN asks for GPfit's rule). With `inverse`, L^-T
 * (n x n, upper triangular) follows in *l from row n + 2, carried along by the factorisation
 * as the identity's rows. */
int clstats__gp_factor(struct gp_job *job, const double *beta, double nugget, bool inverse,
                       double *u, double *w, double *mu, double *q, double *delta, cl_mem *l);

/* L^-1 (the scratch "gp.inv", n x n, zeros above the diagonal) from the factor l of
 * clstats__gp_factor, by a TRSM on the identity: the gradient's S^-1 and prediction's
 * products. */
int clstats__gp_factor_inverse(struct gp_job *job, cl_mem l, cl_mem *inv);

/* r (n x m, one column a new point) = the correlations of the m new points xnew (m x d) with
 * the design at thetas (d, on the device), through per-column factors where the points share
 * few values a column (cross.c). */
int clstats__gp_cross(struct gp_job *job, cl_mem thetas, const double *xnew, size_t m, cl_mem r);

/* GPfit's nugget for each of the count symmetric n x n matrices in r (device, matrix m at
 * m step, full, unchanged): the smallest delta[m] >= 0 with (lambda_max + delta) /
 * (lambda_min + delta) <= e^thres, by the path gp.nugget picks (nugget.c). */
int clstats__gp_nugget(clstats_ctx *ctx, cl_mem r, size_t step, size_t n, size_t count,
                       double thres, double *delta);
/* The same from both extreme eigenvalues of the tridiagonal reduction (nugget.c). */
int clstats__gp_nugget_eigen(clstats_ctx *ctx, cl_mem r, size_t step, size_t n, size_t count,
                             double thres, double *delta);
/* The same by shift and invert (nugget_shift.c): lambda_max by Lanczos on R, lambda_min by
 * Lanczos on (R + s I)^-1 through its Cholesky factor. */
int clstats__gp_nugget_shift(clstats_ctx *ctx, cl_mem r, size_t step, size_t n, size_t count,
                             double thres, double *delta);
/* The rule's delta from the two eigenvalues. */
double clstats__gp_rule(double lmin, double lmax, double thres);

/* rows x d points of a Latin hypercube in [lo, hi]^d: each column a random permutation of the
 * rows' strata, a uniform draw inside each; the widest (largest smallest distance) of a few
 * draws kept (fit.c). */
int clstats__gp_maximin_lhd(struct clstats__rng *rng, size_t rows, size_t d, double lo,
                            double hi, double *out);

/* The seed's genetic algorithm (genetic.c): pop x gens deviances, the first generation a
 * maximin Latin hypercube over [lo, hi]^d (GPfit's start range), every child in the options'
 * bounds; the best beta (d) and its deviance. */
int clstats__gp_genetic(struct gp_job *job, const struct clstats_gp_fit_options *o, size_t pop,
                        size_t gens, double lo, double hi, double *beta, double *dev);

/* 10^beta, the kernels' theta, computed once on the host for all kernels alike. */
void clstats__gp_theta(const double *beta, size_t d, double *theta);

/* Minimises f over the box [lower, upper]^d from x (in place) by projected L-BFGS; f returns
 * the value and the gradient, NaN where it cannot be evaluated. */
typedef int (*gp_objective)(void *user, const double *x, double *f, double *g);
int clstats__gp_lbfgs(gp_objective f, void *user, double *x, size_t d, double lower,
                      double upper, size_t max_iter, double *fx);

#endif
