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

#ifdef __cplusplus
}
#endif
#endif
