/* zoom.h - photutils' interpolation of the mesh (zoom.c, kernels/background/zoom.cl). */
#ifndef CLSTATS_BACKGROUND_ZOOM_H
#define CLSTATS_BACKGROUND_ZOOM_H

#include "internal.h"

/* The background and RMS maps (either NULL) of a mesh made with CLSTATS_CLIP_SIGMA by
 * scipy's cubic zoom as photutils' BkgZoomInterpolator makes them. */
int clstats__zoom_maps(clstats_ctx *ctx, const struct clstats_background *b,
                       const struct clstats_array *back, const struct clstats_array *rms);

#endif
