/* regress_internal.h - what the files of src/regress/ share: a data set on the device and the
 * concentration steps on it (csteps.c), the random starts (starts.c), and the consistency
 * factors (factors.c). */
#ifndef CLSTATS_REGRESS_INTERNAL_H
#define CLSTATS_REGRESS_INTERNAL_H

#include "internal.h"

/* n rows of q + 1 doubles on the device (the design's q columns, then y) and buffers for up to
 * `cap` candidates. */
struct data_set {
    size_t n, q, cap;
    cl_mem z, part;
    cl_mem coef, resid, weights, gram, a, b, t, flags, places, ranks, stats, sums, info, logdet;
};

int clstats__data_set(clstats_ctx *ctx, const double *z, size_t n, size_t q, size_t cap,
                      struct data_set *d);
void clstats__data_set_free(struct data_set *d);

/* For m candidates coef[c q ..] (host): each one's sum of its h smallest squared residuals
 * (obj) and its h-th smallest (kth), computed on the device; with `refit`, coef becomes the LS
 * fit of each candidate's h-subset (a C-step), or stays where that subset is singular (then
 * *singular[c] is set when singular is not NULL). */
int clstats__evaluate(clstats_ctx *ctx, struct data_set *d, double *coef, size_t m, size_t h,
                      bool refit, double *obj, double *kth, bool *singular);

/* Candidate 0's h-subset as 0/1 per row (host, n entries), as the last evaluate with refit
 * chose it. */
int clstats__subset(clstats_ctx *ctx, struct data_set *d, unsigned char *in);

/* The weighted LS fit with 0/1 weights w (host, n entries) into coef (q); CLSTATS_ERR_SINGULAR
 * where the weighted rows do not determine it. */
int clstats__weighted_fit(clstats_ctx *ctx, struct data_set *d, const double *w, double *coef);

/* Squared residuals of one fit (host, n entries). */
int clstats__residuals2(clstats_ctx *ctx, struct data_set *d, const double *coef, double *r2);


/* The exact fit of q random rows of z (n rows of q + 1), rows added at random while they do not
 * determine it (robustbase's way with singular subsets): false when n rows do not. */
bool clstats__elemental_fit(struct clstats__rng *r, const double *z, size_t n, size_t q,
                            double *coef);

/* LS fit of the rows where w is 1, on the host (normal equations, Cholesky); false if singular. */
bool clstats__host_ls(const double *z, const double *w, size_t n, size_t q, double *coef);

/* Consistency factors (robustbase's ltsReg): qnorm, and the small-sample corrections of the raw
 * and the reweighted scale (LTScnp2, LTScnp2.rew) for p coefficients (intercept counted). */
double clstats__qnorm(double p);
double clstats__dnorm(double x);
double clstats__lts_cnp2(size_t p, bool intercept, size_t n, double alpha, bool reweighted);

#endif
