/* png_io.h - madfilter's PNG input (greyscale images as data) and output (a map scaled for
 * viewing), through libpng. */
#ifndef MADFILTER_PNG_IO_H
#define MADFILTER_PNG_IO_H

#include "image.h"

#include <stdbool.h>
#include <stdint.h>

/* Whether path is a readable regular file that starts with the PNG signature. */
bool png_io_is_png(const char *path);

/* Host memory, per pixel at the most, that reading a PNG takes (its rows and the float image)
 * and that writing one takes (the caller's float map, a sorted copy for the scale, the rows). */
#define PNG_READ_BYTES_PER_PIXEL 8
#define PNG_WRITE_BYTES_PER_PIXEL 10

/* Reads an 8- or 16-bit greyscale PNG (1-4 bits widened) whole into img->data; transparent
 * pixels become NaN; the top PNG row becomes the last image row. Colour and palette images are
 * refused, and so is an image that would take more than max_bytes to read.
 * Returns 0, or -1 with one line in err. */
int png_io_read(const char *path, size_t max_bytes, struct tool_image *img, char *err,
                size_t errlen);

/* Writes a 16-bit greyscale PNG of data (nx x ny, FITS row order) to path: linear from the 0.5th
 * percentile of the finite values (grey 1) to the 99.5th (65535), NaN black (0); description
 * goes into a tEXt chunk. Messages name the file `shown` (the destination of a temporary path).
 * Returns 0, or -1 with one line in err. */
int png_io_write(const char *path, const char *shown, const float *data, size_t nx, size_t ny,
                 const char *description, char *err, size_t errlen);

/* Reads a PNG of any colour type whole as bands: grey (1), grey from grey + alpha (1), RGB (3,
 * palettes expanded), RGB from RGBA (3); a transparent pixel is NaN in every band. data holds
 * nx * ny pixels of `bands` values each (pixel-major), row 0 at the bottom as FITS stores rows;
 * the caller frees it; depth: 8 or 16 bits a value (full intensity 255 or 65535). Returns 0, or
 * -1 with one line in err. */
int png_io_read_bands(const char *path, size_t max_bytes, size_t *nx, size_t *ny, int *bands,
                      int *depth, float **data, char *err, size_t errlen);

/* Writes an 8-bit palette PNG of labels (nx x ny, FITS row order): label i in colours[i]
 * (n_colours at most 255), any other label (-1: no class) in one more entry, black and fully
 * transparent. Returns 0, or -1 with one line in err. */
int png_io_write_palette(const char *path, const char *shown, const int32_t *labels, size_t nx,
                         size_t ny, const unsigned char (*colours)[3], int n_colours,
                         const char *description, char *err, size_t errlen);

#endif
