/* pass.c - the Particle Swarm Stepwise algorithm (section III of the seed paper; Figure 1): the
 * public calls, the data standardised as the paper assumes, the swarm's stochastic forward and
 * backward steps with their direction switching, and the swarm's best model. The engine (device
 * or plain C) only finds each particle's largest |X_i^T R|; every draw and every fit is here, on
 * the host, so both engines walk the same path. */
#include "varsel_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clstats_pass_default_options(struct clstats_pass_options *o)
{
    memset(o, 0, sizeof *o);
    o->criterion = CLSTATS_VARSEL_HDBIC;
    o->gamma = 1;
    o->n_particles = 256;
    o->n_iter = 16;
    o->p_forward[0] = 0, o->p_forward[1] = 0.8, o->p_forward[2] = 0.2;
    o->p_backward[0] = 0.8, o->p_backward[1] = 0.2;
}

static double criterion(const struct clstats_pass_options *o, double n, double p, double k,
                        double rss)
{
    const double fit = n * log(rss / n);
    switch (o->criterion) {
    case CLSTATS_VARSEL_AIC: return fit + 2 * k;
    case CLSTATS_VARSEL_BIC: return fit + k * log(n);
    case CLSTATS_VARSEL_EBIC:
        return fit + k * log(n) + 2 * o->gamma * (lgamma(p + 1) - lgamma(k + 1) - lgamma(p - k + 1));
    case CLSTATS_VARSEL_HDBIC: return fit + k * log(n) * log(p);
    case CLSTATS_VARSEL_HDHQC: return fit + 2 * k * log(log(n)) * log(p);
    }
    return NAN;
}

static int check_options(clstats_ctx *ctx, const struct clstats_pass_options *o)
{
    const double *f = o->p_forward, *b = o->p_backward;
    if ((unsigned)o->criterion > CLSTATS_VARSEL_AIC)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "unknown criterion %d", (int)o->criterion);
    if (!(o->gamma >= 0 && o->gamma <= 1))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "EBIC's gamma %g is outside [0, 1]", o->gamma);
    if (o->n_particles < 1 || o->n_iter < 1)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "n_particles and n_iter must be at least 1");
    for (int i = 0; i < 3; i++)
        if (!(f[i] >= 0 && (i >= 2 || b[i] >= 0)))
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "a step probability is negative or NaN");
    if (fabs(f[0] + f[1] + f[2] - 1) > 1e-9 || fabs(b[0] + b[1] - 1) > 1e-9)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "the forward (%g, %g, %g) or backward (%g, %g) probabilities do "
                             "not sum to 1", f[0], f[1], f[2], b[0], b[1]);
    return CLSTATS_OK;
}

static double element(const struct clstats_array *a, size_t row, size_t col)
{
    const size_t at = row * clstats__array_stride(a) + col;
    return a->dtype == CLSTATS_FLOAT64 ? ((const double *)a->host)[at]
                                       : ((const float *)a->host)[at];
}

/* Centres y and every column, scales the columns to unit norm (then rounds them to the dtype,
 * the values the device holds); mean and scale per column for the caller's coefficients. */
static int standardise(clstats_ctx *ctx, const struct clstats_array *x,
                       const struct clstats_array *y, double *xs, double *ys, double *mean,
                       double *scale, double *ymean)
{
    const size_t n = x->ny, p = x->nx;
    double s = 0;
    for (size_t t = 0; t < n; t++) {
        ys[t] = element(y, y->ny == 1 ? 0 : t, y->ny == 1 ? t : 0);
        if (!isfinite(ys[t]))
            return clstats__fail(ctx, CLSTATS_ERR_NAN, "y[%zu] is %g", t, ys[t]);
        s += ys[t];
    }
    *ymean = s / (double)n;
    double ss = 0;
    for (size_t t = 0; t < n; t++) ys[t] -= *ymean, ss += ys[t] * ys[t];
    if (!(ss > 0)) return clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "y is constant");
    for (size_t i = 0; i < p; i++) {
        double *col = xs + i * n, m = 0, norm = 0;
        for (size_t t = 0; t < n; t++) {
            col[t] = element(x, t, i);
            if (!isfinite(col[t]))
                return clstats__fail(ctx, CLSTATS_ERR_NAN, "x[%zu, %zu] is %g", t, i, col[t]);
            m += col[t];
        }
        m /= (double)n;
        for (size_t t = 0; t < n; t++) col[t] -= m, norm += col[t] * col[t];
        norm = sqrt(norm);
        /* Spread at the rounding level of the mean counts as constant. */
        if (!(norm > 1e-12 * sqrt((double)n) * fabs(m)) || norm == 0)
            return clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "column %zu of x is constant", i);
        for (size_t t = 0; t < n; t++)
            col[t] = x->dtype == CLSTATS_FLOAT32 ? (double)(float)(col[t] / norm) : col[t] / norm;
        mean[i] = m, scale[i] = norm;
    }
    return CLSTATS_OK;
}

struct swarm {
    const struct clstats_pass_options *o;
    const struct pass_data *d;
    size_t K, cap;
    struct pass_fit *fit;
    int32_t *idx, *size, *best_move; /* the engine's view: K x cap, K, K */
    double *beta, *phi, *phi_prev, *work;
    signed char *forward;
    unsigned char *in; /* K x p: membership */
    unsigned char *best_in;
    int32_t *best_idx;
    size_t best_k;
    double best_phi;
};

static double phi_of(const struct swarm *s, const struct pass_fit *f)
{
    return criterion(s->o, (double)s->d->n, (double)s->d->p, (double)f->k,
                     clstats__fit_rss(f, s->d));
}

static void note_best(struct swarm *s)
{
    size_t j_best = SIZE_MAX;
    for (size_t j = 0; j < s->K; j++)
        if (s->phi[j] < s->best_phi) s->best_phi = s->phi[j], j_best = j;
    if (j_best == SIZE_MAX) return;
    const struct pass_fit *f = &s->fit[j_best];
    memset(s->best_in, 0, s->d->p);
    for (size_t m = 0; m < f->k; m++) s->best_in[f->idx[m]] = 1, s->best_idx[m] = f->idx[m];
    s->best_k = f->k;
}

static bool add(struct swarm *s, size_t j, size_t i)
{
    if (!clstats__fit_add(&s->fit[j], s->d, i)) return false;
    s->in[j * s->d->p + i] = 1;
    return true;
}

static void forward(struct swarm *s, struct clstats__rng *rng, size_t j, double u)
{
    const size_t p = s->d->p;
    const unsigned char *in = s->in + j * p;
    const double *pf = s->o->p_forward;
    if (u < pf[0]) {
        size_t avail = 0;
        for (size_t m = 0; m < s->best_k; m++) avail += !in[s->best_idx[m]];
        if (avail) {
            size_t pick = clstats__rng_below(rng, avail), seen = 0;
            for (size_t i = 0; i < p; i++)
                if (s->best_in[i] && !in[i] && seen++ == pick) {
                    add(s, j, i);
                    return;
                }
        }
    } else if (u >= pf[0] + pf[1] && s->fit[j].k < p) {
        size_t i;
        do
            i = clstats__rng_below(rng, p);
        while (in[i]);
        add(s, j, i);
        return;
    }
    if (s->best_move[j] >= 0) add(s, j, (size_t)s->best_move[j]);
}

static void backward(struct swarm *s, struct clstats__rng *rng, size_t j, double u)
{
    struct pass_fit *f = &s->fit[j];
    const size_t m = u < s->o->p_backward[0] ? clstats__fit_cheapest(f, s->work)
                                             : clstats__rng_below(rng, f->k);
    s->in[j * s->d->p + f->idx[m]] = 0;
    clstats__fit_remove(f, m);
}

/* Figure 1, one iteration: directions, the draws, the argmaxes where some particle needs
 * one, the moves, the criteria. */
static int iterate(struct swarm *s, struct pass_engine *e, struct clstats__rng *rng, bool first)
{
    const size_t K = s->K;
    bool need = false;
    for (size_t j = 0; j < K; j++) {
        const size_t k = s->fit[j].k;
        if (first || k <= 1) s->forward[j] = 1;
        else if (k >= s->cap || k >= s->d->p) s->forward[j] = 0;
        else if (s->phi[j] > s->phi_prev[j]) s->forward[j] = !s->forward[j];
        s->work[j] = clstats__rng_uniform(rng); /* the step's option */
        if (s->forward[j]) need = true;
    }
    double *u = malloc(K * sizeof *u);
    if (!u) return clstats__fail(e->ctx, CLSTATS_ERR_NOMEM, "out of memory");
    memcpy(u, s->work, K * sizeof *u);
    if (need) {
        for (size_t j = 0; j < K; j++) {
            const struct pass_fit *f = &s->fit[j];
            s->size[j] = (int32_t)f->k;
            memcpy(s->idx + j * s->cap, f->idx, f->k * sizeof *f->idx);
            clstats__fit_beta(f, s->beta + j * s->cap);
        }
        int status = e->argmax(e, s->idx, s->size, s->beta, s->best_move);
        if (status) {
            free(u);
            return status;
        }
    }
    for (size_t j = 0; j < K; j++) {
        if (s->forward[j]) forward(s, rng, j, u[j]);
        else backward(s, rng, j, u[j]);
        s->phi_prev[j] = s->phi[j];
        s->phi[j] = phi_of(s, &s->fit[j]);
    }
    free(u);
    note_best(s);
    return CLSTATS_OK;
}

static void release_swarm(struct swarm *s)
{
    if (s->fit)
        for (size_t j = 0; j < s->K; j++) free(s->fit[j].u), free(s->fit[j].c), free(s->fit[j].idx);
    free(s->fit), free(s->idx), free(s->size), free(s->best_move), free(s->beta), free(s->phi);
    free(s->phi_prev), free(s->work), free(s->forward), free(s->in), free(s->best_in);
    free(s->best_idx);
}

static int make_swarm(clstats_ctx *ctx, struct swarm *s)
{
    const size_t K = s->K, cap = s->cap, p = s->d->p;
    s->fit = calloc(K, sizeof *s->fit);
    s->idx = calloc(K * cap, sizeof *s->idx);
    s->size = calloc(K, sizeof *s->size);
    s->best_move = calloc(K, sizeof *s->best_move);
    s->beta = calloc(K * cap, sizeof *s->beta);
    s->phi = calloc(K, sizeof *s->phi);
    s->phi_prev = calloc(K, sizeof *s->phi_prev);
    s->work = calloc(cap + cap * cap + K, sizeof *s->work);
    s->forward = calloc(K, 1);
    s->in = calloc(K * p, 1);
    s->best_in = calloc(p, 1);
    s->best_idx = calloc(cap, sizeof *s->best_idx);
    bool ok = s->fit && s->idx && s->size && s->best_move && s->beta && s->phi && s->phi_prev &&
              s->work && s->forward && s->in && s->best_in && s->best_idx;
    for (size_t j = 0; ok && j < K; j++) {
        struct pass_fit *f = &s->fit[j];
        f->cap = cap;
        f->u = calloc(cap * cap, sizeof *f->u);
        f->c = calloc(cap, sizeof *f->c);
        f->idx = calloc(cap, sizeof *f->idx);
        ok = f->u && f->c && f->idx;
    }
    return ok ? CLSTATS_OK : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for the swarm");
}

/* Section III-A: K different one-variable models (a partial shuffle while K <= p; beyond p the
 * variables repeat in turn). */
static void start(struct swarm *s, struct clstats__rng *rng)
{
    const size_t p = s->d->p;
    size_t j = 0;
    while (j < s->K) {
        size_t round = s->K - j < p ? s->K - j : p;
        int32_t *order = malloc(p * sizeof *order);
        if (!order) round = 0;
        for (size_t i = 0; order && i < p; i++) order[i] = (int32_t)i;
        for (size_t i = 0; i < round; i++) {
            const size_t r = i + clstats__rng_below(rng, p - i);
            const int32_t t = order[i];
            order[i] = order[r], order[r] = t;
            if (!add(s, j + i, (size_t)order[i])) s->fit[j + i].k = 0;
        }
        free(order);
        if (!round) break;
        j += round;
    }
    s->best_phi = INFINITY;
    for (size_t i = 0; i < s->K; i++) s->phi[i] = s->phi_prev[i] = phi_of(s, &s->fit[i]);
    note_best(s);
}

static int run(clstats_ctx *ctx, bool device, const struct clstats_array *x,
               const struct clstats_array *y, const struct clstats_pass_options *opts,
               struct clstats_pass_result *res)
{
    struct clstats_pass_options o;
    if (opts) o = *opts;
    else clstats_pass_default_options(&o);
    if (!x || !y || !res || !res->coef || !res->support)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "x, y, result, coef and support are needed");
    if (!x->host || !y->host)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "PaSS takes x and y in host memory");
    if ((x->dtype != CLSTATS_FLOAT32 && x->dtype != CLSTATS_FLOAT64) || y->dtype != x->dtype)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "x and y must both be float32 or float64");
    const size_t n = x->ny, p = x->nx;
    if (p == 0) return clstats__fail(ctx, CLSTATS_ERR_ARG, "x has no columns (p = 0)");
    if (n < 3)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "x has %zu rows; an intercept and one variable need at least 3", n);
    if (!((y->ny == 1 && y->nx == n) || (y->nx == 1 && y->ny == n)))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "y has %zu x %zu values, x %zu rows", y->ny,
                             y->nx, n);
    int status = check_options(ctx, &o);
    if (status) return status;
    size_t cap = o.max_size ? o.max_size : 100;
    if (cap > p) cap = p;
    if (cap > n - 2) cap = n - 2;
    if (o.max_size > cap || (o.max_size && o.max_size > n - 2))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "max_size %u is more than min(p, n - 2) = %zu",
                             o.max_size, cap);

    double *xs = NULL, *ys = NULL, *mean = NULL, *scale = NULL, ymean = 0;
    size_t bytes;
    if (!clstats__array_bytes(n * p, sizeof *xs, &bytes) || p > SIZE_MAX / n)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "x is too large");
    xs = malloc(bytes), ys = malloc(n * sizeof *ys), mean = malloc(p * sizeof *mean);
    scale = malloc(p * sizeof *scale);
    struct swarm s = {.o = &o, .K = o.n_particles, .cap = cap};
    struct pass_engine e = {0};
    struct pass_data d = {.n = n, .p = p, .f64 = x->dtype == CLSTATS_FLOAT64, .xs = xs, .ys = ys};
    s.d = &d;
    if (!xs || !ys || !mean || !scale) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for x");
        goto exit;
    }
    if ((status = standardise(ctx, x, y, xs, ys, mean, scale, &ymean))) goto exit;
    for (size_t t = 0; t < n; t++) d.yty += ys[t] * ys[t];
    if ((status = make_swarm(ctx, &s))) goto exit;
    status = device ? clstats__engine_device(ctx, &d, s.K, cap, &e)
                    : clstats__engine_host(ctx, &d, s.K, cap, &e);
    if (status) goto exit;

    struct clstats__rng rng;
    clstats__rng_seed(&rng, o.seed);
    start(&s, &rng);
    if (res->history) res->history[0] = s.best_phi;
    for (unsigned it = 0; it < o.n_iter && !status; it++) {
        status = iterate(&s, &e, &rng, it == 0);
        if (res->history) res->history[it + 1] = s.best_phi;
    }
    if (status) goto exit;

    /* The best model's coefficients from its own fit, on the caller's scale. */
    struct pass_fit best = {.cap = cap, .u = s.work + cap, .c = s.work, .idx = s.idx};
    for (size_t m = 0; m < s.best_k; m++) clstats__fit_add(&best, &d, (size_t)s.best_idx[m]);
    double *beta = s.beta;
    clstats__fit_beta(&best, beta);
    memset(res->support, 0, p);
    res->intercept = ymean;
    for (size_t i = 0; i < p; i++) res->coef[i] = 0;
    for (size_t m = 0; m < best.k; m++) {
        const size_t i = (size_t)best.idx[m];
        res->support[i] = 1;
        res->coef[i] = beta[m] / scale[i];
        res->intercept -= res->coef[i] * mean[i];
    }
    res->n_selected = best.k;
    res->criterion = s.best_phi;
exit:
    if (e.release) e.release(&e);
    release_swarm(&s);
    free(xs), free(ys), free(mean), free(scale);
    return status;
}

int clstats_pass_fit(clstats_ctx *ctx, const struct clstats_array *x,
                     const struct clstats_array *y, const struct clstats_pass_options *opts,
                     struct clstats_pass_result *result)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "no context");
    clstats__begin(ctx);
    return clstats__end(ctx, run(ctx, true, x, y, opts, result));
}

int clstats_pass_fit_host(clstats_ctx *ctx, const struct clstats_array *x,
                          const struct clstats_array *y, const struct clstats_pass_options *opts,
                          struct clstats_pass_result *result)
{
    return run(ctx, false, x, y, opts, result);
}
