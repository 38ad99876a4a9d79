/* lbfgs.c - minimisation in a box by projected L-BFGS (Nocedal and Wright, sections 7.2 and
 * 16.7): the two-loop direction on the variables not held at a bound, a backtracking Armijo
 * search along the projected path, stopping as R's optim L-BFGS-B does by default (relative
 * decrease below factr 1e7 times machine epsilon). A small host optimiser: the deviances it
 * asks for are the device's work. */
#include "gp_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HISTORY 5

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Held at a bound: at it, with the gradient pushing outwards. */
static bool held(double x, double g, double lo, double hi)
{
    return (x <= lo && g > 0) || (x >= hi && g < 0);
}

int clstats__gp_lbfgs(gp_objective f, void *user, double *x, size_t d, double lower,
                      double upper, size_t max_iter, double *fx)
{
    double *mem = calloc((4 * HISTORY + 6) * d + HISTORY, sizeof *mem);
    if (!mem) return clstats__fail(NULL, CLSTATS_ERR_NOMEM, "gp: optimiser");
    double *s = mem, *yv = s + HISTORY * d, *g = yv + HISTORY * d, *p = g + d, *xn = p + d,
           *gn = xn + d, *q = gn + d, *rho = q + d, *al = rho + HISTORY;
    (void)al;
    double a[HISTORY];
    size_t kept = 0, head = 0;
    for (size_t i = 0; i < d; i++) x[i] = clamp(x[i], lower, upper);
    int status = f(user, x, fx, g);
    if (status != CLSTATS_OK || !isfinite(*fx)) goto done;
    for (size_t it = 0; it < max_iter; it++) {
        /* The direction: -H g on the free variables. */
        for (size_t i = 0; i < d; i++) q[i] = held(x[i], g[i], lower, upper) ? 0 : g[i];
        for (size_t c = 0; c < kept; c++) {
            const size_t j = (head + HISTORY - 1 - c) % HISTORY;
            double sq = 0;
            for (size_t i = 0; i < d; i++) sq += s[j * d + i] * q[i];
            a[c] = rho[j] * sq;
            for (size_t i = 0; i < d; i++) q[i] -= a[c] * yv[j * d + i];
        }
        if (kept) {
            const size_t j = (head + HISTORY - 1) % HISTORY;
            double sy = 0, yy = 0;
            for (size_t i = 0; i < d; i++) {
                sy += s[j * d + i] * yv[j * d + i];
                yy += yv[j * d + i] * yv[j * d + i];
            }
            for (size_t i = 0; i < d; i++) q[i] *= sy / yy;
        }
        for (size_t c = kept; c-- > 0;) {
            const size_t j = (head + HISTORY - 1 - c) % HISTORY;
            double yq = 0;
            for (size_t i = 0; i < d; i++) yq += yv[j * d + i] * q[i];
            const double b = rho[j] * yq;
            for (size_t i = 0; i < d; i++) q[i] += (a[c] - b) * s[j * d + i];
        }
        double slope = 0, gmax = 0;
        for (size_t i = 0; i < d; i++) {
            p[i] = held(x[i], g[i], lower, upper) ? 0 : -q[i];
            slope += p[i] * g[i];
            if (!held(x[i], g[i], lower, upper)) gmax = fmax(gmax, fabs(g[i]));
        }
        if (gmax == 0) break; /* a stationary point of the box */
        if (!(slope < 0)) { /* not a descent direction: steepest descent, history dropped */
            kept = 0;
            slope = 0;
            for (size_t i = 0; i < d; i++) {
                p[i] = held(x[i], g[i], lower, upper) ? 0 : -g[i];
                slope += p[i] * g[i];
            }
        }
        double t = kept ? 1 : fmin(1, 1 / gmax), fnew = NAN;
        bool accepted = false;
        for (int tries = 0; tries < 40 && !accepted; tries++, t /= 2) {
            double decrease = 0, moved = 0;
            for (size_t i = 0; i < d; i++) {
                xn[i] = clamp(x[i] + t * p[i], lower, upper);
                decrease += g[i] * (xn[i] - x[i]);
                moved = fmax(moved, fabs(xn[i] - x[i]));
            }
            if (moved == 0) break;
            status = f(user, xn, &fnew, gn);
            if (status != CLSTATS_OK) goto done;
            accepted = isfinite(fnew) && fnew <= *fx + 1e-4 * decrease;
        }
        if (!accepted) {
            if (kept == 0) break;
            kept = 0; /* retry once from steepest descent */
            continue;
        }
        double sy = 0;
        for (size_t i = 0; i < d; i++) {
            s[head * d + i] = xn[i] - x[i];
            yv[head * d + i] = gn[i] - g[i];
            sy += s[head * d + i] * yv[head * d + i];
        }
        if (sy > DBL_EPSILON * 1e2) {
            rho[head] = 1 / sy;
            head = (head + 1) % HISTORY;
            if (kept < HISTORY) kept++;
        }
        const double before = *fx;
        memcpy(x, xn, d * sizeof *x);
        memcpy(g, gn, d * sizeof *g);
        *fx = fnew;
        if (before - fnew <= 1e7 * DBL_EPSILON * fmax(fmax(fabs(before), fabs(fnew)), 1)) break;
    }
done:
    free(mem);
    return status;
}
