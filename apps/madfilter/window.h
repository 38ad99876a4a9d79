/* window.h - madfilter's window and missing data: the filter parameters its options describe
 * (-w, --origin, --footprint, --even), and the pixels --mask and --valid-range mark missing. */
#ifndef MADFILTER_WINDOW_H
#define MADFILTER_WINDOW_H

#include "clstats.h"
#include "image.h"
#include "options.h"

struct window {
    unsigned char *cells; /* a footprint's cells, or NULL for the -w box; owned */
    int fw, fh;
};

/* The footprint --footprint names (a circle, a ring, or read from its file). Returns EXIT_OK, or
 * EXIT_RUNTIME with one line in err. */
int window_load(const struct options *o, uint64_t max_memory, struct window *w, char *err,
                size_t errlen);
void window_free(struct window *w);

/* The library's parameters for the window, boundary and rule (no progress callback). */
struct clstats_filter_params window_params(const struct options *o, const struct window *w);

/* The window in words, for HISTORY and messages ("31 x 11", "circle:4 (9 x 9)"). */
void window_describe(const struct options *o, const struct window *w, char *out, size_t len);

/* --mask, opened for one input (shape checked against it), and the missing pixels of rows read:
 * masked ones, and those outside --valid-range, become NaN. */
struct missing {
    struct tool_image mask;
    bool open;
    float *row; /* the mask's rows for one read; owned */
    size_t row_cap;
};
int missing_open(struct missing *m, const struct options *o, const struct tool_image *img,
                 char *err, size_t errlen);
int missing_apply(struct missing *m, const struct options *o, size_t plane, size_t row0,
                  size_t rows, size_t nx, float *dst, char *err, size_t errlen);
int missing_apply_f64(struct missing *m, const struct options *o, size_t plane, size_t row0,
                      size_t rows, size_t nx, double *dst, char *err, size_t errlen);
void missing_close(struct missing *m);

#endif
