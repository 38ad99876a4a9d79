/* pixels.h - imcluster's feature table: the pixels of a multi-band image as rows of one value a
 * band, from a FITS image or cube (one plane a band) or a grey or colour PNG, optionally
 * standardised band by band. */
#ifndef IMCLUSTER_PIXELS_H
#define IMCLUSTER_PIXELS_H

#include "image.h"

#include <stdbool.h>
#include <stddef.h>

struct pixel_table {
    size_t nx, ny;   /* the image's shape; rows = nx * ny pixels, FITS order (row 0 at the bottom) */
    int bands;       /* features a pixel */
    bool f64;        /* values are double (FITS BITPIX -64, 32, 64), else float */
    void *values;    /* nx * ny * bands values, pixel-major */
    size_t n_valid;  /* pixels finite in every band (the others get label -1) */
    bool standardised;
    double mean[256], scale[256]; /* per band: value = stored * scale + mean (0 and 1 unless
                                     standardised) */
    bool png;        /* read from a PNG (no header to keep) */
    int png_depth;   /* 8 or 16 for a PNG: the level of full intensity is 255 or 65535 */
};

/* Reads every pixel of input (an opened FITS image img, or the PNG at png_path when img is
 * NULL) into t. Returns 0, or -1 with one line in err. */
int pixels_read(struct tool_image *img, const char *png_path, size_t max_bytes,
                struct pixel_table *t, char *err, size_t errlen);

/* Standardises each band over the valid pixels: (x - mean) / std, std the population standard
 * deviation (ddof 0, as scikit-learn's StandardScaler); a constant band is only centred. */
void pixels_standardise(struct pixel_table *t);

/* A centre in the table's units from one in the input's units, and back. */
void pixels_to_table(const struct pixel_table *t, const double *in, double *out);
void pixels_from_table(const struct pixel_table *t, const double *in, double *out);

void pixels_free(struct pixel_table *t);

#endif
