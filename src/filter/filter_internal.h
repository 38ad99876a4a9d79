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

/* One call of the large-window GPU design (src/filter/runs.c): the image and maps as the other
 * designs take them, the outputs, and the plan's shape (gx x gy outputs padded to whole
 * work-groups of `local`, each work-item py rows; step_y output rows a group). */
struct runs_job {
    cl_mem img, colmap, rowmap, median, mad;
    size_t nx, ny, stride, gx, gy, step_y;
    const size_t *local;
    int wx, wy, py, run_group;
    cl_float cval;
    cl_int want_median, want_mad;
    void (*progress)(void *user, double fraction);
    void *progress_user;
};

/* Whether the runs design's building pass fits the device for windows of wy rows, and its
 * work-group size there. */
int clstats__runs_plan(const clstats_ctx *ctx, int wy, int *run_group);

/* Filters job's image with the runs design's program (built from median_filter_runs.cl). */
int clstats__filter_runs(clstats_ctx *ctx, cl_program program, const struct runs_job *job);

#endif
