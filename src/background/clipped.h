/* clipped.h - photutils' box statistics on the device (clipped.c, kernels/background/
 * clipped_stats.cl): the boxes of a mesh with clipping CLSTATS_CLIP_SIGMA. */
#ifndef CLSTATS_BACKGROUND_CLIPPED_H
#define CLSTATS_BACKGROUND_CLIPPED_H

#include "internal.h"

/* Launches clipped_stats.cl over the image in `in` (at `offset`, described by image), its mask
 * in `mask` (or NULL), writing every box's background and then every box's RMS (bad boxes
 * CLSTATS__BAD_BOX) into out; o resolved (no zero meaning a default). */
int clstats__launch_clipped(clstats_ctx *ctx, const struct clstats_array *image, cl_mem in,
                            size_t offset, cl_mem mask,
                            const struct clstats_background_options *o, size_t nx, size_t ny,
                            cl_mem out);

#endif
