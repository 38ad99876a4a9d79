/* fit.c - GPfit's GP_fit on the device: a maximin Latin hypercube of starting beta over GPfit's
 * range, all its deviances in batched passes, the best clustered by k-means (clstats_kmeans) and
 * each cluster's best point optimised, with the diagonal search's optimum (beta_k all equal) as
 * one more start; every start by the bounded L-BFGS with the device's deviance and gradient.
 * Or, as an option, the seed's genetic algorithm (genetic.c) over the same range. */
#include "gp_internal.h"

#include "clstats/cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Random Latin hypercubes drawn for the start design, the widest (maximin) kept. */
#define LHD_TRIES 5

void clstats_gp_fit_options_init(struct clstats_gp_fit_options *opts)
{
    *opts = (struct clstats_gp_fit_options){.diagonal = 1, .max_iter = 100, .lower = -10,
                                            .upper = 10};
}

struct objective {
    struct gp_job *job;
    double *full, *grad; /* d values: the diagonal search's point and gradient */
    bool diagonal;
};

static int deviance_and_gradient(void *user, const double *x, double *f, double *g)
{
    struct objective *o = user;
    const size_t d = o->job->d;
    if (!o->diagonal) {
        const struct clstats_gp_eval out = {.deviance = f, .gradient = g};
        return clstats__gp_eval(o->job, x, 1, &out, true);
    }
    for (size_t k = 0; k < d; k++) o->full[k] = x[0];
    const struct clstats_gp_eval out = {.deviance = f, .gradient = o->grad};
    int status = clstats__gp_eval(o->job, o->full, 1, &out, true);
    g[0] = 0;
    for (size_t k = 0; k < d; k++) g[0] += o->grad[k];
    return status;
}

int clstats__gp_maximin_lhd(struct clstats__rng *rng, size_t rows, size_t d, double lo,
                            double hi, double *out)
{
    double *try = malloc(rows * d * sizeof *try), best = -1;
    size_t *perm = malloc(rows * sizeof *perm);
    if (!try || !perm) {
        free(try);
        free(perm);
        return clstats__fail(NULL, CLSTATS_ERR_NOMEM, "gp: start design");
    }
    for (int t = 0; t < LHD_TRIES; t++) {
        for (size_t k = 0; k < d; k++) {
            for (size_t i = 0; i < rows; i++) perm[i] = i;
            for (size_t i = rows; i > 1; i--) {
                const size_t j = (size_t)clstats__rng_below(rng, i);
                const size_t tmp = perm[i - 1];
                perm[i - 1] = perm[j];
                perm[j] = tmp;
            }
            for (size_t i = 0; i < rows; i++)
                try[i * d + k] = (perm[i] + clstats__rng_uniform(rng)) / (double)rows;
        }
        double closest = INFINITY;
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < i; j++) {
                double s = 0;
                for (size_t k = 0; k < d; k++)
                    s += (try[i * d + k] - try[j * d + k]) * (try[i * d + k] - try[j * d + k]);
                closest = fmin(closest, s);
            }
        if (closest > best) {
            best = closest;
            memcpy(out, try, rows * d * sizeof *out);
        }
    }
    for (size_t i = 0; i < rows * d; i++) out[i] = lo + out[i] * (hi - lo);
    free(try);
    free(perm);
    return CLSTATS_OK;
}

struct ranked {
    double dev;
    size_t row;
};

static int by_deviance(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    /* NaN (a matrix that would not factor) last; ties by row, so that the order is fixed. */
    if (isnan(x->dev) != isnan(y->dev)) return isnan(x->dev) ? 1 : -1;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The start design's points: each cluster's best of the n_best best (starts: n_starts x d). */
static int design_starts(struct gp_job *job, const struct clstats_gp_fit_options *o,
                         size_t n_search, size_t n_best, size_t n_starts, double lo, double hi,
                         double *starts, size_t *found)
{
    clstats_ctx *ctx = job->ctx;
    const size_t d = job->d;
    struct clstats__rng rng;
    clstats__rng_seed(&rng, o->seed);
    double *pts = malloc(n_search * d * sizeof *pts), *dev = malloc(n_search * sizeof *dev);
    double *best = malloc(n_best * d * sizeof *best), *centres = malloc(n_starts * d * 8);
    struct ranked *rank = malloc(n_search * sizeof *rank);
    int32_t *labels = malloc(n_best * sizeof *labels);
    int status = pts && dev && best && centres && rank && labels
                     ? clstats__gp_maximin_lhd(&rng, n_search, d, lo, hi, pts)
                     : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: start design");
    const struct clstats_gp_eval out = {.deviance = dev};
    if (status == CLSTATS_OK) status = clstats__gp_eval(job, pts, n_search, &out, true);
    if (status != CLSTATS_OK) goto fail;
    for (size_t i = 0; i < n_search; i++) rank[i] = (struct ranked){dev[i], i};
    qsort(rank, n_search, sizeof *rank, by_deviance);
    for (size_t i = 0; i < n_best; i++) memcpy(best + i * d, pts + rank[i].row * d, d * 8);
    struct clstats_kmeans_options km;
    clstats_kmeans_options_init(&km);
    km.n_init = 5;
    km.seed = clstats__rng_next(&rng);
    const struct clstats_array xa = {.host = best, .dtype = CLSTATS_FLOAT64, .nx = d, .ny = n_best};
    const struct clstats_array ca = {.host = centres, .dtype = CLSTATS_FLOAT64, .nx = d,
                                     .ny = n_starts};
    status = clstats_kmeans(ctx, &xa, n_starts, &km, &ca, labels);
    if (status != CLSTATS_OK) goto fail;
    /* The best ranks come first, so a cluster's first member is its best point. */
    *found = 0;
    for (size_t c = 0; c < n_starts; c++)
        for (size_t i = 0; i < n_best; i++)
            if (labels[i] == (int32_t)c) {
                memcpy(starts + (*found)++ * d, best + i * d, d * 8);
                break;
            }
fail:
    free(pts);
    free(dev);
    free(best);
    free(centres);
    free(rank);
    free(labels);
    return status;
}

int clstats_gp_fit(clstats_ctx *ctx, const struct clstats_gp_model *model, const double *x,
                   const double *y, size_t n, size_t d, const struct clstats_gp_fit_options *opts,
                   struct clstats_gp_fit_result *result)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "gp: NULL context");
    clstats__begin(ctx);
    struct gp_job job = {0};
    struct clstats_gp_fit_options o;
    clstats_gp_fit_options_init(&o);
    if (opts) o = *opts;
    double *starts = NULL, *cur = NULL, *full = NULL, *grad = NULL;
    int status = result && result->beta ? clstats__gp_open(ctx, model, x, y, n, d, &job)
                                        : clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: NULL result");
    if (status != CLSTATS_OK) goto fail;
    if (!(o.lower < o.upper) || !isfinite(o.lower) || !isfinite(o.upper) || o.max_iter == 0) {
        status = clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: bounds [%g, %g], max_iter %zu",
                               o.lower, o.upper, o.max_iter);
        goto fail;
    }
    const size_t n_search = o.n_search ? o.n_search : 200 * d;
    const size_t n_best = o.n_best ? o.n_best : 80 * d;
    const size_t n_starts = o.n_starts ? o.n_starts : 2 * d;
    if (n_best > n_search || n_starts > n_best) {
        status = clstats__fail(ctx, CLSTATS_ERR_ARG,
                               "gp: need n_starts %zu <= n_best %zu <= n_search %zu", n_starts,
                               n_best, n_search);
        goto fail;
    }
    /* GPfit's range of starting beta, by the correlation's scale and the dimension. */
    const double lo = model->corr == CLSTATS_GP_POWER_EXPONENTIAL
                          ? model->power - log10((double)d) - 4
                          : 2 - log10((double)d);
    const double hi = model->corr == CLSTATS_GP_POWER_EXPONENTIAL
                          ? model->power - log10((double)d) + log10(5.0)
                          : 2 - log10((double)d) + log10(5.0);
    starts = malloc((n_starts + 1) * d * sizeof *starts);
    cur = malloc(d * sizeof *cur);
    full = malloc(d * sizeof *full);
    grad = malloc(d * sizeof *grad);
    if (!starts || !cur || !full || !grad) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "gp: fit");
        goto fail;
    }
    if (o.method == CLSTATS_GP_GENETIC) {
        const size_t pop = o.population ? o.population : 100;
        const size_t gens = o.generations ? o.generations : 20;
        status = pop >= 2 ? clstats__gp_genetic(&job, &o, pop, gens, lo, hi, result->beta,
                                                &result->deviance)
                          : clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: population %zu < 2", pop);
        if (status != CLSTATS_OK) goto fail;
        goto finish;
    }
    if (o.method != CLSTATS_GP_LBFGS) {
        status = clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: unknown optimiser %d", (int)o.method);
        goto fail;
    }
    size_t found = 0;
    status = design_starts(&job, &o, n_search, n_best, n_starts, lo, hi, starts, &found);
    if (status != CLSTATS_OK) goto fail;
    struct objective obj = {&job, full, grad, true};
    if (o.diagonal && d >= 2) {
        double best_b = NAN, best_f = INFINITY;
        static const double where[3] = {0.2, 0.5, 0.8};
        for (int i = 0; i < 3 && status == CLSTATS_OK; i++) {
            double b = lo + where[i] * (hi - lo), fb;
            status = clstats__gp_lbfgs(deviance_and_gradient, &obj, &b, 1, o.lower, o.upper,
                                       o.max_iter, &fb);
            if (fb < best_f) {
                best_f = fb;
                best_b = b;
            }
        }
        if (status != CLSTATS_OK) goto fail;
        if (isfinite(best_f)) {
            for (size_t k = 0; k < d; k++) starts[found * d + k] = best_b;
            found++;
        }
    }
    obj.diagonal = false;
    result->deviance = INFINITY;
    for (size_t s = 0; s < found && status == CLSTATS_OK; s++) {
        double f;
        memcpy(cur, starts + s * d, d * sizeof *cur);
        status = clstats__gp_lbfgs(deviance_and_gradient, &obj, cur, d, o.lower, o.upper,
                                   o.max_iter, &f);
        if (status == CLSTATS_OK && f < result->deviance) {
            result->deviance = f;
            memcpy(result->beta, cur, d * sizeof *cur);
        }
    }
    if (status != CLSTATS_OK) goto fail;
finish:
    if (!isfinite(result->deviance)) {
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR,
                               "gp: no start gave a finite deviance (duplicate rows and a "
                               "zero nugget?)");
        goto fail;
    }
    const struct clstats_gp_eval last = {.deviance = &result->deviance, .nugget = &result->nugget,
                                         .mu = &result->mu, .sigma2 = &result->sigma2};
    status = clstats__gp_eval(&job, result->beta, 1, &last, false);
    result->evaluations = job.evaluations;
fail:
    clstats__gp_close(&job);
    free(starts);
    free(cur);
    free(full);
    free(grad);
    return clstats__end(ctx, status);
}
