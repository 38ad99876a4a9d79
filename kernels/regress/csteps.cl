/* csteps.cl - the O(n) steps of FAST-LTS's concentration steps on the device (src/regress/):
 * squared residuals of many candidate fits (after CLBlast's GEMM E = B X^T), the 0/1 weights of
 * each candidate's h-subset, the products of the data's columns whose weighted sums (one GEMM
 * W P) are every candidate's normal equations, and their unpacking for the batched Cholesky.
 * Always double: the refits must match R's robustbase to 1e-6.
 *
 * The data set Z is n rows of q + 1 doubles: the q columns of the design (1 first when there is
 * an intercept), then y. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* e[c n + i] = (y_i - e[c n + i])^2 for m candidates. */
__kernel void squared_residuals(__global double *e, __global const double *z, uint n, uint q,
                                uint m)
{
    const uint i = get_global_id(0), c = get_global_id(1);
    if (i >= n || c >= m) return;
    const double r = z[(ulong)i * (q + 1) + q] - e[(ulong)c * n + i];
    e[(ulong)c * n + i] = r * r;
}

/* p[i np + k] = z_ia z_ib over the pairs a <= b of the q + 1 columns, in row order. */
__kernel void products(__global const double *z, uint n, uint q, __global double *p)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint w = q + 1, np = w * (w + 1) / 2;
    __global const double *row = z + (ulong)i * w;
    uint k = 0;
    for (uint a = 0; a < w; a++)
        for (uint b = a; b < w; b++) p[(ulong)i * np + k++] = row[a] * row[b];
}

/* w[c n + i] = 1 where candidate c takes row i into its h-subset: r^2 below its h-th smallest
 * t[c], or equal to it when every such row fits (take_all[c]); the others 0. Candidates with
 * more rows equal to t than places are completed by subset_ties. */
__kernel void subset_weights(__global const double *r2, __global const double *t,
                             __global const int *take_all, uint n, uint m, __global double *w)
{
    const uint i = get_global_id(0), c = get_global_id(1);
    if (i >= n || c >= m) return;
    const double v = r2[(ulong)c * n + i], tc = t[c];
    w[(ulong)c * n + i] = (v < tc || (v == tc && take_all[c])) ? 1.0 : 0.0;
}

/* For candidate c with places[c] > 0 places left for rows equal to t[c]: the first rows in
 * index order take them, a rule that is the same on every device. */
__kernel void subset_ties(__global const double *r2, __global const double *t,
                          __global const uint *places, uint n, uint m, __global double *w)
{
    const uint c = get_global_id(0);
    if (c >= m || places[c] == 0) return;
    uint left = places[c];
    for (uint i = 0; i < n && left; i++)
        if (r2[(ulong)c * n + i] == t[c]) {
            w[(ulong)c * n + i] = 1.0;
            left--;
        }
}

/* From g[c np ..] (the weighted sums of the products) to the normal equations of candidate c:
 * a[c q q ..] = X^T W X (both triangles) and b[c q ..] = X^T W y. */
__kernel void normal_equations(__global const double *g, uint q, uint m, __global double *a,
                               __global double *b)
{
    const uint c = get_global_id(0);
    if (c >= m) return;
    const uint w = q + 1, np = w * (w + 1) / 2;
    __global const double *gc = g + (ulong)c * np;
    uint k = 0;
    for (uint i = 0; i < w; i++)
        for (uint j = i; j < w; j++, k++) {
            if (i < q && j < q) {
                a[(ulong)c * q * q + i * q + j] = gc[k];
                a[(ulong)c * q * q + j * q + i] = gc[k];
            } else if (i < q) {
                b[(ulong)c * q + i] = gc[k];
            }
        }
}
