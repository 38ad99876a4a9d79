/* regress.c - LTS and LMS regression (include/clstats/regress.h): the inputs checked and made one
 * float64 data set (NaN rows left out or refused), FAST-LTS's stages (random starts, nested groups
 * for large n, the best ten to convergence) over src/regress/csteps.c, and robustbase's scale and
 * reweighting on the result. */
#include "regress_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BEST 10         /* candidates carried to the next stage */
#define GROUP_ROWS 300  /* robustbase's nmini */
#define GROUPS 5        /* its kmini */
#define NESTED_FROM 600 /* 2 nmini: below, every start runs on the whole data */
#define ONE_FROM 5000   /* above, only the merged set's best goes on to the whole data, as in
                           robustbase: the full-data C-steps are most of the work at large n */
#define MAX_STEPS 100   /* C-steps of the last stage; each lowers the objective or stops it */

/* An input's values: the caller's host array in place (*ld its row stride in elements), or a
 * device array read into *raw (malloc'd, rows packed). */
static int values_of(clstats_ctx *ctx, const struct clstats_array *a, const void **src,
                     size_t *ld, void **raw)
{
    *raw = NULL;
    if (a->host) {
        *src = a->host;
        *ld = clstats__array_stride(a);
        return CLSTATS_OK;
    }
    const size_t bytes = a->nx * a->ny * clstats__dtype_size(a->dtype);
    cl_mem buf;
    bool owned;
    if (!(*raw = malloc(bytes ? bytes : 1)))
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "reading the input");
    int status = clstats__array_in(ctx, a, true, &buf, NULL, &owned);
    if (status != CLSTATS_OK) return status;
    status = clstats__cl_check(
        ctx, clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, bytes, *raw, 0, NULL, NULL),
        "reading the input");
    if (owned) clReleaseMemObject(buf);
    *src = *raw;
    *ld = a->nx;
    return status;
}

/* Element (r, c) of an input's values as double. */
static inline double value_at(const struct clstats_array *a, const void *src, size_t ld, size_t r,
                              size_t c)
{
    return a->dtype == CLSTATS_FLOAT64 ? ((const double *)src)[r * ld + c]
                                       : ((const float *)src)[r * ld + c];
}

/* Z, [1] x y per row of x and y without a NaN (n rows of q + 1), and each one's input row. */
static int design_of(clstats_ctx *ctx, const struct clstats_array *x,
                     const struct clstats_array *y, bool intercept, double *z, size_t *rows,
                     size_t *n, size_t *nan_rows)
{
    const void *xs, *ys;
    void *xraw, *yraw = NULL;
    size_t xld, yld;
    int status = values_of(ctx, x, &xs, &xld, &xraw);
    if (status == CLSTATS_OK) status = values_of(ctx, y, &ys, &yld, &yraw);
    const size_t p = x->nx, q = p + intercept;
    *n = *nan_rows = 0;
    for (size_t i = 0; status == CLSTATS_OK && i < x->ny; i++) {
        double *row = z + *n * (q + 1);
        if (intercept) row[0] = 1;
        bool bad = false;
        for (size_t j = 0; j < p; j++) bad |= isnan(row[intercept + j] = value_at(x, xs, xld, i, j));
        row[q] = y->nx == 1 ? value_at(y, ys, yld, i, 0) : value_at(y, ys, yld, 0, i);
        if (bad || isnan(row[q])) {
            ++*nan_rows;
            continue;
        }
        rows[(*n)++] = i;
    }
    free(xraw), free(yraw);
    return status;
}

/* Where the time goes, for clstats_ctx_set_log's reader (bench/bench_regress.c prints it): a
 * stage's wall time from the host and its kernels' time from their profiling events, each
 * stage ending on a blocking read, so its events are done. */
struct stage_clock {
    double wall;
    size_t mark;
};

static double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static void stage_start(clstats_ctx *ctx, struct stage_clock *c)
{
    c->wall = wall_ms();
    c->mark = clstats__event_mark(ctx);
}

static void stage_end(clstats_ctx *ctx, struct stage_clock *c, const char *what)
{
    clstats__log(ctx, "regress %s: %.2f ms, kernels %.2f ms", what, wall_ms() - c->wall,
                 clstats__events_ms(ctx, c->mark));
    stage_start(ctx, c);
}

/* Indices of the m smallest of v[0..count), best first, ties by index (insertion sort: m is 10). */
static size_t best_of(const double *v, size_t count, size_t m, size_t *idx)
{
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(v[i])) continue;
        size_t j = k < m ? k++ : m;
        if (j == m && !(v[i] < v[idx[m - 1]])) continue;
        if (j == m) j = m - 1;
        while (j > 0 && v[i] < v[idx[j - 1]]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    return k;
}

struct problem {
    const double *z; /* n rows of q + 1, or NULL where the device built them from x and y */
    const struct clstats_array *x, *y; /* the caller's host arrays, where z is NULL */
    bool intercept;
    size_t n, q, h;
    bool lms;
    unsigned starts;
};

/* Rows rows[i] of Z gathered, from z or from the caller's arrays. */
static double *gather(const struct problem *pb, const size_t *rows, size_t count)
{
    const size_t q = pb->q, p = q - pb->intercept;
    double *g = malloc(count * (q + 1) * sizeof *g);
    const size_t ldx = pb->z ? 0 : clstats__array_stride(pb->x);
    const size_t ldy = pb->z ? 0 : clstats__array_stride(pb->y);
    for (size_t i = 0; g && i < count; i++) {
        double *row = g + i * (q + 1);
        if (pb->z) {
            memcpy(row, pb->z + rows[i] * (q + 1), (q + 1) * sizeof *g);
            continue;
        }
        if (pb->intercept) row[0] = 1;
        for (size_t j = 0; j < p; j++)
            row[pb->intercept + j] = value_at(pb->x, pb->x->host, ldx, rows[i], j);
        row[q] = pb->y->nx == 1 ? value_at(pb->y, pb->y->host, ldy, rows[i], 0)
                                : value_at(pb->y, pb->y->host, ldy, 0, rows[i]);
    }
    return g;
}

/* Starts on the data set z (count rows): elemental fits, two C-steps (LTS), their objectives;
 * the best `keep` into out (q each), their number into *kept. */
static int starts_on(clstats_ctx *ctx, struct clstats__rng *rng, const double *z, size_t count,
                     size_t q, size_t h, size_t starts, bool lms, size_t keep, double *out,
                     size_t *kept)
{
    struct data_set d = {0};
    double *coef = malloc(starts * q * 8), *obj = malloc(starts * 8), *kth = malloc(starts * 8);
    size_t *idx = malloc(keep * sizeof *idx);
    int status = coef && obj && kth && idx ? CLSTATS_OK
                                           : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "starts");
    size_t m = 0;
    for (size_t s = 0; status == CLSTATS_OK && s < starts; s++)
        if (clstats__elemental_fit(rng, z, count, q, coef + m * q)) m++;
    if (status == CLSTATS_OK && m == 0)
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "no random subset gave a fit");
    if (status == CLSTATS_OK) status = clstats__data_set(ctx, z, count, q, m, &d);
    for (int step = 0; status == CLSTATS_OK && !lms && step < 2; step++)
        status = clstats__evaluate(ctx, &d, coef, m, h, true, obj, kth, NULL);
    if (status == CLSTATS_OK) status = clstats__evaluate(ctx, &d, coef, m, h, false, obj, kth, NULL);
    clstats__data_set_free(&d);
    if (status == CLSTATS_OK) {
        *kept = best_of(lms ? kth : obj, m, keep, idx);
        for (size_t i = 0; i < *kept; i++) memcpy(out + i * q, coef + idx[i] * q, q * 8);
    }
    free(coef), free(obj), free(kth), free(idx);
    return status;
}

/* C-steps on the data set z (on the device already where `full` is not NULL) from m
 * candidates, `steps` of them or (steps 0) until none lowers the objective; the best `keep`
 * into out. */
static int csteps_on(clstats_ctx *ctx, struct data_set *full, const double *z, size_t count,
                     size_t q, size_t h, double *coef, size_t m, int steps, size_t keep,
                     double *out, size_t *kept, double *best_obj)
{
    struct data_set own = {0}, *d = full ? full : &own;
    double *obj = malloc(m * 8), *prev = malloc(m * 8);
    size_t *idx = malloc(keep * sizeof *idx);
    int status = !(obj && prev && idx) ? clstats__fail(ctx, CLSTATS_ERR_NOMEM, "C-steps")
                 : full               ? CLSTATS_OK
                                      : clstats__data_set(ctx, z, count, q, m, &own);
    for (size_t c = 0; c < m; c++) prev[c] = INFINITY;
    int done_steps = 0;
    for (int s = 0; status == CLSTATS_OK && s < (steps ? steps : MAX_STEPS); s++) {
        status = clstats__evaluate(ctx, d, coef, m, h, true, obj, NULL, NULL);
        done_steps++;
        bool moved = false;
        for (size_t c = 0; c < m; c++) {
            moved |= obj[c] < prev[c];
            prev[c] = obj[c];
        }
        if (!steps && !moved) break;
    }
    if (full)
        clstats__log(ctx, "regress: %d C-steps of %zu candidates on %zu rows", done_steps, m, count);
    if (status == CLSTATS_OK) status = clstats__evaluate(ctx, d, coef, m, h, false, obj, NULL, NULL);
    if (!full) clstats__data_set_free(&own);
    double *chosen = status ? NULL : malloc(keep * q * 8);
    if (status == CLSTATS_OK && !chosen) status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "best");
    if (status == CLSTATS_OK) { /* through a copy: out may be coef */
        *kept = best_of(obj, m, keep, idx);
        for (size_t i = 0; i < *kept; i++) memcpy(chosen + i * q, coef + idx[i] * q, q * 8);
        memcpy(out, chosen, *kept * q * 8);
        if (best_obj) *best_obj = *kept ? obj[idx[0]] : INFINITY;
    }
    free(chosen);
    free(obj), free(prev), free(idx);
    return status;
}

/* Candidates the whole data's C-steps take at once (raw_fit): one past ONE_FROM rows and for
 * LMS, else the best of the starts. */
static size_t full_cap(size_t n, bool lms)
{
    return lms || n > ONE_FROM ? 1 : BEST;
}

/* The raw fit: coef (q) of the best candidate; `full` holds the whole data on the device. */
static int raw_fit(clstats_ctx *ctx, const struct problem *pb, uint64_t seed,
                   struct data_set *full, struct stage_clock *clock, double *coef)
{
    struct clstats__rng rng;
    clstats__rng_seed(&rng, seed);
    const size_t n = pb->n, q = pb->q;
    double cand[GROUPS * BEST * 64];
    size_t m = 0;
    int status = CLSTATS_OK;
    if (pb->lms || n < NESTED_FROM) {
        status = starts_on(ctx, &rng, pb->z, n, q, pb->h, pb->starts, pb->lms, pb->lms ? 1 : BEST,
                           cand, &m);
    } else {
        /* Disjoint groups of a random sample of at most 1500 rows (partial Fisher-Yates). */
        const size_t merged = n < GROUP_ROWS * GROUPS ? n : GROUP_ROWS * GROUPS;
        const size_t groups = merged / GROUP_ROWS < GROUPS ? merged / GROUP_ROWS : GROUPS;
        size_t *rows = malloc(n * sizeof *rows);
        if (!rows) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "rows");
        for (size_t i = 0; i < n; i++) rows[i] = i;
        for (size_t i = 0; i < merged; i++) {
            const size_t j = i + (size_t)clstats__rng_below(&rng, n - i);
            const size_t t = rows[i];
            rows[i] = rows[j], rows[j] = t;
        }
        for (size_t g = 0; status == CLSTATS_OK && g < groups; g++) {
            const size_t from = g * merged / groups, to = (g + 1) * merged / groups;
            double *zg = gather(pb, rows + from, to - from);
            size_t hg = (size_t)ceil((double)(to - from) * pb->h / n), got = 0;
            if (hg < q + 1) hg = q + 1;
            status = zg ? starts_on(ctx, &rng, zg, to - from, q, hg, pb->starts / groups, false,
                                    BEST, cand + m * q, &got)
                        : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "group");
            m += got;
            free(zg);
        }
        double *zm = status ? NULL : gather(pb, rows, merged);
        size_t hm = (size_t)ceil((double)merged * pb->h / n);
        if (hm < q + 1) hm = q + 1;
        if (status == CLSTATS_OK)
            status = zm ? csteps_on(ctx, NULL, zm, merged, q, hm, cand, m, 2, BEST, cand, &m, NULL)
                        : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "merged");
        free(zm);
        free(rows);
    }
    if (status == CLSTATS_OK && m == 0)
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "no random subset gave a fit");
    stage_end(ctx, clock, "starts and nested groups");
    if (status == CLSTATS_OK && !pb->lms)
        status = csteps_on(ctx, full, pb->z, n, q, pb->h, cand, n > ONE_FROM && m > 1 ? 1 : m, 0,
                           1, cand, &m, NULL);
    if (status == CLSTATS_OK) memcpy(coef, cand, q * 8);
    stage_end(ctx, clock, "whole-data C-steps");
    return status;
}

/* The raw fit's objective and h-subset (rows of z), recomputed for the chosen coefficients on
 * the whole data; for LTS, raw becomes the LS fit of that subset, as robustbase takes lm.fit
 * of its best subset. */
static int subset_of(clstats_ctx *ctx, const struct problem *pb, struct data_set *full,
                     double *raw, double *crit, unsigned char *in)
{
    double c[64], obj, kth;
    memcpy(c, raw, pb->q * 8);
    int status = clstats__evaluate(ctx, full, c, 1, pb->h, true, &obj, &kth, NULL);
    if (status == CLSTATS_OK) status = clstats__subset(ctx, full, in);
    if (status == CLSTATS_OK && !pb->lms &&
        (status = clstats__fit_of_weights(ctx, full, false, raw)) == CLSTATS_ERR_SINGULAR)
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "the best h-subset is singular");
    *crit = pb->lms ? kth : obj;
    return status;
}

static int check_options(clstats_ctx *ctx, const struct clstats_regress_options *o, size_t n,
                         size_t q, size_t *h, double *alpha)
{
    *alpha = o->alpha == 0 ? 0.5 : o->alpha;
    if (!(*alpha >= 0.5 && *alpha <= 1))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "alpha %g is not in [0.5, 1]", o->alpha);
    if ((unsigned)o->method > CLSTATS_REGRESS_LMS || (unsigned)o->nan_policy > CLSTATS_NAN_ERROR)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "unknown method or nan_policy");
    if (n < q + 1)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "%zu rows cannot fit %zu coefficients: at least %zu are needed", n, q,
                             q + 1);
    const size_t n2 = (n + q + 1) / 2;
    *h = o->h ? o->h : (size_t)floor(2.0 * n2 - n + 2.0 * (n - n2) * *alpha);
    if (*h < q + 1 || *h > n)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "h = %zu is not in [%zu, %zu]", *h, q + 1, n);
    if (o->h) *alpha = fmin(1, fmax(0.5, (double)*h / n));
    return CLSTATS_OK;
}

/* Reweighting and scales (robustbase's ltsReg; regress.h) from the raw coefficients, on the
 * whole data's device copy: only sums, q coefficients and the n outlier flags come back. */
static int reweight(clstats_ctx *ctx, const struct problem *pb, struct data_set *d,
                    bool intercept, double alpha, bool no_reweight, const double *raw,
                    double crit, double *coef, double *raw_scale, double *scale,
                    unsigned char *outlier)
{
    const size_t n = pb->n, q = pb->q, h = pb->h;
    const double cutoff = clstats__qnorm(0.9875);
    int status = clstats__fit_residuals(ctx, d, raw);
    if (status != CLSTATS_OK) return status;
    const double qh = clstats__qnorm((h + n) / (2.0 * n));
    double s0;
    if (pb->lms)
        s0 = sqrt(crit) / qh * (1 + 5.0 / (double)(n - q));
    else
        s0 = sqrt(crit / h) / sqrt(1 - 2.0 * n / (h / qh) * clstats__dnorm(qh)) *
             clstats__lts_cnp2(q, intercept, n, alpha, false);
    *raw_scale = s0;
    memcpy(coef, raw, q * 8);
    if (s0 < 1e-7) { /* an exact fit of more than h rows: outliers where sqrt(r2) > 1e-7 */
        *scale = *raw_scale = 0;
        return clstats__cutoff(ctx, d, 1, 1e-7, outlier);
    }
    double sum_w, ss;
    if (no_reweight) {
        *scale = s0;
        return clstats__cutoff(ctx, d, s0, cutoff, outlier);
    }
    if ((status = clstats__cutoff(ctx, d, s0, cutoff, NULL)) ||
        (status = clstats__fit_of_weights(ctx, d, true, coef)) ||
        (status = clstats__fit_residuals(ctx, d, coef)) ||
        (status = clstats__residual_sums(ctx, d, &sum_w, &ss)))
        return status;
    double s = sqrt(ss / (sum_w - 1));
    if (sum_w < n) {
        const double qw = clstats__qnorm((sum_w + n) / (2.0 * n));
        s *= 1 / sqrt(1 - 2.0 * n / (sum_w / qw) * clstats__dnorm(qw));
        if (!pb->lms) s *= clstats__lts_cnp2(q, intercept, n, alpha, true);
    }
    *scale = s;
    return clstats__cutoff(ctx, d, s, cutoff, outlier);
}

int clstats_regress_fit(clstats_ctx *ctx, const struct clstats_array *x,
                        const struct clstats_array *y, const struct clstats_regress_options *opts,
                        struct clstats_regress_result *out)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    if (!x || !y || !out || !out->coef)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "x, y, out or out->coef is NULL");
    const struct clstats_regress_options o = opts ? *opts : (struct clstats_regress_options){0};
    const size_t n_in = x->ny, p = x->nx;
    const bool intercept = !o.no_intercept;
    const size_t q = p + intercept;
    int status = clstats__array_check(ctx, x, "x", NULL);
    if (!status) status = clstats__array_check(ctx, y, "y", NULL);
    if (status) return status;
    if (y->nx * y->ny != n_in || (y->nx != 1 && y->ny != 1))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "y (%zu x %zu) is not %zu values", y->ny,
                             y->nx, n_in);
    if (q > 64) return clstats__fail(ctx, CLSTATS_ERR_ARG, "%zu coefficients: at most 64", q);
    if (!ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the regression needs float64");
    /* Z on the device, built there from host arrays where LTS's stages only ever need samples
     * of its rows on the host (regress.design, on GPUs); otherwise (CPU devices, device arrays,
     * NaN rows, small n, LMS's starts on the whole data) on the host, then uploaded. */
    const bool lms = o.method == CLSTATS_REGRESS_LMS;
    const bool build_there = !lms && x->host && y->host && n_in >= NESTED_FROM &&
                             clstats__tuned(ctx, P_REGRESS_DESIGN) == SWITCH_ON;
    double *z = NULL;
    size_t *rows = malloc(n_in * sizeof *rows);
    unsigned char *in = malloc(n_in), *flag = malloc(n_in);
    struct data_set d = {0};
    if (!rows || !in || !flag) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the data set");
        goto done;
    }
    clstats__begin(ctx);
    struct stage_clock clock;
    stage_start(ctx, &clock);
    size_t n = 0, nan_rows = 0;
    if (build_there) {
        if ((status = clstats__data_set_design(ctx, x, y, intercept, full_cap(n_in, lms), &d,
                                               &nan_rows)))
            goto done;
        if (nan_rows) clstats__data_set_free(&d);
        n = n_in; /* rows: not read where none is left out */
    }
    if (!build_there || nan_rows) {
        if (!(z = malloc(n_in * (q + 1) * 8))) {
            status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the data set");
            goto done;
        }
        if ((status = design_of(ctx, x, y, intercept, z, rows, &n, &nan_rows))) goto done;
    }
    if (nan_rows && o.nan_policy == CLSTATS_NAN_ERROR) {
        status = clstats__fail(ctx, CLSTATS_ERR_NAN, "%zu rows hold a NaN", nan_rows);
        goto done;
    }
    size_t h = 0;
    double alpha = 0.5;
    if ((status = check_options(ctx, &o, n, q, &h, &alpha))) goto done;
    /* The whole data on the device once, for every stage that reads all its rows: is the
     * design of full rank (the LS fit of all rows), the last C-steps, the h-subset, the
     * reweighting. */
    double raw[64], coef[64], crit;
    if ((z && (status = clstats__data_set(ctx, z, n, q, full_cap(n, lms), &d))) ||
        (status = clstats__all_rows(ctx, &d)))
        goto done;
    if ((status = clstats__fit_of_weights(ctx, &d, true, raw)) == CLSTATS_ERR_SINGULAR)
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR,
                               "x%s is rank-deficient (a constant or collinear column?)",
                               intercept ? " with the intercept column" : "");
    if (status) goto done;
    stage_end(ctx, &clock, "data set and rank check");
    const struct problem pb = {z, x, y, intercept, n, q, h, lms, o.n_subsets ? o.n_subsets : 500};
    if ((status = raw_fit(ctx, &pb, o.seed, &d, &clock, raw))) goto done;
    if ((status = subset_of(ctx, &pb, &d, raw, &crit, in))) goto done;
    if ((status = reweight(ctx, &pb, &d, intercept, alpha, o.no_reweight, raw, crit, coef,
                           &out->raw_scale, &out->scale, flag)))
        goto done;
    stage_end(ctx, &clock, "h-subset and reweighting");
    out->intercept = intercept ? coef[0] : 0;
    out->raw_intercept = intercept ? raw[0] : 0;
    memcpy(out->coef, coef + intercept, p * 8);
    if (out->raw_coef) memcpy(out->raw_coef, raw + intercept, p * 8);
    out->crit = crit;
    out->h = h;
    out->n_used = n;
    if (n == n_in) { /* no row left out: the flags are the caller's rows already */
        if (out->support) memcpy(out->support, in, n);
        if (out->outliers) memcpy(out->outliers, flag, n);
        goto done;
    }
    if (out->support) memset(out->support, 0, n_in);
    if (out->outliers) memset(out->outliers, 0, n_in);
    for (size_t i = 0; i < n; i++) {
        if (out->support) out->support[rows[i]] = in[i];
        if (out->outliers) out->outliers[rows[i]] = flag[i];
    }
done:
    status = clstats__end(ctx, status);
    clstats__data_set_free(&d);
    free(z), free(rows), free(in), free(flag);
    return status;
}

int clstats_lts_fit(clstats_ctx *ctx, const struct clstats_array *x, const struct clstats_array *y,
                    const struct clstats_regress_options *opts, struct clstats_regress_result *out)
{
    struct clstats_regress_options o = opts ? *opts : (struct clstats_regress_options){0};
    o.method = CLSTATS_REGRESS_LTS;
    return clstats_regress_fit(ctx, x, y, &o, out);
}

int clstats_lms_fit(clstats_ctx *ctx, const struct clstats_array *x, const struct clstats_array *y,
                    const struct clstats_regress_options *opts, struct clstats_regress_result *out)
{
    struct clstats_regress_options o = opts ? *opts : (struct clstats_regress_options){0};
    o.method = CLSTATS_REGRESS_LMS;
    return clstats_regress_fit(ctx, x, y, &o, out);
}
