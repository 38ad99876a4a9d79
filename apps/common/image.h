/* image.h - the image madfilter works on, whatever file it came from: its shape, the header cards
 * to carry over, and its pixels as float32 with NaN for missing data, rows bottom to top as FITS
 * stores them. A FITS image stays in its file and is read a run of rows at a time; a PNG is held
 * whole (image.c reads either). */
#ifndef MADFILTER_IMAGE_H
#define MADFILTER_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct atomic_file;

/* Which shapes a program takes: madfilter 2-D images and cubes of them (or only images, with
 * --cube refuse), imstats any shape, a 1-D image being one row, every axis past the second
 * counting planes, and an empty image (NAXIS 0, or an axis of length 0) having no pixel. */
enum image_shape { SHAPE_PLANES, SHAPE_NO_CUBES, SHAPE_ANY };

/* The part of a FITS image that a cfitsio image section ('in.fits[1:100,*:2]', '[-*,*]')
 * selects, read by fits_input.c itself so that float pixels keep their bits (cfitsio would copy
 * the section through its null checks). Axis a of the selection holds source pixels
 * first[a] + i * step[a] (1-based), i < length[a]; a negative step runs backwards. */
struct image_section {
    bool active;
    int naxis;
    long long first[9], step[9], length[9];
};

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
    int bitpix;      /* FITS: BITPIX of the pixels as stored (the image's, when compressed); 0
                        for PNG */
    int naxis;       /* FITS: axes of the image (or section), and their lengths */
    long long axes[9];
    struct image_section section;
    char notice[512];          /* what the caller should say, "" when nothing: a header copied
                                  only in part, say */
    struct atomic_file *spool; /* a piped input copied to a temporary file, removed on close */
    bool reader;               /* a tile-compressed image's pixels come from a child process */
    bool direct;               /* plain float pixels of a disk file: read with pread, not cfitsio */
    int direct_fd;             /* (fits_input.c) */
    uint64_t direct_offset;    /* the data unit's first byte in that file */
    int reader_pid, reader_fd; /* (fits_reader.c) */
};

/* Opens INPUT as madfilter and imstats take it: a PNG by its signature, else FITS through
 * cfitsio's extended syntax (fits_io_open). A piped input (a FIFO, '-' for standard input, or a
 * shell's <(...)) is first copied into a temporary file of up to max_bytes, because neither the
 * PNG check nor cfitsio can read a stream's start twice. Returns 0, or -1 with one line in err. */
int image_open(const char *name, enum image_shape want, uint64_t max_bytes, struct tool_image *img,
               char *err, size_t errlen);

/* Reads rows row0 .. row0 + rows - 1 of one plane into dst (rows * nx values). Returns 0, or -1
 * with one line in err. */
int image_read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, float *dst,
                    char *err, size_t errlen);

/* The same in float64: a FITS image's values as stored (BSCALE and BZERO applied in double),
 * a PNG's widened. */
int image_read_rows_f64(struct tool_image *img, size_t plane, size_t row0, size_t rows, double *dst,
                        char *err, size_t errlen);

/* Whether an image's values need float64 to be exact: BITPIX -64, 32 and 64 (float32 holds
 * every 8- and 16-bit integer and every float32). */
bool image_is_wide(const struct tool_image *img);

/* Closes the file or frees the pixels; harmless on a zeroed or already closed image. */
void image_close(struct tool_image *img);

#endif
