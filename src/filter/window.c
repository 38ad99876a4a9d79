/* window.c - the window a filter's parameters describe: a square, a rectangle or a footprint,
 * placed by scipy.ndimage's origin rule, as an extent and a list of cells; and the footprints
 * people ask for by name (circles, and IRAF rmedian's rings). */
#include "filter_internal.h"

#include <math.h>
#include <stdlib.h>

/* Extent and origin of the window, unchecked. */
static void window_shape(const struct clstats_filter_params *p, int *w, int *h)
{
    if (p->footprint) {
        *w = p->footprint_width;
        *h = p->footprint_height;
    } else {
        *w = p->width;
        *h = p->height ? p->height : p->width;
    }
}

int clstats__window_check(clstats_ctx *ctx, const struct clstats_filter_params *p)
{
    int w, h;
    window_shape(p, &w, &h);
    const char *what = p->footprint ? "footprint" : "window";
    if (w < 1 || w > CLSTATS_MAX_WIDTH || h < 1 || h > CLSTATS_MAX_WIDTH)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s %d x %d must be 1 to %d cells a side", what,
                             w, h, CLSTATS_MAX_WIDTH);
    if (p->origin_x < -(w / 2) || p->origin_x > (w - 1) / 2 || p->origin_y < -(h / 2) ||
        p->origin_y > (h - 1) / 2)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "origin %d,%d is outside the %d x %d %s (scipy's rule: -(w/2) .. "
                             "(w-1)/2 per axis)",
                             p->origin_x, p->origin_y, w, h, what);
    if (p->footprint) {
        size_t set = 0;
        for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
            set += p->footprint[i] != 0;
        if (set == 0) return clstats__fail(ctx, CLSTATS_ERR_ARG, "the footprint has no cell set");
    }
    return CLSTATS_OK;
}

int clstats_filter_window(const struct clstats_filter_params *p, int *width, int *height, int *left,
                          int *top)
{
    if (!p) return clstats__fail(NULL, CLSTATS_ERR_ARG, "params is NULL");
    int status = clstats__window_check(NULL, p);
    if (status != CLSTATS_OK) return status;
    int w, h;
    window_shape(p, &w, &h);
    if (width) *width = w;
    if (height) *height = h;
    if (left) *left = w / 2 + p->origin_x;
    if (top) *top = h / 2 + p->origin_y;
    return CLSTATS_OK;
}

int clstats__window_of(clstats_ctx *ctx, const struct clstats_filter_params *p,
                       struct filter_window *out)
{
    int status = clstats__window_check(ctx, p);
    if (status != CLSTATS_OK) return status;
    struct filter_window win = {0};
    window_shape(p, &win.width, &win.height);
    win.left = win.width / 2 + p->origin_x;
    win.top = win.height / 2 + p->origin_y;
    win.cells = malloc((size_t)win.width * (size_t)win.height * sizeof *win.cells);
    if (!win.cells) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate the window");
    for (int i = 0; i < win.height; i++)
        for (int j = 0; j < win.width; j++)
            if (!p->footprint || p->footprint[i * win.width + j])
                win.cells[win.n_cells++] = i << 8 | j;
    win.rectangle = win.n_cells == win.width * win.height;
    *out = win;
    return CLSTATS_OK;
}

/* Cells of a (2 floor(r_out) + 1)-wide square at distances in (r_in, r_out] from its centre
 * (r_in < 0: the centre too). Distances compare squared, in integers where the radii are. */
static int annulus(double r_in, double r_out, unsigned char *cells, size_t capacity)
{
    if (!cells || !(r_out >= 0 && r_out < 128) || !(r_in < r_out))
        return clstats__fail(NULL, CLSTATS_ERR_ARG,
                             "radii %g, %g: a footprint needs 0 <= r < 128 (and r_in < r_out)",
                             r_in, r_out);
    const int half = (int)floor(r_out), side = 2 * half + 1;
    if ((size_t)side * (size_t)side > capacity)
        return clstats__fail(NULL, CLSTATS_ERR_ARG, "a %d x %d footprint does not fit in %zu", side,
                             side, capacity);
    const double in2 = r_in < 0 ? -1.0 : r_in * r_in, out2 = r_out * r_out;
    for (int dy = -half; dy <= half; dy++)
        for (int dx = -half; dx <= half; dx++) {
            const double d2 = (double)(dx * dx + dy * dy);
            cells[(size_t)(dy + half) * (size_t)side + (size_t)(dx + half)] =
                d2 > in2 && d2 <= out2;
        }
    return side;
}

int clstats_footprint_circle(double r, unsigned char *cells, size_t capacity)
{
    return annulus(-1.0, r, cells, capacity);
}

int clstats_footprint_ring(double r_in, double r_out, unsigned char *cells, size_t capacity)
{
    if (!(r_in >= 0))
        return clstats__fail(NULL, CLSTATS_ERR_ARG, "ring inner radius %g must be >= 0", r_in);
    return annulus(r_in, r_out, cells, capacity);
}
