/* points.c - what skyfit hands the regression (points.h): pixels, tile medians or a grid sample,
 * each turned into its design row here so the three kinds share one path to the fit. */
#include "points.h"

#include <math.h>
#include <stdlib.h>

static int add(struct points *p, const struct surface *s, double x, double y, double value)
{
    if (!isfinite(value)) return 0;
    surface_terms(s, x, y, p->x + p->n * s->n_terms);
    p->y[p->n++] = value;
    return 0;
}

static int allocate(struct points *p, const struct surface *s, size_t most)
{
    p->n = 0;
    p->x = malloc((most ? most : 1) * s->n_terms * sizeof *p->x);
    p->y = malloc((most ? most : 1) * sizeof *p->y);
    return p->x && p->y ? CLSTATS_OK : CLSTATS_ERR_NOMEM;
}

/* Medians of step x step tiles, computed on float32 pixels (the library's tile medians take
 * float32); each point sits at its tile's centre, the last tiles cut short by the edge. */
static int mesh(clstats_ctx *ctx, const double *image, const struct surface *s, size_t step,
                struct points *p)
{
    const size_t nx = s->nx, ny = s->ny;
    const size_t ntx = (nx + step - 1) / step, nty = (ny + step - 1) / step;
    float *pixels = malloc(nx * ny * sizeof *pixels);
    float *medians = malloc(ntx * nty * sizeof *medians);
    int status = pixels && medians ? allocate(p, s, ntx * nty) : CLSTATS_ERR_NOMEM;
    if (status == CLSTATS_OK) {
        /* Infinite pixels are missing data here as in the other kinds. */
        for (size_t i = 0; i < nx * ny; i++)
            pixels[i] = isfinite(image[i]) ? (float)image[i] : NAN;
        status = clstats_tile_medians(ctx, pixels, nx, ny, nx, step, step, NULL, medians);
    }
    for (size_t j = 0; status == CLSTATS_OK && j < nty; j++) {
        const size_t h = ny - j * step < step ? ny - j * step : step;
        for (size_t i = 0; i < ntx; i++) {
            const size_t w = nx - i * step < step ? nx - i * step : step;
            add(p, s, (double)(i * step) + (double)(w - 1) / 2.0,
                (double)(j * step) + (double)(h - 1) / 2.0, medians[j * ntx + i]);
        }
    }
    free(pixels);
    free(medians);
    return status;
}

int points_make(clstats_ctx *ctx, const double *image, const struct surface *s,
                enum points_kind kind, size_t step, struct points *out)
{
    *out = (struct points){0};
    if (kind == POINTS_MESH) return mesh(ctx, image, s, step, out);
    if (kind == POINTS_ALL) step = 1;
    /* A grid sample starts half a spacing in, so it is centred on the image. */
    const size_t first = kind == POINTS_SAMPLE ? step / 2 : 0;
    const size_t cx = s->nx > first ? (s->nx - first + step - 1) / step : 0;
    const size_t cy = s->ny > first ? (s->ny - first + step - 1) / step : 0;
    int status = allocate(out, s, cx * cy);
    for (size_t y = first; status == CLSTATS_OK && y < s->ny; y += step)
        for (size_t x = first; x < s->nx; x += step)
            add(out, s, (double)x, (double)y, image[y * s->nx + x]);
    return status;
}

void points_free(struct points *p)
{
    free(p->x);
    free(p->y);
    *p = (struct points){0};
}
