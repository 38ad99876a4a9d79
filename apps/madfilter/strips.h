/* strips.h - filtering an image a strip of rows at a time, so that host and device memory stay
 * bounded whatever the image's size: the strip height a memory budget allows, reading each strip
 * with the halo its windows need, and a smaller strip when the device runs out of memory. */
#ifndef MADFILTER_STRIPS_H
#define MADFILTER_STRIPS_H

#include "clstats.h"
#include "image.h"

#include <stdbool.h>
#include <stdint.h>

struct strip_budget {
    uint64_t host_bytes;       /* for strip buffers: --max-memory less what is held whole */
    uint64_t device_bytes;     /* for one call's device buffers */
    uint64_t device_max_alloc; /* the largest single device buffer */
    int host_maps;             /* float maps per strip on the host (library's and derived) */
    int device_maps;           /* maps the library returns: median and/or MAD */
};

/* The tallest strip both memories hold (at most ny rows), or 0 with the reason in err. */
size_t strips_height(const struct strip_budget *b, size_t nx, size_t ny, int width, char *err,
                     size_t errlen);

/* What a finished strip hands on: rows row0 .. row0 + rows - 1 of one plane. */
struct strip {
    size_t plane, row0, rows;
    const float *pixels;       /* the strip's own input rows, rows * nx values */
    const float *median, *mad; /* NULL unless asked for */
};

struct strip_job {
    clstats_ctx *ctx;
    struct tool_image *image;
    struct clstats_filter_params params; /* progress is the job's own */
    bool want_median, want_mad;
    size_t height; /* strips_height's answer; halved while the device runs out of memory */
    /* Takes each finished strip, in order; returns 0, or -1 with one line in err. */
    int (*sink)(void *user, const struct strip *s, char *err, size_t errlen);
    void (*progress)(void *user, double fraction); /* optional: of the whole image */
    void (*notice)(void *user, const char *text);  /* optional: a strip had to shrink */
    void *user;
    /* Filled in: */
    size_t n_nan, n_strips;
    int library_status; /* not CLSTATS_OK when the library failed (words on the context) */
};

/* Filters every plane strip by strip. A CLSTATS_ERR_DEVICE_MEMORY halves the strip height and
 * tries the same strip again, down to one row. Returns 0, or -1 with one line in err, or with
 * err empty and job->library_status set when the library failed. */
int strips_run(struct strip_job *job, char *err, size_t errlen);

#endif
