/* factors.c - the consistency factors of the LTS scale as R's robustbase computes them for
 * ltsReg (Pison, Van Aelst and Willems 2002, small-sample corrections fitted to simulations),
 * so that our scale and our outliers can be compared with robustbase's; and the normal quantile
 * they need. */
#include "regress_internal.h"

#include <math.h>

double clstats__dnorm(double x)
{
    return exp(-0.5 * x * x) * 0.39894228040143267794; /* 1 / sqrt(2 pi) */
}

/* Newton's method on Phi(x) = p from a logistic first guess: Phi is erfc's, exact to rounding. */
double clstats__qnorm(double p)
{
    if (!(p > 0 && p < 1)) return p == 1 ? INFINITY : p == 0 ? -INFINITY : NAN;
    double x = log(p / (1 - p)) / 1.702;
    for (int i = 0; i < 60; i++) {
        const double step = (0.5 * erfc(-x / sqrt(2.0)) - p) / clstats__dnorm(x);
        x -= step;
        if (fabs(step) < 1e-15 * (1 + fabs(x))) break;
    }
    return x;
}

/* 1 - exp(c0) / n^c1 for the fitted pair (c0, c1) of p coefficients (p >= 2 without the
 * intercept): robustbase fits c0, c1 through two points, at 3 p^2 and 5 p^2. */
static double fitted(const double k3[2], const double k5[2], double p, double n)
{
    const double y3 = log(-k3[0] / pow(p, k3[1])), y5 = log(-k5[0] / pow(p, k5[1]));
    const double x3 = -log(3 * p * p), x5 = -log(5 * p * p);
    /* c0 + c1 x = y through both points */
    const double c1 = (y3 - y5) / (x3 - x5), c0 = y3 - c1 * x3;
    return 1 - exp(c0) / pow(n, c1);
}

double clstats__lts_cnp2(size_t p_all, bool intercept, size_t n_rows, double alpha,
                         bool reweighted)
{
    const double n = (double)n_rows;
    const size_t p = intercept ? p_all - 1 : p_all;
    double f500, f875;
    if (p == 0) {
        f500 = reweighted ? 1 - exp(1.11098143415027) / pow(n, 1.5182890270453)
                          : 1 - exp(0.262024211897096) / pow(n, 0.604756680630497);
        f875 = reweighted ? 1 - exp(-0.66046776772861) / pow(n, 0.88939595831888)
                          : 1 - exp(-0.351584646688712) / pow(n, 1.01646567502486);
    } else if (p == 1) {
        static const double raw[2][4] = {
            {-0.0181777452315321, 0.697629772271099, -0.310122738776431, 1.06241615923172},
            {0.630869217886906, 0.650789250442946, 0.565065391014791, 1.03044199012509}};
        static const double rew[2][4] = {
            {0.6329852387657, 1.40361879788014, -0.642240988645469, 0.926325452943084},
            {1.58609654199605, 1.46340162526468, 0.391653958727332, 1.03167487483316}};
        const double *c = reweighted ? rew[intercept] : raw[intercept];
        f500 = 1 - exp(c[0]) / pow(n, c[1]);
        f875 = 1 - exp(c[2]) / pow(n, c[3]);
    } else {
        /* {a, b} at 3 p^2 and at 5 p^2, for alpha 0.5 and 0.875 */
        static const double raw500[2][4] = {
            {-0.487338281979106, 0.405511279418594, -0.340762058011, 0.37972360544988},
            {-0.746945886714663, 0.56264937192689, -0.535478048924724, 0.543323462033445}};
        static const double raw875[2][4] = {
            {-0.251778730491252, 0.883966931611758, -0.146660023184295, 0.86292940340761},
            {-0.458580153984614, 1.12236071104403, -0.267178168108996, 1.1022478781154}};
        static const double rew500[2][4] = {
            {-0.417574780492848, 1.83958876341367, -0.175753709374146, 1.8313809497999},
            {-0.773365715932083, 2.02013996406346, -0.337571678986723, 2.02037467454833}};
        static const double rew875[2][4] = {
            {-0.267522855927958, 1.17559984533974, -0.161200683014406, 1.21675019853961},
            {-0.474174840843602, 1.39681715704956, -0.276640353112907, 1.42543242287677}};
        const double *c5 = reweighted ? rew500[intercept] : raw500[intercept];
        const double *c8 = reweighted ? rew875[intercept] : raw875[intercept];
        f500 = fitted(c5, c5 + 2, (double)p, n);
        f875 = fitted(c8, c8 + 2, (double)p, n);
    }
    double f = alpha <= 0.875 ? f500 + (f875 - f500) / 0.375 * (alpha - 0.5)
                              : f875 + (1 - f875) / 0.125 * (alpha - 0.875);
    /* robustbase takes the square root for the location-only case (and for the raw factor
     * only where alpha < 1) */
    if (p == 0 && (reweighted || alpha < 1)) f = sqrt(f);
    return 1 / f;
}
