/* reference_clipped.h - a plain reference of the mesh background with photutils' sigma
 * clipping (clipping CLSTATS_CLIP_SIGMA), the judge of kernels/background/clipped_stats.cl. */
#ifndef REFERENCE_CLIPPED_H
#define REFERENCE_CLIPPED_H

#include <stddef.h>
#include <stdint.h>

/* The maps (width x height float32 each), the filtered mesh (nx x ny, may be NULL) and the
 * global values of a float32 image (rows `stride` apart) with the steps that
 * include/clstats/background.h states for CLSTATS_CLIP_SIGMA; maxiters < 0 is no limit. */
void reference_clipped(const float *img, size_t width, size_t height, size_t stride,
                       const uint8_t *mask, size_t bw, size_t bh, size_t fw, size_t fh,
                       double fthresh, double sigma, int maxiters, double exclude_percentile,
                       int estimator, int rms_estimator, float *back, float *rms,
                       float *mesh_back, float *mesh_rms, float *global_back,
                       float *global_rms);

#endif
