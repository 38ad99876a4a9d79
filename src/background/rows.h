/* rows.h - the SEP maps on CPU devices, a work-item a row (rows.c). */
#ifndef CLSTATS_BACKGROUND_ROWS_H
#define CLSTATS_BACKGROUND_ROWS_H

#include "internal.h"

/* The maps of mesh b into back and rms (either NULL), from the mesh's values and y derivatives
 * on the device (both maps' values, then both maps' derivatives) and the columns' nodes and
 * distances (clstats__mesh_columns); the same bits as the per-pixel kernel. */
int clstats__interpolate_rows(clstats_ctx *ctx, const struct clstats_background *b,
                              cl_mem values, cl_mem dvalues, const int *col_node,
                              const float *col_dx, const struct clstats_array *back,
                              const struct clstats_array *rms);

#endif
