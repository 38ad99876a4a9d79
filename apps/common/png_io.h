/* png_io.h - madfilter's PNG input (greyscale images as data) and output (a map scaled for
 * viewing), through libpng. */
#ifndef MADFILTER_PNG_IO_H
#define MADFILTER_PNG_IO_H

#include "image.h"

#include <stdbool.h>

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

#endif
