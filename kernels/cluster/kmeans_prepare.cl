/* kmeans_prepare.cl - once a call: which rows take part (finite, weight >= 0), their weights,
 * the column sums and squared deviations behind scikit-learn's tolerance, and the k-means++
 * potentials (src/cluster/seeding.c). Each group of 256 rows writes its sums; the host adds the
 * groups' sums in row order. */
#include "kmeans_common.cl"

/* part[g][0..DIM): column sums of the group's valid rows; [DIM]: valid rows; [DIM+1]: rows with
 * a NaN or infinity; [DIM+2]: valid rows whose weight is negative or not finite. */
__kernel void prepare(__global const real *x, __global const real *w, int has_w, int n,
                      __global uchar *valid, __global real *weight, __global acc *part,
                      __local acc *l)
{
    const int p = get_global_id(0);
    const uint i = get_local_id(0);
    const int inside = p < n;
    const int finite = inside && row_is_finite(x + (size_t)p * DIM);
    const real wt = has_w && inside ? w[p] : (real)1;
    const int bad_w = finite && !(isfinite(wt) && wt >= 0);
    const int ok = finite && !bad_w;
    if (inside) {
        valid[p] = (uchar)ok;
        weight[p] = ok ? wt : (real)0;
    }
    __global acc *out = part + (size_t)get_group_id(0) * (DIM + 3);
    for (int c = 0; c < DIM + 3; c++) {
        l[i] = c < DIM ? (ok ? (acc)x[(size_t)p * DIM + c] : (acc)0)
                       : (acc)(c == DIM ? ok : c == DIM + 1 ? inside && !finite : bad_w);
        halve(l, i);
        if (i == 0) out[c] = l[0];
    }
}

/* part[g][c]: the group's sum of (x_c - mean_c)^2 over valid rows. */
__kernel void deviations(__global const real *x, __global const uchar *valid, int n,
                         __global const acc *mean, __global acc *part, __local acc *l)
{
    const int p = get_global_id(0);
    const uint i = get_local_id(0);
    const int ok = p < n && valid[p];
    for (int c = 0; c < DIM; c++) {
        const acc t = ok ? (acc)x[(size_t)p * DIM + c] - mean[c] : (acc)0;
        l[i] = t * t;
        halve(l, i);
        if (i == 0) part[(size_t)get_group_id(0) * DIM + c] = l[0];
    }
}

/* k-means++ (scikit-learn's greedy form): the potential of each of `trials` candidate centres,
 * sum_p w_p min(closest_p, |x_p - cand_t|^2), as group sums part[g][t]. */
__kernel void trial_potentials(__global const real *x, __global const real *weight, int n,
                               __global const acc *closest, __global const real *cand, int trials,
                               __global acc *part, __local acc *l)
{
    const int p = get_global_id(0);
    const uint i = get_local_id(0);
    const int inside = p < n;
    for (int t = 0; t < trials; t++) {
        acc v = 0;
        if (inside && weight[p] > 0) {
            const acc d = (acc)squared_distance(x + (size_t)p * DIM, cand + (size_t)t * DIM);
            v = (acc)weight[p] * min(closest[p], d);
        }
        l[i] = v;
        halve(l, i);
        if (i == 0) part[(size_t)get_group_id(0) * trials + t] = l[0];
    }
}

/* The chosen centre joins: mode 0 leaves closest and sums the weights (the first centre is
 * drawn by weight), 1 sets closest_p = |x_p - c|^2, 2 takes the smaller. part[g]: the group's
 * sum of w_p closest_p (or of w_p). */
__kernel void closest_update(__global const real *x, __global const real *weight, int n,
                             __global acc *closest, __global const real *centre, int mode,
                             __global acc *part, __local acc *l)
{
    const int p = get_global_id(0);
    const uint i = get_local_id(0);
    acc v = 0;
    if (p < n && weight[p] > 0) {
        if (mode == 0) {
            v = (acc)weight[p];
        } else {
            const acc d = (acc)squared_distance(x + (size_t)p * DIM, centre);
            const acc c = mode == 1 ? d : min(closest[p], d);
            closest[p] = c;
            v = (acc)weight[p] * c;
        }
    } else if (p < n && mode != 0) {
        closest[p] = 0;
    }
    l[i] = v;
    halve(l, i);
    if (i == 0) part[get_group_id(0)] = l[0];
}
