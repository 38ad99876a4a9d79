/* clipped.h - photutils' box statistics on the device (clipped.c, kernels/background/
 * clipped_stats.cl): the boxes of a mesh with clipping CLSTATS_CLIP_SIGMA. */
#ifndef CLSTATS_BACKGROUND_CLIPPED_H
#define CLSTATS_BACKGROUND_CLIPPED_H

#include "internal.h"

/* Every box's background and RMS (bad boxes CLSTATS__BAD_BOX) into back and rms, nx * ny each;
 * o resolved (no zero meaning a default). */
int clstats__measure_clipped(clstats_ctx *ctx, const struct clstats_array *image,
                             const uint8_t *mask, const struct clstats_background_options *o,
                             size_t nx, size_t ny, float *back, float *rms);

#endif
