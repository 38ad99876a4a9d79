/* pass.cl - PaSS's device steps (src/varsel/engine_device.c): the residuals of the m particles
 * that take the argmax as an n x m matrix, and after CLBlast's E = R^T X (m x p), each one's
 * largest |E| outside its model; then the inner products the host's fits need for the variable
 * each particle adds, and X's standardisation. REAL is the data's dtype (-D USE_DOUBLE); WG (a
 * power of two) the work-group of the argmax, CAP the largest model; PASS_GRAMS (devices with
 * fp64) builds pass_grams and pass_standardise. */
#if defined(USE_DOUBLE) || defined(PASS_GRAMS)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef USE_DOUBLE
typedef double real;
#else
typedef float real;
#endif
#ifndef WG
#define WG 256
#endif
#ifndef CAP
#define CAP 100
#endif

/* For the q-th of the m particles that take the argmax (particle rows[q]):
 * r[t m + q] = y_t - sum_m x[t, idx_jm] beta_jm, over the model in the order it entered. */
__kernel void pass_residuals(__global const real *x, uint n, uint p, __global const real *y,
                             __global const int *idx, __global const real *beta,
                             __global const int *size, __global const int *rows, uint m_rows,
                             __global real *r)
{
    const uint q = get_global_id(0), t = get_global_id(1);
    if (q >= m_rows || t >= n) return;
    const int j = rows[q];
    __global const real *row = x + (ulong)t * p;
    real fit = 0;
    for (int m = 0; m < size[j]; m++) fit += row[idx[j * CAP + m]] * beta[j * CAP + m];
    r[(ulong)t * m_rows + q] = y[t] - fit;
}

/* (v, i) beats (w, k): larger |E|, then the lower index; -1 (nothing) loses to any index. */
inline bool beats(real v, int i, real w, int k)
{
    return i >= 0 && (k < 0 || v > w || (v == w && i < k));
}

/* One work-group per particle that takes the argmax (row q of E is particle rows[q]'s): each
 * work-item scans its variables in rising order, so that equal values keep the lowest index,
 * then a halving reduction. The local arrays (model CAP, lv and li WG each) are arguments:
 * PoCL 3.1's pthread device has let the work-groups its threads run at once share kernel-scope
 * local arrays (kernels/background/box_stats.cl says more), and this kernel runs 256 work-items
 * a group there too; local memory set by clSetKernelArg is each work-group's own. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
pass_argmax(__global const real *e, uint p, __global const int *idx, __global const int *size,
            __global const int *rows, __global int *best, __local int *model, __local real *lv,
            __local int *li)
{
    const uint q = get_group_id(0), l = get_local_id(0);
    const int j = rows[q], k = size[j];
    for (int m = l; m < k; m += WG) model[m] = idx[j * CAP + m];
    barrier(CLK_LOCAL_MEM_FENCE);
    __global const real *row = e + (ulong)q * p;
    real top = 0;
    int arg = -1;
    for (uint i = l; i < p; i += WG) {
        bool in = false;
        for (int m = 0; m < k; m++) in |= model[m] == (int)i;
        if (in) continue;
        const real v = fabs(row[i]);
        if (beats(v, (int)i, top, arg)) top = v, arg = (int)i;
    }
    lv[l] = top, li[l] = arg;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (l < s && beats(lv[l + s], li[l + s], lv[l], li[l])) lv[l] = lv[l + s], li[l] = li[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) best[j] = li[0];
}

#ifdef PASS_GRAMS
/* raw X standardised into x as src/varsel/pass.c's standardise_x does on the host, a work-item a
 * column, its sums in row order and in double with the same operations, so that the values
 * equal the host's bit for bit: the column's first non-finite row (or -1) into first_bad; its
 * mean and the norm of the centred column into mean and scale; then, unless the column is bad
 * or constant (which the host refuses), (x - mean) / scale in the dtype. */
__kernel void pass_standardise(__global const real *raw, __global real *x, uint n, uint p,
                               __global double *mean, __global double *scale,
                               __global int *first_bad)
{
    const uint i = get_global_id(0);
    if (i >= p) return;
    double m = 0;
    int bad = -1;
    for (uint t = 0; t < n; t++) {
        const double v = raw[(ulong)t * p + i];
        if (bad < 0 && !isfinite(v)) bad = (int)t;
        m += v;
    }
    first_bad[i] = bad;
    m /= (double)n;
    double s = 0;
    for (uint t = 0; t < n && bad < 0; t++) {
        const double c = (double)raw[(ulong)t * p + i] - m;
        s = fma(c, c, s);
    }
    s = sqrt(s);
    mean[i] = m, scale[i] = s;
    if (bad >= 0 || !(s > 1e-12 * sqrt((double)n) * fabs(m)) || s == 0) return;
    for (uint t = 0; t < n; t++) {
        const ulong at = (ulong)t * p + i;
        x[at] = (real)(((double)raw[at] - m) / s);
    }
}

/* src/varsel/varsel_internal.h's PASS_LANES, PASS_NONE and PASS_ARGMAX. */
#define LANES 64
#define NONE (-1)
#define ARGMAX (-2)

/* One work-group of LANES per particle that adds a variable: the variable (want[j], or the
 * argmax best[j]) into add[j], and in double its inner products with the model's columns in
 * their order, with itself and with y into gram[j (CAP + 2) ..], each summed in the one order of
 * src/varsel/products.c (lane l over t = l, l + LANES, ... by fma, then halved pairwise), so
 * that they equal the host's bit for bit. part (LANES doubles) is an argument, as pass_argmax's
 * arrays are. */
__kernel __attribute__((reqd_work_group_size(LANES, 1, 1))) void
pass_grams(__global const real *x, uint n, uint p, __global const double *y,
           __global const int *idx, __global const int *size, __global const int *want,
           __global const int *best, __global int *add, __global double *gram,
           __local double *part)
{
    const uint j = get_group_id(0), l = get_local_id(0);
    const int w = want[j];
    if (w == NONE) return;
    const int i = w == ARGMAX ? best[j] : w;
    if (l == 0) add[j] = i;
    if (i < 0) return;
    const int k = size[j];
    for (int r = 0; r <= k + 1; r++) {
        const int a = r < k ? idx[j * CAP + r] : i;
        double s = 0;
        for (uint t = l; t < n; t += LANES) {
            const double xi = (double)x[(ulong)t * p + (uint)i];
            s = fma(r <= k ? (double)x[(ulong)t * p + (uint)a] : y[t], xi, s);
        }
        part[l] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint h = LANES / 2; h > 0; h >>= 1) {
            if (l < h) part[l] += part[l + h];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (l == 0) gram[j * (CAP + 2) + (uint)r] = part[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif
