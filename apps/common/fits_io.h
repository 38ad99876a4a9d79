/* fits_io.h - madfilter's FITS input and output through cfitsio, a run of rows at a time so that
 * memory stays bounded: reading one image HDU (2-D, or a cube of planes) as float32 with BLANK
 * and NaN as NaN (fits_input.c), and writing maps as float32 or float64 HDUs that keep the input
 * header (fits_output.c); cfitsio's failures in one line (fits_errors.c). */
#ifndef MADFILTER_FITS_IO_H
#define MADFILTER_FITS_IO_H

#include "image.h"

#include <stdbool.h>
#include <stdint.h>

/* Opens the image HDU that name selects (cfitsio extended syntax), checks its shape and reads
 * its header cards, BSCALE and BZERO; pixels are read later with fits_io_read_rows. Which shapes
 * are taken: image.h's enum image_shape. An image section in name is applied by this file, so
 * float pixels keep their bits.
 * Inputs that fits_preflight refuses are refused first; an uncompressed disk file is then
 * opened once in a child process (fits_probe), and refused if cfitsio crashes there.
 * Returns 0, or -1 with one line in err. */
int fits_io_open(const char *name, enum image_shape want, uint64_t max_bytes,
                 struct tool_image *img, char *err, size_t errlen);

/* Rows row0 .. row0 + rows - 1 of one plane, as float32, into dst (from the reader process for a
 * tile-compressed image). Returns 0 or -1 with err. */
int fits_io_read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, float *dst,
                      char *err, size_t errlen);
/* The same as float64, the values as stored. */
int fits_io_read_rows_f64(struct tool_image *img, size_t plane, size_t row0, size_t rows,
                          double *dst, char *err, size_t errlen);

/* For fits_probe's and fits_reader's children: signals back to their defaults (a crash kills
 * the child itself, an interrupt leaves the parent's clean-up to the parent), and how a child
 * ended, from waitpid's status, in words. */
void fits_child_defaults(void);
void fits_child_cause(int how, char *cause, size_t len);

/* A child process that unpacks a tile-compressed image's pixels and hands them over, so that a
 * crash in cfitsio's decompressors (a damaged tile) fails the read instead of the program
 * (fits_reader.c). Start it after the image is open; fits_io_read_rows then asks it; stop
 * waits for it. Each returns 0, or -1 with one line in err. */
int fits_reader_start(struct tool_image *img, char *err, size_t errlen);
int fits_reader_read(struct tool_image *img, size_t plane, size_t row0, size_t rows, void *dst,
                     bool f64, char *err, size_t errlen);
void fits_reader_stop(struct tool_image *img);

/* Closes the input file; harmless when not open. */
void fits_io_close(struct tool_image *img);

/* Reads first what cfitsio 4.2 would trust unchecked in the file that name opens (or name.gz
 * and the other names cfitsio tries): refuses a compressed file that claims more than max_bytes
 * unpacked, or is too short to claim a size, and a file with a header that would make cfitsio
 * abort (fits_preflight.c). An uncompressed disk file is worth probing (fits_probe): its path
 * then goes to probe_path, else "". Returns 0, or -1 with one line in err. */
int fits_preflight(const char *name, uint64_t max_bytes, char *probe_path, size_t probe_len,
                   char *err, size_t errlen);

/* The disk file cfitsio reads for name: the file behind a file:// or compress:// prefix, or the
 * first of root, root.gz and the other names cfitsio tries that exists. False for standard input,
 * other URL schemes and names that match no file. */
bool fits_io_disk_file(const char *name, char *path, size_t len);

/* Whether a file's first two bytes are those of a format cfitsio unpacks whole (gzip, zip,
 * compress, pack, LZH, bzip2). */
bool fits_compressed_magic(const unsigned char *head);

/* Runs attempt(arg) in a child process, and refuses the file at path if the child crashes
 * there (fits_probe.c). Returns 0, also when no child can be made, or -1 with one line in err. */
int fits_probe(const char *path, void (*attempt)(void *arg), void *arg, char *err, size_t errlen);

/* The file name in a cfitsio name ("in.fits" of "in.fits[SCI]"), or "" if it has none. */
void fits_io_rootname(const char *name, char *root, size_t len);

/* One line from a cfitsio failure: `what`, the status words and cfitsio's own detail. Clears
 * cfitsio's message stack. */
void fits_io_describe(int status, const char *what, char *err, size_t errlen);

struct fits_map {
    const char *extname; /* "MAD", ... */
    const char *comment; /* for the EXTNAME card */
    bool unitless;       /* drop BUNIT: the map is not in the input's units */
};

/* A keyword card a program can read in every map's header: an integer, a real (NaN: no value,
 * which FITS cannot write) or a string. */
struct fits_key {
    const char *name; /* up to 8 characters */
    char type;        /* 'I', 'F' or 'S' */
    long long i;
    double f;
    const char *s;
    const char *comment; /* NULL for none */
};

/* What a map HDU holds beyond the input's header: its pixels' type and the program's keywords
 * (placed after the input's cards, which lose any card of the same name). */
struct fits_output_format {
    int bitpix; /* -32 (float32) or -64 (float64) */
    const struct fits_key *keys;
    int n_keys;
    bool prefilled; /* path may exist already, made by fits_output_prefill: written over */
};

/* A new file at path filled with zeros from its start, a MiB at a time, up to `bytes` or until
 * stop(arg) (NULL: never) says to stop: the pages an output will be written over are then in the
 * page cache already, which makes writing the maps later faster (the file system allocates no
 * page and reserves no block as it copies them: bench/RESULTS.md). Meant for time the program
 * would otherwise spend waiting (the GPU's context being made). The file is the output's
 * temporary, which the caller removes on failure as for any output; a failed write only stops
 * the filling (fits_output_create writes over the file, or fails on it with its own words).
 * Returns 0, or -1 when the file could not be made. */
int fits_output_prefill(const char *path, uint64_t bytes, bool (*stop)(void *arg), void *arg);

/* The size of the file fits_output_create would make for nx x ny x planes pixels of n_maps maps
 * of BITPIX bitpix, less its headers (a few blocks each, known only at creation). */
uint64_t fits_output_data_size(size_t nx, size_t ny, size_t planes, int n_maps, int bitpix);

struct fits_output;

/* Creates path (which must not exist) for one HDU per map, float32 or as format says (NULL:
 * float32, no keywords), shaped like img (NAXIS 3 for a cube): the first as the primary HDU, the
 * rest as IMAGE extensions, each with img's header cards (less DATE, which is the output's own),
 * format's keywords, the HISTORY lines and DATE, and room for n_late more
 * HISTORY lines of up to 216 characters. Pixels follow with fits_output_write_rows; the file only
 * ever holds the rows written so far (no zero fill). A name ending in .gz is written to
 * scratch_path (which must not exist either) and compressed into path by fits_output_finish.
 * Returns 0, or -1 with one line in err. */
int fits_output_create(struct fits_output **out, const char *path, const char *scratch_path,
                       const struct tool_image *img, const struct fits_map *maps, int n_maps,
                       const struct fits_output_format *format, const char *const *history,
                       int n_history, int n_late, char *err, size_t errlen);

/* Writes rows row0 .. row0 + rows - 1 of one plane of map number `map`; each map's rows must come
 * in order, each once (so the checksums count every pixel once). */
int fits_output_write_rows(struct fits_output *out, int map, size_t plane, size_t row0, size_t rows,
                           const float *data, char *err, size_t errlen);
/* The same from float64 rows (rounded to float32 for a -32 output). */
int fits_output_write_rows_f64(struct fits_output *out, int map, size_t plane, size_t row0,
                               size_t rows, const double *data, char *err, size_t errlen);

/* Writes every header, with the late HISTORY lines (at most the n_late given at creation),
 * DATASUM and CHECKSUM, and closes the file (a .gz output is compressed now). Every map must be
 * complete. Frees out either way; on failure the file is removed. Returns 0, or -1 with one line
 * in err. */
int fits_output_finish(struct fits_output *out, const char *const *late, int n_late, char *err,
                       size_t errlen);

/* Closes, removes what was written (never completing it) and frees; harmless on NULL. */
void fits_output_abort(struct fits_output *out);

/* Whether an output name asks for gzip compression (ends in .gz). */
bool fits_output_is_gzip(const char *path);

#endif
