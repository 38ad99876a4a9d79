/* surface.c - the Legendre basis of skyfit's polynomial surface (surface.h): the same terms for
 * the design matrix and for the model image, so the fit and its evaluation cannot disagree. */
#include "surface.h"

void surface_init(struct surface *s, int degree, size_t nx, size_t ny)
{
    s->degree = degree;
    s->nx = nx;
    s->ny = ny;
    s->n_terms = (size_t)(degree + 1) * (size_t)(degree + 2) / 2 - 1;
}

/* Pixel centres 0 .. n - 1 onto [-1, 1]; a single pixel sits at 0. */
static double scaled(double x, size_t n)
{
    return n > 1 ? (2.0 * x - (double)(n - 1)) / (double)(n - 1) : 0.0;
}

/* P_0 .. P_degree at t by Bonnet's recurrence. */
static void legendre(double t, int degree, double *p)
{
    p[0] = 1.0;
    if (degree > 0) p[1] = t;
    for (int k = 2; k <= degree; k++)
        p[k] = ((2 * k - 1) * t * p[k - 1] - (k - 1) * p[k - 2]) / k;
}

void surface_terms(const struct surface *s, double x, double y, double *row)
{
    double pu[SURFACE_MAX_DEGREE + 1], pv[SURFACE_MAX_DEGREE + 1];
    legendre(scaled(x, s->nx), s->degree, pu);
    legendre(scaled(y, s->ny), s->degree, pv);
    size_t t = 0;
    for (int total = 1; total <= s->degree; total++)
        for (int j = 0; j <= total; j++)
            row[t++] = pu[total - j] * pv[j];
}

double surface_value(const struct surface *s, const double *coef, double intercept, double x,
                     double y)
{
    double row[(SURFACE_MAX_DEGREE + 1) * (SURFACE_MAX_DEGREE + 2) / 2];
    surface_terms(s, x, y, row);
    double v = intercept;
    for (size_t t = 0; t < s->n_terms; t++)
        v += coef[t] * row[t];
    return v;
}
