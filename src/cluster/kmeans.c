/* kmeans.c - the module's public calls (include/clstats/cluster.h): the arguments checked, a job
 * opened on the data, n_init runs each seeded and iterated on the device, the run with the
 * lowest inertia kept, its centres and labels written where the caller asked. */
#include "cluster_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void clstats_kmeans_options_init(struct clstats_kmeans_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->init = CLSTATS_KMEANS_PLUSPLUS;
    opts->n_init = 1;
    opts->max_iter = 300;
    opts->tol = 1e-4;
}

/* x (n rows of d), its k x d centres and its n weights agree. */
static int check_shapes(clstats_ctx *ctx, const struct clstats_array *x, size_t k,
                        const struct clstats_array *centers, const struct clstats_array *weight)
{
    int status;
    if (!x) return clstats__fail(ctx, CLSTATS_ERR_ARG, "the data is NULL");
    if (x->nx == 0)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the data has no feature (d = 0)");
    if (x->ny == 0) return clstats__fail(ctx, CLSTATS_ERR_EMPTY, "the data has no row");
    if ((status = clstats__array_check(ctx, x, "the data", NULL))) return status;
    if (x->ny > INT_MAX - 2 * KMEANS_WG || x->nx > 65536)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "k-means takes at most %d rows and 65536 features, not %zu x %zu",
                             INT_MAX - 2 * KMEANS_WG, x->ny, x->nx);
    if (k < 1) return clstats__fail(ctx, CLSTATS_ERR_ARG, "k is %zu: at least one cluster", k);
    if (k > x->ny)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "k = %zu clusters exceed the %zu rows", k,
                             x->ny);
    if (centers) {
        if ((status = clstats__array_check(ctx, centers, "the centres", NULL))) return status;
        if (centers->nx != x->nx || centers->ny != k || centers->dtype != x->dtype)
            return clstats__fail(ctx, CLSTATS_ERR_ARG,
                                 "the centres must be %zu x %zu of the data's dtype, not %zu x %zu",
                                 k, x->nx, centers->ny, centers->nx);
    }
    if (weight) {
        if ((status = clstats__array_check(ctx, weight, "the sample weights", NULL))) return status;
        if (weight->nx * weight->ny != x->ny || (weight->ny != 1 && weight->nx != 1) ||
            weight->dtype != x->dtype)
            return clstats__fail(ctx, CLSTATS_ERR_ARG,
                                 "the sample weights must be %zu values of the data's dtype",
                                 x->ny);
    }
    return CLSTATS_OK;
}

static int copy_buffer(clstats_ctx *ctx, cl_mem from, cl_mem to, size_t bytes)
{
    return clstats__cl_check(ctx, clEnqueueCopyBuffer(ctx->queue, from, to, 0, 0, bytes, 0, NULL,
                                                      NULL),
                             "keeping the best run");
}

static int labels_out(struct kmeans_job *job, cl_mem labels, int32_t *out)
{
    if (!out) return CLSTATS_OK;
    return clstats__cl_check(job->ctx,
                             clEnqueueReadBuffer(job->ctx->queue, labels, CL_TRUE, 0,
                                                 (size_t)job->n * sizeof *out, out, 0, NULL,
                                                 NULL),
                             "reading the labels");
}

int clstats_kmeans(clstats_ctx *ctx, const struct clstats_array *x, size_t k,
                   const struct clstats_kmeans_options *opts, const struct clstats_array *centers,
                   int32_t *labels)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "the context is NULL");
    struct clstats_kmeans_options o;
    if (opts) o = *opts;
    else clstats_kmeans_options_init(&o);
    clstats__begin(ctx);
    int status = check_shapes(ctx, x, k, centers, o.sample_weight);
    if (status != CLSTATS_OK) return clstats__end(ctx, status);
    if (!centers) return clstats__end(ctx, clstats__fail(ctx, CLSTATS_ERR_ARG, "centers is NULL"));
    if ((unsigned)o.init > CLSTATS_KMEANS_GIVEN || o.n_init < 1 || o.max_iter < 1 ||
        !(o.tol >= 0) || !isfinite(o.tol) || (o.skip_nan != 0 && o.skip_nan != 1))
        return clstats__end(ctx, clstats__fail(ctx, CLSTATS_ERR_ARG,
                                               "k-means options: init %d, n_init %d, max_iter %d, "
                                               "tol %g, skip_nan %d",
                                               (int)o.init, o.n_init, o.max_iter, o.tol,
                                               o.skip_nan));
    if (o.init == CLSTATS_KMEANS_GIVEN) {
        if (!o.init_centers)
            return clstats__end(ctx,
                                clstats__fail(ctx, CLSTATS_ERR_ARG, "init GIVEN needs init_centers"));
        if ((status = check_shapes(ctx, x, k, o.init_centers, NULL)))
            return clstats__end(ctx, status);
    }
    struct kmeans_job job;
    cl_mem best_centres = NULL, best_labels = NULL;
    status = clstats__kmeans_job_open(ctx, &job, x, (int)k, o.sample_weight, o.skip_nan, o.tol,
                                      true);
    const size_t centre_bytes = k * x->nx * job.es;
    /* Given centres make one run whatever n_init says, as in scikit-learn. */
    const int runs = o.init == CLSTATS_KMEANS_GIVEN ? 1 : o.n_init;
    if (status == CLSTATS_OK && runs > 1 &&
        ((status = clstats__scratch(ctx, "cluster.best_centres", centre_bytes, &best_centres)) ||
         (status = clstats__scratch(ctx, "cluster.best_labels", (size_t)job.n * 4, &best_labels))))
        goto done;
    struct clstats__rng rng;
    clstats__rng_seed(&rng, o.seed);
    double best = INFINITY;
    int best_iter = 0, best_buffer = 0;
    for (int r = 0; r < runs && status == CLSTATS_OK; r++) {
        if (o.init == CLSTATS_KMEANS_GIVEN)
            status = clstats__kmeans_job_centres(&job, o.init_centers);
        else
            status = o.init == CLSTATS_KMEANS_RANDOM ? clstats__kmeans_random(&job, &rng)
                                                     : clstats__kmeans_plusplus(&job, &rng);
        int final = 0, n_iter = 0;
        double inertia = 0.0;
        if (status == CLSTATS_OK)
            status = clstats__kmeans_lloyd(&job, o.max_iter, &final, &n_iter, &inertia);
        /* The first run with the lowest inertia is kept (scikit-learn's rule). */
        if (status == CLSTATS_OK && (r == 0 || inertia < best)) {
            best = inertia;
            best_iter = n_iter;
            best_buffer = final;
            if (runs > 1 &&
                ((status = copy_buffer(ctx, job.centres[final], best_centres, centre_bytes)) ||
                 (status = copy_buffer(ctx, job.labels, best_labels, (size_t)job.n * 4))))
                break;
        }
    }
    if (status == CLSTATS_OK)
        status = clstats__array_out(ctx, runs > 1 ? best_centres : job.centres[best_buffer],
                                    centers);
    if (status == CLSTATS_OK) status = labels_out(&job, runs > 1 ? best_labels : job.labels, labels);
    if (status == CLSTATS_OK) {
        if (o.n_iter) *o.n_iter = best_iter;
        if (o.inertia) *o.inertia = best;
    }
done:
    clstats__kmeans_job_close(&job);
    status = clstats__end(ctx, status);
    if (o.kernel_ms) *o.kernel_ms = ctx->last_kernel_ms;
    return status;
}

int clstats_kmeans_predict(clstats_ctx *ctx, const struct clstats_array *x,
                           const struct clstats_array *centers,
                           const struct clstats_array *sample_weight, int32_t *labels,
                           double *inertia)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "the context is NULL");
    clstats__begin(ctx);
    int status = check_shapes(ctx, x, 1, NULL, sample_weight);
    if (status == CLSTATS_OK && !centers)
        status = clstats__fail(ctx, CLSTATS_ERR_ARG, "centers is NULL");
    if (status == CLSTATS_OK && !(status = clstats__array_check(ctx, centers, "the centres", NULL)) &&
        (centers->nx != x->nx || centers->dtype != x->dtype || centers->ny > INT_MAX))
        status = clstats__fail(ctx, CLSTATS_ERR_ARG,
                               "the centres must have the data's %zu features and dtype", x->nx);
    if (status != CLSTATS_OK) return clstats__end(ctx, status);
    struct kmeans_job job;
    double sum = 0.0;
    /* Rows with a NaN get label -1 here, whatever the fit was told. */
    status = clstats__kmeans_job_open(ctx, &job, x, (int)centers->ny, sample_weight, 1, 0.0, false);
    if (status == CLSTATS_OK) status = clstats__kmeans_job_centres(&job, centers);
    if (status == CLSTATS_OK) status = clstats__kmeans_assign(&job, 0, &sum);
    if (status == CLSTATS_OK) status = labels_out(&job, job.labels, labels);
    if (status == CLSTATS_OK && inertia) *inertia = sum;
    clstats__kmeans_job_close(&job);
    return clstats__end(ctx, status);
}
