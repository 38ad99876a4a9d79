/* tridiagonal.cl - Householder's reduction of symmetric float64 matrices to tridiagonal form
 * (Golub and Van Loan, section 8.3), a work-group a matrix, for the extreme eigenvalues that
 * src/linalg/extremes.c then finds by Sturm bisection on the host. The same steps as a serial
 * loop (H = I - 2 v v'/v'v, p = 2 A v / v'v, q = p - (v'p / v'v) v, A -= v q' + q v'), with
 * each reflection's products split over the group's items.
 *
 * Build options: -D WG=the work-group size, a power of two; -D BY_ROWS=1 has each item read
 * its own rows of A for A v (CPU devices: contiguous for one item), 0 has consecutive items
 * read consecutive columns of a row (GPUs: coalesced).
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef WG
#define WG 64
#endif
#ifndef BY_ROWS
#define BY_ROWS 0
#endif

/* One item a matrix (CPU devices) needs no barriers, and PoCL compiles the loops between
 * barriers less well. */
#if WG == 1
#define SYNC()
#else
#define SYNC() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#endif

/* The group's sum of x, the same value returned to every item (its global writes before the
 * call visible to all after it). */
static double group_sum(double x, __local double *part)
{
#if WG == 1
    return x;
#endif
    const uint l = get_local_id(0);
    part[l] = x;
    SYNC();
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (l < h) part[l] += part[l + h];
        SYNC();
    }
    const double s = part[0];
    SYNC();
    return s;
}

/* Matrix g (n x n, full, row-major at src + src_off + g src_step) copied to work (n^2 + 2 n
 * doubles a matrix: the copy, then v and p), reduced there; out[2 n g ..] gets the diagonal (n)
 * then the subdiagonal (n - 1). The reduction keeps the trailing block symmetric, so A v is
 * read by columns: consecutive items read consecutive addresses. part (WG doubles, group_sum's)
 * is an argument like v and p, not a kernel-scope array: PoCL 3.1's pthread device has let
 * work-groups run at once share kernel-scope arrays that a helper with barriers, called from
 * several places, works on (kernels/background/box_stats.cl met it). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
tridiagonalise(__global const double *src, ulong src_off, ulong src_step, uint n,
               __global double *restrict work, __global double *restrict out,
               __local double *restrict v, __local double *restrict p, __local double *part)
{
    const uint l = get_local_id(0), g = get_group_id(0);
    __global const double *from = src + src_off + (ulong)g * src_step;
    __global double *restrict a = work + (ulong)g * (ulong)n * n;
    for (ulong i = l; i < (ulong)n * n; i += WG) a[i] = from[i];
    SYNC();
    for (uint k = 0; k + 2 < n; k++) {
        const uint m = n - k - 1; /* rows below the pivot */
        __global double *restrict t = a + (ulong)(k + 1) * n + k + 1; /* the trailing block, ld n */
        double s = 0;
        for (uint i = l; i < m; i += WG) {
            const double x = a[(ulong)(k + 1 + i) * n + k];
            v[i] = x;
            s += x * x;
        }
        const double norm = sqrt(group_sum(s, part));
        if (norm == 0) continue;
        const double v0 = v[0], alpha = v0 > 0 ? -norm : norm;
        SYNC(); /* every item has read v[0] */
        if (l == 0) v[0] = v0 - alpha;
        SYNC();
        s = 0;
        for (uint i = l; i < m; i += WG) s += v[i] * v[i];
        const double vv = group_sum(s, part);
        if (vv == 0) continue;
        s = 0;
        for (uint i = l; i < m; i += WG) {
            double acc = 0;
#if BY_ROWS
            for (uint j = 0; j < m; j++) acc += t[(ulong)i * n + j] * v[j];
#else
            for (uint j = 0; j < m; j++) acc += t[(ulong)j * n + i] * v[j];
#endif
            const double pi = 2 * acc / vv;
            p[i] = pi;
            s += v[i] * pi;
        }
        const double kq = group_sum(s, part) / vv;
        for (uint i = l; i < m; i += WG) p[i] -= kq * v[i];
        SYNC();
        for (uint j = 0; j < m; j++) {
            const double vj = v[j], pj = p[j];
            __global double *restrict row = t + (ulong)j * n;
            for (uint i = l; i < m; i += WG) row[i] -= vj * p[i] + pj * v[i];
        }
        if (l == 0) a[(ulong)(k + 1) * n + k] = alpha;
        SYNC();
    }
    __global double *diag = out + 2 * (ulong)n * g, *off = diag + n;
    for (uint i = l; i < n; i += WG) {
        diag[i] = a[(ulong)i * n + i];
        if (i + 1 < n) off[i] = a[(ulong)(i + 1) * n + i];
    }
}
