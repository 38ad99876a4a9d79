/* paths.h - the file names madfilter derives and compares: each input's output under -o DIR or
 * -o PATTERN, and whether two names are one file however they are spelled. */
#ifndef MADFILTER_PATHS_H
#define MADFILTER_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* The input's name without its directory, cfitsio selector and FITS, compression or PNG
 * extension: "data/m31.fits.fz[1]" gives "m31". */
void path_stem(const char *input, char *stem, size_t len);

/* The output for one input: every "{}" in pattern becomes the input's stem. Returns 0, or -1
 * when the result is too long or the stem empty. */
int path_expand(const char *pattern, const char *input, char *out, size_t len);

/* The absolute name path would have: its directory resolved (links, "..", ".") and its last
 * part kept; false when the directory does not exist. */
bool path_resolve(const char *path, char *out, size_t len);

/* Whether path ends with suffix, ignoring case. */
bool path_has_suffix(const char *path, const char *suffix);

bool path_is_directory(const char *path);

/* Whether a name ends with one of the extensions path_stem removes (.fits, .fz, .png, ...). */
bool path_has_image_extension(const char *path);

/* Makes the directory dir and any missing parents (mode 0777 less the umask). Returns 0, or -1
 * with errno set. */
int path_make_directories(const char *dir);

#endif
