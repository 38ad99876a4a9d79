/* reference_kmeans.h - plain Lloyd on the host, the judge of src/cluster/: scikit-learn's
 * iteration (strict end on unchanged labels, tol on the summed squared shift, a last assignment
 * after max_iter, empty clusters taking the farthest rows) with the sums in the order
 * include/clstats/cluster.h documents, so that the device's labels and centres must match bit
 * for bit. */
#ifndef REFERENCE_KMEANS_H
#define REFERENCE_KMEANS_H

#include <stddef.h>
#include <stdint.h>

struct ref_kmeans {
    const void *x;        /* n rows of d, float or double */
    int f64;              /* x, init and centres are double */
    int n, d, k;
    const double *weight; /* n weights, or NULL for ones */
    const unsigned char *valid; /* rows taking part, or NULL for all */
    const void *init;     /* k x d initial centres */
    int max_iter;
    double tol;           /* absolute: compared with the summed squared shift */
};

/* Runs it; writes centres (k x d, x's type), labels (n, -1 for invalid rows), the iterations
 * and the inertia. */
void ref_kmeans_run(const struct ref_kmeans *job, void *centres, int32_t *labels, int *n_iter,
                    double *inertia);

/* scikit-learn's absolute tolerance: tol x the mean of the columns' biased variances. */
double ref_kmeans_tolerance(const struct ref_kmeans *job, double tol);

/* Mini-batch k-means as include/clstats/cluster.h defines it: from init, max_iter passes over
 * the rows in order, batches of `batch` rows, each labelled by the direct distance (ties to the
 * lowest centre) and moving the centres by scikit-learn's update in x's precision; then every
 * row's label and the inertia (summed in row order) by the final centres. */
void ref_kmeans_minibatch(const struct ref_kmeans *job, int batch, void *centres, int32_t *labels,
                          double *inertia);

#endif
