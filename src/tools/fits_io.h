/* fits_io.h - madfilter's FITS input and output through cfitsio: reading one 2-D image HDU as
 * float32 with BLANK and NaN as NaN, and writing maps as float32 HDUs that keep the input header.
 */
#ifndef MADFILTER_FITS_IO_H
#define MADFILTER_FITS_IO_H

#include "image.h"

#include <stdbool.h>

/* Reads the image HDU that name selects (cfitsio extended syntax). Returns 0, or -1 with one
 * line in err. */
int fits_io_read(const char *name, struct tool_image *img, char *err, size_t errlen);

/* The file name in a cfitsio name ("in.fits" of "in.fits[SCI]"), or "" if it has none. */
void fits_io_rootname(const char *name, char *root, size_t len);

struct fits_map {
    const char *extname; /* "MAD", ... */
    const char *comment; /* for the EXTNAME card */
    const float *data;   /* nx * ny values */
    bool unitless;       /* drop BUNIT: the map is not in the input's units */
};

/* Creates path (which must not exist) with one HDU per map: the first as the primary HDU, the
 * rest as IMAGE extensions, each with in's header cards, the HISTORY lines, DATE and checksums.
 * Returns 0, or -1 with one line in err. */
int fits_io_write(const char *path, const struct tool_image *in, const struct fits_map *maps,
                  int n_maps, const char *const *history, int n_history, char *err, size_t errlen);

#endif
