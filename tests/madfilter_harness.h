/* madfilter_harness.h - what madfilter's end-to-end suites (test_madfilter.c,
 * test_madfilter_limits.c) share: a temporary directory per test, running the built program
 * (MADFILTER_PATH) with stdout and stderr captured, FITS files written and read with cfitsio, and
 * the OpenCL shim (tests/opencl_shim.c) that plays small, full and lost devices. */
#ifndef MADFILTER_HARNESS_H
#define MADFILTER_HARNESS_H

#include "test_util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The test's directory: made and removed by the checked fixture. */
void make_tmpdir(void);
void remove_tmpdir(void);
/* Path of a file in the test's directory; eight rotating buffers so calls can be nested. */
const char *tmp(const char *name);
/* Entries of the test directory whose name holds "tmp-": madfilter's temporaries. */
int count_temporaries(void);
bool exists(const char *path);
void file_bytes(const char *path, char *buf, size_t size, size_t *n);

struct result {
    int code; /* exit status, or -1 if it did not exit normally */
    char out[16384];
    char err[16384];
    int err_lines;
};

/* Runs madfilter with the given arguments (NULL-terminated), capturing stdout and stderr; the
 * result lives until the next call. Its standard input is run_stdin when that names a file. */
struct result *run(const char *first, ...);
extern const char *run_stdin;
/* When set, standard output goes to this file (kept) instead of result.out. */
extern const char *run_stdout_to;

/* The run succeeded; `call` is evaluated once (a second run would hide what the first said). */
#define ck_run_ok(call)                                                                            \
    do {                                                                                           \
        const struct result *run_ = (call);                                                        \
        ck_assert_msg(run_->code == 0, "madfilter failed (%d): %s", run_->code, run_->err);        \
    } while (0)

/* A failure: the expected exit code and exactly one "madfilter: " line holding `words`. */
void check_one_line_error(const struct result *r, int code, const char *words, const char *what);

/* Aborts the test with cfitsio's words when status is not 0. */
void fits_check(int status, const char *what);
/* Writes a float32 image with OBJECT, a WCS axis, a COMMENT and a HISTORY in its header. */
void write_float_fits(const char *path, const float *data, long nx, long ny);
/* The float32 pixels of HDU `hdu` (1 = primary), bits untouched (cfitsio's null check would
 * turn -0 and subnormals into 0 and infinities into NaN, so it is off). read_hdu wants NAXIS 2;
 * read_cube takes NAXIS 2 or 3 and says which (nz is 1 for 2-D). */
float *read_hdu(const char *path, int hdu, long *nx, long *ny);
float *read_cube(const char *path, int hdu, int *naxis, long *nx, long *ny, long *nz);
/* The whole header of an HDU as one string of 80-character cards (free it). */
char *read_header(const char *path, int hdu);
void read_key_string(const char *path, int hdu, const char *key, char *value);
int count_hdus(const char *path);

/* A random image with ties (values on a 0.5 grid) and a few NaN. */
float *random_image(size_t nx, size_t ny, uint64_t salt);
/* The library's maps for the same data, for bitwise comparison. */
void library_maps(const float *img, size_t nx, size_t ny, int width, enum clstats_boundary b,
                  float *median, float *mad);
/* The same for any window and float32 or float64 data (median and mad of the image's dtype;
 * either may be NULL). */
void library_maps_of(const void *img, enum clstats_dtype dtype, size_t nx, size_t ny,
                     const struct clstats_filter_params *p, void *median, void *mad);

/* Runs that follow go through the OpenCL shim with this setting (see tests/opencl_shim.c);
 * shim_clear ends them. */
void shim_set(const char *name, const char *value);
void shim_clear(void);

#endif
