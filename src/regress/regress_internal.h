/* regress_internal.h - what the files of src/regress/ share: a data set on the device and the
 * concentration steps on it (csteps.c), the random starts (starts.c), and the consistency
 * factors (factors.c). */
#ifndef CLSTATS_REGRESS_INTERNAL_H
#define CLSTATS_REGRESS_INTERNAL_H

#include "internal.h"

/* n rows of q + 1 doubles on the device (the design's q columns, then y) and buffers for up to
 * `cap` candidates; the ranks buffer holds h - 1 for the first ranks_m of them. */
struct data_set {
    size_t n, q, cap;
    cl_mem z, part;
    cl_mem coef, resid, weights, gram, a, b, t, flags, places, ranks, stats, sums, info, logdet,
        objs;
    uint64_t *rank_values;
    size_t ranks_h, ranks_m;
};

int clstats__data_set(clstats_ctx *ctx, const double *z, size_t n, size_t q, size_t cap,
                      struct data_set *d);
void clstats__data_set_free(struct data_set *d);

/* The same data set built on the device from the caller's host arrays x and y (a row [1] x y
 * each), without the host's copy; *nan_rows counts the rows holding a NaN, which the caller
 * must then leave out by building Z on the host instead. */
int clstats__data_set_design(clstats_ctx *ctx, const struct clstats_array *x,
                             const struct clstats_array *y, bool intercept, size_t cap,
                             struct data_set *d, size_t *nan_rows);

/* For m candidates coef[c q ..] (host): each one's sum of its h smallest squared residuals
 * (obj) and its h-th smallest (kth), computed on the device; with `refit`, coef becomes the LS
 * fit of each candidate's h-subset (a C-step), or stays where that subset is singular (then
 * *singular[c] is set when singular is not NULL). */
int clstats__evaluate(clstats_ctx *ctx, struct data_set *d, double *coef, size_t m, size_t h,
                      bool refit, double *obj, double *kth, bool *singular);

/* Candidate 0's h-subset as 0/1 per row (host, n entries), as the last evaluate with refit
 * chose it. */
int clstats__subset(clstats_ctx *ctx, struct data_set *d, unsigned char *in);

/* Candidate 0's weights (d->weights) made 1 for every row. */
int clstats__all_rows(clstats_ctx *ctx, struct data_set *d);

/* The LS fit of the rows candidate 0's weights take, into coef (q): their column products
 * summed on the device (with `sum`; without, those the last evaluate with refit left), solved
 * on the host by clstats__solve_packed; CLSTATS_ERR_SINGULAR where they do not determine it. */
int clstats__fit_of_weights(clstats_ctx *ctx, struct data_set *d, bool sum, double *coef);

/* The squared residuals of one fit into candidate 0's residuals (d->resid), on the device. */
int clstats__fit_residuals(clstats_ctx *ctx, struct data_set *d, const double *coef);

/* From candidate 0's squared residuals: its weights 1 where sqrt(r2) / s <= cutoff, else 0,
 * and (flags not NULL) the rows outside as bytes (host, n entries). */
int clstats__cutoff(clstats_ctx *ctx, struct data_set *d, double s, double cutoff,
                    unsigned char *flags);

/* The sums of candidate 0's weights and of its weighted squared residuals, on the device in a
 * fixed order. */
int clstats__residual_sums(clstats_ctx *ctx, struct data_set *d, double *sum_w, double *sum_wr2);


/* The exact fit of q random rows of z (n rows of q + 1), rows added at random while they do not
 * determine it (robustbase's way with singular subsets): false when n rows do not. */
bool clstats__elemental_fit(struct clstats__rng *r, const double *z, size_t n, size_t q,
                            double *coef);

/* LS fit of the rows where w is 1, on the host (normal equations, Cholesky); false if singular. */
bool clstats__host_ls(const double *z, const double *w, size_t n, size_t q, double *coef);

/* The same from the sums of the column products of z (q + 1 columns, pairs packed as
 * kernels/regress/csteps.cl packs them): false if they do not determine the fit. */
bool clstats__solve_packed(const double *g, size_t q, double *coef);

/* Consistency factors (robustbase's ltsReg): qnorm, and the small-sample corrections of the raw
 * and the reweighted scale (LTScnp2, LTScnp2.rew) for p coefficients (intercept counted). */
double clstats__qnorm(double p);
double clstats__dnorm(double x);
double clstats__lts_cnp2(size_t p, bool intercept, size_t n, double alpha, bool reweighted);

#endif
