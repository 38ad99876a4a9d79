/* image.h - the image madfilter works on, whatever file it came from: float32 pixels with NaN
 * for missing data, rows bottom to top as FITS stores them, and the header cards to carry over. */
#ifndef MADFILTER_IMAGE_H
#define MADFILTER_IMAGE_H

#include <stddef.h>
#include <stdlib.h>

struct tool_image {
    float *data; /* nx * ny values, row 0 at the bottom (FITS order) */
    size_t nx, ny;
    size_t n_nan; /* missing pixels: NaN, or BLANK in integer FITS images */
    char *cards;  /* n_cards header cards of 80 characters each, not NUL-separated; NULL for PNG */
    int n_cards;
};

static inline void tool_image_free(struct tool_image *img)
{
    free(img->data);
    free(img->cards);
    img->data = NULL;
    img->cards = NULL;
}

#endif
