/* clstats/background.h - mesh background and RMS maps, made the SExtractor way: per box of a
 * mesh, the pixels clipped and histogrammed and the background taken as SExtractor's mode; the
 * mesh filled where boxes had too few pixels, median-filtered, and interpolated back to every
 * pixel by bicubic spline. With the defaults the arithmetic is SEP's (kbarbary/sep 1.2, from
 * SExtractor 2): the same clipping, the same float and double operations in the same order, so
 * the maps, the global background and the global RMS equal SEP's on float32 images.
 *
 * The algorithm, per box (bw x bh pixels; the last column and row of boxes take what is left):
 *   1. the mean and standard deviation of its valid pixels (not NaN, not masked, above -1e30);
 *      fewer valid pixels than half the box makes the box "bad";
 *   2. the same of the pixels within mean +- 2 sd;
 *   3. those pixels histogrammed in min(4096, 0.997 n + 1) levels over mean +- 5 sd, then
 *      clipped on the histogram at median +- clip_sigma sd until the sd settles;
 *   4. background: SExtractor's mode 2.5 median - 1.5 mean, or the median where
 *      |mean - median| >= 0.3 sd (a skewed, crowded box); RMS: the clipped sd.
 * Then the mesh: bad boxes take the mean of their nearest good boxes (SEP's filterback); a
 * fw x fh median filter (shrunk symmetrically at the edges) replaces a box's value by its neighbours' median where
 * they differ by at least filter_threshold; the global background and RMS are the medians of the
 * mesh. The maps are the natural bicubic spline through the mesh (SEP's makeback/backline).
 *
 * With clipping CLSTATS_CLIP_SIGMA the boxes are measured as photutils' Background2D does
 * (photutils 1.10, astropy 5.2), in double: a box's valid pixels (finite, not masked) clipped by
 * astropy's SigmaClip(sigma = clip_sigma, maxiters = clip_iters, median centre, std), then
 * the estimator over what is kept: photutils' SExtractorBackground (2.5 median - 1.5 mean, the
 * median where |mean - median| >= 0.3 std, the mean where std is 0), median, mean, MMM (3 median
 * - 2 mean) or biweight location (c = 6); the RMS estimator: std, MAD-std (1.4826 MAD) or
 * biweight scale (c = 9), each about the median. A box is bad where more than
 * exclude_percentile percent of its box_w x box_h pixels are missing or clipped (pixels beyond
 * the image's edge count as missing, as photutils pads with NaN). The median filter then takes
 * photutils' window, cut at the mesh's edges rather than shrunk, and filters every box, or with
 * filter_threshold > 0 only the boxes whose background is above it (photutils'
 * filter_threshold). The maps are photutils' BkgZoomInterpolator: scipy's cubic zoom of the
 * mesh (mode 'reflect', grid_mode), clipped to the mesh's range. Bad boxes are filled, before
 * the filter, as photutils fills them: the inverse-distance weighted mean (weights 1 / distance)
 * of the 10 nearest good boxes, those tied at the tenth distance chosen as scipy's cKDTree
 * (which photutils searches) chooses them.
 *
 * Box statistics and the maps are computed on the device, which needs fp64
 * (CLSTATS_ERR_UNSUPPORTED otherwise); the mesh steps, small, on the host. Results are the same
 * on every device. */
#ifndef CLSTATS_BACKGROUND_H
#define CLSTATS_BACKGROUND_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum clstats_bkg_estimator {
    CLSTATS_BKG_SEXTRACTOR = 0, /* 2.5 median - 1.5 mean, the median where too skewed */
    CLSTATS_BKG_MEDIAN,         /* the clipped pixels' median */
    CLSTATS_BKG_MEAN,           /* the clipped pixels' mean */
    CLSTATS_BKG_MMM,            /* 3 median - 2 mean (photutils' MMMBackground); sigma clipping */
    CLSTATS_BKG_BIWEIGHT,       /* biweight location, c = 6 (BiweightLocationBackground); sigma */
};

enum clstats_bkg_rms {
    CLSTATS_RMS_STD = 0,   /* the clipped pixels' standard deviation */
    CLSTATS_RMS_MAD_STD,   /* 1.4826 median |x - median| (MADStdBackgroundRMS); sigma clipping */
    CLSTATS_RMS_BIWEIGHT,  /* biweight scale, c = 9 (BiweightScaleBackgroundRMS); sigma clipping */
};

enum clstats_bkg_clipping {
    CLSTATS_CLIP_HISTOGRAM = 0, /* SExtractor's (SEP's arithmetic) */
    CLSTATS_CLIP_SIGMA,         /* astropy's SigmaClip, as photutils' Background2D uses it */
};

struct clstats_background_options {
    size_t box_w, box_h;       /* mesh box in pixels; 0 means 64 */
    size_t filter_w, filter_h; /* median filter of the mesh in boxes (odd); 0 means 3 */
    double filter_threshold;   /* SEP's fthresh: filter a box only where it differs this much */
    double clip_sigma;         /* clipping in sd; 0 means 3 (SExtractor's and photutils') */
    enum clstats_bkg_estimator estimator;
    /* The fields below are read only with clipping CLSTATS_CLIP_SIGMA (0 is the histogram). */
    enum clstats_bkg_clipping clipping;
    enum clstats_bkg_rms rms_estimator;
    int clip_iters;            /* astropy's maxiters; 0 means 10 (photutils'), < 0 no limit */
    double exclude_percentile; /* 0 means 10 (photutils'), < 0 means 0: no pixel missing */
};

/* The filtered mesh: nx x ny boxes, row-major, and what the maps are made from. */
struct clstats_background {
    size_t width, height; /* of the image */
    size_t box_w, box_h;
    size_t nx, ny; /* boxes across and down */
    float *back, *rms;   /* the filtered mesh, nx * ny each */
    float *dback, *drms; /* the spline's second derivatives along y at the mesh's nodes */
    float global_back, global_rms;
    enum clstats_bkg_clipping clipping; /* CLSTATS_CLIP_SIGMA: the maps are photutils' zoom */
};

/* Measures the mesh of an image (float32 or float64, which is rounded to float32 first as SEP
 * does). mask: NULL, or width * height bytes, row-major and packed, nonzero where a pixel is
 * missing (NaN pixels are missing too). opts NULL takes the defaults. *out is allocated; free it
 * with clstats_background_free. */
CLSTATS_API int clstats_background(clstats_ctx *ctx, const struct clstats_array *image,
                                   const uint8_t *mask,
                                   const struct clstats_background_options *opts,
                                   struct clstats_background **out);

/* The full-resolution maps of a mesh: the background into back, the RMS into rms (either NULL
 * to skip it), float32 arrays of the image's width x height, on the host or in buffers of ctx. */
CLSTATS_API int clstats_background_maps(clstats_ctx *ctx, const struct clstats_background *bkg,
                                        const struct clstats_array *back,
                                        const struct clstats_array *rms);

CLSTATS_API void clstats_background_free(struct clstats_background *bkg);

#ifdef __cplusplus
}
#endif
#endif
