/* pixels.c - an image's pixels as a feature table for k-means: a FITS image's planes (a 2-D
 * image is one band, a cube one band a plane) interleaved into rows of one value a band, or a
 * PNG's grey or RGB channels; values kept in float64 where the image needs it (image_is_wide). */
#include "pixels.h"

#include "png_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BANDS 256

static double value_at(const struct pixel_table *t, size_t e)
{
    return t->f64 ? ((const double *)t->values)[e] : (double)((const float *)t->values)[e];
}

static void set_value(struct pixel_table *t, size_t e, double v)
{
    if (t->f64) ((double *)t->values)[e] = v;
    else ((float *)t->values)[e] = (float)v;
}

static bool row_valid(const struct pixel_table *t, size_t p)
{
    for (int b = 0; b < t->bands; b++)
        if (!isfinite(value_at(t, p * t->bands + b))) return false;
    return true;
}

static void count_valid(struct pixel_table *t)
{
    t->n_valid = 0;
    for (size_t p = 0; p < t->nx * t->ny; p++)
        t->n_valid += row_valid(t, p);
}

static int read_fits(struct tool_image *img, size_t max_bytes, struct pixel_table *t, char *err,
                     size_t errlen)
{
    const size_t n = img->nx * img->ny;
    if (img->planes > MAX_BANDS) {
        snprintf(err, errlen, "%s has %zu planes: imcluster takes at most %d bands", img->name,
                 img->planes, MAX_BANDS);
        return -1;
    }
    t->nx = img->nx, t->ny = img->ny, t->bands = (int)img->planes;
    t->f64 = image_is_wide(img);
    const size_t es = t->f64 ? 8 : 4;
    if (n > max_bytes / es / (t->bands + 1)) {
        snprintf(err, errlen, "%s: %zu pixels of %d bands need more than the memory cap of %zu MiB",
                 img->name, n, t->bands, max_bytes >> 20);
        return -1;
    }
    void *plane = malloc(n * es);
    t->values = malloc(n * es * t->bands);
    if (!plane || !t->values) {
        free(plane);
        snprintf(err, errlen, "no memory for %zu pixels of %d bands", n, t->bands);
        return -1;
    }
    for (int b = 0; b < t->bands; b++) {
        const int rc = t->f64 ? image_read_rows_f64(img, b, 0, img->ny, plane, err, errlen)
                              : image_read_rows(img, b, 0, img->ny, plane, err, errlen);
        if (rc != 0) {
            free(plane);
            return -1;
        }
        for (size_t p = 0; p < n; p++)
            set_value(t, p * t->bands + b,
                      t->f64 ? ((double *)plane)[p] : (double)((float *)plane)[p]);
    }
    free(plane);
    return 0;
}

int pixels_read(struct tool_image *img, const char *png_path, size_t max_bytes,
                struct pixel_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    for (int b = 0; b < MAX_BANDS; b++)
        t->scale[b] = 1.0;
    int rc;
    if (img) {
        rc = read_fits(img, max_bytes, t, err, errlen);
    } else {
        float *data = NULL;
        t->png = true;
        rc = png_io_read_bands(png_path, max_bytes, &t->nx, &t->ny, &t->bands, &t->png_depth,
                               &data, err, errlen);
        t->values = data;
    }
    if (rc == 0) count_valid(t);
    return rc;
}

void pixels_standardise(struct pixel_table *t)
{
    const size_t n = t->nx * t->ny;
    const int d = t->bands;
    for (int b = 0; b < d; b++) {
        double sum = 0.0, sq = 0.0;
        for (size_t p = 0; p < n; p++)
            if (row_valid(t, p)) sum += value_at(t, p * d + b);
        const double mean = t->n_valid ? sum / (double)t->n_valid : 0.0;
        for (size_t p = 0; p < n; p++)
            if (row_valid(t, p)) {
                const double u = value_at(t, p * d + b) - mean;
                sq += u * u;
            }
        const double sd = t->n_valid ? sqrt(sq / (double)t->n_valid) : 0.0;
        t->mean[b] = mean;
        t->scale[b] = sd > 0 && isfinite(sd) ? sd : 1.0;
    }
    for (size_t p = 0; p < n; p++) {
        if (!row_valid(t, p)) continue; /* missing pixels stay as they are: label -1 */
        for (int b = 0; b < d; b++)
            set_value(t, p * d + b, (value_at(t, p * d + b) - t->mean[b]) / t->scale[b]);
    }
    t->standardised = true;
}

void pixels_to_table(const struct pixel_table *t, const double *in, double *out)
{
    for (int b = 0; b < t->bands; b++)
        out[b] = (in[b] - t->mean[b]) / t->scale[b];
}

void pixels_from_table(const struct pixel_table *t, const double *in, double *out)
{
    for (int b = 0; b < t->bands; b++)
        out[b] = in[b] * t->scale[b] + t->mean[b];
}

void pixels_free(struct pixel_table *t)
{
    free(t->values);
    t->values = NULL;
}
