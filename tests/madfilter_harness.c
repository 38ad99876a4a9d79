/* madfilter_harness.c - what madfilter's end-to-end suites share: a temporary directory per
 * test, running the built program with its output captured, and writing and reading the FITS
 * files it takes and makes. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "madfilter_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <fitsio.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined MADFILTER_PATH || !defined OPENCL_SHIM_PATH
#error "build with -DMADFILTER_PATH=\"...\" -DOPENCL_SHIM_PATH=\"...\""
#endif

extern char **environ;

static char tmpdir[256];

/* Path of a file in the test's directory; eight rotating buffers so calls can be nested. */
const char *tmp(const char *name)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
    return b;
}

void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_madfilter-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* The tests make one directory level of plain files; anything deeper is a temporary the tool
 * left behind, which no_temporaries() reports before this removes it. */
void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        if (unlink(path) != 0) {
            char cmd[1100];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
            if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", path);
        }
    }
    closedir(d);
    rmdir(tmpdir);
}

/* Entries of the test directory whose name holds "tmp-": madfilter's temporaries. */
int count_temporaries(void)
{
    int n = 0;
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, "tmp-")) n++;
    if (d) closedir(d);
    return n;
}

bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- Running the tool ---------------------------------------------------------------------- */

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
    unlink(path);
}

const char *run_stdin;
const char *run_stdout_to;

/* Runs madfilter with the given arguments (NULL-terminated), capturing stdout and stderr. */
struct result *run(const char *first, ...)
{
    static struct result r;
    const char *argv[64] = {MADFILTER_PATH};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;

    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s.stdout", tmpdir);
    snprintf(err_path, sizeof err_path, "%s.stderr", tmpdir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, run_stdout_to ? run_stdout_to : out_path,
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (run_stdin) posix_spawn_file_actions_addopen(&fa, 0, run_stdin, O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, MADFILTER_PATH, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot run %s", MADFILTER_PATH);
    int wstatus;
    ck_assert_int_eq(waitpid(pid, &wstatus, 0), pid);
    r.code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    if (run_stdout_to)
        r.out[0] = '\0';
    else
        slurp(out_path, r.out, sizeof r.out);
    slurp(err_path, r.err, sizeof r.err);
    r.err_lines = 0;
    for (const char *p = r.err; *p; p++)
        r.err_lines += *p == '\n';
    return &r;
}

/* A failure: the expected exit code and exactly one "madfilter: " line holding `words`. */
void check_one_line_error(const struct result *r, int code, const char *words, const char *what)
{
    ck_assert_msg(r->code == code, "%s: exit %d, want %d (stderr: %s)", what, r->code, code,
                  r->err);
    ck_assert_msg(r->err_lines == 1, "%s: %d lines on stderr, want 1:\n%s", what, r->err_lines,
                  r->err);
    ck_assert_msg(strncmp(r->err, "madfilter: ", 11) == 0, "%s: stderr \"%s\"", what, r->err);
    ck_assert_msg(strstr(r->err, words) != NULL, "%s: stderr \"%s\" lacks \"%s\"", what, r->err,
                  words);
}

/* ---- FITS files ---------------------------------------------------------------------------- */

void fits_check(int status, const char *what)
{
    if (status) {
        char text[FLEN_STATUS];
        fits_get_errstatus(status, text);
        fits_report_error(stderr, status);
        ck_abort_msg("cfitsio %s: %s", what, text);
    }
}

/* Writes a float32 image with OBJECT, a WCS axis, a COMMENT and a HISTORY in its header. */
void write_float_fits(const char *path, const float *data, long nx, long ny)
{
    fitsfile *f;
    int status = 0;
    long naxes[2] = {nx, ny};
    fits_create_file(&f, path, &status);
    fits_create_img(f, FLOAT_IMG, 2, naxes, &status);
    fits_write_key_str(f, "OBJECT", "NGC 1234", "target", &status);
    fits_write_key_str(f, "CTYPE1", "RA---TAN", NULL, &status);
    fits_write_key_str(f, "CTYPE2", "DEC--TAN", NULL, &status);
    double crval1 = 150.25, crval2 = -2.5, cdelt = 1e-4;
    fits_write_key(f, TDOUBLE, "CRVAL1", &crval1, NULL, &status);
    fits_write_key(f, TDOUBLE, "CRVAL2", &crval2, NULL, &status);
    fits_write_key(f, TDOUBLE, "CDELT1", &cdelt, NULL, &status);
    fits_write_key(f, TDOUBLE, "CDELT2", &cdelt, NULL, &status);
    fits_write_key_str(f, "BUNIT", "adu", NULL, &status);
    fits_write_comment(f, "a comment that must survive", &status);
    fits_write_history(f, "an earlier processing step", &status);
    fits_write_img(f, TFLOAT, 1, nx * ny, (float *)data, &status);
    fits_close_file(f, &status);
    fits_check(status, "writing a test image");
}

float *read_cube(const char *path, int hdu, int *naxis, long *nx, long *ny, long *nz)
{
    fitsfile *f;
    int status = 0, anynul = 0;
    long naxes[3] = {0, 0, 1};
    float nulval = 0.0f;
    fits_open_file(&f, path, READONLY, &status);
    fits_movabs_hdu(f, hdu, NULL, &status);
    fits_get_img_dim(f, naxis, &status);
    fits_get_img_size(f, 3, naxes, &status);
    fits_check(status, "opening an output");
    ck_assert_msg(*naxis == 2 || *naxis == 3, "%s: NAXIS %d", path, *naxis);
    if (*naxis == 2) naxes[2] = 1;
    long n = naxes[0] * naxes[1] * naxes[2];
    float *data = malloc((size_t)n * sizeof *data);
    fits_read_img(f, TFLOAT, 1, n, &nulval, data, &anynul, &status);
    fits_close_file(f, &status);
    fits_check(status, "reading an output");
    *nx = naxes[0];
    *ny = naxes[1];
    *nz = naxes[2];
    return data;
}

float *read_hdu(const char *path, int hdu, long *nx, long *ny)
{
    int naxis;
    long nz;
    float *data = read_cube(path, hdu, &naxis, nx, ny, &nz);
    ck_assert_int_eq(naxis, 2);
    return data;
}

/* The whole header of an HDU as one string of 80-character cards. */
char *read_header(const char *path, int hdu)
{
    fitsfile *f;
    int status = 0, nkeys = 0;
    char *header = NULL;
    fits_open_file(&f, path, READONLY, &status);
    fits_movabs_hdu(f, hdu, NULL, &status);
    fits_hdr2str(f, 0, NULL, 0, &header, &nkeys, &status);
    fits_check(status, "reading a header");
    char *copy = strdup(header);
    fits_free_memory(header, &status);
    fits_close_file(f, &status);
    return copy;
}

void read_key_string(const char *path, int hdu, const char *key, char *value)
{
    fitsfile *f;
    int status = 0;
    fits_open_file(&f, path, READONLY, &status);
    fits_movabs_hdu(f, hdu, NULL, &status);
    fits_read_key(f, TSTRING, key, value, NULL, &status);
    fits_close_file(f, &status);
    fits_check(status, key);
}

int count_hdus(const char *path)
{
    fitsfile *f;
    int status = 0, n = 0;
    fits_open_file(&f, path, READONLY, &status);
    fits_get_num_hdus(f, &n, &status);
    fits_close_file(f, &status);
    fits_check(status, "counting HDUs");
    return n;
}

/* A random image with ties (values on a 0.5 grid) and a few NaN. */
float *random_image(size_t nx, size_t ny, uint64_t salt)
{
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() ^ salt);
    float *img = malloc(nx * ny * sizeof *img);
    for (size_t i = 0; i < nx * ny; i++)
        img[i] = (float)(round(test_rng_normal(&rng) * 6) / 2);
    for (int k = 0; k < 4; k++)
        img[test_rng_next(&rng) % (nx * ny)] = NAN;
    return img;
}

/* The library's maps for the same data, for bitwise comparison. They are computed in a forked
 * child with its own context, so this process never initialises a GPU driver: on the GPU
 * machine a process whose parent has used the NVIDIA driver does not see the NVIDIA platform
 * (docs/LIMITS.md), and madfilter runs after this would fall back or fail. */
void library_maps_of(const void *img, enum clstats_dtype dtype, size_t nx, size_t ny,
                     const struct clstats_filter_params *p, void *median, void *mad)
{
    const bool f64 = dtype == CLSTATS_FLOAT64;
    const size_t bytes = nx * ny * (f64 ? sizeof(double) : sizeof(float)), msg_size = 512;
    char *shared =
        mmap(NULL, 2 * bytes + msg_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(shared, MAP_FAILED);
    char *msg = shared + 2 * bytes;
    void *med_out = median ? shared : NULL, *mad_out = mad ? shared + bytes : NULL;
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        clstats_ctx *ctx = NULL;
        int status = clstats_ctx_create(&ctx, NULL);
        if (status == CLSTATS_OK && f64)
            status = clstats_median_filter_f64(ctx, img, nx, ny, nx, p, med_out, mad_out);
        else if (status == CLSTATS_OK)
            status = clstats_median_filter(ctx, img, nx, ny, nx, p, med_out, mad_out);
        snprintf(msg, msg_size, "%s", status == CLSTATS_OK ? "" : clstats_ctx_message(ctx));
        clstats_ctx_destroy(ctx);
        _exit(status == CLSTATS_OK ? 0 : 1);
    }
    int wstatus;
    ck_assert_int_eq(waitpid(pid, &wstatus, 0), pid);
    ck_assert_msg(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "library: %s", msg);
    if (median) memcpy(median, shared, bytes);
    if (mad) memcpy(mad, shared + bytes, bytes);
    munmap(shared, 2 * bytes + msg_size);
}

void library_maps(const float *img, size_t nx, size_t ny, int width, enum clstats_boundary b,
                  float *median, float *mad)
{
    const struct clstats_filter_params p = {.width = width, .boundary = b};
    library_maps_of(img, CLSTATS_FLOAT32, nx, ny, &p, median, mad);
}

void file_bytes(const char *path, char *buf, size_t size, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    *n = fread(buf, 1, size, f);
    fclose(f);
}

static const char *const shim_settings[] = {
    "OPENCL_SHIM_RAISE",      "OPENCL_SHIM_CRASH_UNPACKING", "OPENCL_SHIM_DEVICE_MEMORY",
    "OPENCL_SHIM_MAX_BUFFER", "OPENCL_SHIM_LOSE_AFTER",      "OPENCL_SHIM_REPORT",
    "OPENCL_SHIM_CONTEXT_DELAY_MS"};

void shim_set(const char *name, const char *value)
{
    setenv("LD_PRELOAD", OPENCL_SHIM_PATH, 1);
    setenv(name, value, 1);
}

void shim_clear(void)
{
    unsetenv("LD_PRELOAD");
    for (size_t i = 0; i < sizeof shim_settings / sizeof shim_settings[0]; i++)
        unsetenv(shim_settings[i]);
}
