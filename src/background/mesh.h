/* mesh.h - the host's steps on the background mesh (mesh.c): small arrays, one box a value. */
#ifndef CLSTATS_BACKGROUND_MESH_H
#define CLSTATS_BACKGROUND_MESH_H

#include <stddef.h>

/* What box_stats.cl writes for a box with too few valid pixels. */
#define CLSTATS__BAD_BOX (-1e30f)

/* Bad boxes filled, the mesh median-filtered, the global background and RMS (SEP's
 * filterback); with `photutils` bad boxes take photutils' inverse-distance weighting of the good
 * ones (idw.h) and the filter takes photutils' windows (cut at the edges, not
 * shrunk) and its threshold rule (filter where the background is above a threshold > 0);
 * false when out of memory. */
int clstats__mesh_filter(float *back, float *rms, size_t nx, size_t ny, size_t fw, size_t fh,
                         double threshold, int photutils, float *global_back, float *global_rms);

/* Second derivatives along y of a natural spline through each column of the mesh (SEP's
 * makebackspline); false when out of memory. */
int clstats__mesh_spline_y(const float *map, size_t nx, size_t ny, float *dmap);

/* For each of `width` columns, the mesh node before it and its distance from it in boxes, as SEP
 * steps along a row (the distance accumulates in float). */
void clstats__mesh_columns(size_t width, size_t box_w, size_t nx, int *node, float *dx);

#endif
