/* clstats/cluster.h - k-means clustering on the device (src/cluster/): Lloyd's iterations with
 * the loop and its convergence test on the device, k-means++ or random seeding from a documented
 * host generator, n_init restarts, sample weights; scikit-learn's KMeans(algorithm='lloyd')
 * semantics. */
#ifndef CLSTATS_CLUSTER_H
#define CLSTATS_CLUSTER_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the first centres are chosen. */
enum clstats_kmeans_init {
    CLSTATS_KMEANS_PLUSPLUS = 0, /* greedy k-means++ with 2 + floor(ln k) trials a centre */
    CLSTATS_KMEANS_RANDOM,       /* k distinct valid rows, uniformly */
    CLSTATS_KMEANS_GIVEN,        /* the caller's centres (init_centers) */
};

/* Options; clstats_kmeans_options_init sets the defaults (a NULL pointer means them). Values are
 * taken as they are: tol 0 stops only when no label changes. */
struct clstats_kmeans_options {
    enum clstats_kmeans_init init;
    const struct clstats_array *init_centers; /* k x d (nx = d, ny = k), x's dtype, for GIVEN */
    const struct clstats_array *sample_weight; /* n weights (nx = n, ny = 1), x's dtype, or NULL */
    int n_init;     /* restarts; the run with the lowest inertia is kept (default 1) */
    int max_iter;   /* iterations of a run at most (default 300) */
    double tol;     /* relative: a run stops when the sum of squared centre shifts is at most
                       tol times the mean of the columns' variances (default 1e-4) */
    uint64_t seed;  /* the seeding's generator (xoshiro256** from splitmix64(seed)) */
    int skip_nan;   /* 0: a row with a NaN or an infinity gives CLSTATS_ERR_NAN; 1: such rows
                       take no part and get label -1 */
    /* out, optional */
    int *n_iter;       /* iterations of the kept run */
    double *inertia;   /* sum of weight times squared distance to its centre, kept run */
    double *kernel_ms; /* device time of the call's kernels */
};

CLSTATS_API void clstats_kmeans_options_init(struct clstats_kmeans_options *opts);

/* k-means of the n rows of x (nx = d features, ny = n rows, float32 or float64, host or
 * buffer). Writes the k x d centres into centers (nx = d, ny = k, x's dtype, anywhere) and, when
 * labels is not NULL, the n labels into host memory (-1 for rows left out).
 *
 * Semantics are scikit-learn's Lloyd: labels are the nearest centre by the direct squared
 * distance sum_c (x_c - m_c)^2 in x's precision, ties to the lowest index; centres are
 * weighted means; an iteration whose labels equal the last one's ends the run, and so does a
 * total squared shift at most tol x mean variance; otherwise, after max_iter, the labels are
 * taken once more from the final centres. A cluster left without weight takes the row farthest
 * from its centre (the farthest first, to the lowest-numbered empty cluster; ties to the lowest
 * row). Sums are formed in double (float without fp64) in an order fixed by the labels and n
 * alone: each cluster's members in row order, 256 at a time, each 256 summed by halving
 * (v[i] += v[i + s], s = 128, 64, ..., 1; missing ones 0), the partial sums again so, as many
 * times as 256^levels < n needs. So a device gives the same bits every run, and devices agree.
 * Errors: k < 1, k more than the valid rows, d = 0: CLSTATS_ERR_ARG; NaN rows (skip_nan 0):
 * CLSTATS_ERR_NAN; no valid row: CLSTATS_ERR_EMPTY. */
CLSTATS_API int clstats_kmeans(clstats_ctx *ctx, const struct clstats_array *x, size_t k,
                               const struct clstats_kmeans_options *opts,
                               const struct clstats_array *centers, int32_t *labels);

/* Labels of the rows of x by the nearest of the k centres (as clstats_kmeans assigns them), and
 * optionally the inertia; NaN rows get -1. */
CLSTATS_API int clstats_kmeans_predict(clstats_ctx *ctx, const struct clstats_array *x,
                                       const struct clstats_array *centers,
                                       const struct clstats_array *sample_weight, int32_t *labels,
                                       double *inertia);

/* ---- Mini-batch k-means (src/cluster/minibatch.c) ----------------------------------------
 * For data larger than the device's memory: the rows stream through the device a batch at a
 * time (their nearest centres found there, as clstats_kmeans_predict does), and each batch moves
 * the centres on the host as scikit-learn's MiniBatchKMeans does it (_mini_batch_step without
 * random reassignment): for each cluster j whose members in the batch weigh W > 0,
 *   c_j = (c_j * s_j + sum of w x over its members in row order) * (1 / (s_j + W)), s_j += W,
 * in x's precision, s_j being the weight the cluster has seen. So a run is the same on every
 * run and device, and equals MiniBatchKMeans.partial_fit called on the same batches in order
 * wherever both assign the same labels. */

/* One step on one batch (nx = d, ny = rows, in HOST memory): centers (k x d, x's dtype, HOST
 * memory) and weight_sums (k values, all 0 before the first step) are updated in place; labels
 * (optional, host) and *inertia (optional: the batch's against the centres before the step)
 * are written. Rows with a NaN or an infinity get label -1 and take no part (skip_nan 1) or
 * give CLSTATS_ERR_NAN (0). */
CLSTATS_API int clstats_kmeans_minibatch_step(clstats_ctx *ctx, const struct clstats_array *batch,
                                              const struct clstats_array *sample_weight,
                                              int skip_nan, const struct clstats_array *centers,
                                              double *weight_sums, int32_t *labels,
                                              double *inertia);

struct clstats_kmeans_minibatch_options {
    enum clstats_kmeans_init init;             /* k-means++, random rows, or GIVEN */
    const struct clstats_array *init_centers;  /* k x d, x's dtype, for GIVEN */
    const struct clstats_array *sample_weight; /* n weights, host, x's dtype, or NULL */
    size_t batch_size; /* rows a step (default 1024, scikit-learn's) */
    size_t init_size;  /* rows drawn (with replacement) for the seeding; 0: 3 x batch_size, at
                          least 3 k, at most n (scikit-learn's rule) */
    int max_iter;      /* passes over the data at most (default 100; 0: the first centres, with
                          the labels and inertia by them) */
    double tol;        /* stop after a pass whose summed squared centre shift is at most tol
                          times the mean of the columns' variances (default 0: max_iter passes) */
    uint64_t seed;     /* the seeding's generator */
    int skip_nan;      /* as clstats_kmeans_options */
    /* out, optional */
    int *n_iter;       /* passes made */
    size_t *n_steps;   /* batches (steps) made */
    double *inertia;   /* of every row against the final centres */
};

CLSTATS_API void clstats_kmeans_minibatch_options_init(struct clstats_kmeans_minibatch_options *o);

/* Mini-batch k-means of the n rows of x (nx = d, ny = n, float32 or float64, HOST memory, which
 * may be larger than the device's): the first centres by k-means++ or random rows drawn from
 * init_size rows sampled with replacement (or given), then passes over the rows in order, a
 * batch of batch_size consecutive rows a step (shuffle the rows first if their order is not
 * random), and at the end each row's label (host, optional) and the inertia by the final
 * centres. Writes the k x d centres into centers. Errors as clstats_kmeans's. */
CLSTATS_API int clstats_kmeans_minibatch(clstats_ctx *ctx, const struct clstats_array *x,
                                         size_t k,
                                         const struct clstats_kmeans_minibatch_options *opts,
                                         const struct clstats_array *centers, int32_t *labels);

#ifdef __cplusplus
}
#endif
#endif
