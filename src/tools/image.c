/* image.c - rows of an input image, wherever its pixels live: read from the FITS file on demand
 * (fits_input.c), or copied from a PNG held in memory. */
#include "image.h"
#include "fits_io.h"

#include <stdlib.h>
#include <string.h>

int image_read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, float *dst,
                    char *err, size_t errlen)
{
    if (img->fits) return fits_io_read_rows(img, plane, row0, rows, dst, err, errlen);
    memcpy(dst, img->data + (plane * img->ny + row0) * img->nx, rows * img->nx * sizeof *dst);
    return 0;
}

void image_close(struct tool_image *img)
{
    fits_io_close(img);
    free(img->data);
    free(img->cards);
    img->data = NULL;
    img->cards = NULL;
}
