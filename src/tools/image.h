/* image.h - the image madfilter works on, whatever file it came from: its shape, the header cards
 * to carry over, and its pixels as float32 with NaN for missing data, rows bottom to top as FITS
 * stores them. A FITS image stays in its file and is read a run of rows at a time; a PNG is held
 * whole (image.c reads either). */
#ifndef MADFILTER_IMAGE_H
#define MADFILTER_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

struct tool_image {
    const char *name; /* as the user gave it, for messages */
    size_t nx, ny;
    size_t planes; /* NAXIS3 of a cube (each plane is filtered on its own), else 1 */
    bool cube;     /* written back with NAXIS = 3 */
    char *cards;   /* n_cards header cards of 80 characters each, not NUL-separated; NULL for PNG */
    int n_cards;
    float *data;     /* PNG: nx * ny values, row 0 at the bottom; NULL for FITS */
    void *fits;      /* FITS: the open cfitsio file (fitsfile *); NULL for PNG */
    bool raw_floats; /* FITS float pixels: read bit for bit, with no null check */
};

/* Reads rows row0 .. row0 + rows - 1 of one plane into dst (rows * nx values). Returns 0, or -1
 * with one line in err. */
int image_read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, float *dst,
                    char *err, size_t errlen);

/* Closes the file or frees the pixels; harmless on a zeroed or already closed image. */
void image_close(struct tool_image *img);

#endif
