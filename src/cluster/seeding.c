/* seeding.c - the first centres: k-means++ as scikit-learn's _kmeans_plusplus does it (the first
 * centre drawn by weight, then for each next one 2 + floor(ln k) candidates drawn in proportion
 * to w times the squared distance to the nearest centre so far, keeping the candidate that
 * lowers the potential most; Arthur and Vassilvitskii 2007), or k distinct valid rows. Random
 * numbers come from the host (core's generator, src/core/random.c), so that a seed gives the
 * same centres on every run and device; the potentials are the device's fixed-order sums. */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Copies row p of the data into row j of centres[0]. */
static int take_row(struct kmeans_job *job, int p, int j, void *row)
{
    const size_t bytes = (size_t)job->d * job->es;
    int status = clstats__cl_check(job->ctx,
                                   clEnqueueReadBuffer(job->ctx->queue, job->x, CL_TRUE,
                                                       (size_t)p * bytes, bytes, row, 0, NULL,
                                                       NULL),
                                   "reading a row");
    if (status == CLSTATS_OK && j >= 0)
        status = clstats__cl_check(job->ctx,
                                   clEnqueueWriteBuffer(job->ctx->queue, job->centres[0], CL_TRUE,
                                                        (size_t)j * bytes, bytes, row, 0, NULL,
                                                        NULL),
                                   "writing a centre");
    return status;
}

int clstats__kmeans_random(struct kmeans_job *job, struct clstats__rng *rng)
{
    const int n = job->n;
    int status = CLSTATS_OK;
    unsigned char *valid = malloc((size_t)n);
    int *rows = malloc((size_t)job->n_valid * sizeof *rows);
    void *row = malloc((size_t)job->d * job->es);
    if (!valid || !rows || !row) {
        status = clstats__fail(job->ctx, CLSTATS_ERR_NOMEM, "k-means: random init");
        goto fail;
    }
    CL_TRY(job->ctx,
           clEnqueueReadBuffer(job->ctx->queue, job->valid, CL_TRUE, 0, (size_t)n, valid, 0, NULL,
                               NULL),
           "reading the valid rows");
    int m = 0;
    for (int p = 0; p < n; p++)
        if (valid[p]) rows[m++] = p;
    /* The first k of a Fisher-Yates shuffle of the valid rows. */
    for (int j = 0; j < job->k && status == CLSTATS_OK; j++) {
        const int r = j + (int)clstats__rng_below(rng, (uint64_t)(m - j));
        const int t = rows[j];
        rows[j] = rows[r];
        rows[r] = t;
        status = take_row(job, rows[j], j, row);
    }
fail:
    free(valid);
    free(rows);
    free(row);
    return status;
}

/* Launches closest_update for `centre` (a device buffer of one row) in `mode` and reads the
 * groups' sums into part_host. */
static int update_closest(struct kmeans_job *job, cl_mem centre, cl_int mode, double *part_host,
                          void *raw)
{
    clstats_ctx *ctx = job->ctx;
    int status = CLSTATS_OK;
    const cl_int n = job->n;
    const size_t global = (size_t)job->groups * KMEANS_WG, local = KMEANS_WG;
    KM_ARG(job->closest_update, 0, job->x);
    KM_ARG(job->closest_update, 1, job->weight);
    KM_ARG(job->closest_update, 2, n);
    KM_ARG(job->closest_update, 3, job->closest);
    KM_ARG(job->closest_update, 4, centre);
    KM_ARG(job->closest_update, 5, mode);
    KM_ARG(job->closest_update, 6, job->part);
    if ((status = clstats__launch(ctx, job->closest_update, 1, NULL, &global, &local,
                                  "kmeans closest")))
        return status;
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, job->part, CL_TRUE, 0, (size_t)job->groups * job->as,
                               raw, 0, NULL, NULL),
           "reading potentials");
    for (int g = 0; g < job->groups; g++)
        part_host[g] = job->as == 8 ? ((double *)raw)[g] : (double)((float *)raw)[g];
fail:
    return status;
}

/* The shares w_p closest_p (mode 0: w_p) of the rows of group g, as the device holds them. */
static int group_shares(struct kmeans_job *job, int g, int mode, double *share, int *count)
{
    clstats_ctx *ctx = job->ctx;
    int status = CLSTATS_OK;
    const int p0 = g * KMEANS_WG, m = job->n - p0 < KMEANS_WG ? job->n - p0 : KMEANS_WG;
    double w[KMEANS_WG], c[KMEANS_WG];
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, job->weight, CL_TRUE, (size_t)p0 * job->es,
                               (size_t)m * job->es, w, 0, NULL, NULL),
           "reading weights");
    if (mode)
        CL_TRY(ctx,
               clEnqueueReadBuffer(ctx->queue, job->closest, CL_TRUE, (size_t)p0 * job->as,
                                   (size_t)m * job->as, c, 0, NULL, NULL),
               "reading distances");
    for (int i = 0; i < m; i++) {
        const double wi = job->es == 8 ? w[i] : (double)((float *)w)[i];
        const double ci = !mode ? 1.0 : job->as == 8 ? c[i] : (double)((float *)c)[i];
        share[i] = wi * ci;
    }
    *count = m;
fail:
    return status;
}

/* scikit-learn's searchsorted(cumsum(w * closest), v): the first row whose running sum reaches
 * v, found through the groups' sums and then the rows of one group. Where rounding puts v past
 * the end, the last row with a positive share (scikit-learn clips to the last row). */
static int draw(struct kmeans_job *job, const double *part, double v, int mode, int *out)
{
    double share[KMEANS_WG], run = 0.0;
    int g = 0, m, status;
    while (g < job->groups - 1 && !(run + part[g] >= v))
        run += part[g++];
    if ((status = group_shares(job, g, mode, share, &m))) return status;
    for (int i = 0; i < m; i++) {
        run += share[i];
        if (share[i] > 0 && run >= v) {
            *out = g * KMEANS_WG + i;
            return CLSTATS_OK;
        }
    }
    for (int gg = g; gg >= 0; gg--) {
        if (gg != g) {
            if (!(part[gg] > 0)) continue;
            if ((status = group_shares(job, gg, mode, share, &m))) return status;
        }
        for (int i = m - 1; i >= 0; i--)
            if (share[i] > 0) {
                *out = gg * KMEANS_WG + i;
                return CLSTATS_OK;
            }
    }
    *out = 0;
    return CLSTATS_OK;
}

int clstats__kmeans_plusplus(struct kmeans_job *job, struct clstats__rng *rng)
{
    clstats_ctx *ctx = job->ctx;
    const int k = job->k, d = job->d, trials = 2 + (int)log((double)k);
    int status = CLSTATS_OK;
    double *part = malloc((size_t)job->groups * (trials > 1 ? trials : 1) * sizeof *part);
    void *raw = malloc((size_t)job->groups * job->as * (size_t)trials);
    char *rows = malloc((size_t)trials * d * job->es);
    int *cand = malloc((size_t)trials * sizeof *cand);
    double *pot = malloc((size_t)trials * sizeof *pot);
    cl_mem cand_buf = NULL, best_buf = NULL;
    if (!part || !raw || !rows || !cand || !pot) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "k-means++");
        goto fail;
    }
    cl_int err;
    cand_buf = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, (size_t)trials * d * job->es, NULL,
                              &err);
    CL_TRY(ctx, err, "clCreateBuffer(candidates)");
    best_buf = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, (size_t)d * job->es, NULL, &err);
    CL_TRY(ctx, err, "clCreateBuffer(centre)");

    /* The first centre, by weight. */
    if ((status = update_closest(job, best_buf, 0, part, raw))) goto fail;
    double total = 0.0;
    for (int g = 0; g < job->groups; g++)
        total += part[g];
    int first;
    if ((status = draw(job, part, clstats__rng_uniform(rng) * total, 0, &first)) ||
        (status = take_row(job, first, 0, rows)))
        goto fail;
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, best_buf, CL_TRUE, 0, (size_t)d * job->es, rows, 0,
                                NULL, NULL),
           "writing a centre");
    if ((status = update_closest(job, best_buf, 1, part, raw))) goto fail;
    double potential = 0.0;
    for (int g = 0; g < job->groups; g++)
        potential += part[g];

    const cl_int n = job->n, nt = trials;
    const size_t global = (size_t)job->groups * KMEANS_WG, local = KMEANS_WG;
    for (int j = 1; j < k; j++) {
        for (int t = 0; t < trials; t++) {
            if ((status = draw(job, part, clstats__rng_uniform(rng) * potential, 1, &cand[t])) ||
                (status = take_row(job, cand[t], -1, rows + (size_t)t * d * job->es)))
                goto fail;
        }
        CL_TRY(ctx,
               clEnqueueWriteBuffer(ctx->queue, cand_buf, CL_TRUE, 0, (size_t)trials * d * job->es,
                                    rows, 0, NULL, NULL),
               "writing candidates");
        KM_ARG(job->trials, 0, job->x);
        KM_ARG(job->trials, 1, job->weight);
        KM_ARG(job->trials, 2, n);
        KM_ARG(job->trials, 3, job->closest);
        KM_ARG(job->trials, 4, cand_buf);
        KM_ARG(job->trials, 5, nt);
        KM_ARG(job->trials, 6, job->part);
        if ((status = clstats__launch(ctx, job->trials, 1, NULL, &global, &local,
                                      "kmeans trials")) ||
            (status = clstats__kmeans_group_sums(job, job->part, job->groups, trials, pot)))
            goto fail;
        int best = 0;
        for (int t = 1; t < trials; t++)
            if (pot[t] < pot[best]) best = t;
        const size_t row_bytes = (size_t)d * job->es;
        CL_TRY(ctx,
               clEnqueueWriteBuffer(ctx->queue, job->centres[0], CL_TRUE, (size_t)j * row_bytes,
                                    row_bytes, rows + best * row_bytes, 0, NULL, NULL),
               "writing a centre");
        CL_TRY(ctx,
               clEnqueueWriteBuffer(ctx->queue, best_buf, CL_TRUE, 0, row_bytes,
                                    rows + best * row_bytes, 0, NULL, NULL),
               "writing a centre");
        if (j + 1 < k) {
            if ((status = update_closest(job, best_buf, 2, part, raw))) goto fail;
            potential = 0.0;
            for (int g = 0; g < job->groups; g++)
                potential += part[g];
        }
    }
fail:
    if (cand_buf) clReleaseMemObject(cand_buf);
    if (best_buf) clReleaseMemObject(best_buf);
    free(part);
    free(raw);
    free(rows);
    free(cand);
    free(pot);
    return status;
}
