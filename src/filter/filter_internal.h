/* filter_internal.h - what the filter module's files share: the window a filter's parameters
 * describe (src/filter/window.c). */
#ifndef CLSTATS_FILTER_INTERNAL_H
#define CLSTATS_FILTER_INTERNAL_H

#include "internal.h"

/* A window: its extent, the cells before its pixel along each axis, and its cells. */
struct filter_window {
    int width, height, left, top;
    bool rectangle; /* every cell of its extent (a footprint of all ones too): the rectangle
                     * designs serve it, at any origin */
    int *cells;     /* n_cells entries, each row << 8 | column; malloc'd, the caller frees */
    int n_cells;
};

/* Checks the window the parameters describe (its message on ctx). */
int clstats__window_check(clstats_ctx *ctx, const struct clstats_filter_params *p);

/* The checked window with its cell list (CLSTATS_ERR_NOMEM without memory). */
int clstats__window_of(clstats_ctx *ctx, const struct clstats_filter_params *p,
                       struct filter_window *out);

#endif
