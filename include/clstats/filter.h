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

/* The window and how it is filtered. Zero-initialised fields beyond `width` keep the square
 * window of odd width that the first version of this struct described, with its rules. */
struct clstats_filter_params {
    int width;                      /* 1..CLSTATS_MAX_WIDTH columns, odd or even */
    enum clstats_boundary boundary; /* CLSTATS_BOUNDARY_REFLECT when zero-initialised */
    float cval;                     /* value outside the image for CLSTATS_BOUNDARY_CONSTANT */
    /* Optional: called from the calling thread as bands of rows finish, fraction in (0, 1]. */
    void (*progress)(void *user, double fraction);
    void *progress_user;
    int height; /* 1..CLSTATS_MAX_WIDTH rows, odd or even; 0 means width (a square) */
    /* scipy.ndimage's origin per axis: the window of w cells along an axis covers offsets
     * -(w/2 + origin) .. w - 1 - (w/2 + origin) from the pixel (so an even w = 4 covers -2..+1
     * at origin 0), and origin must lie in -(w/2) .. (w-1)/2. */
    int origin_x, origin_y;
    /* Optional: any window, footprint_width x footprint_height cells (each 1..255), row-major,
     * non-zero = in the window (scipy's footprint=, no flip: cell (i, j) is offset
     * (i - top, j - left) with top and left from the origin rule above). When given it is the
     * window, and width and height are not read. At least one cell must be set.
     * clstats_footprint_circle and _ring make the usual ones. */
    const unsigned char *footprint;
    int footprint_width, footprint_height;
    /* The median of an even count of valid values: the mean of the two middles (the default),
     * the lower or the upper (scipy's median_filter, whose windows have no missing values,
     * takes rank n // 2: the upper). The MAD, a median of |x - m|, follows the same rule. */
    enum clstats_even even;
    /* Optional: a CLSTATS_UINT8 array of the image's shape (for the band form, the band's), on
     * the host or in a buffer of the context; non-zero marks a pixel missing, as NaN does. */
    const struct clstats_array *mask;
    /* Optional: the constant for float64 images, exactly (NULL: cval, widened). */
    const double *cval_f64;
};

/* The window's extent in cells, and the cells before the pixel along each axis (left, top: the
 * origin rule above); any pointer may be NULL. CLSTATS_ERR_ARG for a window out of range. */
CLSTATS_API int clstats_filter_window(const struct clstats_filter_params *params, int *width,
                                      int *height, int *left, int *top);

/* Footprints of width 2 r_out + 1 cells a side (the caller's buffer, at least that squared):
 * cells whose centre lies within r of the window's centre (dx^2 + dy^2 <= r^2, so r = 1 gives a
 * plus), and the ring r_in < distance <= r_out, as IRAF's rmedian takes its annulus. Radii are
 * 0 .. 127 (r_in < r_out); the width is returned, or CLSTATS_ERR_ARG. */
CLSTATS_API int clstats_footprint_circle(double r, unsigned char *cells, size_t capacity);
CLSTATS_API int clstats_footprint_ring(double r_in, double r_out, unsigned char *cells,
                                       size_t capacity);

/* Median and MAD of the window around every pixel of a float32 image of nx columns and ny rows,
 * rows `stride` elements apart (stride >= nx).
 * NaN (and a masked pixel) is missing data and is ignored; a window without a valid value gives
 * NaN; an even count of valid values gives the mean of the two middle ones by default, by
 * clstats_median's rule (the float nearest their exact mean: two finite middles never give an
 * infinity), or the lower or upper by params->even. The constant outside the image (boundary
 * constant) is a value of the window like any other, and missing if NaN. MAD is numpy's
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

/* The same in float64, the data's own precision (float64 arithmetic for the even mean and
 * |x - m|; a NaN result is 0x7ff8000000000000): CLSTATS_ERR_UNSUPPORTED on a device without
 * fp64. */
CLSTATS_API int clstats_median_filter_f64(clstats_ctx *ctx, const double *image, size_t nx,
                                          size_t ny, size_t stride,
                                          const struct clstats_filter_params *params,
                                          double *median_out, double *mad_out);

/* Source index of position i (any integer) on an axis of n samples as the boundary mode
 * extends it, windows wider than the axis included; -1 where the constant value stands (and for
 * n 0 or an unknown mode). */
CLSTATS_API long clstats_boundary_index(long i, size_t n, enum clstats_boundary mode);

/* The same maps for output rows row0 .. row0 + rows - 1 of an image of nx x ny pixels, from a
 * band that holds only the rows those windows read, so that an image larger than memory can be
 * filtered a strip at a time. The band has rows + height - 1 rows (height and top as
 * clstats_filter_window gives them: width and width/2 for a square of odd width),
 * `stride` elements apart, in window order: band row j is image row
 * clstats_boundary_index(row0 + j - top, ny, boundary) (away from the edges simply rows
 * row0 - top .. row0 + rows - 1 + height - 1 - top: the strip and its halo); rows where that
 * index is -1 are never read. The boundary applies against the whole
 * image's ny rows, so the results are the same bits as those rows of clstats_median_filter on
 * the whole image. median_out and mad_out receive nx*rows values. */
CLSTATS_API int clstats_median_filter_band(clstats_ctx *ctx, const float *band, size_t nx,
                                           size_t ny, size_t stride, size_t row0, size_t rows,
                                           const struct clstats_filter_params *params,
                                           float *median_out, float *mad_out);

/* The same in float64 (needs fp64). */
CLSTATS_API int clstats_median_filter_band_f64(clstats_ctx *ctx, const double *band, size_t nx,
                                               size_t ny, size_t stride, size_t row0, size_t rows,
                                               const struct clstats_filter_params *params,
                                               double *median_out, double *mad_out);

/* The same maps for an image described by an array (include/clstats/core.h: host memory or a
 * buffer of the context at an offset, rows a stride apart), into outputs described alike (either
 * may be NULL; each nx x ny of the image's dtype, float32 or float64, on the host or on the
 * device, strided as they say): the one implementation the entry points above wrap. */
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
/* The same in float64 arithmetic: sigma = CLSTATS_MAD_TO_SIGMA * mad as a double. */
CLSTATS_API int clstats_sigma_snr_f64(const double *pixels, const double *median, const double *mad,
                                      size_t n, double *sigma_out, double *snr_out);

/* The RESIDUAL map of n pixels, pixel - median in float32 (NaN where either is): with SIGMA, the
 * background-subtracted image and its noise that a detector such as SExtractor takes. Needs no
 * context: it runs on the host. */
CLSTATS_API int clstats_residual(const float *pixels, const float *median, size_t n,
                                 float *residual_out);
/* The same in float64. */
CLSTATS_API int clstats_residual_f64(const double *pixels, const double *median, size_t n,
                                     double *residual_out);

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
    /* A float64 job's (read_f64): the same in float64, and the float32 pointers NULL. */
    const double *pixels_f64, *median_f64, *mad_f64, *sigma_f64, *snr_f64;
    const float *residual;        /* pixel - median (CLSTATS_MAP_RESIDUAL) */
    const double *residual_f64;   /* a float64 job's */
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
    /* Optional: a float64 job, read in float64 rows instead of through `read` (which may then be
     * NULL), filtered and handed over in float64 (needs fp64). */
    int (*read_f64)(void *user, size_t plane, size_t row0, size_t rows, double *dst);
    /* Optional: only output rows row_begin .. row_end - 1 of each plane (row_end 0: to the last
     * row), still read and filtered against the whole image's ny rows and boundary: one band of
     * an image that several processes filter together (madfilter under mpirun). */
    size_t row_begin, row_end;
};

/* The tallest strip (at most ny rows) whose buffers fit host_bytes of host memory, half the
 * device's memory and its largest buffer, for an image nx pixels wide, the window's rows
 * (`width`: the width of a square) and the maps asked for. When not even one row fits:
 * CLSTATS_ERR_NOMEM (host memory: the context's message says how much one row needs) or
 * CLSTATS_ERR_DEVICE_MEMORY (the device's). */
CLSTATS_API int clstats_filter_strip_height(clstats_ctx *ctx, size_t nx, size_t ny, int width,
                                            unsigned maps, uint64_t host_bytes, size_t *height);
/* The same for a float64 job (read_f64): every row takes twice the bytes. */
CLSTATS_API int clstats_filter_strip_height_f64(clstats_ctx *ctx, size_t nx, size_t ny, int width,
                                                unsigned maps, uint64_t host_bytes, size_t *height);

/* Runs the job: CLSTATS_OK, CLSTATS_ERR_CALLBACK when read or write stopped it (the caller's own
 * words then stand), or the library's status with the context's message. */
CLSTATS_API int clstats_filter_rows(clstats_ctx *ctx, struct clstats_rows_job *job);

#ifdef __cplusplus
}
#endif
#endif
