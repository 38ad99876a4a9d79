/* window.c - madfilter's window (-w, --origin, --footprint, --even) as the library's parameters
 * and as keyword cards, and its missing data beyond NaN and BLANK (--mask, --valid-range). */
#include "window.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A footprint file: any image up to 255 x 255, non-zero (or NaN) cells in the window. */
static int load_file(const char *name, uint64_t max_memory, struct window *w, char *err,
                     size_t errlen)
{
    struct tool_image img = {0};
    if (image_open(name, SHAPE_NO_CUBES, max_memory, &img, err, errlen) != 0) return EXIT_RUNTIME;
    int rc = EXIT_OK;
    float *px = NULL;
    if (img.nx > CLSTATS_MAX_WIDTH || img.ny > CLSTATS_MAX_WIDTH) {
        snprintf(err, errlen, "footprint %s is %zu x %zu: at most %d a side", name, img.nx, img.ny,
                 CLSTATS_MAX_WIDTH);
        rc = EXIT_RUNTIME;
    } else if (!(px = malloc(img.nx * img.ny * sizeof *px)) ||
               !(w->cells = malloc(img.nx * img.ny))) {
        snprintf(err, errlen, "out of memory for footprint %s", name);
        rc = EXIT_RUNTIME;
    } else if (image_read_rows(&img, 0, 0, img.ny, px, err, errlen) != 0) {
        rc = EXIT_RUNTIME;
    } else {
        /* Image rows run bottom to top as FITS stores them, as the data's rows do. */
        for (size_t i = 0; i < img.nx * img.ny; i++)
            w->cells[i] = px[i] != 0.0f; /* NaN != 0: in the window */
        w->fw = (int)img.nx;
        w->fh = (int)img.ny;
    }
    free(px);
    image_close(&img);
    return rc;
}

int window_load(const struct options *o, uint64_t max_memory, struct window *w, char *err,
                size_t errlen)
{
    memset(w, 0, sizeof *w);
    if (!o->footprint) return EXIT_OK;
    if (o->footprint_file) {
        int rc = load_file(o->footprint_file, max_memory, w, err, errlen);
        struct clstats_filter_params p = window_params(o, w);
        if (rc == EXIT_OK && clstats_filter_window(&p, NULL, NULL, NULL, NULL) != CLSTATS_OK) {
            snprintf(err, errlen, "footprint %s: %s", o->footprint_file, clstats_ctx_message(NULL));
            rc = EXIT_RUNTIME;
        }
        return rc;
    }
    const int side = 2 * (int)floor(o->r_out) + 1;
    if (!(w->cells = malloc((size_t)side * (size_t)side))) {
        snprintf(err, errlen, "out of memory for the footprint");
        return EXIT_RUNTIME;
    }
    const size_t cap = (size_t)side * (size_t)side;
    const int got = o->r_in < 0 ? clstats_footprint_circle(o->r_out, w->cells, cap)
                                : clstats_footprint_ring(o->r_in, o->r_out, w->cells, cap);
    if (got < 0) {
        snprintf(err, errlen, "%s", clstats_ctx_message(NULL));
        return EXIT_RUNTIME;
    }
    w->fw = w->fh = got;
    return EXIT_OK;
}

void window_free(struct window *w)
{
    free(w->cells);
    w->cells = NULL;
}

struct clstats_filter_params window_params(const struct options *o, const struct window *w)
{
    return (struct clstats_filter_params){.width = o->width,
                                          .height = o->height,
                                          .origin_x = o->origin_x,
                                          .origin_y = o->origin_y,
                                          .footprint = w->cells,
                                          .footprint_width = w->fw,
                                          .footprint_height = w->fh,
                                          .even = o->even,
                                          .boundary = o->boundary,
                                          .cval = o->cval,
                                          .cval_f64 = &o->cval64};
}

void window_describe(const struct options *o, const struct window *w, char *out, size_t len)
{
    if (w->cells)
        snprintf(out, len, "footprint %.200s (%d x %d)", o->footprint, w->fw, w->fh);
    else
        snprintf(out, len, "window %d x %d", o->width, o->height);
}

int missing_open(struct missing *m, const struct options *o, const struct tool_image *img,
                 char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!o->mask) return EXIT_OK;
    if (image_open(o->mask, SHAPE_PLANES, o->max_memory, &m->mask, err, errlen) != 0)
        return EXIT_RUNTIME;
    m->open = true;
    if (m->mask.nx != img->nx || m->mask.ny != img->ny ||
        (m->mask.planes != 1 && m->mask.planes != img->planes)) {
        snprintf(err, errlen, "mask %s is %zu x %zu x %zu, the input %zu x %zu x %zu", o->mask,
                 m->mask.nx, m->mask.ny, m->mask.planes, img->nx, img->ny, img->planes);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* Rows of float32 (dst32) or float64 (dst64) values, the other NULL. */
static int apply(struct missing *m, const struct options *o, size_t plane, size_t row0, size_t rows,
                 size_t nx, float *dst32, double *dst64, char *err, size_t errlen)
{
    const size_t n = rows * nx;
    for (size_t i = 0; o->valid_range && i < n; i++) {
        const double v = dst64 ? dst64[i] : dst32[i];
        if (v < o->valid_lo || v > o->valid_hi) {
            if (dst64)
                dst64[i] = NAN;
            else
                dst32[i] = NAN;
        }
    }
    if (!m->open) return 0;
    if (n > m->row_cap) {
        float *row = realloc(m->row, n * sizeof *row);
        if (!row) {
            snprintf(err, errlen, "out of memory for the mask's rows");
            return -1;
        }
        m->row = row;
        m->row_cap = n;
    }
    if (image_read_rows(&m->mask, m->mask.planes == 1 ? 0 : plane, row0, rows, m->row, err,
                        errlen) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (m->row[i] == 0.0f) continue; /* NaN != 0: a missing mask value masks */
        if (dst64)
            dst64[i] = NAN;
        else
            dst32[i] = NAN;
    }
    return 0;
}

int missing_apply(struct missing *m, const struct options *o, size_t plane, size_t row0,
                  size_t rows, size_t nx, float *dst, char *err, size_t errlen)
{
    return apply(m, o, plane, row0, rows, nx, dst, NULL, err, errlen);
}

int missing_apply_f64(struct missing *m, const struct options *o, size_t plane, size_t row0,
                      size_t rows, size_t nx, double *dst, char *err, size_t errlen)
{
    return apply(m, o, plane, row0, rows, nx, NULL, dst, err, errlen);
}

void missing_close(struct missing *m)
{
    if (m->open) image_close(&m->mask);
    free(m->row);
    memset(m, 0, sizeof *m);
}
