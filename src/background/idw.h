/* idw.h - photutils' inverse-distance fill of excluded mesh boxes (idw.c). */
#ifndef CLSTATS_BACKGROUND_IDW_H
#define CLSTATS_BACKGROUND_IDW_H

#include <stddef.h>

/* Every box of the nx x ny mesh whose good[] is 0 takes, in back and rms, the inverse-distance
 * weighted mean of its 10 nearest good boxes, chosen as scipy's cKDTree chooses them (photutils
 * 1.10's ShepardIDWInterpolator, power 1); good boxes are kept. Nothing changes when no box is
 * good. False when out of memory. */
int clstats__mesh_idw_fill(float *back, float *rms, const unsigned char *good, size_t nx,
                           size_t ny);

#endif
