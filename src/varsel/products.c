/* products.c - the inner products that enter PaSS's fits, summed in the one order both engines
 * use (varsel_internal.h, PASS_LANES), and the columns of the standardised X they are taken
 * over. */
#include "varsel_internal.h"

#include <math.h>

double clstats__pass_dot(const double *a, const double *b, size_t n)
{
    double lane[PASS_LANES];
    for (size_t l = 0; l < PASS_LANES; l++) {
        double s = 0;
        /* fma, correctly rounded everywhere: a device compiler may not fuse a plain a * b + s
         * where the host does, or the other way round. */
        for (size_t t = l; t < n; t += PASS_LANES) s = fma(a[t], b[t], s);
        lane[l] = s;
    }
    for (size_t h = PASS_LANES / 2; h > 0; h /= 2)
        for (size_t l = 0; l < h; l++) lane[l] += lane[l + h];
    return lane[0];
}

void clstats__pass_column(const struct pass_data *d, size_t i, double *out)
{
    const size_t n = d->n, p = d->p;
    if (d->xs) {
        for (size_t t = 0; t < n; t++) out[t] = d->xs[i * n + t];
    } else if (d->f64) {
        for (size_t t = 0; t < n; t++) out[t] = ((const double *)d->xr)[t * p + i];
    } else {
        for (size_t t = 0; t < n; t++) out[t] = ((const float *)d->xr)[t * p + i];
    }
}

void clstats__pass_gram(const struct pass_data *d, const int32_t *idx, size_t k, size_t i,
                        double *gram, double *column_work)
{
    const size_t n = d->n;
    double *xi = column_work, *xm = column_work + n;
    const double *ci = d->xs ? d->xs + i * n : xi;
    if (!d->xs) clstats__pass_column(d, i, xi);
    for (size_t m = 0; m < k; m++) {
        const double *cm = d->xs ? d->xs + (size_t)idx[m] * n : xm;
        if (!d->xs) clstats__pass_column(d, (size_t)idx[m], xm);
        gram[m] = clstats__pass_dot(cm, ci, n);
    }
    gram[k] = clstats__pass_dot(ci, ci, n);
    gram[k + 1] = clstats__pass_dot(ci, d->ys, n);
}
