/* seeding.c - the first centres: k-means++ as scikit-learn's _kmeans_plusplus does it (the first
 * centre drawn by weight, then for each next one 2 + floor(ln k) candidates drawn in proportion
 * to w times the squared distance to the nearest centre so far, keeping the candidate that
 * lowers the potential most; Arthur and Vassilvitskii 2007), or k distinct valid rows. Random
 * numbers come from the host (core's generator, src/core/random.c), so that a seed gives the
 * same centres on every run and device; the potentials are the device's fixed-order sums.
 * Each centre costs three waits (its draws, its candidates' potentials, the new nearest
 * distances): the rows a draw needs are read together, the chosen rows copied on the device. */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Copies row `from` of src into row `to` of dst on the device: rows never pass the host. */
static int copy_row(struct kmeans_job *job, cl_mem src, int from, cl_mem dst, int to)
{
    const size_t bytes = (size_t)job->d * job->es;
    return clstats__cl_check(job->ctx,
                             clEnqueueCopyBuffer(job->ctx->queue, src, dst, (size_t)from * bytes,
                                                 (size_t)to * bytes, bytes, 0, NULL, NULL),
                             "copying a row");
}

int clstats__kmeans_random(struct kmeans_job *job, struct clstats__rng *rng)
{
    const int n = job->n;
    int status = CLSTATS_OK;
    unsigned char *valid = malloc((size_t)n);
    int *rows = malloc((size_t)job->n_valid * sizeof *rows);
    if (!valid || !rows) {
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
        status = copy_row(job, job->x, rows[j], job->centres[0], j);
    }
fail:
    free(valid);
    free(rows);
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
    KM_ARGS(job->closest_update, 0, KERNEL_ARG(job->x), KERNEL_ARG(job->weight), KERNEL_ARG(n),
            KERNEL_ARG(job->closest), KERNEL_ARG(centre), KERNEL_ARG(mode), KERNEL_ARG(job->part));
    if ((status =
             clstats__launch(ctx, job->closest_update, 1, NULL, &global, &local, "kmeans closest")))
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

/* The shares w_p closest_p (mode 0: w_p) of the rows of groups g[0..count), as the device
 * holds them: every group's reads enqueued, then one wait. share[t] holds KMEANS_WG values,
 * count[t] of them rows. */
static int group_shares(struct kmeans_job *job, const int *g, int count, int mode,
                        double (*share)[KMEANS_WG], int *rows)
{
    clstats_ctx *ctx = job->ctx;
    int status = CLSTATS_OK;
    const size_t block = (size_t)KMEANS_WG * 8;
    char *w = malloc((size_t)count * block), *c = malloc((size_t)count * block);
    if (!w || !c) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "k-means++: shares");
        goto fail;
    }
    for (int t = 0; t < count; t++) {
        const int p0 = g[t] * KMEANS_WG;
        rows[t] = job->n - p0 < KMEANS_WG ? job->n - p0 : KMEANS_WG;
        CL_TRY(ctx,
               clEnqueueReadBuffer(ctx->queue, job->weight, CL_FALSE, (size_t)p0 * job->es,
                                   (size_t)rows[t] * job->es, w + t * block, 0, NULL, NULL),
               "reading weights");
        if (mode)
            CL_TRY(ctx,
                   clEnqueueReadBuffer(ctx->queue, job->closest, CL_FALSE, (size_t)p0 * job->as,
                                       (size_t)rows[t] * job->as, c + t * block, 0, NULL, NULL),
                   "reading distances");
    }
    CL_TRY(ctx, clFinish(ctx->queue), "reading shares");
    for (int t = 0; t < count; t++)
        for (int i = 0; i < rows[t]; i++) {
            const double wi = job->es == 8 ? ((double *)(w + t * block))[i]
                                           : (double)((float *)(w + t * block))[i];
            const double ci = !mode          ? 1.0
                              : job->as == 8 ? ((double *)(c + t * block))[i]
                                             : (double)((float *)(c + t * block))[i];
            share[t][i] = wi * ci;
        }
fail:
    free(w);
    free(c);
    return status;
}

/* scikit-learn's searchsorted(cumsum(w * closest), v) for each of v[0..count): the first row
 * whose running sum reaches v, found through the groups' sums and then the rows of one group
 * (all groups' rows read at once). Where rounding puts v past the end, the last row with a
 * positive share (scikit-learn clips to the last row). */
static int draw(struct kmeans_job *job, const double *part, const double *v, int count, int mode,
                int *out)
{
    double(*share)[KMEANS_WG] = malloc((size_t)count * sizeof *share), *run = NULL;
    int *g = malloc((size_t)count * sizeof *g), *m = malloc((size_t)count * sizeof *m), status;
    run = malloc((size_t)count * sizeof *run);
    if (!share || !g || !m || !run) {
        status = clstats__fail(job->ctx, CLSTATS_ERR_NOMEM, "k-means++: draws");
        goto fail;
    }
    for (int t = 0; t < count; t++) {
        g[t] = 0;
        run[t] = 0.0;
        while (g[t] < job->groups - 1 && !(run[t] + part[g[t]] >= v[t]))
            run[t] += part[g[t]++];
    }
    if ((status = group_shares(job, g, count, mode, share, m))) goto fail;
    for (int t = 0; t < count; t++) {
        out[t] = -1;
        for (int i = 0; i < m[t] && out[t] < 0; i++) {
            run[t] += share[t][i];
            if (share[t][i] > 0 && run[t] >= v[t]) out[t] = g[t] * KMEANS_WG + i;
        }
        for (int gg = g[t]; out[t] < 0 && gg >= 0; gg--) {
            if (gg != g[t]) {
                if (!(part[gg] > 0)) continue;
                if ((status = group_shares(job, &gg, 1, mode, &share[t], &m[t]))) goto fail;
            }
            for (int i = m[t] - 1; i >= 0 && out[t] < 0; i--)
                if (share[t][i] > 0) out[t] = gg * KMEANS_WG + i;
        }
        if (out[t] < 0) out[t] = 0;
    }
fail:
    free(share);
    free(g);
    free(m);
    free(run);
    return status;
}

int clstats__kmeans_plusplus(struct kmeans_job *job, struct clstats__rng *rng)
{
    clstats_ctx *ctx = job->ctx;
    const int k = job->k, d = job->d, trials = 2 + (int)log((double)k);
    int status = CLSTATS_OK;
    double *part = malloc((size_t)job->groups * (trials > 1 ? trials : 1) * sizeof *part);
    void *raw = malloc((size_t)job->groups * job->as * (size_t)trials);
    int *cand = malloc((size_t)trials * sizeof *cand);
    double *pot = malloc((size_t)trials * sizeof *pot), *v = malloc((size_t)trials * sizeof *v);
    cl_mem cand_buf = NULL, best_buf = NULL;
    if (!part || !raw || !cand || !pot || !v) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "k-means++");
        goto fail;
    }
    cl_int err;
    cand_buf =
        clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, (size_t)trials * d * job->es, NULL, &err);
    CL_TRY(ctx, err, "clCreateBuffer(candidates)");
    best_buf = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, (size_t)d * job->es, NULL, &err);
    CL_TRY(ctx, err, "clCreateBuffer(centre)");

    /* The first centre, by weight. */
    if ((status = update_closest(job, best_buf, 0, part, raw))) goto fail;
    double total = 0.0;
    for (int g = 0; g < job->groups; g++)
        total += part[g];
    int first;
    v[0] = clstats__rng_uniform(rng) * total;
    if ((status = draw(job, part, v, 1, 0, &first)) ||
        (status = copy_row(job, job->x, first, job->centres[0], 0)) ||
        (status = copy_row(job, job->x, first, best_buf, 0)) ||
        (status = update_closest(job, best_buf, 1, part, raw)))
        goto fail;
    double potential = 0.0;
    for (int g = 0; g < job->groups; g++)
        potential += part[g];

    const cl_int n = job->n, nt = trials;
    const size_t global = (size_t)job->groups * KMEANS_WG, local = KMEANS_WG;
    for (int j = 1; j < k; j++) {
        for (int t = 0; t < trials; t++)
            v[t] = clstats__rng_uniform(rng) * potential;
        if ((status = draw(job, part, v, trials, 1, cand))) goto fail;
        for (int t = 0; t < trials; t++)
            if ((status = copy_row(job, job->x, cand[t], cand_buf, t))) goto fail;
        KM_ARGS(job->trials, 0, KERNEL_ARG(job->x), KERNEL_ARG(job->weight), KERNEL_ARG(n),
                KERNEL_ARG(job->closest), KERNEL_ARG(cand_buf), KERNEL_ARG(nt),
                KERNEL_ARG(job->part));
        if ((status =
                 clstats__launch(ctx, job->trials, 1, NULL, &global, &local, "kmeans trials")) ||
            (status = clstats__kmeans_group_sums(job, job->part, job->groups, trials, pot)))
            goto fail;
        int best = 0;
        for (int t = 1; t < trials; t++)
            if (pot[t] < pot[best]) best = t;
        if ((status = copy_row(job, cand_buf, best, job->centres[0], j)) ||
            (status = copy_row(job, cand_buf, best, best_buf, 0)))
            goto fail;
        if (j + 1 < k) {
            if ((status = update_closest(job, best_buf, 2, part, raw))) goto fail;
            potential = 0.0;
            for (int g = 0; g < job->groups; g++)
                potential += part[g];
        }
    }
    CL_TRY(ctx, clFinish(ctx->queue), "copying centres");
fail:
    if (cand_buf) clReleaseMemObject(cand_buf);
    if (best_buf) clReleaseMemObject(best_buf);
    free(part);
    free(raw);
    free(cand);
    free(pot);
    free(v);
    return status;
}
