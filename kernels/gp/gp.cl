/* gp.cl - the Gaussian process's own kernels (src/gp/), in float64: correlation matrices of a
 * design for a population of parameter vectors, the nugget on their diagonals, the rows 1' and
 * y' below them, each factored matrix's deviance from those rows, the identity's rows that the
 * factorisation turns into L^-T and the gradient's products and sums with it, and the
 * cross-correlations and column sums of prediction. Matrices are row-major.
 *
 * Build options: -D CORR=0 power exponential (-D POWER=p), 1 Matern 3/2, 2 Matern 5/2 (GPfit's
 * scaling, include/clstats/gp.h); -D D=the design's columns.
 */
/* Work-items a row of the gradient's sums, and a matrix of deviance_sums (powers of two). */
#define GRAD_ITEMS 64
#define SUM_ITEMS 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef CORR
#define CORR 0
#endif
#ifndef POWER
#define POWER 1.95
#endif
#ifndef D
#define D 1
#endif

#define LN10 2.302585092994045684

/* h^POWER for h >= 0, as exp(POWER log h): a third of pow's time on CPU devices (PoCL), where
 * these dominate a large design's first evaluation, and within a few ulps of it. */
static double power(double h)
{
    return h > 0 ? exp((double)POWER * log(h)) : 0.0;
}

/* The correlation of rows a and b (d columns each) at theta = 10^beta; with `ratio` not NULL,
 * also ratio[k] = (d R / d beta_k) / R, which stays finite where R underflows. */
static double correlation(__global const double *a, __global const double *b,
                          __global const double *theta, double *ratio)
{
    double s = 0, poly = 1;
    for (int k = 0; k < D; k++) {
        const double h = fabs(a[k] - b[k]);
#if CORR == 0
        const double e = theta[k] * power(h);
        s += e;
        if (ratio) ratio[k] = -e * LN10;
#else
#if CORR == 1
        const double t = 2 * sqrt(1.5) * theta[k] * h, f = 1 + t;
        if (ratio) ratio[k] = -t * t * LN10 / f;
#else
        const double t = 2 * sqrt(2.5) * theta[k] * h, f = 1 + t + t * t / 3;
        if (ratio) ratio[k] = -(t * t / 3) * (1 + t) * LN10 / f;
#endif
        s += t;
        poly *= f;
#endif
    }
    return poly * exp(-s);
}

/* R of matrix m at (i, j), j <= i, and where `full` is set at (j, i) too (the nugget rule's
 * eigenvalues read the whole matrix, the factorisation only the lower triangle, and the
 * mirrored writes, a row apart each, cost half the kernel's time on the H100; pow dominates
 * the kernel on CPU devices, so each pair is computed once), for theta = 10^beta of its
 * parameter vector (thetas: count x D, computed on the host, so that every kernel uses the
 * same values). */
__kernel void corr_matrix(__global const double *x, uint n, __global const double *thetas,
                          __global double *r, ulong mat_step, uint full)
{
    const uint j = get_global_id(0), i = get_global_id(1), m = get_global_id(2);
    if (i >= n || j > i) return;
    __global const double *theta = thetas + (ulong)m * D;
    __global double *R = r + (ulong)m * mat_step;
    const double v = i == j ? 1.0 : correlation(x + (ulong)i * D, x + (ulong)j * D, theta, 0);
    R[(ulong)i * n + j] = v;
    if (full) R[(ulong)j * n + i] = v;
}

#if CORR == 0
/* The design's |x_ik - x_jk|^POWER for every pair j < i (pair index i (i - 1) / 2 + j) and
 * column k, at table[k pairs + pair]: what the power exponential's correlations share for
 * every theta, so that a population (or an optimiser's sequence) of matrices costs an exp a
 * pair instead of D powers and an exp (the powers' cost dominates on CPU devices). */
__kernel void distance_table(__global const double *x, uint n, __global double *table)
{
    const uint j = get_global_id(0), i = get_global_id(1);
    if (i >= n || j >= i) return;
    const ulong pairs = (ulong)n * (n - 1) / 2, at = (ulong)i * (i - 1) / 2 + j;
    for (int k = 0; k < D; k++) {
        const double h = fabs(x[(ulong)i * D + k] - x[(ulong)j * D + k]);
        table[k * pairs + at] = power(h);
    }
}

/* corr_matrix from the table: the same sums in the same order, so the same bits. */
__kernel void corr_matrix_table(__global const double *table, uint n,
                                __global const double *thetas, __global double *r,
                                ulong mat_step, uint full)
{
    const uint j = get_global_id(0), i = get_global_id(1), m = get_global_id(2);
    if (i >= n || j > i) return;
    __global double *R = r + (ulong)m * mat_step;
    double v = 1.0;
    if (j < i) {
        __global const double *theta = thetas + (ulong)m * D;
        const ulong pairs = (ulong)n * (n - 1) / 2, at = (ulong)i * (i - 1) / 2 + j;
        double s = 0;
        for (int k = 0; k < D; k++) s += theta[k] * table[k * pairs + at];
        v = exp(-s);
    }
    R[(ulong)i * n + j] = v;
    if (full) R[(ulong)j * n + i] = v;
}
#endif

/* Rows n and n + 1 below the n x n matrix m: 1' and y', the right-hand sides the blocked
 * factorisation carries along (src/linalg's clstats__potrf extra rows). */
__kernel void augment(__global double *r, uint n, ulong mat_step, __global const double *y)
{
    const uint j = get_global_id(0), m = get_global_id(1);
    if (j >= n) return;
    __global double *R = r + (ulong)m * mat_step;
    R[(ulong)n * n + j] = 1;
    R[(ulong)(n + 1) * n + j] = y[j];
}

/* delta[m] added to matrix m's diagonal. */
__kernel void add_diagonal(__global double *r, uint n, ulong mat_step,
                           __global const double *delta)
{
    const uint i = get_global_id(0), m = get_global_id(1);
    if (i >= n) return;
    r[(ulong)m * mat_step + (ulong)i * n + i] += delta[m];
}

/* Rows first .. first + n - 1 of r (n columns) set to the identity: right-hand sides that the
 * factorisation carries along into L^-T (src/gp/deviance.c, the gradient). */
__kernel void identity_rows(__global double *r, uint n, uint first)
{
    const uint j = get_global_id(0), i = get_global_id(1);
    if (i >= n || j >= n) return;
    r[((ulong)first + i) * n + j] = i == j ? 1.0 : 0.0;
}

/* out = U w for U upper triangular (n x n at u + uoff, row i zero left of column i): a
 * work-group a row, its items every GRAD_ITEMS-th column, their sums added in a fixed tree. */
__kernel __attribute__((reqd_work_group_size(GRAD_ITEMS, 1, 1))) void
upper_times(__global const double *u, ulong uoff, uint n, __global const double *w,
            __global double *out)
{
    __local double part[GRAD_ITEMS];
    const uint i = get_group_id(0), t = get_local_id(0);
    __global const double *row = u + uoff + (ulong)i * n;
    double s = 0;
    for (uint j = i + t; j < n; j += GRAD_ITEMS) s += row[j] * w[j];
    part[t] = s;
    for (uint width = GRAD_ITEMS / 2; width > 0; width /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t < width) part[t] += part[t + width];
    }
    if (t == 0) out[i] = part[0];
}

/* A work-group per factored matrix (clstats__potrf_many's, with its two extra rows u' = (L^-1
 * 1)' and v' = (L^-1 y)' below it), its items every SUM_ITEMS-th row, their sums added in a
 * fixed tree (the same on every run; one item's serial sums took 0.28 ms at n = 4064 on the
 * H100): mu = u'v / u'u and the quadratic form Q = |v - mu u|^2, both stable where R is nearly
 * singular (no difference of large terms), log|S| the sum of the diagonal blocks' parts in
 * block order. out[3m..3m+3) = deviance log|S| + n log Q, mu, Q; NaN where info is set. */
__kernel __attribute__((reqd_work_group_size(SUM_ITEMS, 1, 1))) void
deviance_sums(__global const double *l, uint n, ulong mat_step, uint count,
              __global const int *info, __global const double *parts, uint blocks,
              __global double *out)
{
    __local double s1[SUM_ITEMS], s2[SUM_ITEMS];
    const uint m = get_group_id(0), t = get_local_id(0);
    if (m >= count) return; /* the whole group, as below: no barrier is left waiting */
    if (info[m]) {
        if (t == 0) out[3 * (ulong)m] = out[3 * (ulong)m + 1] = out[3 * (ulong)m + 2] = NAN;
        return;
    }
    __global const double *u = l + (ulong)m * mat_step + (ulong)n * n, *v = u + n;
    double uu = 0, uv = 0;
    for (uint i = t; i < n; i += SUM_ITEMS) {
        uu += u[i] * u[i];
        uv += u[i] * v[i];
    }
    s1[t] = uu;
    s2[t] = uv;
    for (uint w = SUM_ITEMS / 2; w > 0; w /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t < w) {
            s1[t] += s1[t + w];
            s2[t] += s2[t + w];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const double mu = s2[0] / s1[0];
    double q = 0;
    for (uint i = t; i < n; i += SUM_ITEMS) {
        const double e = v[i] - mu * u[i];
        q += e * e;
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* every item has read s2[0] */
    s2[t] = q;
    for (uint w = SUM_ITEMS / 2; w > 0; w /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t < w) s2[t] += s2[t + w];
    }
    if (t == 0) {
        double logdet = 0;
        for (uint b = 0; b < blocks; b++) logdet += parts[(ulong)m * blocks + b];
        out[3 * (ulong)m] = logdet + n * log(s2[0]);
        out[3 * (ulong)m + 1] = mu;
        out[3 * (ulong)m + 2] = s2[0];
    }
}

/* The gradient's sums for row i: d dev / d beta_k = sum_{i != j} W_ij dR_ij/dbeta_k with
 * W = S^-1 - scale alpha alpha' (scale = n / Q, alpha = S^-1 (y - 1 mu)), S^-1 in the lower
 * triangle of sinv; the diagonal's dR is 0. partial[i D + k] = 2 sum_{j < i} (row i's share),
 * summed on the host in row order. */
__kernel __attribute__((reqd_work_group_size(GRAD_ITEMS, 1, 1))) void
gradient_rows(__global const double *x, uint n, __global const double *theta,
              __global const double *sinv, __global const double *alpha, double scale,
              __global double *partial)
{
    /* A work-group a row: its items take every GRAD_ITEMS-th column, so that a row of sinv is
     * read in consecutive pieces, and the rows' unequal lengths are split evenly; the items'
     * sums then added in a fixed tree, the same on every run. */
    __local double part[D][GRAD_ITEMS];
    const uint i = get_group_id(0), t = get_local_id(0);
    double acc[D], ratio[D];
    for (int k = 0; k < D; k++) acc[k] = 0;
    const double ai = scale * alpha[i];
    for (uint j = t; j < i; j += GRAD_ITEMS) {
        const double r = correlation(x + (ulong)i * D, x + (ulong)j * D, theta, ratio);
        const double w = (sinv[(ulong)i * n + j] - ai * alpha[j]) * r;
        for (int k = 0; k < D; k++) acc[k] += w * ratio[k];
    }
    for (int k = 0; k < D; k++) part[k][t] = acc[k];
    for (uint width = GRAD_ITEMS / 2; width > 0; width /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t < width)
            for (int k = 0; k < D; k++) part[k][t] += part[k][t + width];
    }
    if (t == 0)
        for (int k = 0; k < D; k++) partial[(ulong)i * D + k] = 2 * part[k][0];
}

/* out[j m_cols + c] = correlation of new point c with design row j (n x m, one column a new
 * point, as the solve with L wants it). */
__kernel void cross_corr(__global const double *x, uint n, __global const double *xnew,
                         uint m_cols, __global const double *theta, __global double *out)
{
    const uint c = get_global_id(0), j = get_global_id(1);
    if (c >= m_cols || j >= n) return;
    out[(ulong)j * m_cols + c] = correlation(xnew + (ulong)c * D, x + (ulong)j * D, theta, 0);
}

/* The factor of column k at distance h >= 0, of which a correlation is the product over its
 * columns (correlation's terms, each exponentiated alone). */
static double factor(int k, double h, __global const double *theta)
{
#if CORR == 0
    return exp(-theta[k] * power(h));
#else
#if CORR == 1
    const double t = 2 * sqrt(1.5) * theta[k] * h, f = 1 + t;
#else
    const double t = 2 * sqrt(2.5) * theta[k] * h, f = 1 + t + t * t / 3;
#endif
    return f * exp(-t);
#endif
}

/* out[q n + j] = the factor of distinct value q (values: each column's distinct values in
 * turn, column k's from starts[k]) against design row j. */
__kernel void corr_factors(__global const double *x, uint n, __global const double *values,
                           uint total, __global const uint *starts,
                           __global const double *theta, __global double *out)
{
    const uint q = get_global_id(0), j = get_global_id(1);
    if (q >= total || j >= n) return;
    int k = 0;
    while (k + 1 < D && q >= starts[k + 1]) k++;
    out[(ulong)q * n + j] = factor(k, fabs(values[q] - x[(ulong)j * D + k]), theta);
}

/* cross_corr's layout from the factors: new point c's correlation with design row j, the
 * product of its columns' factors (index: m_cols x D, each point's value in each column). */
__kernel void cross_corr_factors(__global const double *factors, uint n,
                                 __global const uint *index, uint m_cols, __global double *out)
{
    const uint c = get_global_id(0), j = get_global_id(1);
    if (c >= m_cols || j >= n) return;
    double r = 1;
    for (int k = 0; k < D; k++) r *= factors[(ulong)index[(ulong)c * D + k] * n + j];
    out[(ulong)j * m_cols + c] = r;
}

/* For column c of s = L^-1 r: s's squared norm, u's and w's products with it (u = L^-1 1,
 * w = L^-1 (y - 1 mu)), the three sums prediction needs, in out[3c..3c+3). */
__kernel void predict_sums(__global const double *s, uint n, uint m_cols,
                           __global const double *u, __global const double *w,
                           __global double *out)
{
    const uint c = get_global_id(0);
    if (c >= m_cols) return;
    double ss = 0, su = 0, sw = 0;
    for (uint j = 0; j < n; j++) {
        const double v = s[(ulong)j * m_cols + c];
        ss += v * v;
        su += u[j] * v;
        sw += w[j] * v;
    }
    out[3 * (ulong)c] = ss;
    out[3 * (ulong)c + 1] = su;
    out[3 * (ulong)c + 2] = sw;
}
