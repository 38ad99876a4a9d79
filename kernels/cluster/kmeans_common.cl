/* kmeans_common.cl - what the k-means kernels share (pulled in with #include): the types the
 * build options name (REAL the data's, ACC the sums', DIM features, K clusters), the squared
 * distance, and the fixed-order sum of a work-group's 256 values that makes every sum of the
 * module independent of timing (include/clstats/cluster.h states the order). */
#ifdef FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* A fused multiply-add would round differently from the host's reference and from devices
 * that do not fuse: results must be the same bits everywhere. */
#pragma OPENCL FP_CONTRACT OFF

#define WG 256
typedef REAL real;
typedef ACC acc;

/* The state words the loop keeps on the device (src/cluster/cluster_internal.h: STATE_*). */
#define S_STOP 0
#define S_ITER 1
#define S_CHANGED 2
#define S_EMPTY 3
#define S_FINAL 4
#define STOP_STRICT 1
#define STOP_TOL 2
#define STOP_MAX_ITER 3
#define STOP_EMPTY 4

/* l[0] = the sum of l[0..WG) by halving: l[i] += l[i + s] for s = WG/2, ..., 1. Every item of
 * the group calls it; it starts with a barrier, so the caller may write l[i] just before.
 * SERIAL_HALVE (CPU devices, src/cluster/job.c): item 0 makes the same additions in the same
 * order alone, between two barriers instead of nine; a CPU device runs a group's items one
 * after another, each barrier a pass over all of them. */
inline void halve(__local acc *l, uint i)
{
    barrier(CLK_LOCAL_MEM_FENCE);
#ifdef SERIAL_HALVE
    if (i == 0)
        for (uint s = WG / 2; s > 0; s >>= 1)
            for (uint j = 0; j < s; j++)
                l[j] = l[j] + l[j + s];
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (i < s) l[i] = l[i] + l[i + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
}

/* halve for the first `cols` columns of l[c][0..WG) at once: each column's additions in halve's
 * order (so its bits), the group's barriers shared by them all. Item 0 alone reads the sums
 * after it (another item's next write may come first). */
inline void halve_columns(__local acc (*l)[WG], uint i, int cols)
{
    barrier(CLK_LOCAL_MEM_FENCE);
#ifdef SERIAL_HALVE
    if (i == 0)
        for (int c = 0; c < cols; c++)
            for (uint s = WG / 2; s > 0; s >>= 1)
                for (uint j = 0; j < s; j++)
                    l[c][j] = l[c][j] + l[c][j + s];
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (i < s)
            for (int c = 0; c < cols; c++)
                l[c][i] = l[c][i] + l[c][i + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
}

/* sum_c (x_c - m_c)^2 in the data's precision, in the order c = 0, 1, ... (the reference's). */
inline real squared_distance(__global const real *x, __global const real *m)
{
    real s = 0;
    for (int c = 0; c < DIM; c++) {
        const real t = x[c] - m[c];
        s = s + t * t;
    }
    return s;
}

inline int row_is_finite(__global const real *x)
{
    for (int c = 0; c < DIM; c++)
        if (!isfinite(x[c])) return 0;
    return 1;
}

/* The unit roundoff u of the data's type (FP64 says only that the sums may be double), and a
 * floor for what underflow may lose: float's smallest normal bounds double's too. */
#define UNIT_ROUNDOFF (sizeof(real) == 8 ? (real)0x1p-53f : (real)0x1p-24f)
#define TINY FLT_MIN

/* The screen's bounds on a row's squared distance to a centre from their product `dot`, the
 * row's |x|^2 and |x| and the centre's |c|^2 and |c|: q -+ e with q = |x|^2 - 2 x.c + |c|^2 and
 * e = scale (|x| + |c|)^2 + tiny (kmeans_assign.cl: assign_screened says why they hold). */
inline void screen_bounds(real xx, real xn, real dot, real cc, real cn, real scale, real tiny,
                          real *lo, real *hi)
{
    const real q = xx - 2 * dot + cc;
    const real a = xn + cn, e = scale * a * a + tiny;
    *hi = q + e;
    *lo = q - e;
}
