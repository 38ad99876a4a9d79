/* surface.h - skyfit's model: a 2-D polynomial of total degree D in Legendre polynomials of the
 * pixel coordinates scaled to [-1, 1], so that the design matrix stays well conditioned at any
 * image size (raw pixel powers x^3 reach 10^10 on a 2k image and the columns become nearly
 * parallel). The constant term is the regression's intercept; the others are its features. */
#ifndef SKYFIT_SURFACE_H
#define SKYFIT_SURFACE_H

#include <stddef.h>

#define SURFACE_MAX_DEGREE 8

struct surface {
    int degree;
    size_t nx, ny;  /* the image's size, which fixes the scaling */
    size_t n_terms; /* features, the constant left out: (D + 1)(D + 2) / 2 - 1 */
};

void surface_init(struct surface *s, int degree, size_t nx, size_t ny);

/* The features at pixel position (x, y) (0-based, fractional for a tile's centre) into row
 * (n_terms values): P_i(u) P_j(v) for 1 <= i + j <= D, ordered by i + j, then by j. */
void surface_terms(const struct surface *s, double x, double y, double *row);

/* The model at (x, y): intercept + coef . terms. */
double surface_value(const struct surface *s, const double *coef, double intercept, double x,
                     double y);

#endif
