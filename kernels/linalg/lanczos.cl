/* lanczos.cl - Lanczos's iteration for the largest eigenvalue of many symmetric float64
 * operators in lockstep (src/linalg/lanczos.c): the products (a full symmetric A, or Y Y' for
 * Y upper triangular), the orthogonalisation against the earlier vectors and the next vector,
 * each one launch for all the matrices, with no values back to the host between steps; and
 * the shifted copy [A + s I; I] whose factorisation carries the identity into L^-T. Matrix m
 * of a batch is at m * step (row-major, leading dimension n); its Lanczos vectors, K + 1 rows
 * of n, at m * (K + 1) * n of v.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* Work-items a row of rows_times, and a vector of dots and next_vector (powers of two): a
 * group reads its n values in n / items rounds, the latency of one step. */
#define ROW_ITEMS 64
#define SUM_ITEMS 256
/* cols_times_upper's group: COL_X columns by COL_Y slices of the rows. */
#define COL_X 16
#define COL_Y 16

/* The sum of the group's s[0 .. items), left in s[0]. */
static void reduce(__local double *s, uint t, uint items)
{
    for (uint h = items / 2; h > 0; h >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t < h) s[t] += s[t + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* y_m = A_m x_m, a group a row (upper: A upper triangular, only j >= i read). */
__kernel void rows_times(__global const double *a, ulong off, ulong step, uint n, uint upper,
                         __global const double *x, ulong xoff, ulong xstep,
                         __global double *y, ulong ystep)
{
    __local double s[ROW_ITEMS];
    const uint t = get_local_id(0), i = get_group_id(0), m = get_global_id(1);
    __global const double *row = a + off + m * step + (ulong)i * n;
    __global const double *xm = x + xoff + m * xstep;
    double acc = 0;
    for (uint j = (upper ? i : 0) + t; j < n; j += ROW_ITEMS) acc += row[j] * xm[j];
    s[t] = acc;
    reduce(s, t, ROW_ITEMS);
    if (t == 0) y[m * ystep + i] = s[0];
}

/* y_m = A_m' x_m for A_m upper triangular (only i <= j read): COL_X columns a group, the rows
 * shared by COL_Y slices, so that each load of a row's COL_X values is one transaction. */
__kernel void cols_times_upper(__global const double *a, ulong off, ulong step, uint n,
                               __global const double *x, ulong xoff, ulong xstep,
                               __global double *y, ulong ystep)
{
    __local double s[COL_Y][COL_X];
    const uint tx = get_local_id(0), ty = get_local_id(1), m = get_global_id(2);
    const uint j = get_group_id(0) * COL_X + tx;
    __global const double *am = a + off + m * step;
    __global const double *xm = x + xoff + m * xstep;
    double acc = 0;
    if (j < n)
        for (uint i = ty; i <= j; i += COL_Y) acc += am[(ulong)i * n + j] * xm[i];
    s[ty][tx] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ty == 0 && j < n) {
        double sum = 0;
        for (uint k = 0; k < COL_Y; k++) sum += s[k][tx];
        y[m * ystep + j] = sum;
    }
}

/* h_m[i] = v_m[i] . w_m for i <= k: a group a (i, m). */
__kernel void dots(__global const double *v, uint n, uint k1, __global const double *w,
                   __global double *h, ulong hoff, ulong hstep)
{
    __local double s[SUM_ITEMS];
    const uint t = get_local_id(0), i = get_group_id(0), m = get_global_id(1);
    __global const double *vi = v + ((ulong)m * k1 + i) * n;
    __global const double *wm = w + (ulong)m * n;
    double acc = 0;
    for (uint j = t; j < n; j += SUM_ITEMS) acc += vi[j] * wm[j];
    s[t] = acc;
    reduce(s, t, SUM_ITEMS);
    if (t == 0) h[hoff + m * hstep + i] = s[0];
}

/* w_m -= sum over i <= k of h_m[i] v_m[i]: classical Gram-Schmidt's subtraction. The column
 * is walked by a pointer a row at a time: Intel's CPU compiler (runtime 2026.2) gets the
 * indexed form vm[(ulong)i * n + j] wrong once the loop runs nine times or more (12 of every
 * 60 entries off at n = 300), which lost the iteration's orthogonality from step 9 on. */
__kernel void subtract(__global const double *v, uint n, uint k1, uint k,
                       __global const double *h, ulong hoff, ulong hstep, __global double *w)
{
    const uint j = get_global_id(0), m = get_global_id(1);
    if (j >= n) return;
    __global const double *vj = v + (ulong)m * k1 * n + j;
    __global const double *hm = h + hoff + m * hstep;
    double acc = w[(ulong)m * n + j];
    for (uint i = 0; i <= k; i++, vj += n) acc -= hm[i] * *vj;
    w[(ulong)m * n + j] = acc;
}

/* T's entries of step k: alpha_k (both passes' projections on v_k: h at 0 and hstep / 2 for
 * each matrix) and beta_k = |w|, then v_{k+1} = w / beta_k; a length at rounding next to
 * T's entries is a breakdown (the Krylov space is invariant: A = I, or k = n): beta_k 0 and
 * v_{k+1} 0, so that the later steps add only zero rows to T, which leave its largest
 * eigenvalue as it is for the positive semidefinite operators of the nugget rule. */
__kernel void next_vector(__global double *v, uint n, uint k1, uint k, __global const double *w,
                          __global const double *h, ulong hstep, __global double *alpha,
                          __global double *beta)
{
    __local double s[SUM_ITEMS];
    const uint t = get_local_id(0), m = get_group_id(0);
    __global const double *wm = w + (ulong)m * n;
    double acc = 0;
    for (uint j = t; j < n; j += SUM_ITEMS) acc += wm[j] * wm[j];
    s[t] = acc;
    reduce(s, t, SUM_ITEMS);
    const double b = sqrt(s[0]);
    const double a = h[m * hstep + k] + h[m * hstep + hstep / 2 + k];
    const double prev = k ? beta[(ulong)m * (k1 - 1) + k - 1] : 0;
    const bool broke = !(b > 0x1.0p-46 * (fabs(a) + prev));
    if (t == 0) {
        alpha[(ulong)m * (k1 - 1) + k] = a;
        beta[(ulong)m * (k1 - 1) + k] = broke ? 0 : b;
    }
    __global double *next = v + ((ulong)m * k1 + k + 1) * n;
    for (uint j = t; j < n; j += SUM_ITEMS) next[j] = broke ? 0 : wm[j] / b;
}

/* dst_m = [A_m + shift_m I; I] (2 n rows of n): the identity's rows below become L^-T when
 * the factorisation carries them along. */
__kernel void shifted_with_identity(__global const double *a, ulong off, ulong step, uint n,
                                    __global const double *shift, __global double *dst)
{
    const uint j = get_global_id(0), i = get_global_id(1), m = get_global_id(2);
    if (j >= n || i >= 2 * n) return;
    double val;
    if (i < n)
        val = a[off + m * step + (ulong)i * n + j] + (i == j ? shift[m] : 0.0);
    else
        val = i - n == j ? 1.0 : 0.0;
    dst[((ulong)m * 2 * n + i) * n + j] = val;
}
