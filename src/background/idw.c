/* idw.c - photutils' fill of excluded mesh boxes (Background2D._interpolate_meshes, photutils
 * 1.10): each box takes the inverse-distance weighted mean (power 1) of its 10 nearest good
 * boxes, a good box its own value. On the integer mesh many good boxes lie at the same distance,
 * and which of them make the ten is what scipy's cKDTree query returns (leafsize 10, median
 * splits, compact nodes): it keeps, among boxes at the tenth distance, the ones its tree search
 * meets first. So this file builds the same tree and searches it in the same order: the median
 * split by the selection libstdc++'s std::nth_element makes (introselect, median of three), the
 * left part by std::partition's two-ended swaps, the search by cKDTree's two binary heaps with
 * their exact sift rules. Written from those algorithms' descriptions; tests compare the
 * neighbours chosen with scipy's on random meshes (python/tests/test_background.py). */
#include "idw.h"

#include <math.h>
#include <stdlib.h>

#define LEAF_SIZE 10
#define NEIGHBOURS 10

struct point {
    double c[2]; /* y, x: photutils hands cKDTree (row, column) pairs */
};

struct node {
    int dim;  /* split dimension, -1 for a leaf */
    double split;
    size_t start, end; /* of the index array */
    struct node *less, *greater;
};

struct tree {
    const struct point *pts;
    size_t *idx;
    struct node *nodes;
    size_t nnodes;
    double mins[2], maxes[2];
};

/* --- libstdc++'s std::nth_element and std::partition, on indices compared by one coordinate --- */

static double key(const struct tree *t, size_t i, int d)
{
    return t->pts[i].c[d];
}

static void swap_idx(size_t *a, size_t *b)
{
    const size_t t = *a;
    *a = *b;
    *b = t;
}

static void move_median_to_first(const struct tree *t, int d, size_t *result, size_t *a,
                                 size_t *b, size_t *c)
{
    const double ka = key(t, *a, d), kb = key(t, *b, d), kc = key(t, *c, d);
    if (ka < kb) {
        if (kb < kc)
            swap_idx(result, b);
        else if (ka < kc)
            swap_idx(result, c);
        else
            swap_idx(result, a);
    } else if (ka < kc) {
        swap_idx(result, a);
    } else if (kb < kc) {
        swap_idx(result, c);
    } else {
        swap_idx(result, b);
    }
}

static size_t *unguarded_partition(const struct tree *t, int d, size_t *first, size_t *last,
                                   const size_t *pivot)
{
    const double kp = key(t, *pivot, d);
    for (;;) {
        while (key(t, *first, d) < kp)
            first++;
        last--;
        while (kp < key(t, *last, d))
            last--;
        if (!(first < last)) return first;
        swap_idx(first, last);
        first++;
    }
}

static void insertion_sort(const struct tree *t, int d, size_t *first, size_t *last)
{
    if (first == last) return;
    for (size_t *i = first + 1; i != last; i++) {
        const size_t v = *i;
        const double kv = key(t, v, d);
        if (kv < key(t, *first, d)) {
            for (size_t *j = i; j != first; j--)
                *j = *(j - 1);
            *first = v;
        } else {
            size_t *j = i;
            while (kv < key(t, *(j - 1), d)) {
                *j = *(j - 1);
                j--;
            }
            *j = v;
        }
    }
}

/* std::__adjust_heap / __pop_heap / __make_heap, for __heap_select (max-heap on the key) */
static void adjust_heap(const struct tree *t, int d, size_t *first, ptrdiff_t hole, ptrdiff_t len,
                        size_t value)
{
    const ptrdiff_t top = hole;
    ptrdiff_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (key(t, first[child], d) < key(t, first[child - 1], d)) child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    ptrdiff_t parent = (hole - 1) / 2;
    while (hole > top && key(t, first[parent], d) < key(t, value, d)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

static void heap_select(const struct tree *t, int d, size_t *first, size_t *middle, size_t *last)
{
    const ptrdiff_t len = middle - first;
    if (len >= 2)
        for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
            adjust_heap(t, d, first, parent, len, first[parent]);
            if (parent == 0) break;
        }
    for (size_t *i = middle; i < last; i++)
        if (key(t, *i, d) < key(t, *first, d)) {
            const size_t v = *i;
            *i = *first;
            adjust_heap(t, d, first, 0, len, v);
        }
}

static int floor_log2(size_t n)
{
    int k = 0;
    while (n >>= 1)
        k++;
    return k;
}

static void nth_element(const struct tree *t, int d, size_t *first, size_t *nth, size_t *last)
{
    if (first == last || nth == last) return;
    int depth = 2 * floor_log2((size_t)(last - first));
    while (last - first > 3) {
        if (depth == 0) {
            heap_select(t, d, first, nth + 1, last);
            swap_idx(first, nth);
            return;
        }
        depth--;
        size_t *mid = first + (last - first) / 2;
        move_median_to_first(t, d, first, first + 1, mid, last - 1);
        size_t *cut = unguarded_partition(t, d, first + 1, last, first);
        if (cut <= nth)
            first = cut;
        else
            last = cut;
    }
    insertion_sort(t, d, first, last);
}

/* std::partition (bidirectional): those with key < pivot first; returns the boundary. */
static size_t *partition_below(const struct tree *t, int d, size_t *first, size_t *last,
                               double pivot)
{
    for (;;) {
        for (;;) {
            if (first == last) return first;
            if (key(t, *first, d) < pivot)
                first++;
            else
                break;
        }
        last--;
        for (;;) {
            if (first == last) return first;
            if (!(key(t, *last, d) < pivot))
                last--;
            else
                break;
        }
        swap_idx(first, last);
        first++;
    }
}

/* --- the tree: cKDTree's build with balanced_tree and compact_nodes --- */

static struct node *build(struct tree *t, size_t start, size_t end)
{
    struct node *n = &t->nodes[t->nnodes++];
    n->dim = -1, n->split = 0.0, n->start = start, n->end = end, n->less = n->greater = NULL;
    if (end - start <= LEAF_SIZE) return n;
    double mins[2], maxes[2];
    for (int i = 0; i < 2; i++)
        mins[i] = maxes[i] = key(t, t->idx[start], i);
    for (size_t j = start + 1; j < end; j++)
        for (int i = 0; i < 2; i++) {
            const double v = key(t, t->idx[j], i);
            maxes[i] = maxes[i] > v ? maxes[i] : v;
            mins[i] = mins[i] < v ? mins[i] : v;
        }
    int d = 0;
    double size = 0.0;
    for (int i = 0; i < 2; i++)
        if (maxes[i] - mins[i] > size) d = i, size = maxes[i] - mins[i];
    if (maxes[d] == mins[d]) return n; /* identical points: a leaf */
    size_t *base = t->idx + start, *mid = base + (end - start) / 2;
    nth_element(t, d, base, mid, t->idx + end);
    double split = key(t, *mid, d);
    size_t p = (size_t)(partition_below(t, d, base, mid, split) - t->idx);
    if (p == start) { /* nothing below the median: split just above the smallest */
        size_t *lo = base;
        for (size_t *i = base + 1; i < t->idx + end; i++)
            if (key(t, *i, d) < key(t, *lo, d)) lo = i;
        split = nextafter(key(t, *lo, d), HUGE_VAL);
        p = (size_t)(partition_below(t, d, base, t->idx + end, split) - t->idx);
    }
    n->dim = d, n->split = split;
    n->less = build(t, start, p);
    n->greater = build(t, p, end);
    return n;
}

/* --- cKDTree's binary heap (a min-heap on priority, its own sift rules) --- */

struct item {
    double priority;
    size_t i; /* a point's index, or a search state's */
};

struct heap {
    struct item *a;
    size_t n;
};

static void heap_push(struct heap *h, struct item it)
{
    size_t i = h->n++;
    h->a[i] = it;
    while (i > 0 && h->a[i].priority < h->a[(i - 1) / 2].priority) {
        const struct item t = h->a[(i - 1) / 2];
        h->a[(i - 1) / 2] = h->a[i];
        h->a[i] = t;
        i = (i - 1) / 2;
    }
}

static void heap_remove(struct heap *h)
{
    h->a[0] = h->a[h->n - 1];
    const size_t nn = --h->n;
    size_t i = 0, j = 1, k = 2;
    while ((j < nn && h->a[i].priority > h->a[j].priority) ||
           (k < nn && h->a[i].priority > h->a[k].priority)) {
        const size_t l = k < nn && h->a[j].priority > h->a[k].priority ? k : j;
        const struct item t = h->a[l];
        h->a[l] = h->a[i];
        h->a[i] = t;
        i = l, j = 2 * i + 1, k = 2 * i + 2;
    }
}

/* A node to visit and the query's squared distance to its cell, per side and in all. */
struct visit {
    const struct node *node;
    double side[2], min_distance;
};

static void update_side(struct visit *v, int d, double s)
{
    v->min_distance += s - v->side[d];
    v->side[d] = s;
}

/* The (up to) NEIGHBOURS nearest points to q, as cKDTree.query(q, k=10) chooses them: their
 * indices into out and squared distances into d2; returns how many. visits and the heaps are
 * scratch of the tree's node count. */
static int query(const struct tree *t, const double q[2], struct visit *visits,
                 struct item *queue_items, size_t *out, double *d2)
{
    struct item nb_items[NEIGHBOURS];
    struct heap nb = {nb_items, 0}, queue = {queue_items, 0};
    size_t nvisits = 0;
    struct visit *v = &visits[nvisits++];
    v->node = t->nodes, v->min_distance = 0.0;
    for (int i = 0; i < 2; i++) {
        double s = q[i] - t->maxes[i];
        s = s > t->mins[i] - q[i] ? s : t->mins[i] - q[i];
        s = s > 0.0 ? s : 0.0;
        v->side[i] = 0.0;
        update_side(v, i, s * s);
    }
    double bound = INFINITY;
    for (;;) {
        if (v->node->dim < 0) {
            for (size_t i = v->node->start; i < v->node->end; i++) {
                const struct point *p = &t->pts[t->idx[i]];
                const double dy = p->c[0] - q[0], dx = p->c[1] - q[1], d = dy * dy + dx * dx;
                if (d < bound) {
                    if (nb.n == NEIGHBOURS) heap_remove(&nb);
                    heap_push(&nb, (struct item){-d, t->idx[i]});
                    if (nb.n == NEIGHBOURS) bound = -nb.a[0].priority;
                }
            }
            if (queue.n == 0) break;
            v = &visits[queue.a[0].i];
            heap_remove(&queue);
        } else {
            const struct node *in = v->node;
            if (v->min_distance > bound) break;
            struct visit *far = &visits[nvisits];
            *far = *v;
            double s;
            if (q[in->dim] < in->split) {
                v->node = in->less, far->node = in->greater, s = in->split - q[in->dim];
            } else {
                v->node = in->greater, far->node = in->less, s = q[in->dim] - in->split;
            }
            update_side(far, in->dim, s * s);
            size_t far_at = nvisits++;
            if (v->min_distance > far->min_distance) { /* go to the nearer, queue the other */
                const struct visit tmp = *v;
                *v = *far;
                *far = tmp;
            }
            if (far->min_distance <= bound)
                heap_push(&queue, (struct item){far->min_distance, far_at});
        }
    }
    const int k = (int)nb.n;
    for (int i = k - 1; i >= 0; i--) { /* nearest first, as cKDTree sorts them */
        out[i] = nb.a[0].i;
        d2[i] = -nb.a[0].priority;
        heap_remove(&nb);
    }
    return k;
}

int clstats__mesh_idw_fill(float *back, float *rms, const unsigned char *good, size_t nx,
                           size_t ny)
{
    const size_t nb = nx * ny;
    size_t ngood = 0;
    for (size_t i = 0; i < nb; i++)
        ngood += good[i] != 0;
    if (ngood == nb || ngood == 0) return 1;
    struct tree t = {0};
    struct point *pts = malloc(ngood * sizeof *pts);
    float *gb = malloc(2 * ngood * sizeof *gb);
    t.idx = malloc(ngood * sizeof *t.idx);
    /* a node per point at most (leaves hold one or more), so the search's states and queue,
     * which grow by one per inner node met, fit in that many too */
    t.nodes = malloc(2 * ngood * sizeof *t.nodes);
    struct visit *visits = malloc(2 * ngood * sizeof *visits);
    struct item *queue = malloc(2 * ngood * sizeof *queue);
    int ok = pts && gb && t.idx && t.nodes && visits && queue;
    if (ok) {
        size_t k = 0;
        for (size_t y = 0; y < ny; y++)
            for (size_t x = 0; x < nx; x++)
                if (good[y * nx + x]) {
                    pts[k].c[0] = (double)y, pts[k].c[1] = (double)x;
                    gb[k] = back[y * nx + x], gb[ngood + k] = rms[y * nx + x];
                    t.idx[k] = k;
                    k++;
                }
        t.pts = pts;
        for (int i = 0; i < 2; i++) {
            t.mins[i] = t.maxes[i] = pts[0].c[i];
            for (size_t j = 1; j < ngood; j++) {
                t.mins[i] = pts[j].c[i] < t.mins[i] ? pts[j].c[i] : t.mins[i];
                t.maxes[i] = pts[j].c[i] > t.maxes[i] ? pts[j].c[i] : t.maxes[i];
            }
        }
        build(&t, 0, ngood);
        for (size_t y = 0; y < ny; y++)
            for (size_t x = 0; x < nx; x++) {
                if (good[y * nx + x]) continue;
                const double q[2] = {(double)y, (double)x};
                size_t nbr[NEIGHBOURS];
                double d2[NEIGHBOURS];
                const int n = query(&t, q, visits, queue, nbr, d2);
                /* photutils' weights 1 / d, summed nearest first as numpy's dot and sum do
                 * (in double: the box statistics are float64 there) */
                double wsum = 0.0, bsum = 0.0, rsum = 0.0;
                for (int i = 0; i < n; i++) {
                    const double w = 1.0 / sqrt(d2[i]);
                    wsum += w;
                    bsum += w * gb[nbr[i]];
                    rsum += w * gb[ngood + nbr[i]];
                }
                back[y * nx + x] = (float)(bsum / wsum);
                rms[y * nx + x] = (float)(rsum / wsum);
            }
    }
    free(pts), free(gb), free(t.idx), free(t.nodes), free(visits), free(queue);
    return ok;
}
