/* pass.cl - PaSS's device steps (src/varsel/engine_device.c). The argmaxes: each particle's
 * largest |E_i| = |x_i^T (y - X_T beta)| outside its model, formed as x_i^T y - sum_m (x_i^T x_m)
 * beta_m from X^T y and the cached Gram rows x_m^T X of the models' variables (pass_gather
 * gathers the new variables' columns for CLBlast's GEMM or pass_gram_rows that makes their
 * rows; pass_scan scans);
 * or, where the cache cannot hold an iteration's variables, from the residuals of the particles
 * that take the argmax as an n x m matrix and CLBlast's E = R^T X (pass_residuals, pass_argmax).
 * Then the inner products the host's fits need for the variable each particle adds, and X's
 * standardisation and transposition. REAL is the data's dtype (-D USE_DOUBLE); WG (a power of
 * two) the work-group of the scans, CAP the largest model; PASS_GRAMS (devices with fp64) builds
 * pass_grams and the standardisation (pass_lane_sums, pass_lane_fold, pass_scale). */
#if defined(USE_DOUBLE) || defined(PASS_GRAMS)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef USE_DOUBLE
typedef double real;
typedef double4 real4;
#else
typedef float real;
typedef float4 real4;
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

/* The work-group's best of its work-items' (top, arg) by a halving reduction, into lv[0] and
 * li[0]. */
inline void best_of_group(real top, int arg, uint l, __local real *lv, __local int *li)
{
    lv[l] = top, li[l] = arg;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (l < s && beats(lv[l + s], li[l + s], lv[l], li[l])) lv[l] = lv[l + s], li[l] = li[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* One work-group per particle that takes the argmax (row q of E is particle rows[q]'s): each
 * work-item scans its variables in rising order, so that equal values keep the lowest index,
 * then a halving reduction. The local arrays (model CAP, lv and li WG each) are arguments, here
 * and in pass_scan and pass_grams: PoCL 3.1's pthread device has let the work-groups its threads
 * run at once share kernel-scope local arrays that a helper with barriers works on
 * (kernels/background/box_stats.cl says more); local memory set by clSetKernelArg is each
 * work-group's own. */
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
    best_of_group(top, arg, l, lv, li);
    if (l == 0) best[j] = li[0];
}

/* Column var[first + q] of x (row-major n x p) into row q of xnew (q < m, row-major m x n): the new
 * variables' columns as the left factor of the GEMM that makes their Gram rows. */
__kernel void pass_gather(__global const real *x, uint n, uint p, __global const int *var,
                          uint first, uint m, __global real *xnew)
{
    const uint t = get_global_id(0), q = get_global_id(1);
    if (t >= n || q >= m) return;
    xnew[(ulong)q * n + t] = x[(ulong)t * p + (uint)var[first + q]];
}

/* Rows q < m of g (row q at g0 + q p, p values) = xnew's row q (n values) times x (row-major
 * n x p): the Gram rows of the variables new to the cache, a GR_H x GR_W tile of them (rows x
 * columns) a work-group of GR_TX x GR_TY, each work-item 8 rows (4 ly .. 4 ly + 3 and
 * GR_H / 2 + 4 ly ..) by GR_RN columns (vector c at 4 (c GR_TX + lx): 8, or 16 in the "w"
 * tiles) in registers. The tile's shape is the tuning's (pass.gram_tile): small tiles make many
 * work-groups, so that an iteration's ~60 rows keep every compute unit busy (a 64 x 128 tile
 * made 313 work-groups at p = 40 000 for 132 compute units). Where they are still too few, the
 * rows of x are split among the work-groups of dimension 2 (tuning pass.gram_split): group z
 * sums rows z span .. z span + span - 1, split 0 into g, split z > 0 into part (z - 1) stride +
 * q p + i, and pass_gram_fold adds the splits in rising z; the sums then depend on t only
 * through its split and place there, never on the column, so equal columns still make equal
 * rows. x and xnew pass through local memory GR_T rows of x at a time (xs GR_T x GR_W; ns
 * GR_T x GR_NS, xnew's tile transposed, padded so that its stores spread over the banks;
 * arguments as pass_argmax's, vectors so that every read of them is one 16-byte load), x read
 * once for up to GR_H rows, the next slice loaded into registers while this one is summed;
 * with GR_DB (the "d" and "w" tiles) local memory twice over, slice s summed from one side
 * while slice s + 1 goes into the other, one barrier a slice instead of two. In the inner loop
 * a warp's rows are broadcasts and its columns whole lines: four vector loads from local
 * memory for 64 multiply-adds (six for 128 in the "w" tiles). Each sum runs over t rising
 * within its split. */
#ifndef GR_TX
#define GR_TX 8
#endif
#ifndef GR_TY
#define GR_TY 8
#endif
#ifndef GR_T
#define GR_T 16
#endif
#ifndef GR_DB
#define GR_DB 0
#endif
#ifndef GR_RN
#define GR_RN 8
#endif
#define GR_RG (GR_RN / 4) /* a work-item's columns in vectors */
#define GR_W (GR_RN * GR_TX)
#define GR_H (8 * GR_TY)
#define GR_N (GR_TX * GR_TY)
#define GR_NS (GR_H + 4) /* a pad, a multiple of 4 for the vector loads */
#define GR_XL (GR_T * GR_W / GR_N) /* the slice's x values a work-item loads */
#define GR_NL (GR_T * GR_H / GR_N) /* and xnew's */
#define GR_XV (GR_W / 4)  /* a row of the x slice, in vectors */
#define GR_NV (GR_NS / 4) /* a row of xnew's transposed slice, in vectors */
__kernel __attribute__((reqd_work_group_size(GR_TX, GR_TY, 1))) void
pass_gram_rows(__global const real *x, uint n, uint p, __global const real *xnew, uint m,
               __global real *g, ulong g0, uint span, __global real *part, ulong stride,
               __local real4 *xs4, __local real4 *ns4)
{
    const uint lx = get_local_id(0), ly = get_local_id(1), flat = ly * GR_TX + lx;
    const uint i0 = get_group_id(0) * GR_W, q0 = get_group_id(1) * GR_H, z = get_group_id(2);
    const uint ta = z * span, tb = min(n, ta + span); /* this split's rows of x */
    __local real *xs = (__local real *)xs4, *ns = (__local real *)ns4;
    real4 acc[8][GR_RG]; /* row a's columns 4 (c GR_TX + lx) .. + 3 */
#pragma unroll
    for (uint a = 0; a < 8; a++)
#pragma unroll
        for (uint c = 0; c < GR_RG; c++) acc[a][c] = (real4)(0);
    real xr[GR_XL], nr[GR_NL]; /* the next slice, on its way to local memory */
    /* Value r of a work-item's share is element flat + GR_N r of the slice (x's GR_T x GR_W
     * along its rows, xnew's GR_H x GR_T along its rows). */
    for (uint t0 = ta, side = 0; t0 < tb + GR_T; t0 += GR_T, side ^= GR_DB) {
        /* slice t0 - GR_T from registers into this side of local memory, whose last readers
         * passed the last barrier (twice over) or have just passed this one; then slice t0
         * into registers */
        if (t0 != ta) {
#if !GR_DB
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
#pragma unroll
            for (uint r = 0; r < GR_XL; r++) xs[side * GR_T * GR_W + flat + GR_N * r] = xr[r];
#pragma unroll
            for (uint r = 0; r < GR_NL; r++) {
                const uint e = flat + GR_N * r;
                ns[side * GR_T * GR_NS + (e % GR_T) * GR_NS + e / GR_T] = nr[r];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (t0 < tb) {
#pragma unroll
            for (uint r = 0; r < GR_XL; r++) {
                const uint e = flat + GR_N * r, t = t0 + e / GR_W, i = i0 + e % GR_W;
                xr[r] = t < tb && i < p ? x[(ulong)t * p + i] : 0;
            }
#pragma unroll
            for (uint r = 0; r < GR_NL; r++) {
                const uint e = flat + GR_N * r, q = q0 + e / GR_T, t = t0 + e % GR_T;
                nr[r] = q < m && t < tb ? xnew[(ulong)q * n + t] : 0;
            }
        }
        if (t0 == ta) continue;
        __local const real4 *xb = xs4 + side * GR_T * GR_XV, *nb = ns4 + side * GR_T * GR_NV;
#pragma unroll
        for (uint tt = 0; tt < GR_T; tt++) {
            real4 b[GR_RG];
#pragma unroll
            for (uint c = 0; c < GR_RG; c++) b[c] = xb[tt * GR_XV + c * GR_TX + lx];
            const real4 a0 = nb[tt * GR_NV + ly], a1 = nb[tt * GR_NV + GR_TY + ly];
            const real av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
            for (uint a = 0; a < 8; a++)
#pragma unroll
                for (uint c = 0; c < GR_RG; c++) acc[a][c] += av[a] * b[c];
        }
    }
    __global real *out = z ? part + (z - 1) * stride : g + g0;
#pragma unroll
    for (uint a = 0; a < 8; a++) {
        const uint q = q0 + (a < 4 ? 4 * ly + a : GR_H / 2 + 4 * ly + a - 4);
        if (q >= m) continue;
        __global real *row = out + (ulong)q * p;
#pragma unroll
        for (uint c = 0; c < GR_RG; c++) {
            const uint i = i0 + 4 * (c * GR_TX + lx);
            const real v[4] = {acc[a][c].x, acc[a][c].y, acc[a][c].z, acc[a][c].w};
#pragma unroll
            for (uint b = 0; b < 4; b++)
                if (i + b < p) row[i + b] = v[b];
        }
    }
}

/* The splits of pass_gram_rows summed in rising z: g[g0 + e] (split 0) + part[e] + part[stride
 * + e] + ..., e < count (the m rows' values). */
__kernel void pass_gram_fold(__global real *g, ulong g0, __global const real *part,
                             ulong stride, uint splits, ulong count)
{
    const ulong e = get_global_id(0);
    if (e >= count) return;
    real s = g[g0 + e];
    for (uint z = 1; z < splits; z++) s += part[(z - 1) * stride + e];
    g[g0 + e] = s;
}

/* Work-group (c, q) for the q-th particle that takes the argmax (particle rows[q]) and its
 * variables c span .. (c + 1) span - 1: E_i = xty_i - sum_m g[slot_m p + i] beta_m, the model's
 * terms in the order they entered (slot_m the cache row of its m-th variable, g's rows x_v^T X),
 * and the largest |E_i| outside the model there as pass_argmax finds it, into part_v and part_i
 * at q chunks + c (chunks work-groups a particle, so that every compute unit has several
 * groups' loads in flight: one group a particle left most of a GPU idle); pass_scan_fold then
 * takes each particle's best over its chunks. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
pass_scan(__global const real *xty, __global const real *g, uint p, uint span,
          __global const int *idx, __global const int *slot, __global const real *beta,
          __global const int *size, __global const int *rows, __global real *part_v,
          __global int *part_i, __local int *model, __local ulong *row, __local real *b,
          __local real *lv, __local int *li)
{
    const uint c = get_group_id(0), q = get_group_id(1), l = get_local_id(0);
    const int j = rows[q], k = size[j];
    for (int m = l; m < k; m += WG) {
        model[m] = idx[j * CAP + m];
        row[m] = (ulong)slot[j * CAP + m] * p;
        b[m] = beta[j * CAP + m];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    real top = 0;
    int arg = -1;
    const uint end = p - c * span < span ? p : c * span + span;
    for (uint i = c * span + l; i < end; i += WG) {
        bool in = false;
        real e = xty[i];
        for (int m = 0; m < k; m++) {
            in |= model[m] == (int)i;
            e -= g[row[m] + i] * b[m];
        }
        if (in) continue;
        const real v = fabs(e);
        if (beats(v, (int)i, top, arg)) top = v, arg = (int)i;
    }
    best_of_group(top, arg, l, lv, li);
    if (l == 0) {
        part_v[q * get_num_groups(0) + c] = lv[0];
        part_i[q * get_num_groups(0) + c] = li[0];
    }
}

/* The q-th particle's best over its chunks' (q < m): into best[rows[q]]. */
__kernel void pass_scan_fold(__global const real *part_v, __global const int *part_i,
                             uint chunks, __global const int *rows, uint m, __global int *best)
{
    const uint q = get_global_id(0);
    if (q >= m) return;
    real top = 0;
    int arg = -1;
    for (uint c = 0; c < chunks; c++) {
        const real v = part_v[q * chunks + c];
        const int i = part_i[q * chunks + c];
        if (beats(v, i, top, arg)) top = v, arg = i;
    }
    best[rows[q]] = arg;
}

/* x (row-major n x p) into xt (p x n: column i of x at xt + i n) through 16 x 16 tiles, so that
 * both the reads and the writes go along memory: the layout in which pass_grams reads a column
 * as consecutive values. */
#define TILE 16
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void
pass_transpose(__global const real *x, uint n, uint p, __global real *xt)
{
    __local real tile[TILE][TILE + 1];
    const uint i0 = get_group_id(0) * TILE, t0 = get_group_id(1) * TILE;
    const uint a = get_local_id(0), c = get_local_id(1);
    if (t0 + c < n && i0 + a < p) tile[c][a] = x[(ulong)(t0 + c) * p + i0 + a];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i0 + c < p && t0 + a < n) xt[(ulong)(i0 + c) * n + t0 + a] = tile[a][c];
}

#ifdef PASS_GRAMS
/* src/varsel/varsel_internal.h's PASS_LANES, PASS_NONE and PASS_ARGMAX. */
#define LANES 64
#define NONE (-1)
#define ARGMAX (-2)

/* raw X standardised into x as src/varsel/pass.c's standardise_x does on the host, its sums in
 * double with the same operations in the same order, so that the values equal the host's bit
 * for bit: each column summed in LANES lanes (lane l over rows t = l, l + LANES, ... rising;
 * work-item (i, l) here), then the lanes halved pairwise (pass_lane_fold, a work-item a column):
 * first the values (the mean; each lane's first non-finite row), then the squares of their
 * distances from the mean by fma (the norm); then pass_scale writes (x - mean) / norm in the
 * dtype, unless the column is bad or constant (which the host refuses), and its transposition
 * where with_xt. */
__kernel void pass_lane_sums(__global const real *raw, uint n, uint p, __global const double *mean,
                             uint pass, __global double *lanes, __global int *lane_bad)
{
    const uint i = get_global_id(0), l = get_global_id(1);
    if (i >= p) return;
    double s = 0;
    int bad = -1;
    if (pass == 0) {
        for (uint t = l; t < n; t += LANES) {
            const double v = raw[(ulong)t * p + i];
            if (bad < 0 && !isfinite(v)) bad = (int)t;
            s += v;
        }
        lane_bad[(ulong)l * p + i] = bad;
    } else {
        const double m = mean[i];
        for (uint t = l; t < n; t += LANES) {
            const double d = (double)raw[(ulong)t * p + i] - m;
            s = fma(d, d, s);
        }
    }
    lanes[(ulong)l * p + i] = s;
}

__kernel void pass_lane_fold(__global const double *lanes, __global const int *lane_bad, uint n,
                             uint p, uint pass, __global double *mean, __global double *scale,
                             __global int *first_bad)
{
    const uint i = get_global_id(0);
    if (i >= p) return;
    double a[LANES];
    for (uint l = 0; l < LANES; l++) a[l] = lanes[(ulong)l * p + i];
    for (uint h = LANES / 2; h > 0; h >>= 1)
        for (uint l = 0; l < h; l++) a[l] += a[l + h];
    if (pass == 0) {
        int bad = -1;
        for (uint l = 0; l < LANES; l++) {
            const int b = lane_bad[(ulong)l * p + i];
            if (b >= 0 && (bad < 0 || b < bad)) bad = b;
        }
        first_bad[i] = bad;
        mean[i] = a[0] / (double)n;
    } else {
        scale[i] = sqrt(a[0]);
    }
}

/* A 32 x 32 tile of x a work-group of 32 x 8, each work-item four of its rows: whole lines
 * of 128 bytes read and written along rows, and along columns for xt. */
#define ST_W 32
#define ST_H 8
__kernel __attribute__((reqd_work_group_size(ST_W, ST_H, 1))) void
pass_scale(__global const real *raw, __global real *x, __global real *xt, uint with_xt, uint n,
           uint p, __global const double *mean, __global const double *scale,
           __global const int *first_bad)
{
    __local real tile[ST_W][ST_W + 1];
    const uint i0 = get_group_id(0) * ST_W, t0 = get_group_id(1) * ST_W;
    const uint a = get_local_id(0), c = get_local_id(1), i = i0 + a;
    bool ok = false;
    double m = 0, s = 1;
    if (i < p) {
        m = mean[i], s = scale[i];
        ok = first_bad[i] < 0 && s > 1e-12 * sqrt((double)n) * fabs(m) && s != 0;
    }
    for (uint r = c; r < ST_W; r += ST_H) {
        const uint t = t0 + r;
        real v = 0;
        if (ok && t < n) {
            const ulong at = (ulong)t * p + i;
            x[at] = v = (real)(((double)raw[at] - m) / s);
        }
        tile[r][a] = v;
    }
    /* The transposition (xt, where pass_grams reads the columns) from the same read of raw. */
    if (!with_xt) return;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint r = c; r < ST_W; r += ST_H)
        if (i0 + r < p && t0 + a < n) xt[(ulong)(i0 + r) * n + t0 + a] = tile[a][r];
}

/* One work-group of LANES per particle that adds a variable and per inner product r it needs
 * (group (j, r)): the variable (want[j], or the argmax best[j]) into add[j], and in double its
 * inner product with the model's r-th column (r < k), with itself (r = k) or with y (r = k + 1)
 * into gram[j stride + r] (stride: the largest k + 2 of the step, so that the host reads back
 * no more than the products), summed in the one order of src/varsel/products.c (lane l over
 * t = l, l + LANES, ... by fma, then halved pairwise), so that they equal the host's bit for
 * bit. The columns are read from xt, where they lie along memory. */
__kernel __attribute__((reqd_work_group_size(LANES, 1, 1))) void
pass_grams(__global const real *xt, uint n, __global const double *y, __global const int *idx,
           __global const int *size, __global const int *want, __global const int *best,
           __global int *add, __global double *gram, uint stride, __local double *part)
{
    const uint j = get_group_id(0), l = get_local_id(0);
    const int r = (int)get_global_id(1), w = want[j];
    if (w == NONE) return;
    const int i = w == ARGMAX ? best[j] : w;
    if (l == 0 && r == 0) add[j] = i;
    const int k = size[j];
    if (i < 0 || r > k + 1) return;
    const int a = r < k ? idx[j * CAP + r] : i;
    __global const real *ci = xt + (ulong)(uint)i * n, *ca = xt + (ulong)(uint)a * n;
    double s = 0;
    if (r <= k)
        for (uint t = l; t < n; t += LANES) s = fma((double)ca[t], (double)ci[t], s);
    else
        for (uint t = l; t < n; t += LANES) s = fma(y[t], (double)ci[t], s);
    part[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = LANES / 2; h > 0; h >>= 1) {
        if (l < h) part[l] += part[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) gram[j * stride + (uint)r] = part[0];
}
#endif
