/* csteps.cl - the O(n) steps of FAST-LTS's concentration steps on the device (src/regress/):
 * squared residuals of many candidate fits, the 0/1 weights of each candidate's h-subset, the
 * sums of the products of the data's columns over each subset (every candidate's normal
 * equations, summed by chunks of rows so that long data keeps the device busy), and their
 * unpacking for the batched Cholesky.
 * Always double: the refits must match R's robustbase to 1e-6.
 *
 * The data set Z is n rows of q + 1 doubles: the q columns of the design (1 first when there is
 * an intercept), then y. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

/* r2[c n + i] = (y_i - x_i . coef_c)^2 for m candidates, the dot product in column order (no
 * contraction: the same bits on every device). */
/* A sum's accumulator: volatile where built with -D ORDERED_SUMS (CPU devices, src/regress/
 * csteps.c), so that no compiler vectorises the loop and reorders its additions (Intel's CPU
 * compiler did; the pairs and rows paths then differed in the last bits). */
#ifdef ORDERED_SUMS
#define ACCUMULATOR volatile
#else
#define ACCUMULATOR
#endif

__kernel void squared_residuals(__global const double *z, __global const double *coef, uint n,
                                uint q, uint m, __global double *r2)
{
    const uint i = get_global_id(0), c = get_global_id(1);
    if (i >= n || c >= m) return;
    __global const double *row = z + (ulong)i * (q + 1);
    __global const double *b = coef + (ulong)c * q;
    double fit = 0;
    for (uint j = 0; j < q; j++) fit += b[j] * row[j];
    const double r = row[q] - fit;
    r2[(ulong)c * n + i] = r * r;
}

/* The pair (a, b), a <= b, of product k in the packed order of the q + 1 columns. */
inline uint2 pair_of(uint k, uint w)
{
    uint a = 0;
    while (k >= w - a) k -= w - a++;
    return (uint2)(a, a + k);
}

/* Partial sums of the products of the columns over the rows of one chunk that a candidate's
 * weights take: part[(c chunks + g) np + k] = sum of z_ia z_ib over rows i of chunk g (CHUNK
 * rows from g CHUNK) with w[c n + i] != 0, k the pair (a, b) in packed order. Work-item
 * (k, g, c); the chunks are summed in order by sum_chunks, so the result does not depend on
 * the device's work-group size or scheduling. */
__kernel void subset_products(__global const double *z, __global const double *w, uint n, uint q,
                              uint m, uint chunk, __global double *part)
{
    const uint k = get_global_id(0), g = get_global_id(1), c = get_global_id(2);
    const uint wd = q + 1, np = wd * (wd + 1) / 2;
    if (k >= np || c >= m) return;
    const uint2 ab = pair_of(k, wd);
    const uint from = g * chunk, to = min(n, from + chunk);
    __global const double *wc = w + (ulong)c * n;
    ACCUMULATOR double s = 0;
    for (uint i = from; i < to; i++)
        if (wc[i] != 0) s += z[(ulong)i * wd + ab.x] * z[(ulong)i * wd + ab.y];
    part[((ulong)c * get_global_size(1) + g) * np + k] = s;
}

/* The same sums, one work-item (g, c) for all the pairs of a chunk: each row read once, for CPU
 * devices where work-items are loop iterations. Each sum adds the same terms in the same order
 * as subset_products, so both give the same bits. Built with -D WIDTH=q + 1 (src/regress/
 * csteps.c), so that the sums are a private array of known size the compiler keeps close. */
#ifdef WIDTH
__kernel void subset_products_rows(__global const double *z, __global const double *w, uint n,
                                   uint q, uint m, uint chunk, __global double *part)
{
    const uint g = get_global_id(0), c = get_global_id(1), chunks = get_global_size(0);
    const uint np = WIDTH * (WIDTH + 1) / 2;
    if (c >= m) return;
    double s[WIDTH * (WIDTH + 1) / 2];
    for (uint k = 0; k < np; k++) s[k] = 0;
    const uint from = g * chunk, to = min(n, from + chunk);
    __global const double *wc = w + (ulong)c * n;
    for (uint i = from; i < to; i++) {
        if (wc[i] == 0) continue;
        double row[WIDTH];
        for (uint a = 0; a < WIDTH; a++) row[a] = z[(ulong)i * WIDTH + a];
        uint k = 0;
        for (uint a = 0; a < WIDTH; a++)
            for (uint b = a; b < WIDTH; b++) s[k++] += row[a] * row[b];
    }
    __global double *out = part + ((ulong)c * chunks + g) * np;
    for (uint k = 0; k < np; k++) out[k] = s[k];
}
#endif

/* g[c np + k] = the sum of the chunks' partial sums, in chunk order. */
__kernel void sum_chunks(__global const double *part, uint np, uint chunks, uint m,
                         __global double *g)
{
    const uint k = get_global_id(0), c = get_global_id(1);
    if (k >= np || c >= m) return;
    ACCUMULATOR double s = 0;
    for (uint j = 0; j < chunks; j++) s += part[((ulong)c * chunks + j) * np + k];
    g[(ulong)c * np + k] = s;
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

/* The rows of candidate 0 as bytes: in[i] = w[i] != 0 (its h-subset, for the caller). */
__kernel void subset_bytes(__global const double *w, uint n, __global uchar *in)
{
    const uint i = get_global_id(0);
    if (i < n) in[i] = w[i] != 0;
}

/* Robustbase's reweighting rule for one fit's squared residuals r2: w[i] = 1 where
 * sqrt(r2[i]) / s <= cutoff, else 0, and flag[i] = !w[i] (an outlier; NaN residuals too).
 * Division and sqrt in double are correctly rounded in OpenCL: the host's bits. */
__kernel void cutoff_weights(__global const double *r2, double s, double cutoff, uint n,
                             __global double *w, __global uchar *flag)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const bool in = sqrt(r2[i]) / s <= cutoff;
    w[i] = in ? 1.0 : 0.0;
    flag[i] = !in;
}

/* Per chunk of rows, in row order: part[2 g] = the sum of w, part[2 g + 1] = the sum of w r2
 * (summed over the chunks in order by sum_chunks). */
__kernel void weighted_r2_chunks(__global const double *r2, __global const double *w, uint n,
                                 uint chunk, __global double *part)
{
    const uint g = get_global_id(0);
    const uint from = g * chunk, to = min(n, from + chunk);
    if (from >= n) return;
    double sw = 0, swr = 0;
    for (uint i = from; i < to; i++)
        if (w[i] != 0) sw += w[i], swr += w[i] * r2[i];
    part[2 * g] = sw, part[2 * g + 1] = swr;
}

/* From the batched selection's results (src/select/column_ranks.c: stats[4 c ..] = key of the
 * h-th smallest, NaN count, count below, count equal; sums[c] the sum below): candidate c's
 * h-th smallest squared residual t[c], its LTS objective by section VI's multiplicity rule,
 * objs[c] = sum below + (h - count below) t (the host's formula, clstats__smallest_sum), and
 * how its h-subset takes the rows equal to t: all of them (take_all[c]) or the first
 * places[c]. A NaN residual (an overflowed fit) gives t = obj = inf. objs[m + c] = t[c]. */
__kernel void subset_rule(__global const ulong *stats, __global const double *sums, ulong h,
                          uint m, __global double *t, __global int *take_all,
                          __global uint *places, __global double *objs)
{
    const uint c = get_global_id(0);
    if (c >= m) return;
    __global const ulong *s = stats + 4 * c;
    double tc, obj;
    if (s[1] || s[0] == 0xffffffffffffffffUL) {
        tc = obj = INFINITY;
        take_all[c] = 1, places[c] = 0;
    } else {
        const ulong k = s[0];
        tc = as_double((k >> 63) ? (k & 0x7fffffffffffffffUL) : ~k);
        obj = sums[c] + (double)(h - s[2]) * tc;
        take_all[c] = s[2] + s[3] == h;
        places[c] = take_all[c] ? 0 : (uint)(h - s[2]);
    }
    t[c] = tc;
    objs[c] = obj, objs[m + c] = tc;
}

/* The data set Z built on the device from the caller's arrays: row i = [1] x_i y_i (x row i at
 * x[i ldx ..], y_i at y[i ystep]), as doubles; rows holding a NaN are counted into *nan_rows
 * (the host then builds Z without them instead). */
#define DESIGN_ROWS(NAME, XT, YT)                                                                 \
    __kernel void NAME(__global const XT *x, __global const YT *y, uint n, uint p, ulong ldx,     \
                       ulong ystep, uint intercept, __global double *z,                           \
                       __global volatile uint *nan_rows)                                           \
    {                                                                                              \
        const uint i = get_global_id(0);                                                           \
        if (i >= n) return;                                                                        \
        const uint w = p + intercept + 1;                                                          \
        __global double *row = z + (ulong)i * w;                                                   \
        bool bad = false;                                                                          \
        if (intercept) row[0] = 1;                                                                 \
        for (uint j = 0; j < p; j++) {                                                             \
            const double v = x[(ulong)i * ldx + j];                                                \
            bad |= isnan(v);                                                                       \
            row[intercept + j] = v;                                                                \
        }                                                                                          \
        const double v = y[(ulong)i * ystep];                                                      \
        bad |= isnan(v);                                                                           \
        row[w - 1] = v;                                                                            \
        if (bad) atomic_inc(nan_rows);                                                             \
    }
DESIGN_ROWS(design_rows_dd, double, double)
DESIGN_ROWS(design_rows_fd, float, double)
DESIGN_ROWS(design_rows_df, double, float)
DESIGN_ROWS(design_rows_ff, float, float)
