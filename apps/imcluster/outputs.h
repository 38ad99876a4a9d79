/* outputs.h - what imcluster writes: the label image and the centres as a FITS file, the
 * labels as a palette PNG, the centres as a text table. Each is written to the path given (a
 * temporary file that the caller renames into place). */
#ifndef IMCLUSTER_OUTPUTS_H
#define IMCLUSTER_OUTPUTS_H

#include "image.h"
#include "pixels.h"

#include <stdint.h>

/* What the run found, for the files' keywords and text. */
struct cluster_result {
    int k;
    const int32_t *labels;  /* nx * ny, -1 for pixels without a class */
    const double *centres;  /* k x bands, in the input's units */
    const size_t *counts;   /* pixels of each class */
    double inertia;         /* in the clustered (maybe standardised) units */
    int n_iter, n_init;
    const char *init;       /* "k-means++", "random" or the file given */
    unsigned long long seed;
    const char *device;
};

/* A FITS file at path: the primary HDU LABELS (int16, or int32 past 32767 classes; -1 no
 * class; the input's header and the WCS of its first two axes kept, keywords and HISTORY saying
 * how it was made) and an image HDU CENTRES (float64, bands x k, the input's units). img may be
 * NULL (a PNG input). */
int outputs_fits(const char *path, const struct tool_image *img, const struct pixel_table *t,
                 const struct cluster_result *r, char *err, size_t errlen);

/* A palette PNG of the labels: each class in the colour of its centre for a PNG input of 1 or
 * 3 bands (colour quantisation), else in a fixed set of distinct colours; no class transparent. */
int outputs_png(const char *path, const char *shown, const struct pixel_table *t,
                const struct cluster_result *r, bool centre_colours, char *err, size_t errlen);

/* A text table: a header line, then one line a class: label, pixels, its centre's bands. */
int outputs_centres_text(const char *path, const char *shown, const struct pixel_table *t,
                         const struct cluster_result *r, char *err, size_t errlen);

#endif
