/* reference_kmeans.c - plain Lloyd on the host (tests/reference_kmeans.h): loops anyone can read,
 * with the fixed summation order spelled out as nested halvings of 256. */
#include "reference_kmeans.h"

#include <stdlib.h>
#include <string.h>

#define WG 256

static double get(const struct ref_kmeans *j, const void *a, size_t i)
{
    return j->f64 ? ((const double *)a)[i] : (double)((const float *)a)[i];
}

static void put(const struct ref_kmeans *j, void *a, size_t i, double v)
{
    if (j->f64) ((double *)a)[i] = v;
    else ((float *)a)[i] = (float)v;
}

/* sum_c (x_c - m_c)^2 in the data's own precision, c in order. */
static double distance(const struct ref_kmeans *j, const void *c, int p, int m)
{
    if (j->f64) {
        const double *x = (const double *)j->x + (size_t)p * j->d, *y = (const double *)c + (size_t)m * j->d;
        double s = 0;
        for (int e = 0; e < j->d; e++) {
            const double t = x[e] - y[e];
            s = s + t * t;
        }
        return s;
    }
    const float *x = (const float *)j->x + (size_t)p * j->d, *y = (const float *)c + (size_t)m * j->d;
    float s = 0;
    for (int e = 0; e < j->d; e++) {
        const float t = x[e] - y[e];
        s = s + t * t;
    }
    return s;
}

/* v[0..m) summed 256 at a time by halving, the partial sums again so, `levels` times over;
 * returns the one value left (0 for none). */
static double fixed_order_sum(double *v, size_t m, int levels)
{
    for (int level = 0; level < levels; level++) {
        size_t out = 0;
        for (size_t s0 = 0; s0 < m; s0 += WG) {
            double l[WG];
            for (int i = 0; i < WG; i++)
                l[i] = s0 + i < m ? v[s0 + i] : 0.0;
            for (int s = WG / 2; s > 0; s >>= 1)
                for (int i = 0; i < s; i++)
                    l[i] = l[i] + l[i + s];
            v[out++] = l[0];
        }
        m = out;
    }
    return m ? v[0] : 0.0;
}

static int levels_for(int n)
{
    int levels = 1;
    for (uint64_t cap = WG; cap < (uint64_t)n; cap *= WG)
        levels++;
    return levels;
}

static double weight_of(const struct ref_kmeans *j, int p)
{
    return j->weight ? j->weight[p] : 1.0;
}

static int valid_row(const struct ref_kmeans *j, int p)
{
    return !j->valid || j->valid[p];
}

double ref_kmeans_tolerance(const struct ref_kmeans *j, double tol)
{
    double mean_var = 0.0;
    int nv = 0;
    for (int p = 0; p < j->n; p++)
        nv += valid_row(j, p);
    for (int c = 0; c < j->d; c++) {
        double s = 0.0, q = 0.0;
        for (int p = 0; p < j->n; p++)
            if (valid_row(j, p)) s += get(j, j->x, (size_t)p * j->d + c);
        const double mean = s / nv;
        for (int p = 0; p < j->n; p++)
            if (valid_row(j, p)) {
                const double t = get(j, j->x, (size_t)p * j->d + c) - mean;
                q += t * t;
            }
        mean_var += q / nv;
    }
    return tol * mean_var / j->d;
}

static int assign(const struct ref_kmeans *j, const void *centres, int32_t *labels)
{
    int changed = 0;
    for (int p = 0; p < j->n; p++) {
        int best = -1;
        if (valid_row(j, p)) {
            double bd = distance(j, centres, p, 0);
            best = 0;
            for (int m = 1; m < j->k; m++) {
                const double dm = distance(j, centres, p, m);
                if (dm < bd) {
                    bd = dm;
                    best = m;
                }
            }
        }
        changed |= labels[p] != best;
        labels[p] = best;
    }
    return changed;
}

/* sums[m][0..d): sum of w x over cluster m's members, [d]: sum of w; fixed order. */
static void cluster_sums(const struct ref_kmeans *j, const int32_t *labels, double *sums)
{
    const int levels = levels_for(j->n), d = j->d;
    double *v = malloc((size_t)j->n * sizeof *v + 1);
    for (int m = 0; m < j->k; m++)
        for (int c = 0; c <= d; c++) {
            size_t count = 0;
            for (int p = 0; p < j->n; p++)
                if (labels[p] == m)
                    v[count++] = c < d ? weight_of(j, p) * get(j, j->x, (size_t)p * d + c)
                                       : weight_of(j, p);
            sums[(size_t)m * (d + 1) + c] = fixed_order_sum(v, count, levels);
        }
    free(v);
}

void ref_kmeans_run(const struct ref_kmeans *j, void *centres, int32_t *labels, int *n_iter,
                    double *inertia)
{
    const int n = j->n, d = j->d, k = j->k;
    const size_t es = j->f64 ? 8 : 4;
    void *cur = malloc((size_t)k * d * es), *fresh = malloc((size_t)k * d * es);
    double *sums = malloc((size_t)k * (d + 1) * sizeof *sums), *dist = malloc((size_t)n * 8);
    memcpy(cur, j->init, (size_t)k * d * es);
    for (int p = 0; p < n; p++)
        labels[p] = -1;
    int it = 0, strict = 0;
    for (;;) {
        const int changed = assign(j, cur, labels);
        cluster_sums(j, labels, sums);
        /* Clusters without weight, in order, take the rows farthest from their centres. */
        int any_empty = 0;
        for (int m = 0; m < k; m++)
            any_empty |= !(sums[(size_t)m * (d + 1) + d] > 0);
        if (any_empty) {
            for (int p = 0; p < n; p++)
                dist[p] = labels[p] < 0 ? -1.0 : distance(j, cur, p, labels[p]);
            for (int m = 0; m < k; m++) {
                if (sums[(size_t)m * (d + 1) + d] > 0) continue;
                int far = -1;
                for (int p = 0; p < n; p++)
                    if (dist[p] >= 0 && (far < 0 || dist[p] > dist[far])) far = p;
                if (far < 0) break;
                dist[far] = -1.0;
                double *to = sums + (size_t)m * (d + 1), *from = sums + (size_t)labels[far] * (d + 1);
                const double w = weight_of(j, far);
                for (int c = 0; c < d; c++) {
                    const double v = w * get(j, j->x, (size_t)far * d + c);
                    from[c] -= v;
                    to[c] = v;
                }
                from[d] -= w;
                to[d] = w;
            }
        }
        double total = 0.0;
        for (int m = 0; m < k; m++) {
            const double *s = sums + (size_t)m * (d + 1);
            double shift = 0.0;
            for (int c = 0; c < d; c++) {
                const size_t e = (size_t)m * d + c;
                put(j, fresh, e, s[d] > 0 ? s[c] / s[d] : (any_empty ? s[c] : get(j, cur, e)));
                const double t = get(j, fresh, e) - get(j, cur, e);
                shift = shift + t * t;
            }
            total = total + shift;
        }
        memcpy(cur, fresh, (size_t)k * d * es);
        it++;
        if (!changed) {
            strict = 1;
            break;
        }
        if (total <= j->tol || it >= j->max_iter) break;
    }
    if (!strict) assign(j, cur, labels);
    /* The inertia as the device sums it: groups of 256 rows by halving, groups in order. */
    double total = 0.0;
    for (int g = 0; g * WG < n; g++) {
        double l[WG];
        for (int i = 0; i < WG; i++) {
            const int p = g * WG + i;
            l[i] = p < n && labels[p] >= 0 ? weight_of(j, p) * distance(j, cur, p, labels[p]) : 0.0;
        }
        for (int s = WG / 2; s > 0; s >>= 1)
            for (int i = 0; i < s; i++)
                l[i] = l[i] + l[i + s];
        total += l[0];
    }
    memcpy(centres, cur, (size_t)k * d * es);
    *n_iter = it;
    *inertia = total;
    free(cur);
    free(fresh);
    free(sums);
    free(dist);
}

/* The nearest centre of row p (ties to the lowest), -1 for a row left out; its distance. */
static int nearest_of(const struct ref_kmeans *j, const void *centres, int p, double *dist)
{
    int best = -1;
    double bd = 0;
    for (int m = 0; valid_row(j, p) && m < j->k; m++) {
        const double dm = distance(j, centres, p, m);
        if (best < 0 || dm < bd) bd = dm, best = m;
    }
    if (dist) *dist = bd;
    return best;
}

/* scikit-learn's _minibatch_update_dense for one batch [first, first + rows), in T. */
#define REF_UPDATE(T)                                                                              \
    do {                                                                                           \
        T *c = (T *)centres + (size_t)m * j->d;                                                    \
        T wsum = 0;                                                                                \
        for (int p = first; p < first + rows; p++)                                                 \
            if (labels[p] == m) wsum += (T)weight_of(j, p);                                        \
        if (!(wsum > 0)) break;                                                                    \
        for (int e = 0; e < j->d; e++)                                                             \
            c[e] = c[e] * (T)seen[m];                                                              \
        for (int p = first; p < first + rows; p++)                                                 \
            if (labels[p] == m)                                                                    \
                for (int e = 0; e < j->d; e++)                                                     \
                    c[e] += ((const T *)j->x)[(size_t)p * j->d + e] * (T)weight_of(j, p);          \
        const T total = (T)seen[m] + wsum;                                                         \
        seen[m] = total;                                                                           \
        for (int e = 0; e < j->d; e++)                                                             \
            c[e] *= (T)1 / total;                                                                  \
    } while (0)

void ref_kmeans_minibatch(const struct ref_kmeans *j, int batch, void *centres, int32_t *labels,
                          double *inertia)
{
    const size_t es = j->f64 ? 8 : 4;
    double *seen = calloc((size_t)j->k, sizeof *seen);
    memcpy(centres, j->init, (size_t)j->k * j->d * es);
    for (int pass = 0; pass < j->max_iter; pass++)
        for (int first = 0; first < j->n; first += batch) {
            const int rows = j->n - first < batch ? j->n - first : batch;
            for (int p = first; p < first + rows; p++)
                labels[p] = nearest_of(j, centres, p, NULL);
            for (int m = 0; m < j->k; m++) {
                if (j->f64) REF_UPDATE(double);
                else REF_UPDATE(float);
            }
        }
    *inertia = 0.0;
    for (int p = 0; p < j->n; p++) {
        double bd;
        labels[p] = nearest_of(j, centres, p, &bd);
        if (labels[p] >= 0) *inertia += weight_of(j, p) * bd;
    }
    free(seen);
}
