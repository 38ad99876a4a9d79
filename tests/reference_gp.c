/* reference_gp.c - plain loops for the Gaussian process (tests/reference_gp.h). */
#include "reference_gp.h"

#include <math.h>
#include <stdlib.h>

static double factor(const struct clstats_gp_model *m, double h, double beta, double *dlog)
{
    const double theta = pow(10.0, beta), ln10 = log(10.0);
    if (m->corr == CLSTATS_GP_POWER_EXPONENTIAL) {
        *dlog = -theta * pow(h, m->power) * ln10;
        return exp(-theta * pow(h, m->power));
    }
    const double nu = m->corr == CLSTATS_GP_MATERN32 ? 1.5 : 2.5, t = 2 * sqrt(nu) * theta * h;
    if (nu == 1.5) {
        *dlog = -t * t * ln10 / (1 + t);
        return (1 + t) * exp(-t);
    }
    *dlog = -(t * t / 3) * (1 + t) * ln10 / (1 + t + t * t / 3);
    return (1 + t + t * t / 3) * exp(-t);
}

/* R (n x n) and, when dr is not NULL, dR/dbeta_k (d matrices). */
static void corr(const struct clstats_gp_model *m, const double *x, size_t n, size_t d,
                 const double *beta, double *r, double *dr)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double v = 1, dl[64];
            for (size_t k = 0; k < d; k++)
                v *= factor(m, fabs(x[i * d + k] - x[j * d + k]), beta[k], &dl[k]);
            r[i * n + j] = i == j ? 1 : v;
            if (dr)
                for (size_t k = 0; k < d; k++) dr[(k * n + i) * n + j] = i == j ? 0 : v * dl[k];
        }
}

/* R's smallest and largest eigenvalues. */
static void extremes(const struct clstats_gp_model *m, const double *x, size_t n, size_t d,
                     const double *beta, double *lo_out, double *hi_out)
{
    double *a = malloc(n * n * sizeof *a);
    corr(m, x, n, d, beta, a, NULL);
    /* Cyclic Jacobi rotations until the off-diagonal part is negligible. */
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < i; j++) off += a[i * n + j] * a[i * n + j];
        if (off < 1e-300) break;
        for (size_t p = 0; p < n; p++)
            for (size_t q = p + 1; q < n; q++) {
                const double apq = a[p * n + q];
                if (apq == 0) continue;
                const double tau = (a[q * n + q] - a[p * n + p]) / (2 * apq);
                const double t = (tau >= 0 ? 1 : -1) / (fabs(tau) + sqrt(1 + tau * tau));
                const double c = 1 / sqrt(1 + t * t), s = t * c;
                for (size_t k = 0; k < n; k++) {
                    const double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (size_t k = 0; k < n; k++) {
                    const double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
            }
    }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, a[i * n + i]);
        hi = fmax(hi, a[i * n + i]);
    }
    free(a);
    *lo_out = lo;
    *hi_out = hi;
}

double reference_gp_nugget(const struct clstats_gp_model *m, const double *x, size_t n,
                           size_t d, const double *beta)
{
    if (!isnan(m->nugget)) return m->nugget;
    double lo, hi;
    extremes(m, x, n, d, beta, &lo, &hi);
    const double e = exp(m->nug_thres), need = (hi - e * lo) / (e - 1);
    return need > 0 ? need : 0;
}

double reference_gp_condition(const struct clstats_gp_model *m, const double *x, size_t n,
                              size_t d, const double *beta, double delta)
{
    double lo, hi;
    extremes(m, x, n, d, beta, &lo, &hi);
    return (hi + delta) / (lo + delta);
}

double reference_gp_deviance(const struct clstats_gp_model *m, const double *x, const double *y,
                             size_t n, size_t d, const double *beta, double delta, double *mu,
                             double *sigma2, double *grad)
{
    double *s = malloc(n * n * sizeof *s), *inv = calloc(n * n, sizeof *inv);
    double *dr = grad ? malloc(d * n * n * sizeof *dr) : NULL, dev = NAN;
    corr(m, x, n, d, beta, s, dr);
    for (size_t i = 0; i < n; i++) s[i * n + i] += delta;
    /* Cholesky by rows into the lower triangle. */
    double logdet = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
            double v = s[i * n + j];
            for (size_t k = 0; k < j; k++) v -= s[i * n + k] * s[j * n + k];
            if (i == j) {
                if (!(v > 0)) goto done;
                s[i * n + i] = sqrt(v);
                logdet += 2 * log(s[i * n + i]);
            } else {
                s[i * n + j] = v / s[j * n + j];
            }
        }
    /* S^-1 column by column: forward then back substitution on e_c. */
    for (size_t c = 0; c < n; c++) {
        double *z = malloc(n * sizeof *z);
        for (size_t i = 0; i < n; i++) {
            double v = i == c;
            for (size_t k = 0; k < i; k++) v -= s[i * n + k] * z[k];
            z[i] = v / s[i * n + i];
        }
        for (size_t i = n; i-- > 0;) {
            double v = z[i];
            for (size_t k = i + 1; k < n; k++) v -= s[k * n + i] * z[k];
            z[i] = v / s[i * n + i];
        }
        for (size_t i = 0; i < n; i++) inv[i * n + c] = z[i];
        free(z);
    }
    double a11 = 0, a1y = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            a11 += inv[i * n + j];
            a1y += inv[i * n + j] * y[j];
        }
    const double mh = a1y / a11;
    double *alpha = calloc(n, sizeof *alpha), q = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) alpha[i] += inv[i * n + j] * (y[j] - mh);
    for (size_t i = 0; i < n; i++) q += (y[i] - mh) * alpha[i];
    dev = logdet + (double)n * log(q);
    *mu = mh;
    *sigma2 = q / (double)n;
    if (grad)
        for (size_t k = 0; k < d; k++) {
            double g = 0;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    g += (inv[i * n + j] - (double)n / q * alpha[i] * alpha[j]) *
                         dr[(k * n + i) * n + j];
            grad[k] = g;
        }
    free(alpha);
done:
    free(s);
    free(inv);
    free(dr);
    return dev;
}

void reference_gp_extremes(const struct clstats_gp_model *m, const double *x, size_t n, size_t d,
                           const double *beta, double *lo, double *hi)
{
    extremes(m, x, n, d, beta, lo, hi);
}
