/* clstats/filter.h - sliding-window median and MAD maps of images
 * (src/filter/). */
#ifndef CLSTATS_FILTER_H
#define CLSTATS_FILTER_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
CLSTATS_API int clstats_boundary_from_name(const char *name, enum clstats_boundary *out);
CLSTATS_API const char *clstats_boundary_name(enum clstats_boundary b);

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
CLSTATS_API int clstats_median_filter(clstats_ctx *ctx, const float *image, size_t nx, size_t ny,
                                      size_t stride, const struct clstats_filter_params *params,
                                      float *median_out, float *mad_out);

/* Source index of position i (any integer) on an axis of n samples as the boundary mode
 * extends it, windows wider than the axis included; -1 where the constant value stands (and for
 * n 0 or an unknown mode). */
CLSTATS_API long clstats_boundary_index(long i, size_t n, enum clstats_boundary mode);

/* The same maps for output rows row0 .. row0 + rows - 1 of an image of nx x ny pixels, from a
 * band that holds only the rows those windows read, so that an image larger than memory can be
 * filtered a strip at a time. The band has rows + width - 1 rows, `stride` elements apart, in
 * window order: band row j is image row clstats_boundary_index(row0 + j - width/2, ny, boundary)
 * (away from the edges simply rows row0 - width/2 .. row0 + rows - 1 + width/2: the strip and
 * its halo); rows where that index is -1 are never read. The boundary applies against the whole
 * image's ny rows, so the results are the same bits as those rows of clstats_median_filter on
 * the whole image. median_out and mad_out receive nx*rows values. */
CLSTATS_API int clstats_median_filter_band(clstats_ctx *ctx, const float *band, size_t nx,
                                           size_t ny, size_t stride, size_t row0, size_t rows,
                                           const struct clstats_filter_params *params,
                                           float *median_out, float *mad_out);

/* The same maps for an image described by an array (include/clstats/core.h: host memory or a
 * buffer of the context at an offset, rows a stride apart), into outputs described alike (either
 * may be NULL; each nx x ny float32, on the host or on the device, strided as they say): the one
 * implementation the entry points above wrap. The image must be float32. */
CLSTATS_API int clstats_median_filter_array(clstats_ctx *ctx, const struct clstats_array *image,
                                            const struct clstats_filter_params *params,
                                            const struct clstats_array *median_out,
                                            const struct clstats_array *mad_out);

/* The standard deviation of Gaussian noise per unit of MAD, 1 / Phi^-1(3/4): astropy's
 * mad_std constant. */
#define CLSTATS_MAD_TO_SIGMA 1.482602218505602

/* SIGMA and SNR maps of n pixels from their median and MAD maps, in float32 as numpy would:
 * sigma = (float)CLSTATS_MAD_TO_SIGMA * mad; snr = (pixel - median) / sigma, NaN where sigma is
 * 0 (a flat window has no scale to measure a departure against). snr_out may be NULL (then
 * pixels and median may be too). Needs no context: it runs on the host. */
CLSTATS_API int clstats_sigma_snr(const float *pixels, const float *median, const float *mad,
                                  size_t n, float *sigma_out, float *snr_out);

/* The RESIDUAL map of n pixels, pixel - median in float32 (NaN where either is): with SIGMA, the
 * background-subtracted image and its noise that a detector such as SExtractor takes. Needs no
 * context: it runs on the host. */
CLSTATS_API int clstats_residual(const float *pixels, const float *median, size_t n,
                                 float *residual_out);

/* ---- Images larger than memory ------------------------------------------------------------ */

/* The maps clstats_filter_rows computes, as a mask. */
enum {
    CLSTATS_MAP_MEDIAN = 1,
    CLSTATS_MAP_MAD = 2,
    CLSTATS_MAP_SIGMA = 4,
    CLSTATS_MAP_SNR = 8,
    CLSTATS_MAP_RESIDUAL = 16,
};

/* A finished strip: rows row0 .. row0 + rows - 1 of one plane, nx values a row. */
struct clstats_strip {
    size_t plane, row0, rows;
    const float *pixels;                     /* the strip's own input rows */
    const float *median, *mad, *sigma, *snr; /* the maps asked for, NULL for the others */
    const float *residual;                   /* last, so that older callers' layout holds */
};

/* An image (or a cube of planes, each filtered on its own) filtered a strip of rows at a time,
 * so that it is never in memory whole: the library reads each strip with the rows its windows
 * reach through `read`, filters it against the whole image's boundary (the same bits as one
 * piece) and hands the maps to `write`, in order. When the device runs out of memory the strip
 * is halved and filtered again, down to one row, and `notice` says so. */
struct clstats_rows_job {
    size_t nx, ny, planes;
    struct clstats_filter_params params; /* its progress callback reports the whole image */
    unsigned maps;                       /* CLSTATS_MAP_* */
    size_t height; /* rows a strip: clstats_filter_strip_height's answer, or fewer */
    /* Rows row0 .. row0 + rows - 1 of a plane into dst (rows * nx values, NaN where missing):
     * 0, or nonzero to stop (the call then returns CLSTATS_ERR_CALLBACK). */
    int (*read)(void *user, size_t plane, size_t row0, size_t rows, float *dst);
    /* Takes each finished strip: 0, or nonzero to stop (CLSTATS_ERR_CALLBACK). */
    int (*write)(void *user, const struct clstats_strip *strip);
    void (*notice)(void *user, const char *text); /* optional */
    void *user;
    size_t n_strips, n_nan; /* out: strips filtered, and NaN input pixels met */
};

/* The tallest strip (at most ny rows) whose buffers fit host_bytes of host memory, half the
 * device's memory and its largest buffer, for an image nx pixels wide, the window width and the
 * maps asked for. When not even one row fits: CLSTATS_ERR_NOMEM (host memory: the context's
 * message says how much one row needs) or CLSTATS_ERR_DEVICE_MEMORY (the device's). */
CLSTATS_API int clstats_filter_strip_height(clstats_ctx *ctx, size_t nx, size_t ny, int width,
                                            unsigned maps, uint64_t host_bytes, size_t *height);

/* Runs the job: CLSTATS_OK, CLSTATS_ERR_CALLBACK when read or write stopped it (the caller's own
 * words then stand), or the library's status with the context's message. */
CLSTATS_API int clstats_filter_rows(clstats_ctx *ctx, struct clstats_rows_job *job);

#ifdef __cplusplus
}
#endif
#endif
