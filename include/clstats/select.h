/* clstats/select.h - exact order statistics of whole arrays: k-th values,
 * medians, percentiles, and medians of columns and tiles (src/select/). */
#ifndef CLSTATS_SELECT_H
#define CLSTATS_SELECT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Whole-array order statistics ------------------------------------------------------ */

/* Exact k-th smallest values, medians and percentiles of a whole array, computed on the device
 * (src/select/select.c). Results are elements of the data (or a documented blend of two): values
 * are ordered by their bits as IEEE 754 total order does, so -0.0 sorts just below +0.0 and +-inf
 * are ordinary values; NaNs are counted and left out, or reported (nan_policy). Every zero
 * result is +0 (k-th values, medians, percentiles, column and tile medians, float32 and
 * float64): zeros are equal as numbers, and the sign of the one the order met would follow the
 * data's mix of -0 and +0. Counts are 64-bit, so arrays beyond 2^31 elements are fine where
 * the device holds them. The input is never modified. */

enum clstats_select_method {
    CLSTATS_SELECT_AUTO = 0, /* the library picks: on GPUs sample from 2^21 values, else radix */
    CLSTATS_SELECT_RADIX,    /* radix select on the float bits: 3 passes (float64: 6) */
    CLSTATS_SELECT_CUTTING_PLANE, /* Kelley's cutting plane on sum |x - y|, then radix */
    CLSTATS_SELECT_SAMPLE,        /* quantiles of a sample bracket the answer, one pass gathers the
                                     bracket, radix on it (a missed bracket falls back to radix) */
};

enum clstats_nan_policy {
    CLSTATS_NAN_OMIT = 0, /* NaNs are left out (numpy's nanmedian) */
    CLSTATS_NAN_ERROR,    /* any NaN gives CLSTATS_ERR_NAN */
};

/* Options; a NULL pointer or a zero-initialised struct means the defaults. */
struct clstats_select_options {
    enum clstats_select_method method;
    enum clstats_nan_policy nan_policy;
    enum clstats_even even;
    uint64_t *nan_count; /* out, optional: NaNs found */
    double *kernel_ms;   /* out, optional: device time of the call's kernels (profiling events) */
    /* Optional: a CLSTATS_UINT8 array of the data's shape (n x 1 for the vector entry points),
     * on the host or in a buffer of the context; its non-zero elements are missing data, left
     * out as NaNs are and counted with them (nan_count; CLSTATS_NAN_ERROR refuses them too).
     * Column and tile medians do not take one. */
    const struct clstats_array *mask;
};

/* k-th smallest valid value, k 0-based (0: the minimum). k beyond the valid values gives
 * CLSTATS_ERR_ARG; no valid value gives CLSTATS_ERR_EMPTY; out is NaN on failure. */
CLSTATS_API int clstats_select_kth(clstats_ctx *ctx, const float *data, size_t n, uint64_t k,
                                   const struct clstats_select_options *opts, float *out);
CLSTATS_API int clstats_select_kth_f64(clstats_ctx *ctx, const double *data, size_t n, uint64_t k,
                                       const struct clstats_select_options *opts, double *out);

/* Median of the valid values. For float32 the mean of two middles is
 * (float)(((double)a + (double)b) * 0.5): the float nearest the exact mean, which is numpy's
 * (a + b) / 2 wherever a + b does not overflow (the filter's even counts follow the same rule);
 * for float64, (a + b) / 2 as numpy computes it, except that a + b never overflows. -inf and
 * +inf as the two middles give NaN, as in numpy. */
CLSTATS_API int clstats_median(clstats_ctx *ctx, const float *data, size_t n,
                               const struct clstats_select_options *opts, float *out);
CLSTATS_API int clstats_median_f64(clstats_ctx *ctx, const double *data, size_t n,
                                   const struct clstats_select_options *opts, double *out);

/* Percentiles q[0..nq) (each in [0, 100]) of the valid values with numpy's default 'linear'
 * method: h = (nv - 1) q / 100, i = floor(h), g = h - i, and numpy's lerp of order statistics
 * i and i + 1, a + (b - a) g (b - (b - a)(1 - g) for g >= 0.5), evaluated in double. */
CLSTATS_API int clstats_percentiles(clstats_ctx *ctx, const float *data, size_t n, const double *q,
                                    size_t nq, const struct clstats_select_options *opts,
                                    float *out);
CLSTATS_API int clstats_percentiles_f64(clstats_ctx *ctx, const double *data, size_t n,
                                        const double *q, size_t nq,
                                        const struct clstats_select_options *opts, double *out);

/* The same on data already on the device: n values of dtype from element `offset` of buf, a
 * buffer of the context's cl_context. Results come as double (exact for either dtype; a
 * float32 median's mean is rounded to float first). The caller's queue work on buf must be
 * finished or on the context's queue (clstats_ctx_cl_queue). */
CLSTATS_API int clstats_select_kth_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t n,
                                          enum clstats_dtype dtype, uint64_t k,
                                          const struct clstats_select_options *opts, double *out);
CLSTATS_API int clstats_median_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t n,
                                      enum clstats_dtype dtype,
                                      const struct clstats_select_options *opts, double *out);

/* Median of each column of a float32 matrix of `rows` rows and `cols` columns, element (r, c)
 * at matrix[r * ld + c] (ld >= cols), into out[0..cols). NaNs are left out per column (or
 * reported, by nan_policy); a column without a valid value gives NaN; opts->even applies;
 * opts->method is ignored (one work-group per column runs a radix select; on GPUs, columns of
 * 512 to 16384 rows may instead be selected in one launch, from registers or from one pass
 * over the matrix narrowed by a sample, and longer ones bracketed by a sample first: each
 * gives the same exact medians). */
CLSTATS_API int clstats_column_medians(clstats_ctx *ctx, const float *matrix, size_t rows,
                                       size_t cols, size_t ld,
                                       const struct clstats_select_options *opts, float *out);
/* The same on a device buffer (float32, from element `offset`), results to the host. */
CLSTATS_API int clstats_column_medians_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset,
                                              size_t rows, size_t cols, size_t ld,
                                              const struct clstats_select_options *opts,
                                              float *out);

/* Median of each tw x th tile of a float32 image of nx x ny pixels, pixel (x, y) at
 * image[y * stride + x] (stride >= nx), for a background mesh: tiles start at (0, 0) and the
 * last in each row and column is cut short by the image's edge. out has ntx * nty entries,
 * ntx = ceil(nx / tw) and nty = ceil(ny / th); tile (i, j), pixels x in [i tw, (i + 1) tw) and
 * y in [j th, (j + 1) th), gives out[j * ntx + i]. NaNs, nan_policy and even as for
 * clstats_column_medians. */
CLSTATS_API int clstats_tile_medians(clstats_ctx *ctx, const float *image, size_t nx, size_t ny,
                                     size_t stride, size_t tw, size_t th,
                                     const struct clstats_select_options *opts, float *out);
/* The same on a device buffer (float32, from element `offset`), results to the host. */
CLSTATS_API int clstats_tile_medians_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t nx,
                                            size_t ny, size_t stride, size_t tw, size_t th,
                                            const struct clstats_select_options *opts, float *out);

/* The k-th value, median and percentiles of an array described by struct clstats_array
 * (include/clstats/core.h): float32 or float64, in host memory or in a buffer of the context at
 * an offset, a vector or rows a stride apart (all nx x ny elements count). Results as double,
 * as the *_buffer forms give them: the one implementation the entry points above wrap. */
CLSTATS_API int clstats_select_kth_array(clstats_ctx *ctx, const struct clstats_array *data,
                                         uint64_t k, const struct clstats_select_options *opts,
                                         double *out);
CLSTATS_API int clstats_median_array(clstats_ctx *ctx, const struct clstats_array *data,
                                     const struct clstats_select_options *opts, double *out);
CLSTATS_API int clstats_percentiles_array(clstats_ctx *ctx, const struct clstats_array *data,
                                          const double *q, size_t nq,
                                          const struct clstats_select_options *opts, double *out);
/* Quantiles q[0..nq), each in [0, 1], as numpy's quantile computes them (the percentiles' rule
 * with h = (nv - 1) q): the same bits as numpy where percentiles would divide q by 100 first. */
CLSTATS_API int clstats_quantiles_array(clstats_ctx *ctx, const struct clstats_array *data,
                                        const double *q, size_t nq,
                                        const struct clstats_select_options *opts, double *out);

/* Batched selection: for each column c of the matrix m (m->nx columns of m->ny rows, float32 or
 * float64, host or device), its k[c]-th smallest valid value (k[c] from 1 to the rows) into
 * kth[c] and, when sum is not NULL, the sum of its k[c] smallest valid values into sum[c] (in the
 * dtype's precision, float32 sums accumulated in float32), computed from the k-th value t, the
 * count c and the sum s of the values below t as s + (k - c) t: the multiplicity rule of the
 * cutting-plane paper's section VI, exact in which values it takes however many equal t; s is
 * added in one order whatever the device's work-group size or the column's split over work-groups
 * (blocks of 4096 rows, in each row r in lane r mod 256, the lanes in order, then the blocks in
 * order), so the sums are the same bits on every device. A column
 * with fewer than k[c] valid values gives NaN there and CLSTATS_ERR_EMPTY once the others are
 * done; NaNs are left out (or reported, by nan_policy); method and even are ignored. */
CLSTATS_API int clstats_column_smallest(clstats_ctx *ctx, const struct clstats_array *m,
                                        const uint64_t *k,
                                        const struct clstats_select_options *opts, double *kth,
                                        double *sum);

#ifdef __cplusplus
}
#endif
#endif
