/* pass.c - the Particle Swarm Stepwise algorithm (section III of the seed paper; Figure 1): the
 * public calls, the data standardised as the paper assumes, the swarm's stochastic forward and
 * backward steps with their direction switching, and the swarm's best model. The engine (device
 * or plain C) finds each particle's largest |X_i^T R| and the inner products of the variable it
 * adds; every draw and every fit is here, on the host, so both engines walk the same path. */
#include "varsel_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double clstats__pass_wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

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

static const char *row_of(const struct clstats_array *a, size_t row)
{
    const size_t es = a->dtype == CLSTATS_FLOAT64 ? 8 : 4;
    return (const char *)a->host + row * clstats__array_stride(a) * es;
}

static double element(const struct clstats_array *a, const char *row, size_t col)
{
    return a->dtype == CLSTATS_FLOAT64 ? ((const double *)row)[col] : ((const float *)row)[col];
}

/* y centred into ys. */
static int standardise_y(clstats_ctx *ctx, const struct clstats_array *y, size_t n, double *ys,
                         double *ymean)
{
    double s = 0;
    for (size_t t = 0; t < n; t++) {
        ys[t] = element(y, row_of(y, y->ny == 1 ? 0 : t), y->ny == 1 ? t : 0);
        if (!isfinite(ys[t]))
            return clstats__fail(ctx, CLSTATS_ERR_NAN, "y[%zu] is %g", t, ys[t]);
        s += ys[t];
    }
    *ymean = s / (double)n;
    double ss = 0;
    for (size_t t = 0; t < n; t++) ys[t] -= *ymean, ss += ys[t] * ys[t];
    return ss > 0 ? CLSTATS_OK : clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "y is constant");
}

static int non_finite(clstats_ctx *ctx, const struct clstats_array *x, size_t t, size_t i)
{
    double v = NAN;
    if (x->host) {
        v = element(x, row_of(x, t), i);
    } else { /* the one value, from the caller's buffer */
        const size_t es = clstats__dtype_size(x->dtype);
        char one[8];
        if (clEnqueueReadBuffer(ctx->queue, x->buffer, CL_TRUE,
                                (x->offset + t * clstats__array_stride(x) + i) * es, es, one, 0,
                                NULL, NULL) == CL_SUCCESS)
            v = x->dtype == CLSTATS_FLOAT64 ? *(double *)one : *(float *)one;
    }
    return clstats__fail(ctx, CLSTATS_ERR_NAN, "x[%zu, %zu] is %g", t, i, v);
}

/* a's elements in host memory: a itself, or, for an array in a buffer, its rows read into a
 * copy *copy (the caller frees it), which *out then describes. */
static int host_side(clstats_ctx *ctx, const struct clstats_array *a, const char *what,
                     struct clstats_array *out, void **copy)
{
    *out = *a;
    *copy = NULL;
    if (a->host) return CLSTATS_OK;
    if (!ctx)
        return clstats__fail(NULL, CLSTATS_ERR_ARG, "%s is in a buffer: reading it needs a context",
                             what);
    int status = clstats__array_check(ctx, a, what, NULL);
    const void *rows = NULL;
    size_t ld = 0;
    if (status == CLSTATS_OK &&
        (status = clstats__array_rows_on_host(ctx, a, 0, a->ny, what, &rows, &ld, copy)) ==
            CLSTATS_OK && rows)
        *out = (struct clstats_array){
            .host = (void *)rows, .dtype = a->dtype, .nx = a->nx, .ny = a->ny, .stride = ld};
    return status;
}

/* A column whose spread is at the rounding level of its mean counts as constant. */
static int constant_column(clstats_ctx *ctx, size_t n, size_t p, const double *mean,
                           const double *scale)
{
    for (size_t i = 0; i < p; i++)
        if (!(scale[i] > 1e-12 * sqrt((double)n) * fabs(mean[i])) || scale[i] == 0)
            return clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "column %zu of x is constant", i);
    return CLSTATS_OK;
}

/* Columns first0 .. first0 + w of x summed in PASS_LANES lanes, in the order of
 * clstats__pass_dot (lane l over rows t = l, l + PASS_LANES, ... rising, then halved pairwise):
 * the values themselves into out (pass 0), or the squares of their distances from mean by fma
 * (pass 1). lanes holds PASS_LANES w doubles. */
static void lane_sums(const struct clstats_array *x, size_t first0, size_t w, const double *mean,
                      int pass, double *lanes, double *out)
{
    for (size_t l = 0; l < PASS_LANES * w; l++) lanes[l] = 0;
    for (size_t t = 0; t < x->ny; t++) {
        const char *row = row_of(x, t);
        double *lane = lanes + (t % PASS_LANES) * w;
        for (size_t c = 0; c < w; c++) {
            const double v = element(x, row, first0 + c);
            if (pass == 0) lane[c] += v;
            else {
                const double d = v - mean[first0 + c];
                lane[c] = fma(d, d, lane[c]);
            }
        }
    }
    for (size_t h = PASS_LANES / 2; h > 0; h /= 2)
        for (size_t l = 0; l < h; l++)
            for (size_t c = 0; c < w; c++) lanes[l * w + c] += lanes[(l + h) * w + c];
    for (size_t c = 0; c < w; c++) out[first0 + c] = lanes[c];
}

/* Columns at a time, so that the lanes stay small whatever p. */
#define STANDARDISE_BLOCK 1024

/* Centres every column of x and scales it to unit norm, into xr row-major in the dtype (the
 * values the device holds), as kernels/varsel/pass.cl's pass_lane_sums, pass_lane_fold and
 * pass_scale do on the device (the same sums in the same order, so the same values); mean and
 * scale (the centred column's norm) per column for the caller's coefficients. The sums go in
 * lanes (clstats__pass_dot's order), which the device can spread over its work-items. */
static int standardise_x(clstats_ctx *ctx, const struct clstats_array *x, void *xr, double *mean,
                         double *scale)
{
    const size_t n = x->ny, p = x->nx;
    for (size_t t = 0; t < n; t++) { /* the first non-finite value in row order */
        const char *row = row_of(x, t);
        for (size_t i = 0; i < p; i++)
            if (!isfinite(element(x, row, i))) return non_finite(ctx, x, t, i);
    }
    const size_t w = p < STANDARDISE_BLOCK ? p : STANDARDISE_BLOCK;
    double *lanes = malloc(PASS_LANES * w * sizeof *lanes);
    if (!lanes) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < p; i += w) {
        const size_t wi = p - i < w ? p - i : w;
        lane_sums(x, i, wi, NULL, 0, lanes, mean);
        for (size_t c = i; c < i + wi; c++) mean[c] /= (double)n;
        lane_sums(x, i, wi, mean, 1, lanes, scale);
        for (size_t c = i; c < i + wi; c++) scale[c] = sqrt(scale[c]);
    }
    free(lanes);
    int status = constant_column(ctx, n, p, mean, scale);
    for (size_t t = 0; t < n && !status; t++) {
        const char *row = row_of(x, t);
        for (size_t i = 0; i < p; i++) {
            const double v = (element(x, row, i) - mean[i]) / scale[i];
            if (x->dtype == CLSTATS_FLOAT64) ((double *)xr)[t * p + i] = v;
            else ((float *)xr)[t * p + i] = (float)v;
        }
    }
    return status;
}

/* X standardised on the device (clstats__engine_device_load), and its errors as standardise_x
 * gives them: the first non-finite value in row order, then the first constant column. */
static int standardise_on_device(clstats_ctx *ctx, struct pass_engine *e,
                                 const struct clstats_array *x, double *mean, double *scale)
{
    const size_t n = x->ny, p = x->nx;
    int32_t *first_bad = malloc(p * sizeof *first_bad);
    if (!first_bad) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    int status = clstats__engine_device_load(e, x, mean, scale, first_bad);
    size_t bad_t = n, bad_i = 0;
    for (size_t i = 0; !status && i < p; i++)
        if (first_bad[i] >= 0 && (size_t)first_bad[i] < bad_t)
            bad_t = (size_t)first_bad[i], bad_i = i;
    free(first_bad);
    if (status) return status;
    if (bad_t < n) return non_finite(ctx, x, bad_t, bad_i);
    return constant_column(ctx, n, p, mean, scale);
}

/* The plain C engine's copy: the same values column-major in double. */
static double *columns_of(const struct pass_data *d)
{
    double *xs = malloc(d->n * d->p * sizeof *xs);
    for (size_t i = 0; xs && i < d->p; i++) clstats__pass_column(d, i, xs + i * d->n);
    return xs;
}

struct swarm {
    const struct clstats_pass_options *o;
    const struct pass_data *d;
    size_t K, cap;
    struct pass_fit *fit;
    int32_t *idx, *size, *want, *adds; /* the engine's view: K x cap, K, K, K */
    double *beta, *gram, *phi, *phi_prev, *work;
    signed char *forward;
    unsigned char *best_in;
    int32_t *best_idx, *best_sorted; /* in the order they entered; rising */
    size_t best_k;
    double best_phi;
    struct pass_fit best_fit; /* the best model's fit, as its particle held it */
    /* The host's time in the iterations by part, for the log: directions, draws and backward
     * steps; the models and coefficients for the engine; the engine's steps; the fits' updates;
     * the criteria and the best model. */
    double host_ms[5];
};

static double phi_of(const struct swarm *s, const struct pass_fit *f)
{
    return criterion(s->o, (double)s->d->n, (double)s->d->p, (double)f->k,
                     clstats__fit_rss(f, s->d->yty));
}

static void note_best(struct swarm *s)
{
    size_t j_best = SIZE_MAX;
    for (size_t j = 0; j < s->K; j++)
        if (s->phi[j] < s->best_phi) s->best_phi = s->phi[j], j_best = j;
    if (j_best == SIZE_MAX) return;
    const struct pass_fit *f = &s->fit[j_best];
    for (size_t m = 0; m < s->best_k; m++) s->best_in[s->best_idx[m]] = 0;
    for (size_t m = 0; m < f->k; m++) s->best_in[f->idx[m]] = 1, s->best_idx[m] = f->idx[m];
    s->best_k = f->k;
    for (size_t m = 0, i = 0; i < s->d->p && m < f->k; i++)
        if (s->best_in[i]) s->best_sorted[m++] = (int32_t)i;
    struct pass_fit *b = &s->best_fit;
    b->k = f->k;
    memcpy(b->idx, f->idx, f->k * sizeof *f->idx);
    memcpy(b->u, f->u, PASS_U_SIZE(f->k) * sizeof *f->u);
    memcpy(b->c, f->c, f->k * sizeof *f->c);
}

/* The engine's view of every model (and, where some particle takes the argmax, its
 * coefficients), the engine's step, and the variables added. */
static int add_wanted(struct swarm *s, struct pass_engine *e, bool any_argmax)
{
    const double t0 = clstats__pass_wall_ms();
    for (size_t j = 0; j < s->K; j++) {
        const struct pass_fit *f = &s->fit[j];
        if (s->want[j] == PASS_NONE) continue;
        s->size[j] = (int32_t)f->k;
        memcpy(s->idx + j * s->cap, f->idx, f->k * sizeof *f->idx);
        if (any_argmax) clstats__fit_beta(f, s->beta + j * s->cap);
    }
    const double t1 = clstats__pass_wall_ms();
    const int status = e->step(e, s->idx, s->size, s->beta, s->want, s->adds, s->gram);
    if (status) return status;
    const double t2 = clstats__pass_wall_ms();
    for (size_t j = 0; j < s->K; j++) {
        const int32_t i = s->adds[j];
        if (s->want[j] == PASS_NONE || i < 0) continue;
        /* A variable in the span of the model is not added: the particle stands still. */
        clstats__fit_add(&s->fit[j], (size_t)i, s->gram + j * PASS_GRAM(s->cap));
    }
    const double t3 = clstats__pass_wall_ms();
    s->host_ms[1] += t1 - t0, s->host_ms[2] += t2 - t1, s->host_ms[3] += t3 - t2;
    return CLSTATS_OK;
}

/* Whether variable i is in the model: a search of its k (at most cap) variables, where a K x p
 * table of memberships would cost more to clear each fit (10 MB at p = 40 000) than the
 * searches take. */
static bool in_model(const struct pass_fit *f, int32_t i)
{
    for (size_t m = 0; m < f->k; m++)
        if (f->idx[m] == i) return true;
    return false;
}

/* The variable a forward step adds, or PASS_ARGMAX. */
static int32_t forward(struct swarm *s, struct clstats__rng *rng, size_t j, double u)
{
    const size_t p = s->d->p;
    const struct pass_fit *f = &s->fit[j];
    const double *pf = s->o->p_forward;
    if (u < pf[0]) {
        size_t avail = 0;
        for (size_t m = 0; m < s->best_k; m++) avail += !in_model(f, s->best_idx[m]);
        if (avail) {
            size_t pick = clstats__rng_below(rng, avail), seen = 0;
            for (size_t m = 0; m < s->best_k; m++) {
                const int32_t i = s->best_sorted[m];
                if (!in_model(f, i) && seen++ == pick) return i;
            }
        }
    } else if (u >= pf[0] + pf[1] && f->k < p) {
        size_t i;
        do
            i = clstats__rng_below(rng, p);
        while (in_model(f, (int32_t)i));
        return (int32_t)i;
    }
    return PASS_ARGMAX;
}

static void backward(struct swarm *s, struct clstats__rng *rng, size_t j, double u)
{
    struct pass_fit *f = &s->fit[j];
    const size_t m = u < s->o->p_backward[0] ? clstats__fit_cheapest(f, s->work)
                                             : clstats__rng_below(rng, f->k);
    clstats__fit_remove(f, m);
}

/* Figure 1, one iteration: directions, the draws and the backward steps, the forward steps'
 * variables from the engine (argmaxes where some particle takes one), the criteria. A particle's
 * draws never depend on what the engine finds, so they come in the same order on every engine. */
static int iterate(struct swarm *s, struct pass_engine *e, struct clstats__rng *rng, bool first)
{
    const size_t K = s->K;
    const double t0 = clstats__pass_wall_ms();
    double *u = s->work + s->cap + s->cap * s->cap;
    for (size_t j = 0; j < K; j++) {
        const size_t k = s->fit[j].k;
        if (first || k <= 1) s->forward[j] = 1;
        else if (k >= s->cap || k >= s->d->p) s->forward[j] = 0;
        else if (s->phi[j] > s->phi_prev[j]) s->forward[j] = !s->forward[j];
        u[j] = clstats__rng_uniform(rng); /* the step's option */
    }
    bool any_forward = false, any_argmax = false;
    for (size_t j = 0; j < K; j++) {
        s->want[j] = PASS_NONE;
        if (s->forward[j]) s->want[j] = forward(s, rng, j, u[j]), any_forward = true;
        else backward(s, rng, j, u[j]);
        any_argmax |= s->want[j] == PASS_ARGMAX;
    }
    s->host_ms[0] += clstats__pass_wall_ms() - t0;
    int status = any_forward ? add_wanted(s, e, any_argmax) : CLSTATS_OK;
    if (status) return status;
    const double t1 = clstats__pass_wall_ms();
    for (size_t j = 0; j < K; j++) {
        s->phi_prev[j] = s->phi[j];
        s->phi[j] = phi_of(s, &s->fit[j]);
    }
    note_best(s);
    s->host_ms[4] += clstats__pass_wall_ms() - t1;
    return CLSTATS_OK;
}

static void release_swarm(struct swarm *s)
{
    if (s->fit)
        for (size_t j = 0; j < s->K; j++) free(s->fit[j].u), free(s->fit[j].c), free(s->fit[j].idx);
    free(s->fit), free(s->idx), free(s->size), free(s->want), free(s->adds), free(s->beta);
    free(s->gram), free(s->phi), free(s->phi_prev), free(s->work), free(s->forward);
    free(s->best_in), free(s->best_idx), free(s->best_sorted);
    free(s->best_fit.u), free(s->best_fit.c), free(s->best_fit.idx);
}

static int make_swarm(clstats_ctx *ctx, struct swarm *s)
{
    const size_t K = s->K, cap = s->cap, p = s->d->p;
    s->fit = calloc(K, sizeof *s->fit);
    s->idx = calloc(K * cap, sizeof *s->idx);
    s->size = calloc(K, sizeof *s->size);
    s->want = calloc(K, sizeof *s->want);
    s->adds = calloc(K, sizeof *s->adds);
    s->beta = calloc(K * cap, sizeof *s->beta);
    s->gram = calloc(K * PASS_GRAM(cap), sizeof *s->gram);
    s->phi = calloc(K, sizeof *s->phi);
    s->phi_prev = calloc(K, sizeof *s->phi_prev);
    s->work = calloc(cap + cap * cap + K, sizeof *s->work);
    s->forward = calloc(K, 1);
    s->best_in = calloc(p, 1);
    s->best_idx = calloc(cap, sizeof *s->best_idx);
    s->best_sorted = calloc(cap, sizeof *s->best_sorted);
    bool ok = s->fit && s->idx && s->size && s->want && s->adds && s->beta && s->gram && s->phi &&
              s->phi_prev && s->work && s->forward && s->best_in && s->best_idx && s->best_sorted;
    for (size_t j = 0; ok && j <= K; j++) {
        struct pass_fit *f = j < K ? &s->fit[j] : &s->best_fit;
        f->cap = cap;
        /* Not cleared (about cap^2 / 2 doubles a particle, 10 MB a swarm): a fit reads only the
         * entries it wrote (fit.c). */
        f->u = malloc(PASS_U_SIZE(cap) * sizeof *f->u);
        f->c = malloc(cap * sizeof *f->c);
        f->idx = malloc(cap * sizeof *f->idx);
        ok = f->u && f->c && f->idx;
    }
    return ok ? CLSTATS_OK : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for the swarm");
}

/* Section III-A: K different one-variable models (a partial shuffle while K <= p; beyond p the
 * variables repeat in turn), fitted through the engine. */
static int start(clstats_ctx *ctx, struct swarm *s, struct pass_engine *e,
                 struct clstats__rng *rng)
{
    const size_t p = s->d->p;
    int32_t *order = malloc(p * sizeof *order);
    if (!order) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    for (size_t j = 0; j < s->K;) {
        const size_t round = s->K - j < p ? s->K - j : p;
        for (size_t i = 0; i < p; i++) order[i] = (int32_t)i;
        for (size_t i = 0; i < round; i++) {
            const size_t r = i + clstats__rng_below(rng, p - i);
            const int32_t t = order[i];
            order[i] = order[r], order[r] = t;
            s->want[j + i] = order[i];
        }
        j += round;
    }
    free(order);
    const int status = add_wanted(s, e, false);
    if (status) return status;
    s->best_phi = INFINITY;
    for (size_t i = 0; i < s->K; i++) s->phi[i] = s->phi_prev[i] = phi_of(s, &s->fit[i]);
    note_best(s);
    return CLSTATS_OK;
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
    if (!x->host == !x->buffer || !y->host == !y->buffer)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "x and y each need host memory or a buffer");
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

    const double t_begin = clstats__pass_wall_ms();
    const bool f64 = x->dtype == CLSTATS_FLOAT64;
    /* On a device with fp64 X goes up as it is and is standardised there; else here. */
    const bool on_device = device && ctx->has_fp64;
    void *xr = NULL;
    double *xs = NULL, *ys = NULL, *mean = NULL, *scale = NULL, ymean = 0;
    void *x_copy = NULL, *y_copy = NULL; /* host copies of arrays in buffers */
    size_t bytes;
    if (!clstats__array_bytes(n * p, f64 ? 8 : 4, &bytes) || p > SIZE_MAX / n)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "x is too large");
    if (!on_device) xr = malloc(bytes);
    ys = malloc(n * sizeof *ys), mean = malloc(p * sizeof *mean), scale = malloc(p * sizeof *scale);
    struct swarm s = {.o = &o, .K = o.n_particles, .cap = cap};
    struct pass_engine e = {0};
    struct pass_data d = {.n = n, .p = p, .f64 = f64, .xr = xr, .ys = ys};
    s.d = &d;
    if ((!on_device && !xr) || !ys || !mean || !scale) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for x");
        goto exit;
    }
    /* Arrays in buffers: y read down (n values), and X too where the host standardises it; on
     * a device with fp64 X stays where it is, so that X already there skips the bus. */
    struct clstats_array yh, xh;
    if ((status = host_side(ctx, y, "y", &yh, &y_copy)) ||
        (status = standardise_y(ctx, &yh, n, ys, &ymean)))
        goto exit;
    for (size_t t = 0; t < n; t++) d.yty += ys[t] * ys[t];
    if (!on_device && ((status = host_side(ctx, x, "x", &xh, &x_copy)) ||
                       (status = standardise_x(ctx, &xh, xr, mean, scale))))
        goto exit;
    free(x_copy), x_copy = NULL;
    if (!device && !(d.xs = xs = columns_of(&d))) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for x");
        goto exit;
    }
    if ((status = make_swarm(ctx, &s))) goto exit;
    const double t_engine = clstats__pass_wall_ms();
    status = device ? clstats__engine_device(ctx, &d, s.K, cap, &e)
                    : clstats__engine_host(ctx, &d, s.K, cap, &e);
    const double t_made = clstats__pass_wall_ms();
    if (status || (on_device && (status = standardise_on_device(ctx, &e, x, mean, scale))))
        goto exit;
    const double t_loaded = clstats__pass_wall_ms();

    struct clstats__rng rng;
    clstats__rng_seed(&rng, o.seed);
    if ((status = start(ctx, &s, &e, &rng))) goto exit;
    memset(s.host_ms, 0, sizeof s.host_ms);
    if (res->history) res->history[0] = s.best_phi;
    const double t_start = clstats__pass_wall_ms();
    for (unsigned it = 0; it < o.n_iter && !status; it++) {
        status = iterate(&s, &e, &rng, it == 0);
        if (res->history) res->history[it + 1] = s.best_phi;
    }
    if (status) goto exit;
    clstats__log(ctx, "pass: %.2f ms to the start (checks and y %.2f, the engine %.2f, x up and "
                 "standardised %.2f, the swarm's first models %.2f), %u iterations %.2f ms",
                 t_start - t_begin, t_engine - t_begin, t_made - t_engine, t_loaded - t_made,
                 t_start - t_loaded, o.n_iter, clstats__pass_wall_ms() - t_start);
    clstats__log(ctx,
                 "pass host in the iterations: directions, draws and backward steps %.2f ms, "
                 "models for the engine %.2f, the engine's steps %.2f, fits updated %.2f, "
                 "criteria and the best %.2f",
                 s.host_ms[0], s.host_ms[1], s.host_ms[2], s.host_ms[3], s.host_ms[4]);

    /* The best model's coefficients from its fit, on the caller's scale. */
    const struct pass_fit *best = &s.best_fit;
    double *beta = s.beta;
    clstats__fit_beta(best, beta);
    memset(res->support, 0, p);
    res->intercept = ymean;
    for (size_t i = 0; i < p; i++) res->coef[i] = 0;
    for (size_t m = 0; m < best->k; m++) {
        const size_t i = (size_t)best->idx[m];
        res->support[i] = 1;
        res->coef[i] = beta[m] / scale[i];
        res->intercept -= res->coef[i] * mean[i];
    }
    res->n_selected = best->k;
    res->criterion = s.best_phi;
exit:
    if (e.release) e.release(&e);
    release_swarm(&s);
    free(xr), free(xs), free(ys), free(mean), free(scale), free(x_copy), free(y_copy);
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
