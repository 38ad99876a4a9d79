/* fit.c - one PaSS particle's least-squares fit, kept by updates as variables enter and leave
 * (never refitted): U upper triangular with U^T U = X_T^T X_T (the R of X_T's QR) and
 * c = U^-T X_T^T y (Q^T y), so that RSS = y^T y - |c|^2. Adding a column appends one column to U
 * (a triangular solve) from the column's inner products, which the engine gives (products.c
 * says in which order they are summed); removing one deletes its column and restores the
 * triangle by Givens rotations applied to c too (Golub and Van Loan, section 12.5). All in
 * double. */
#include "varsel_internal.h"

#include <math.h>

/* A column in the span of the model leaves at most this much of its unit norm squared. */
#define SPAN_TOL 1e-9

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t t = 0; t < n; t++) s += a[t] * b[t];
    return s;
}

/* U column by column, packed: column col holds rows 0 .. col + 1 (col + 1: the one row below the
 * diagonal a removal leaves before its rotations clear it), so that a model's factor lies in
 * k (k + 3) / 2 consecutive doubles, a few cache lines, rather than k rows cap apart: the swarm's
 * fits leave the caches between iterations and each update reads them again. Entries further
 * below the diagonal are zero and never read. */
#define U(f, r, col) ((f)->u[PASS_U_SIZE(col) + (r)])

bool clstats__fit_add(struct pass_fit *f, size_t i, const double *gram)
{
    const size_t k = f->k;
    if (k >= f->cap) return false;
    /* U^T l = X_T^T x_i, straight into U's new column. */
    double ll = 0;
    for (size_t r = 0; r < k; r++) {
        double s = gram[r];
        for (size_t m = 0; m < r; m++) s -= U(f, m, r) * U(f, m, k);
        U(f, r, k) = s / U(f, r, r);
        ll += U(f, r, k) * U(f, r, k);
    }
    const double d2 = gram[k] - ll;
    if (!(d2 > SPAN_TOL)) return false;
    const double diag = sqrt(d2);
    double s = gram[k + 1];
    for (size_t r = 0; r < k; r++) s -= U(f, r, k) * f->c[r];
    if (k > 0) U(f, k, k - 1) = 0; /* row k's only stored entry left of the diagonal */
    U(f, k, k) = diag;
    f->c[k] = s / diag;
    f->idx[k] = (int32_t)i;
    f->k = k + 1;
    return true;
}

void clstats__fit_remove(struct pass_fit *f, size_t m)
{
    const size_t k = f->k;
    for (size_t col = m; col + 1 < k; col++) /* rows 0 .. col + 1: those stored */
        for (size_t r = 0; r <= col + 1; r++)
            U(f, r, col) = U(f, r, col + 1);
    for (size_t col = m; col + 1 < k; col++) f->idx[col] = f->idx[col + 1];
    /* U is now upper Hessenberg from column m: rotate rows (j, j + 1) to clear U[j + 1][j]. */
    for (size_t j = m; j + 1 < k; j++) {
        const double a = U(f, j, j), b = U(f, j + 1, j), h = hypot(a, b);
        const double cs = a / h, sn = b / h;
        for (size_t col = j; col + 1 < k; col++) {
            const double top = U(f, j, col), bot = U(f, j + 1, col);
            U(f, j, col) = cs * top + sn * bot;
            U(f, j + 1, col) = -sn * top + cs * bot;
        }
        const double top = f->c[j], bot = f->c[j + 1];
        f->c[j] = cs * top + sn * bot;
        f->c[j + 1] = -sn * top + cs * bot;
        /* A negative diagonal would be a valid factor too; keep U's diagonal positive. */
        if (U(f, j, j) < 0) {
            for (size_t col = j; col + 1 < k; col++) U(f, j, col) = -U(f, j, col);
            f->c[j] = -f->c[j];
        }
    }
    f->k = k - 1;
}

double clstats__fit_rss(const struct pass_fit *f, double yty)
{
    const double rss = yty - dot(f->c, f->c, f->k);
    /* A perfect fit would give log 0: keep RSS at the rounding level of y^T y. */
    const double floor = yty * 1e-15;
    return rss > floor ? rss : floor;
}

void clstats__fit_beta(const struct pass_fit *f, double *beta)
{
    for (size_t r = f->k; r-- > 0;) {
        double s = f->c[r];
        for (size_t col = r + 1; col < f->k; col++) s -= U(f, r, col) * beta[col];
        beta[r] = s / U(f, r, r);
    }
}

size_t clstats__fit_cheapest(const struct pass_fit *f, double *work)
{
    const size_t k = f->k, cap = f->cap;
    double *beta = work, *w = work + cap; /* w = U^-1, upper, row-major k x k */
    clstats__fit_beta(f, beta);
    for (size_t col = 0; col < k; col++)
        for (size_t r = col + 1; r-- > 0;) {
            double s = r == col ? 1 : 0;
            for (size_t m = r + 1; m <= col; m++) s -= U(f, r, m) * w[m * cap + col];
            w[r * cap + col] = s / U(f, r, r);
        }
    size_t best = 0;
    double best_cost = INFINITY;
    for (size_t m = 0; m < k; m++) {
        double ginv = 0; /* (G^-1)_mm = |row m of U^-1|^2 */
        for (size_t col = m; col < k; col++) ginv += w[m * cap + col] * w[m * cap + col];
        const double cost = beta[m] * beta[m] / ginv;
        if (cost < best_cost || (cost == best_cost && f->idx[m] < f->idx[best]))
            best = m, best_cost = cost;
    }
    return best;
}
