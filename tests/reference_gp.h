/* reference_gp.h - the Gaussian process's deviance, gradient and nugget in plain C loops, the
 * judge of src/gp/: a different route (Cholesky by rows, S^-1 formed explicitly, Jacobi's
 * eigenvalues) to the same numbers. */
#ifndef REFERENCE_GP_H
#define REFERENCE_GP_H

#include "clstats.h"

/* GPfit's nugget for R at beta (NaN nugget in the model) or the model's. */
double reference_gp_nugget(const struct clstats_gp_model *m, const double *x, size_t n,
                           size_t d, const double *beta);
/* The 2-norm condition number of R + delta I at beta (Jacobi's eigenvalues). */
double reference_gp_condition(const struct clstats_gp_model *m, const double *x, size_t n,
                              size_t d, const double *beta, double delta);
/* R's smallest and largest eigenvalues at beta (Jacobi's). */
void reference_gp_extremes(const struct clstats_gp_model *m, const double *x, size_t n, size_t d,
                           const double *beta, double *lo, double *hi);
/* Deviance (return), mu, sigma2 and, when grad is not NULL, d dev / d beta at fixed nugget
 * delta; NaN where S is not positive definite. */
double reference_gp_deviance(const struct clstats_gp_model *m, const double *x, const double *y,
                             size_t n, size_t d, const double *beta, double delta, double *mu,
                             double *sigma2, double *grad);

#endif
