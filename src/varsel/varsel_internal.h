/* varsel_internal.h - PaSS's parts (src/varsel/): one particle's least-squares fit kept by
 * updates (fit.c), the swarm's driver (pass.c), and the two engines that find every particle's
 * largest |X_i^T R| outside its model: the device's (engine_device.c) and plain C's
 * (engine_host.c). */
#ifndef CLSTATS_VARSEL_INTERNAL_H
#define CLSTATS_VARSEL_INTERNAL_H

#include "clstats/varsel.h"
#include "internal.h"

/* The standardised problem: xr row-major (row t at xr + t p) in the dtype, exactly the values
 * the device holds (NULL where the device standardised X itself); xs the same values
 * column-major in double (column i at xs + i n), built only for the plain C engine (NULL
 * otherwise); ys centred in double, yty = ys^T ys. */
struct pass_data {
    size_t n, p;
    bool f64;
    const void *xr;
    const double *xs;
    const double *ys;
    double yty;
    size_t cache_rows; /* the device's Gram cache's rows; 0: its own choice (tests set a few) */
    size_t scan_span;  /* pass_scan's variables a work-group; 0: its own choice (tests: a few) */
};

/* Every inner product of length n that enters a fit is summed in one order, whatever the
 * engine, so that the device's fits are the plain C path's bit for bit: PASS_LANES partial sums
 * (lane l takes t = l, l + PASS_LANES, ... in rising order), then halved pairwise (lane l adds
 * lane l + h for h = PASS_LANES / 2, ..., 1). kernels/varsel/pass.cl's pass_grams sums so. */
#define PASS_LANES 64
double clstats__pass_dot(const double *a, const double *b, size_t n);
/* Column i of the standardised X in double, into out (n values). */
void clstats__pass_column(const struct pass_data *d, size_t i, double *out);

struct pass_fit {
    size_t k, cap;
    int32_t *idx;
    double *u, *c; /* u: PASS_U_SIZE(cap) doubles (fit.c's packed columns) */
};
/* Where column col of a fit's U begins, and so the doubles of k columns. */
#define PASS_U_SIZE(col) ((col) * ((col) + 3) / 2)

/* The inner products a fit needs to add variable i: x_i against each model column in the order
 * they entered (k values), x_i^T x_i, x_i^T y: PASS_GRAM(cap) values, by clstats__pass_dot. */
#define PASS_GRAM(cap) ((cap) + 2)
/* Adds variable i from its inner products; false (the fit unchanged) where it lies in the span
 * of the model. */
bool clstats__fit_add(struct pass_fit *f, size_t i, const double *gram);
/* Removes the variable at position m of idx. */
void clstats__fit_remove(struct pass_fit *f, size_t m);
double clstats__fit_rss(const struct pass_fit *f, double yty);
/* beta = U^-1 c (k entries). */
void clstats__fit_beta(const struct pass_fit *f, double *beta);
/* The position in idx whose removal raises RSS least: beta_m^2 / (G^-1)_mm, the lowest variable
 * index at ties; work holds cap + cap^2 doubles. */
size_t clstats__fit_cheapest(const struct pass_fit *f, double *work);

/* One iteration's device work for K particles with models idx[j cap ..] of size[j]: for each
 * particle with want[j] != PASS_NONE, the variable it adds into add[j] (want[j] itself, or where
 * want[j] == PASS_ARGMAX the variable outside the model of largest |X_i^T (y - X_T beta_j)|,
 * beta_j at beta[j cap ..], the lowest index at ties, -1 where the model holds every variable)
 * and that variable's inner products (PASS_GRAM) into gram[j PASS_GRAM(cap) ..]. The engines
 * agree on the inner products bit for bit, and on the argmaxes up to rounding in the dtype. */
#define PASS_NONE (-1)
#define PASS_ARGMAX (-2)
struct pass_engine {
    int (*step)(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                const double *beta, const int32_t *want, int32_t *add, double *gram);
    void (*release)(struct pass_engine *e);
    clstats_ctx *ctx;
    const struct pass_data *d;
    size_t k_particles, cap;
    void *state;
};

/* The device engine's Gram cache, as the host books it (gram_cache.c): row s of the cache holds
 * x_v^T X for v = var_of[s] (s < used), slot_of[v] = s or -1. */
struct pass_cache {
    size_t p, slots, used, first_fresh, n_fresh;
    int32_t *slot_of, *var_of;
    int32_t *fresh;  /* the variables the last plan added, in rows first_fresh, first_fresh + 1, ... */
    uint32_t *stamp, epoch;
};
int clstats__cache_init(clstats_ctx *ctx, struct pass_cache *c, size_t p, size_t slots);
void clstats__cache_free(struct pass_cache *c);
/* Rows for every variable of the m models rows[q] (model j at idx + j cap, size[j] long), new
 * ones consecutive from first_fresh (the cache afresh where they do not fit beside the old),
 * and each model position's row into slot (same layout as idx); false, the cache unchanged,
 * where the models hold more distinct variables than the cache has rows. */
/* Every variable new, in rows 0 .. p - 1 (slots >= p): the whole Gram matrix at once. */
void clstats__cache_take_all(struct pass_cache *c);
bool clstats__cache_plan(struct pass_cache *c, const int32_t *idx, const int32_t *size,
                         const int32_t *rows, size_t m, size_t cap, int32_t *slot);

/* Where the engine holds no products: gram for variable i against the model idx[0..k). */
void clstats__pass_gram(const struct pass_data *d, const int32_t *idx, size_t k, size_t i,
                        double *gram, double *column_work);

int clstats__engine_host(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                         size_t cap, struct pass_engine *e);
/* Where d->xr is NULL the device engine's X comes from clstats__engine_device_load: x as the
 * caller gave it, standardised on the device (devices with fp64) as pass.c's standardise_x does
 * on the host, bit for bit; mean, scale and each column's first non-finite row (-1: none) come
 * back, from which pass.c gives the errors. */
int clstats__engine_device(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                           size_t cap, struct pass_engine *e);
int clstats__engine_device_load(struct pass_engine *e, const struct clstats_array *x,
                                double *mean, double *scale, int32_t *first_bad);
/* For the tests: the kernel that makes the device engine's new Gram rows ("pass_gram_rows",
 * "pass_gram_rows_mma" or "CLBlast"), and variable v's row x_v^T X from its Gram cache (an error
 * where v has none) into row (p values). */
const char *clstats__engine_device_rows_by(const struct pass_engine *e);
int clstats__engine_device_gram_row(struct pass_engine *e, int32_t v, double *row);

/* A monotonic clock in ms, for the times the log gives (clstats_ctx_set_log). */
double clstats__pass_wall_ms(void);

#endif
