/* starts.c - FAST-LTS's starting fits, on the host (q x q work each): the exact fit of q rows
 * drawn at random, with rows added while they do not determine it, as robustbase does with
 * singular subsets, drawn by core's generator (src/core/random.c), so that a seed gives the same
 * subsets on every machine. */
#include "regress_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fit from the normal equations: a's lower triangle (q x q, overwritten) and b. Cholesky
 * with a relative pivot test, so that exactly collinear rows count as singular although
 * rounding leaves a tiny positive pivot. */
static bool solve_normal(double *a, double *b, size_t q, double *coef)
{
    double scale = 0;
    for (size_t j = 0; j < q; j++) scale = fmax(scale, a[j * q + j]);
    for (size_t j = 0; j < q; j++) {
        double d = a[j * q + j];
        for (size_t k = 0; k < j; k++) d -= a[j * q + k] * a[j * q + k];
        if (!(d > 1e-12 * fmax(a[j * q + j], 1e-300)) || !(scale > 0)) return false;
        a[j * q + j] = sqrt(d);
        for (size_t i = j + 1; i < q; i++) {
            double s = a[i * q + j];
            for (size_t k = 0; k < j; k++) s -= a[i * q + k] * a[j * q + k];
            a[i * q + j] = s / a[j * q + j];
        }
    }
    for (size_t i = 0; i < q; i++) {
        for (size_t k = 0; k < i; k++) b[i] -= a[i * q + k] * b[k];
        b[i] /= a[i * q + i];
    }
    for (size_t i = q; i-- > 0;) {
        for (size_t k = i + 1; k < q; k++) b[i] -= a[k * q + i] * b[k];
        b[i] /= a[i * q + i];
    }
    memcpy(coef, b, q * sizeof *b);
    return true;
}

bool clstats__host_ls(const double *z, const double *w, size_t n, size_t q, double *coef)
{
    double a[64 * 64], b[64];
    if (q > 64) return false;
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    for (size_t i = 0; i < n; i++) {
        if (w[i] == 0) continue;
        const double *row = z + i * (q + 1);
        for (size_t j = 0; j < q; j++) {
            for (size_t k = 0; k <= j; k++) a[j * q + k] += w[i] * row[j] * row[k];
            b[j] += w[i] * row[j] * row[q];
        }
    }
    return solve_normal(a, b, q, coef);
}

bool clstats__solve_packed(const double *g, size_t q, double *coef)
{
    double a[64 * 64], b[64];
    if (q > 64) return false;
    size_t k = 0;
    for (size_t i = 0; i <= q; i++)
        for (size_t j = i; j <= q; j++, k++) {
            if (j < q) a[j * q + i] = g[k]; /* lower triangle: row j, column i <= j */
            else if (i < q) b[i] = g[k];
        }
    return solve_normal(a, b, q, coef);
}

bool clstats__elemental_fit(struct clstats__rng *r, const double *z, size_t n, size_t q,
                            double *coef)
{
    double *w = calloc(n, sizeof *w);
    if (!w) return false;
    size_t taken = 0;
    bool ok = false;
    while (!ok && taken < n) {
        /* one more distinct row (the first q at once) */
        size_t want = taken < q ? q : taken + 1;
        while (taken < want) {
            const size_t i = (size_t)clstats__rng_below(r, n);
            if (w[i] == 0) w[i] = 1, taken++;
        }
        ok = clstats__host_ls(z, w, n, q, coef);
    }
    free(w);
    return ok;
}
