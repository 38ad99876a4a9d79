/* minibatch.c - mini-batch k-means (Sculley 2010; scikit-learn's MiniBatchKMeans): the rows
 * stream through the device a batch at a time, each batch's nearest centres found there, and
 * the centres moved on the host by scikit-learn's per-cluster update in row order
 * (_minibatch_update_dense), in the data's precision. Data and centres stay
 * in host memory, so only one batch at a time needs the device's; one k-means job serves the
 * batches of a fit. */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clstats_kmeans_minibatch_options_init(struct clstats_kmeans_minibatch_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->init = CLSTATS_KMEANS_PLUSPLUS;
    o->batch_size = 1024;
    o->max_iter = 100;
}

/* Rows [first, first + rows) of a host array, as an array of their own. */
static struct clstats_array rows_of(const struct clstats_array *a, size_t first, size_t rows)
{
    struct clstats_array r = *a;
    r.host = (char *)a->host + first * clstats__array_stride(a) * clstats__dtype_size(a->dtype);
    r.ny = rows;
    return r;
}

static const struct clstats_array *weights_of(const struct clstats_array *w, size_t first,
                                              size_t rows, struct clstats_array *slot)
{
    if (!w) return NULL;
    *slot = *w;
    slot->host = (char *)w->host + first * clstats__dtype_size(w->dtype);
    slot->nx = rows, slot->ny = 1, slot->stride = 0;
    return slot;
}

/* scikit-learn's update of cluster j from its members in the batch, in float or double. */
#define UPDATE(T)                                                                                  \
    do {                                                                                           \
        T *c = (T *)centers->host + (size_t)j * cs;                                                \
        T wsum = 0;                                                                                \
        for (size_t p = 0; p < rows; p++)                                                          \
            if (labels[p] == j) wsum += w ? ((const T *)w->host)[p] : (T)1;                        \
        if (!(wsum > 0)) break;                                                                    \
        const T seen = (T)weight_sums[j];                                                          \
        for (size_t c0 = 0; c0 < d; c0++)                                                          \
            c[c0] = c[c0] * seen;                                                                  \
        for (size_t p = 0; p < rows; p++) {                                                        \
            if (labels[p] != j) continue;                                                          \
            const T wp = w ? ((const T *)w->host)[p] : (T)1;                                       \
            const T *xp = (const T *)batch->host + p * xs;                                         \
            for (size_t c0 = 0; c0 < d; c0++)                                                      \
                c[c0] += xp[c0] * wp;                                                              \
        }                                                                                          \
        const T total = seen + wsum;                                                               \
        weight_sums[j] = total;                                                                    \
        const T alpha = (T)1 / total;                                                              \
        for (size_t c0 = 0; c0 < d; c0++)                                                          \
            c[c0] *= alpha;                                                                        \
    } while (0)

static void update_centres(const struct clstats_array *batch, const struct clstats_array *w,
                           const struct clstats_array *centers, double *weight_sums,
                           const int32_t *labels)
{
    const size_t rows = batch->ny, d = batch->nx, xs = clstats__array_stride(batch),
                 cs = clstats__array_stride(centers);
    for (int j = 0; j < (int)centers->ny; j++) {
        if (batch->dtype == CLSTATS_FLOAT64)
            UPDATE(double);
        else
            UPDATE(float);
    }
}

static int check_host(clstats_ctx *ctx, const struct clstats_array *a, const char *what)
{
    if (a && !a->host)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "mini-batch k-means takes %s in host memory",
                             what);
    return CLSTATS_OK;
}

/* The nearest centres of a batch's rows, and their inertia where asked, through one job kept
 * across the batches of a fit (`batches`): opened on the first batch and on each of another row
 * count (the short last batch), reloaded with the rows of the others, so that a batch costs its
 * upload, survey, assignment and labels' read, not a job's setup. Rows with a NaN get label -1,
 * as clstats_kmeans_predict's. */
struct batches {
    struct kmeans_job job;
    bool open;
};

static int label_batch(clstats_ctx *ctx, struct batches *b, const struct clstats_array *batch,
                       const struct clstats_array *w, const struct clstats_array *centers,
                       int32_t *labels, double *inertia)
{
    int status;
    if (b->open && b->job.n != (int)batch->ny) {
        clstats__kmeans_job_close(&b->job);
        b->open = false;
    }
    if (b->open)
        status = clstats__kmeans_job_reload(&b->job, batch, w, 1);
    else {
        status = clstats__kmeans_job_open(ctx, &b->job, batch, (int)centers->ny, w, 1, 0.0, false);
        b->open = true; /* closed by the caller, also after a failed open */
    }
    if (status == CLSTATS_OK) status = clstats__kmeans_job_centres(&b->job, centers);
    bool counted;
    if (status == CLSTATS_OK)
        status = inertia ? clstats__kmeans_assign(&b->job, 0, inertia)
                         : clstats__kmeans_enqueue_assign(&b->job, 0, 1, &counted);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, b->job.labels, CL_TRUE, 0,
                                                       batch->ny * sizeof *labels, labels, 0, NULL,
                                                       NULL),
                                   "reading the labels");
    /* The batch's events summed into the call's kernel time and released now: a fit's
     * thousands held to its end slow the queue (PoCL). */
    return clstats__end(ctx, status);
}

static void batches_close(struct batches *b)
{
    if (b->open) clstats__kmeans_job_close(&b->job);
    b->open = false;
}

/* One step without the public call's begin and end: the batch's labels through the fit's job
 * (b), or by clstats_kmeans_predict for the public step (b NULL), then the centres' update. */
static int step(clstats_ctx *ctx, struct batches *b, const struct clstats_array *batch,
                const struct clstats_array *w, int skip_nan, const struct clstats_array *centers,
                double *weight_sums, int32_t *labels, double *inertia)
{
    int status = b ? label_batch(ctx, b, batch, w, centers, labels, inertia)
                   : clstats_kmeans_predict(ctx, batch, centers, w, labels, inertia);
    if (status != CLSTATS_OK) return status;
    if (!skip_nan)
        for (size_t p = 0; p < batch->ny; p++)
            if (labels[p] < 0)
                return clstats__fail(ctx, CLSTATS_ERR_NAN,
                                     "row %zu of the batch holds a NaN or an infinity", p);
    update_centres(batch, w, centers, weight_sums, labels);
    return CLSTATS_OK;
}

int clstats_kmeans_minibatch_step(clstats_ctx *ctx, const struct clstats_array *batch,
                                  const struct clstats_array *sample_weight, int skip_nan,
                                  const struct clstats_array *centers, double *weight_sums,
                                  int32_t *labels, double *inertia)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "the context is NULL");
    int status = CLSTATS_OK;
    if (!batch || !centers || !weight_sums)
        status = clstats__fail(ctx, CLSTATS_ERR_ARG, "batch, centers and weight_sums are needed");
    if (!status && (skip_nan != 0 && skip_nan != 1))
        status = clstats__fail(ctx, CLSTATS_ERR_ARG, "skip_nan is %d: 0 or 1", skip_nan);
    if (!status) status = check_host(ctx, batch, "the batch");
    if (!status) status = check_host(ctx, centers, "the centres");
    if (!status) status = check_host(ctx, sample_weight, "the weights");
    if (status) return status;
    int32_t *own = labels ? NULL : malloc((batch->ny ? batch->ny : 1) * sizeof *own);
    if (!labels && !own) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "mini-batch labels");
    status = step(ctx, NULL, batch, sample_weight, skip_nan, centers, weight_sums,
                  labels ? labels : own, inertia);
    free(own);
    return status;
}

static double element(const struct clstats_array *a, size_t row, size_t col)
{
    const size_t e = row * clstats__array_stride(a) + col;
    return a->dtype == CLSTATS_FLOAT64 ? ((const double *)a->host)[e]
                                       : (double)((const float *)a->host)[e];
}

/* scikit-learn's absolute tolerance over the valid rows: tol x the mean column variance. */
static double absolute_tol(const struct clstats_array *x, double tol)
{
    const size_t n = x->ny, d = x->nx;
    double total = 0.0;
    for (size_t c = 0; c < d; c++) {
        double sum = 0.0, sq = 0.0;
        size_t m = 0;
        for (size_t p = 0; p < n; p++) {
            const double v = element(x, p, c);
            if (isfinite(v)) sum += v, m++;
        }
        const double mean = m ? sum / (double)m : 0.0;
        for (size_t p = 0; p < n; p++) {
            const double v = element(x, p, c);
            if (isfinite(v)) sq += (v - mean) * (v - mean);
        }
        total += m ? sq / (double)m : 0.0;
    }
    return tol * total / (double)d;
}

/* The first centres from init_size rows drawn with replacement: k-means++ or random rows on the
 * device (src/cluster/seeding.c), written into centers. */
static int seed_centres(clstats_ctx *ctx, const struct clstats_array *x,
                        const struct clstats_kmeans_minibatch_options *o, size_t k,
                        const struct clstats_array *centers)
{
    const size_t n = x->ny, d = x->nx, es = clstats__dtype_size(x->dtype);
    size_t m = o->init_size ? o->init_size : 3 * o->batch_size;
    if (!o->init_size && m < 3 * k) m = 3 * k;
    if (m > n) m = n;
    if (m < k) m = k;
    struct clstats__rng rng;
    clstats__rng_seed(&rng, o->seed);
    char *rows = malloc(m * d * es), *w = o->sample_weight ? malloc(m * es) : NULL;
    if (!rows || (o->sample_weight && !w)) {
        free(rows), free(w);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "mini-batch seeding");
    }
    for (size_t i = 0; i < m; i++) {
        const size_t r = m == n && !o->init_size ? i : (size_t)clstats__rng_below(&rng, n);
        memcpy(rows + i * d * es, (const char *)x->host + r * clstats__array_stride(x) * es,
               d * es);
        if (w) memcpy(w + i * es, (const char *)o->sample_weight->host + r * es, es);
    }
    struct clstats_array sample = {.host = rows, .dtype = x->dtype, .nx = d, .ny = m},
                         ws = {.host = w, .dtype = x->dtype, .nx = m, .ny = 1};
    struct kmeans_job job;
    int status = clstats__kmeans_job_open(ctx, &job, &sample, (int)k, w ? &ws : NULL, o->skip_nan,
                                          0.0, true);
    if (status == CLSTATS_OK)
        status = o->init == CLSTATS_KMEANS_RANDOM ? clstats__kmeans_random(&job, &rng)
                                                  : clstats__kmeans_plusplus(&job, &rng);
    if (status == CLSTATS_OK) status = clstats__array_out(ctx, job.centres[0], centers);
    /* The job's x lies over rows (a host pointer on CPU devices), and the seeding's copies and
     * the centres' read are still queued: all done before rows is freed, whatever the status. */
    const int finished =
        clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish(mini-batch seeding)");
    if (status == CLSTATS_OK) status = finished;
    clstats__kmeans_job_close(&job);
    free(rows), free(w);
    return status;
}

static int copy_given(clstats_ctx *ctx, const struct clstats_array *from,
                      const struct clstats_array *to)
{
    if (!from || from->nx != to->nx || from->ny != to->ny || from->dtype != to->dtype ||
        check_host(ctx, from, "init_centers"))
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "init GIVEN needs init_centers of k x d in host memory, x's dtype");
    const size_t es = clstats__dtype_size(to->dtype);
    for (size_t j = 0; j < to->ny; j++)
        memcpy((char *)to->host + j * clstats__array_stride(to) * es,
               (const char *)from->host + j * clstats__array_stride(from) * es, to->nx * es);
    return CLSTATS_OK;
}

int clstats_kmeans_minibatch(clstats_ctx *ctx, const struct clstats_array *x, size_t k,
                             const struct clstats_kmeans_minibatch_options *opts,
                             const struct clstats_array *centers, int32_t *labels)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "the context is NULL");
    clstats__begin(ctx);
    struct clstats_kmeans_minibatch_options o;
    if (opts)
        o = *opts;
    else
        clstats_kmeans_minibatch_options_init(&o);
    int status = CLSTATS_OK;
    if (!x || !centers) return clstats__fail(ctx, CLSTATS_ERR_ARG, "x and centers are needed");
    if ((status = check_host(ctx, x, "the data")) ||
        (status = check_host(ctx, centers, "the centres")) ||
        (status = check_host(ctx, o.sample_weight, "the weights")))
        return status;
    if ((status = clstats__array_check(ctx, x, "the data", NULL))) return status;
    if (x->nx == 0) return clstats__fail(ctx, CLSTATS_ERR_ARG, "the data has no feature (d = 0)");
    if (x->ny == 0) return clstats__fail(ctx, CLSTATS_ERR_EMPTY, "the data has no row");
    if (k < 1 || k > x->ny)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "k is %zu: 1 to the %zu rows", k, x->ny);
    if (centers->nx != x->nx || centers->ny != k || centers->dtype != x->dtype)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the centres must be %zu x %zu of x's dtype", k,
                             x->nx);
    if (o.sample_weight &&
        (o.sample_weight->nx * o.sample_weight->ny != x->ny || o.sample_weight->dtype != x->dtype ||
         (o.sample_weight->ny > 1 && (o.sample_weight->nx != 1 || o.sample_weight->stride > 1))))
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "the sample weights must be %zu values of the data's dtype", x->ny);
    if ((unsigned)o.init > CLSTATS_KMEANS_GIVEN || o.batch_size < 1 || o.max_iter < 0 ||
        !(o.tol >= 0) || !isfinite(o.tol) || (o.skip_nan != 0 && o.skip_nan != 1))
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "mini-batch options: init %d, batch_size %zu, max_iter %d, tol %g, "
                             "skip_nan %d",
                             (int)o.init, o.batch_size, o.max_iter, o.tol, o.skip_nan);
    const size_t n = x->ny, d = x->nx, batch = o.batch_size < n ? o.batch_size : n;
    double *sums = calloc(k, sizeof *sums), *before = malloc(k * d * sizeof *before);
    int32_t *batch_labels = malloc(batch * sizeof *batch_labels);
    if (!sums || !before || !batch_labels) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "mini-batch k-means");
        goto done;
    }
    status = o.init == CLSTATS_KMEANS_GIVEN ? copy_given(ctx, o.init_centers, centers)
                                            : seed_centres(ctx, x, &o, k, centers);
    const double tol = o.tol > 0 ? absolute_tol(x, o.tol) : -1.0;
    struct batches fit = {.open = false};
    int passes = 0;
    size_t steps = 0;
    while (status == CLSTATS_OK && passes < o.max_iter) {
        for (size_t j = 0; j < k; j++)
            for (size_t c = 0; c < d; c++)
                before[j * d + c] = element(centers, j, c);
        for (size_t first = 0; first < n && status == CLSTATS_OK; first += batch) {
            const size_t rows = n - first < batch ? n - first : batch;
            struct clstats_array b = rows_of(x, first, rows), ws;
            status = step(ctx, &fit, &b, weights_of(o.sample_weight, first, rows, &ws), o.skip_nan,
                          centers, sums, batch_labels, NULL);
            steps++;
        }
        passes++;
        double shift = 0.0;
        for (size_t j = 0; j < k; j++)
            for (size_t c = 0; c < d; c++) {
                const double t = element(centers, j, c) - before[j * d + c];
                shift += t * t;
            }
        if (shift <= tol) break;
    }
    /* Every row's label and the inertia by the final centres, a batch at a time. */
    double total = 0.0;
    for (size_t first = 0; first < n && status == CLSTATS_OK && (labels || o.inertia);
         first += batch) {
        const size_t rows = n - first < batch ? n - first : batch;
        struct clstats_array b = rows_of(x, first, rows), ws;
        double part = 0.0;
        status = label_batch(ctx, &fit, &b, weights_of(o.sample_weight, first, rows, &ws), centers,
                             labels ? labels + first : batch_labels, &part);
        total += part;
    }
    if (status == CLSTATS_OK) {
        if (o.n_iter) *o.n_iter = passes;
        if (o.n_steps) *o.n_steps = steps;
        if (o.inertia) *o.inertia = total;
    }
    batches_close(&fit);
done:
    free(sums), free(before), free(batch_labels);
    return clstats__end(ctx, status);
}
