/* clstats.h - the whole public API of libclstats: exact robust image statistics on OpenCL devices.
 *
 * Every function returns an int status (CLSTATS_OK or a negative enum clstats_status);
 * clstats_strerror() turns it into words and clstats_ctx_message() gives the detail of the last
 * error on a context. The library does no file I/O and never exits the process.
 *
 * Sizes: every size the arguments make (stride or ld times rows, offset plus count, times the
 * element's bytes) is computed with checks before anything is read. One that overflows size_t
 * or passes PTRDIFF_MAX bytes, more than any array can be, gives CLSTATS_ERR_ARG; so does a
 * region past the end of a cl_mem. One that fits but is more than the device's largest buffer
 * gives CLSTATS_ERR_DEVICE_MEMORY, so that a caller can split the work (madfilter's strips).
 * A single row never steps by its stride, so any stride is accepted there.
 *
 * Threads: a context belongs to one thread at a time. Give each thread its own context (they
 * share nothing and run at once; the device is shared by the OpenCL runtime), or guard every
 * call on a shared context, clstats_ctx_message() included, with one lock: a context holds a
 * program cache, the last error and the last timing, none of them locked. Functions without a
 * context (clstats_strerror, clstats_list_devices, clstats_boundary_*) are safe from any thread;
 * clstats_ctx_message(NULL) is per thread.
 */
#ifndef CLSTATS_H
#define CLSTATS_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLSTATS_VERSION "0.1.0"

enum clstats_status {
    CLSTATS_OK = 0,
    CLSTATS_ERR_ARG = -1,           /* an argument is out of range or NULL */
    CLSTATS_ERR_NOMEM = -2,         /* host memory allocation failed */
    CLSTATS_ERR_NO_DEVICE = -3,     /* no OpenCL platform or device at all */
    CLSTATS_ERR_DEVICE_SPEC = -4,   /* the device spec matches no device */
    CLSTATS_ERR_BUILD = -5,         /* a kernel failed to compile (build log in the message) */
    CLSTATS_ERR_OPENCL = -6,        /* an OpenCL call failed */
    CLSTATS_ERR_DEVICE_MEMORY = -7, /* the device ran out of memory or resources */
    CLSTATS_ERR_UNSUPPORTED = -8,   /* the device lacks a needed feature (e.g. fp64) */
    CLSTATS_ERR_NAN = -9,           /* NaN found where the caller asked for an error on NaN */
    CLSTATS_ERR_EMPTY = -10,        /* no valid value to take a statistic of */
};

/* Words for a status code; never NULL. */
const char *clstats_strerror(int status);

/* ---- Contexts and devices ---------------------------------------------------------------- */

typedef struct clstats_ctx clstats_ctx;

/* Creates a context on one OpenCL device. device_spec:
 *   NULL      - take $CLSTATS_DEVICE, else "auto"
 *   "auto"    - the first GPU of any platform, else the first CPU, else any device
 *   "gpu", "cpu", "accelerator" - the first device of that type
 *   "P:D"     - device D of platform P, both 0-based indices as clstats_list_devices() gives them
 *   other     - the first device whose platform name, device name or device version (as
 *               clstats_list_devices gives them) contains it, case-insensitive: "nvidia", "pocl"
 * On failure *ctx is set to NULL and a detail is in clstats_ctx_message(NULL). */
int clstats_ctx_create(clstats_ctx **ctx, const char *device_spec);
void clstats_ctx_destroy(clstats_ctx *ctx);

/* Detail of the last error on ctx ("" if none); with ctx NULL, of the last failed create. */
const char *clstats_ctx_message(const clstats_ctx *ctx);

/* "platform name / device name" of the context's device. */
const char *clstats_ctx_device_name(const clstats_ctx *ctx);

/* The context's OpenCL objects, for callers that keep data on the device. Owned by ctx. */
cl_context clstats_ctx_cl_context(const clstats_ctx *ctx);
cl_command_queue clstats_ctx_cl_queue(const clstats_ctx *ctx);
cl_device_id clstats_ctx_cl_device(const clstats_ctx *ctx);

/* Device time, in milliseconds, of the kernels run by the last call on ctx (from OpenCL
 * profiling events; transfers excluded). For benchmarks and progress estimates. */
double clstats_ctx_last_kernel_ms(const clstats_ctx *ctx);

struct clstats_device_info {
    int platform_index;
    int device_index;
    char platform_name[128];
    char device_name[128];
    char type[16]; /* "gpu", "cpu", "accelerator" or "other" */
    char version[64];
};

/* Fills up to max entries of out (out may be NULL with max 0) and sets *count to the number
 * of devices there are. Returns CLSTATS_ERR_NO_DEVICE when there is no platform. */
int clstats_list_devices(struct clstats_device_info *out, size_t max, size_t *count);

/* ---- Sliding-window median and MAD ------------------------------------------------------- */

/* Boundary modes, defined as scipy.ndimage defines them. */
enum clstats_boundary {
    CLSTATS_BOUNDARY_REFLECT = 0, /* d c b a | a b c d | d c b a  (default) */
    CLSTATS_BOUNDARY_MIRROR,      /* d c b | a b c d | c b a */
    CLSTATS_BOUNDARY_NEAREST,     /* a a a | a b c d | d d d */
    CLSTATS_BOUNDARY_CONSTANT,    /* k k k | a b c d | k k k  (k = cval; NaN means missing) */
    CLSTATS_BOUNDARY_WRAP,        /* b c d | a b c d | a b c */
};

/* Parses "reflect", "mirror", "nearest", "constant" or "wrap". */
int clstats_boundary_from_name(const char *name, enum clstats_boundary *out);
const char *clstats_boundary_name(enum clstats_boundary b);

#define CLSTATS_MAX_WIDTH 255

struct clstats_filter_params {
    int width;                      /* odd, 1..CLSTATS_MAX_WIDTH: the window is width x width */
    enum clstats_boundary boundary; /* CLSTATS_BOUNDARY_REFLECT when zero-initialised */
    float cval;                     /* value outside the image for CLSTATS_BOUNDARY_CONSTANT */
    /* Optional: called from the calling thread as bands of rows finish, fraction in (0, 1]. */
    void (*progress)(void *user, double fraction);
    void *progress_user;
};

/* Median and MAD of the width x width window around every pixel of a float32 image of
 * nx columns and ny rows, rows `stride` elements apart (stride >= nx).
 * NaN is missing data and is ignored; a window without a valid value gives NaN; an even count
 * of valid values gives the mean of the two middle ones, by clstats_median's rule (the float
 * nearest their exact mean: two finite middles never give an infinity). MAD is numpy's
 * nanmedian(|x - m|) over the same values, m being that window's median and |x - m| computed
 * as IEEE does: for a finite m, the median of |x - m| (an infinite x lies +inf away); for
 * m = +-inf the values equal to m give inf - inf = NaN and drop out, every other lies +inf
 * away, so the MAD is +inf, or NaN where every value equals m (a window [inf] gives NaN, one
 * [1, inf, inf] +inf); where m is NaN (no valid value, or middles -inf and +inf) it is NaN.
 * A zero result is +0, whatever the signs of the window's zeros; a NaN result is 0x7fc00000.
 * median_out and mad_out (either may be NULL) receive nx*ny values, rows nx apart.
 * Results are exact: the same bits on every device. */
int clstats_median_filter(clstats_ctx *ctx, const float *image, size_t nx, size_t ny,
                          size_t stride, const struct clstats_filter_params *params,
                          float *median_out, float *mad_out);

/* Source index of position i (any integer) on an axis of n samples as the boundary mode
 * extends it, windows wider than the axis included; -1 where the constant value stands (and for
 * n 0 or an unknown mode). */
long clstats_boundary_index(long i, size_t n, enum clstats_boundary mode);

/* The same maps for output rows row0 .. row0 + rows - 1 of an image of nx x ny pixels, from a
 * band that holds only the rows those windows read, so that an image larger than memory can be
 * filtered a strip at a time. The band has rows + width - 1 rows, `stride` elements apart, in
 * window order: band row j is image row clstats_boundary_index(row0 + j - width/2, ny, boundary)
 * (away from the edges simply rows row0 - width/2 .. row0 + rows - 1 + width/2: the strip and
 * its halo); rows where that index is -1 are never read. The boundary applies against the whole
 * image's ny rows, so the results are the same bits as those rows of clstats_median_filter on
 * the whole image. median_out and mad_out receive nx*rows values. */
int clstats_median_filter_band(clstats_ctx *ctx, const float *band, size_t nx, size_t ny,
                               size_t stride, size_t row0, size_t rows,
                               const struct clstats_filter_params *params, float *median_out,
                               float *mad_out);

/* ---- Whole-array order statistics ------------------------------------------------------ */

/* Exact k-th smallest values, medians and percentiles of a whole array, computed on the device
 * (src/select.c). Results are elements of the data (or a documented blend of two): values are
 * ordered by their bits as IEEE 754 total order does, so -0.0 sorts just below +0.0 and +-inf
 * are ordinary values; NaNs are counted and left out, or reported (nan_policy). Every zero
 * result is +0 (k-th values, medians, percentiles, column and tile medians, float32 and
 * float64): zeros are equal as numbers, and the sign of the one the order met would follow the
 * data's mix of -0 and +0. Counts are 64-bit, so arrays beyond 2^31 elements are fine where
 * the device holds them. The input is never modified. */

enum clstats_select_method {
    CLSTATS_SELECT_AUTO = 0,      /* the library picks: on GPUs sample from 2^21 values, else radix */
    CLSTATS_SELECT_RADIX,         /* radix select on the float bits: 3 passes (float64: 6) */
    CLSTATS_SELECT_CUTTING_PLANE, /* Kelley's cutting plane on sum |x - y|, then radix */
    CLSTATS_SELECT_SAMPLE,        /* quantiles of a sample bracket the answer, one pass gathers the
                                     bracket, radix on it (a missed bracket falls back to radix) */
};

enum clstats_nan_policy {
    CLSTATS_NAN_OMIT = 0, /* NaNs are left out (numpy's nanmedian) */
    CLSTATS_NAN_ERROR,    /* any NaN gives CLSTATS_ERR_NAN */
};

/* An even count of valid values has two middle values a <= b. */
enum clstats_even {
    CLSTATS_EVEN_MEAN = 0, /* (a + b) / 2, rounded once to the data type (numpy's median) */
    CLSTATS_EVEN_LOWER,    /* a */
    CLSTATS_EVEN_UPPER,    /* b */
};

enum clstats_dtype {
    CLSTATS_FLOAT32 = 0,
    CLSTATS_FLOAT64, /* needs a device with fp64, else CLSTATS_ERR_UNSUPPORTED */
};

/* Options; a NULL pointer or a zero-initialised struct means the defaults. */
struct clstats_select_options {
    enum clstats_select_method method;
    enum clstats_nan_policy nan_policy;
    enum clstats_even even;
    uint64_t *nan_count; /* out, optional: NaNs found */
    double *kernel_ms;   /* out, optional: device time of the call's kernels (profiling events) */
};

/* k-th smallest valid value, k 0-based (0: the minimum). k beyond the valid values gives
 * CLSTATS_ERR_ARG; no valid value gives CLSTATS_ERR_EMPTY; out is NaN on failure. */
int clstats_select_kth(clstats_ctx *ctx, const float *data, size_t n, uint64_t k,
                       const struct clstats_select_options *opts, float *out);
int clstats_select_kth_f64(clstats_ctx *ctx, const double *data, size_t n, uint64_t k,
                           const struct clstats_select_options *opts, double *out);

/* Median of the valid values. For float32 the mean of two middles is
 * (float)(((double)a + (double)b) * 0.5): the float nearest the exact mean, which is numpy's
 * (a + b) / 2 wherever a + b does not overflow (the filter's even counts follow the same rule);
 * for float64, (a + b) / 2 as numpy computes it, except that a + b never overflows. -inf and
 * +inf as the two middles give NaN, as in numpy. */
int clstats_median(clstats_ctx *ctx, const float *data, size_t n,
                   const struct clstats_select_options *opts, float *out);
int clstats_median_f64(clstats_ctx *ctx, const double *data, size_t n,
                       const struct clstats_select_options *opts, double *out);

/* Percentiles q[0..nq) (each in [0, 100]) of the valid values with numpy's default 'linear'
 * method: h = (nv - 1) q / 100, i = floor(h), g = h - i, and numpy's lerp of order statistics
 * i and i + 1, a + (b - a) g (b - (b - a)(1 - g) for g >= 0.5), evaluated in double. */
int clstats_percentiles(clstats_ctx *ctx, const float *data, size_t n, const double *q,
                        size_t nq, const struct clstats_select_options *opts, float *out);
int clstats_percentiles_f64(clstats_ctx *ctx, const double *data, size_t n, const double *q,
                            size_t nq, const struct clstats_select_options *opts, double *out);

/* The same on data already on the device: n values of dtype from element `offset` of buf, a
 * buffer of the context's cl_context. Results come as double (exact for either dtype; a
 * float32 median's mean is rounded to float first). The caller's queue work on buf must be
 * finished or on the context's queue (clstats_ctx_cl_queue). */
int clstats_select_kth_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t n,
                              enum clstats_dtype dtype, uint64_t k,
                              const struct clstats_select_options *opts, double *out);
int clstats_median_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t n,
                          enum clstats_dtype dtype, const struct clstats_select_options *opts,
                          double *out);

/* Median of each column of a float32 matrix of `rows` rows and `cols` columns, element (r, c)
 * at matrix[r * ld + c] (ld >= cols), into out[0..cols). NaNs are left out per column (or
 * reported, by nan_policy); a column without a valid value gives NaN; opts->even applies;
 * opts->method is ignored (one work-group per column runs a radix select; on GPUs, columns of
 * 512 to 16384 rows may instead be selected in one launch, from registers or from one pass
 * over the matrix narrowed by a sample, and longer ones bracketed by a sample first: each
 * gives the same exact medians). */
int clstats_column_medians(clstats_ctx *ctx, const float *matrix, size_t rows, size_t cols,
                           size_t ld, const struct clstats_select_options *opts, float *out);
/* The same on a device buffer (float32, from element `offset`), results to the host. */
int clstats_column_medians_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows,
                                  size_t cols, size_t ld,
                                  const struct clstats_select_options *opts, float *out);

/* Median of each tw x th tile of a float32 image of nx x ny pixels, pixel (x, y) at
 * image[y * stride + x] (stride >= nx), for a background mesh: tiles start at (0, 0) and the
 * last in each row and column is cut short by the image's edge. out has ntx * nty entries,
 * ntx = ceil(nx / tw) and nty = ceil(ny / th); tile (i, j), pixels x in [i tw, (i + 1) tw) and
 * y in [j th, (j + 1) th), gives out[j * ntx + i]. NaNs, nan_policy and even as for
 * clstats_column_medians. */
int clstats_tile_medians(clstats_ctx *ctx, const float *image, size_t nx, size_t ny,
                         size_t stride, size_t tw, size_t th,
                         const struct clstats_select_options *opts, float *out);
/* The same on a device buffer (float32, from element `offset`), results to the host. */
int clstats_tile_medians_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t nx,
                                size_t ny, size_t stride, size_t tw, size_t th,
                                const struct clstats_select_options *opts, float *out);

#ifdef __cplusplus
}
#endif
#endif
