/* genetic.c - the seed's optimiser (Franey, Ranjan and Chipman; Ranjan et al. 2008): a
 * real-coded genetic algorithm in beta = log10(theta) with a population of `pop` and `gens`
 * generations, pop x gens deviances in all (100 x 20 = 2 000 in the seed's tables). Each
 * generation is one population's pass on the device (clstats__gp_eval), the rest is the host's:
 * the first generation a maximin Latin hypercube over GPfit's start range, then children by
 * binary tournaments, intermediate recombination and Gaussian mutation that narrows over the
 * generations, the best pop of parents and children kept. Deterministic for a seed. */
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Intermediate recombination's reach past the parents (Muehlenbein and Schlierkamp-Voosen's
 * extended line: the weight in [-REACH, 1 + REACH]). */
#define REACH 0.25
/* The mutation's standard deviation at the first generation, as a share of the start range;
 * it falls linearly to a tenth of that by the last. */
#define MUTATION 0.1

struct member {
    double dev;
    size_t at; /* row of the pool */
};

static int by_fitness(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at; /* ties by row: a fixed order */
}

static double gaussian(struct clstats__rng *rng)
{
    const double u = 1 - clstats__rng_uniform(rng), v = clstats__rng_uniform(rng);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* The better (lower deviance) of two members drawn from the first `pop` ranked. */
static size_t tournament(struct clstats__rng *rng, const struct member *ranked, size_t pop)
{
    const size_t a = (size_t)clstats__rng_below(rng, pop), b = (size_t)clstats__rng_below(rng, pop);
    return ranked[a < b ? a : b].at; /* ranked: the lower rank is the fitter */
}

int clstats__gp_genetic(struct gp_job *job, const struct clstats_gp_fit_options *o, size_t pop,
                        size_t gens, double lo, double hi, double *beta, double *dev)
{
    clstats_ctx *ctx = job->ctx;
    const size_t d = job->d;
    struct clstats__rng rng;
    clstats__rng_seed(&rng, o->seed);
    /* The pool: parents in rows [0, pop), children in [pop, 2 pop). */
    double *pool = malloc(2 * pop * d * sizeof *pool), *next = malloc(pop * d * sizeof *next);
    double *devs = malloc(2 * pop * sizeof *devs), *kept_dev = malloc(pop * sizeof *kept_dev);
    struct member *ranked = malloc(2 * pop * sizeof *ranked);
    int status = pool && next && devs && kept_dev && ranked
                     ? clstats__gp_maximin_lhd(&rng, pop, d, lo, hi, pool)
                     : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: genetic algorithm");
    if (status != CLSTATS_OK) goto fail;
    for (size_t i = 0; i < pop * d; i++) pool[i] = fmin(fmax(pool[i], o->lower), o->upper);
    const struct clstats_gp_eval first = {.deviance = devs};
    status = clstats__gp_eval(job, pool, pop, &first, true);
    for (size_t i = 0; i < pop; i++)
        ranked[i] = (struct member){isnan(devs[i]) ? INFINITY : devs[i], i};
    if (status == CLSTATS_OK) qsort(ranked, pop, sizeof *ranked, by_fitness);
    for (size_t g = 1; g < gens && status == CLSTATS_OK; g++) {
        const double sigma = MUTATION * (hi - lo) * (1 - 0.9 * (double)(g - 1) / (double)gens);
        double *kids = pool + pop * d;
        for (size_t c = 0; c < pop; c++) {
            const double *a = pool + tournament(&rng, ranked, pop) * d;
            const double *b = pool + tournament(&rng, ranked, pop) * d;
            for (size_t k = 0; k < d; k++) {
                const double w = -REACH + (1 + 2 * REACH) * clstats__rng_uniform(&rng);
                double v = a[k] + w * (b[k] - a[k]);
                if (clstats__rng_uniform(&rng) * (double)d < 1) v += sigma * gaussian(&rng);
                kids[c * d + k] = fmin(fmax(v, o->lower), o->upper);
            }
        }
        const struct clstats_gp_eval out = {.deviance = devs + pop};
        status = clstats__gp_eval(job, kids, pop, &out, true);
        if (status != CLSTATS_OK) break;
        /* Parents keep their deviances, by rank; the best pop of both become the parents. */
        for (size_t c = 0; c < pop; c++)
            ranked[pop + c] = (struct member){isnan(devs[pop + c]) ? INFINITY : devs[pop + c],
                                              pop + c};
        qsort(ranked, 2 * pop, sizeof *ranked, by_fitness);
        for (size_t i = 0; i < pop; i++) {
            memcpy(next + i * d, pool + ranked[i].at * d, d * sizeof *next);
            kept_dev[i] = ranked[i].dev;
        }
        memcpy(pool, next, pop * d * sizeof *pool);
        for (size_t i = 0; i < pop; i++) {
            devs[i] = kept_dev[i];
            ranked[i] = (struct member){kept_dev[i], i};
        }
    }
    if (status != CLSTATS_OK) goto fail;
    memcpy(beta, pool + ranked[0].at * d, d * sizeof *beta);
    *dev = ranked[0].dev;
fail:
    free(pool);
    free(next);
    free(devs);
    free(kept_dev);
    free(ranked);
    return status;
}
