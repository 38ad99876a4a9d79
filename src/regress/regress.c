/* regress.c - LTS and LMS regression (include/clstats/regress.h): the inputs checked and made one
 * float64 data set (NaN rows left out or refused), FAST-LTS's stages (random starts, nested groups
 * for large n, the best ten to convergence) over src/regress/csteps.c, and robustbase's scale and
 * reweighting on the result. */
#include "regress_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BEST 10         /* candidates carried to the next stage */
#define GROUP_ROWS 300  /* robustbase's nmini */
#define GROUPS 5        /* its kmini */
#define NESTED_FROM 600 /* 2 nmini: below, every start runs on the whole data */
#define ONE_FROM 5000   /* above, only the merged set's best goes on to the whole data, as in
                           robustbase: the full-data C-steps are most of the work at large n */
#define MAX_STEPS 100   /* C-steps of the last stage; each lowers the objective or stops it */

/* Element i of an input (host or device, either dtype) as double, all into out[0..nx ny). */
static int to_host(clstats_ctx *ctx, const struct clstats_array *a, double *out)
{
    const size_t n = a->nx * a->ny, es = clstats__dtype_size(a->dtype);
    const size_t stride = clstats__array_stride(a);
    void *raw = NULL;
    const void *src = a->host;
    if (!a->host) {
        cl_mem buf;
        bool owned;
        raw = malloc(n * es);
        if (!raw) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "reading the input");
        int status = clstats__array_in(ctx, a, true, &buf, NULL, &owned);
        if (status == CLSTATS_OK)
            status = clstats__cl_check(
                ctx, clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, n * es, raw, 0, NULL, NULL),
                "reading the input");
        if (owned) clReleaseMemObject(buf);
        if (status != CLSTATS_OK) {
            free(raw);
            return status;
        }
        src = raw;
    }
    const size_t ld = a->host ? stride : a->nx;
    for (size_t r = 0; r < a->ny; r++)
        for (size_t c = 0; c < a->nx; c++)
            out[r * a->nx + c] = a->dtype == CLSTATS_FLOAT64 ? ((const double *)src)[r * ld + c]
                                                              : ((const float *)src)[r * ld + c];
    free(raw);
    return CLSTATS_OK;
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
    const double *z; /* n rows of q + 1 */
    size_t n, q, h;
    bool lms;
    unsigned starts;
};

/* Rows z[rows[i]] gathered. */
static double *gather(const double *z, size_t q, const size_t *rows, size_t count)
{
    double *g = malloc(count * (q + 1) * sizeof *g);
    for (size_t i = 0; g && i < count; i++)
        memcpy(g + i * (q + 1), z + rows[i] * (q + 1), (q + 1) * sizeof *g);
    return g;
}

/* Starts on the data set z (count rows): elemental fits, two C-steps (LTS), their objectives;
 * the best `keep` into out (q each), their number into *kept. */
static int starts_on(clstats_ctx *ctx, struct clstats__rng *rng, const double *z, size_t count,
                     size_t q, size_t h, size_t starts, bool lms, size_t keep, double *out,
                     size_t *kept)
{
    struct data_set d;
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

/* C-steps on the data set z from m candidates, `steps` of them or (steps 0) until none lowers
 * the objective; the best `keep` into out. */
static int csteps_on(clstats_ctx *ctx, const double *z, size_t count, size_t q, size_t h,
                     double *coef, size_t m, int steps, size_t keep, double *out, size_t *kept,
                     double *best_obj)
{
    struct data_set d;
    double *obj = malloc(m * 8), *prev = malloc(m * 8);
    size_t *idx = malloc(keep * sizeof *idx);
    int status = obj && prev && idx ? clstats__data_set(ctx, z, count, q, m, &d)
                                    : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "C-steps");
    for (size_t c = 0; c < m; c++) prev[c] = INFINITY;
    for (int s = 0; status == CLSTATS_OK && s < (steps ? steps : MAX_STEPS); s++) {
        status = clstats__evaluate(ctx, &d, coef, m, h, true, obj, NULL, NULL);
        bool moved = false;
        for (size_t c = 0; c < m; c++) {
            moved |= obj[c] < prev[c];
            prev[c] = obj[c];
        }
        if (!steps && !moved) break;
    }
    if (status == CLSTATS_OK) status = clstats__evaluate(ctx, &d, coef, m, h, false, obj, NULL, NULL);
    clstats__data_set_free(&d);
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

/* The raw fit: coef (q) of the best candidate. */
static int raw_fit(clstats_ctx *ctx, const struct problem *pb, uint64_t seed, double *coef)
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
            double *zg = gather(pb->z, q, rows + from, to - from);
            size_t hg = (size_t)ceil((double)(to - from) * pb->h / n), got = 0;
            if (hg < q + 1) hg = q + 1;
            status = zg ? starts_on(ctx, &rng, zg, to - from, q, hg, pb->starts / groups, false,
                                    BEST, cand + m * q, &got)
                        : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "group");
            m += got;
            free(zg);
        }
        double *zm = status ? NULL : gather(pb->z, q, rows, merged);
        size_t hm = (size_t)ceil((double)merged * pb->h / n);
        if (hm < q + 1) hm = q + 1;
        if (status == CLSTATS_OK)
            status = zm ? csteps_on(ctx, zm, merged, q, hm, cand, m, 2, BEST, cand, &m, NULL)
                        : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "merged");
        free(zm);
        free(rows);
    }
    if (status == CLSTATS_OK && m == 0)
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "no random subset gave a fit");
    if (status == CLSTATS_OK && !pb->lms)
        status = csteps_on(ctx, pb->z, n, q, pb->h, cand, n > ONE_FROM && m > 1 ? 1 : m, 0, 1,
                           cand, &m, NULL);
    if (status == CLSTATS_OK) memcpy(coef, cand, q * 8);
    return status;
}

/* The raw fit's objective and h-subset (rows of z), recomputed for the chosen coefficients. */
static int subset_of(clstats_ctx *ctx, const struct problem *pb, const double *coef, double *crit,
                     unsigned char *in)
{
    struct data_set d;
    double c[64], obj, kth;
    memcpy(c, coef, pb->q * 8);
    int status = clstats__data_set(ctx, pb->z, pb->n, pb->q, 1, &d);
    if (status == CLSTATS_OK) status = clstats__evaluate(ctx, &d, c, 1, pb->h, true, &obj, &kth, NULL);
    if (status == CLSTATS_OK) status = clstats__subset(ctx, &d, in);
    clstats__data_set_free(&d);
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

/* Reweighting and scales (robustbase's ltsReg; regress.h) from the raw coefficients. */
static int reweight(clstats_ctx *ctx, const struct problem *pb, bool intercept, double alpha,
                    bool no_reweight, const double *raw, double crit, double *coef,
                    double *raw_scale, double *scale, unsigned char *outlier)
{
    const size_t n = pb->n, q = pb->q, h = pb->h;
    const double cutoff = clstats__qnorm(0.9875);
    struct data_set d;
    double *r2 = malloc(n * 8), *w = malloc(n * 8);
    int status = r2 && w ? clstats__data_set(ctx, pb->z, n, q, 1, &d)
                         : clstats__fail(ctx, CLSTATS_ERR_NOMEM, "reweighting");
    if (status == CLSTATS_OK) status = clstats__residuals2(ctx, &d, raw, r2);
    if (status != CLSTATS_OK) goto done;
    const double qh = clstats__qnorm((h + n) / (2.0 * n));
    double s0;
    if (pb->lms)
        s0 = sqrt(crit) / qh * (1 + 5.0 / (double)(n - q));
    else
        s0 = sqrt(crit / h) / sqrt(1 - 2.0 * n / (h / qh) * clstats__dnorm(qh)) *
             clstats__lts_cnp2(q, intercept, n, alpha, false);
    *raw_scale = s0;
    memcpy(coef, raw, q * 8);
    if (s0 < 1e-7) { /* an exact fit of more than h rows */
        *scale = *raw_scale = 0;
        for (size_t i = 0; i < n; i++) outlier[i] = sqrt(r2[i]) > 1e-7;
        goto done;
    }
    double sum_w = 0;
    for (size_t i = 0; i < n; i++) sum_w += w[i] = sqrt(r2[i]) / s0 <= cutoff;
    if (no_reweight) {
        *scale = s0;
        for (size_t i = 0; i < n; i++) outlier[i] = w[i] == 0;
        goto done;
    }
    if ((status = clstats__weighted_fit(ctx, &d, w, coef)) ||
        (status = clstats__residuals2(ctx, &d, coef, r2)))
        goto done;
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += w[i] * r2[i];
    double s = sqrt(ss / (sum_w - 1));
    if (sum_w < n) {
        const double qw = clstats__qnorm((sum_w + n) / (2.0 * n));
        s *= 1 / sqrt(1 - 2.0 * n / (sum_w / qw) * clstats__dnorm(qw));
        if (!pb->lms) s *= clstats__lts_cnp2(q, intercept, n, alpha, true);
    }
    *scale = s;
    for (size_t i = 0; i < n; i++) outlier[i] = !(sqrt(r2[i]) / s <= cutoff);
done:
    if (r2 && w) clstats__data_set_free(&d);
    free(r2), free(w);
    return status;
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
    double *xs = malloc(n_in * p * 8), *ys = malloc(n_in * 8), *z = malloc(n_in * (q + 1) * 8);
    size_t *rows = malloc(n_in * sizeof *rows);
    unsigned char *in = malloc(n_in), *flag = malloc(n_in);
    if (!xs || !ys || !z || !rows || !in || !flag) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "the data set");
        goto done;
    }
    clstats__begin(ctx);
    if ((status = to_host(ctx, x, xs)) || (status = to_host(ctx, y, ys))) goto done;
    /* Z: [1] x y per row without a NaN. */
    size_t n = 0, nan_rows = 0;
    for (size_t i = 0; i < n_in; i++) {
        bool bad = isnan(ys[i]);
        for (size_t j = 0; j < p; j++) bad |= isnan(xs[i * p + j]);
        if (bad) {
            nan_rows++;
            continue;
        }
        double *row = z + n * (q + 1);
        if (intercept) row[0] = 1;
        memcpy(row + intercept, xs + i * p, p * 8);
        row[q] = ys[i];
        rows[n++] = i;
    }
    if (nan_rows && o.nan_policy == CLSTATS_NAN_ERROR) {
        status = clstats__fail(ctx, CLSTATS_ERR_NAN, "%zu rows hold a NaN", nan_rows);
        goto done;
    }
    size_t h = 0;
    double alpha = 0.5;
    if ((status = check_options(ctx, &o, n, q, &h, &alpha))) goto done;
    for (size_t i = 0; i < n; i++) ys[i] = 1; /* all rows: is the design of full rank? */
    double ls[64];
    if (!clstats__host_ls(z, ys, n, q, ls)) {
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR,
                               "x%s is rank-deficient (a constant or collinear column?)",
                               intercept ? " with the intercept column" : "");
        goto done;
    }
    const struct problem pb = {z, n, q, h, o.method == CLSTATS_REGRESS_LMS,
                               o.n_subsets ? o.n_subsets : 500};
    double raw[64], coef[64], crit;
    if ((status = raw_fit(ctx, &pb, o.seed, raw)) ||
        (status = subset_of(ctx, &pb, raw, &crit, in)))
        goto done;
    /* LTS: the LS fit of the h-subset, as robustbase takes lm.fit of its best subset. */
    if (!pb.lms) {
        for (size_t i = 0; i < n; i++) ys[i] = in[i];
        if (!clstats__host_ls(z, ys, n, q, raw)) {
            status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR, "the best h-subset is singular");
            goto done;
        }
    }
    if ((status = reweight(ctx, &pb, intercept, alpha, o.no_reweight, raw, crit, coef,
                           &out->raw_scale, &out->scale, flag)))
        goto done;
    out->intercept = intercept ? coef[0] : 0;
    out->raw_intercept = intercept ? raw[0] : 0;
    memcpy(out->coef, coef + intercept, p * 8);
    if (out->raw_coef) memcpy(out->raw_coef, raw + intercept, p * 8);
    out->crit = crit;
    out->h = h;
    out->n_used = n;
    if (out->support) memset(out->support, 0, n_in);
    if (out->outliers) memset(out->outliers, 0, n_in);
    for (size_t i = 0; i < n; i++) {
        if (out->support) out->support[rows[i]] = in[i];
        if (out->outliers) out->outliers[rows[i]] = flag[i];
    }
done:
    status = clstats__end(ctx, status);
    free(xs), free(ys), free(z), free(rows), free(in), free(flag);
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
