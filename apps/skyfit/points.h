/* points.h - the points skyfit fits: every valid pixel, the medians of a mesh of tiles
 * (clstats_tile_medians, each at its tile's centre), or a regular grid sample of pixels; as the
 * surface's design rows and their values. Pixels that are NaN or infinite are missing. */
#ifndef SKYFIT_POINTS_H
#define SKYFIT_POINTS_H

#include "clstats.h"
#include "surface.h"

enum points_kind { POINTS_ALL, POINTS_MESH, POINTS_SAMPLE };

struct points {
    size_t n;  /* points with a value */
    double *x; /* n rows of the surface's n_terms features */
    double *y;
};

/* The points of an nx x ny image (row-major, row 0 at the bottom) of the given kind; step is
 * the mesh's tile side or the sample's spacing (ignored for POINTS_ALL). Returns CLSTATS_OK or
 * the library's status (the mesh runs on the device); CLSTATS_ERR_NOMEM without memory. */
int points_make(clstats_ctx *ctx, const double *image, const struct surface *s,
                enum points_kind kind, size_t step, struct points *out);

void points_free(struct points *p);

#endif
