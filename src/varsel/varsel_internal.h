/* varsel_internal.h - PaSS's parts (src/varsel/): one particle's least-squares fit kept by
 * updates (fit.c), the swarm's driver (pass.c), and the two engines that find every particle's
 * largest |X_i^T R| outside its model: the device's (engine_device.c) and plain C's
 * (engine_host.c). */
#ifndef CLSTATS_VARSEL_INTERNAL_H
#define CLSTATS_VARSEL_INTERNAL_H

#include "clstats/varsel.h"
#include "internal.h"

/* The standardised problem: xs column-major (column i at xs + i n) holding exactly the values
 * the device holds (rounded to the dtype), ys centred, yty = ys^T ys. */
struct pass_data {
    size_t n, p;
    bool f64;
    const double *xs, *ys;
    double yty;
};

/* One particle's fit of k variables: U (cap x cap, row-major, upper) with U^T U = X_T^T X_T,
 * c with U^T c = X_T^T y; idx the variables in the order they entered. */
struct pass_fit {
    size_t k, cap;
    int32_t *idx;
    double *u, *c;
};

/* Adds variable i; false (the fit unchanged) where it lies in the span of the model. */
bool clstats__fit_add(struct pass_fit *f, const struct pass_data *d, size_t i);
/* Removes the variable at position m of idx. */
void clstats__fit_remove(struct pass_fit *f, size_t m);
double clstats__fit_rss(const struct pass_fit *f, const struct pass_data *d);
/* beta = U^-1 c (k entries). */
void clstats__fit_beta(const struct pass_fit *f, double *beta);
/* The position in idx whose removal raises RSS least: beta_m^2 / (G^-1)_mm, the lowest variable
 * index at ties; work holds cap + cap^2 doubles. */
size_t clstats__fit_cheapest(const struct pass_fit *f, double *work);

/* Finds, for each of K particles with models idx[j cap ..] of size[j] and coefficients
 * beta[j cap ..], the variable outside the model of largest |X_i^T (y - X_T beta)| (the lowest
 * index at ties; -1 where the model holds every variable), into best[j]. */
struct pass_engine {
    int (*argmax)(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                  const double *beta, int32_t *best);
    void (*release)(struct pass_engine *e);
    clstats_ctx *ctx;
    const struct pass_data *d;
    size_t k_particles, cap;
    void *state;
};

int clstats__engine_host(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                         size_t cap, struct pass_engine *e);
int clstats__engine_device(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                           size_t cap, struct pass_engine *e);

#endif
