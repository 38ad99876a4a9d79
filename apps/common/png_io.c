/* png_io.c - PNG through libpng for madfilter. libpng reports errors by longjmp: every buffer
 * lives in a struct outside the jump, so one cleanup path frees it whichever way we leave. */
#include "png_io.h"
#include "clstats.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct png_job {
    FILE *fp;
    png_structp png;
    png_infop info;
    unsigned char *pixels;
    png_bytep *rows;
    float *values; /* png_io_read_bands' result until it is handed over */
    char message[200];
};

/* libpng would print to stderr and abort; we keep its words for our one error line. */
static void on_error(png_structp png, png_const_charp msg)
{
    struct png_job *job = png_get_error_ptr(png);
    snprintf(job->message, sizeof job->message, "%s", msg);
    longjmp(png_jmpbuf(png), 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void job_free(struct png_job *job, bool reading)
{
    if (!job) return;
    if (job->png) {
        if (reading)
            png_destroy_read_struct(&job->png, job->info ? &job->info : NULL, NULL);
        else
            png_destroy_write_struct(&job->png, job->info ? &job->info : NULL);
    }
    free(job->pixels);
    free(job->rows);
    free(job->values);
    if (job->fp) fclose(job->fp);
    free(job);
}

bool png_io_is_png(const char *path)
{
    unsigned char sig[8];
    struct stat st;
    /* A stream's bytes read here would be gone for the real reader (image_open copies pipes). */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    FILE *fp = fopen(path, "rb");
    if (!fp) return false;
    bool is_png = fread(sig, 1, 8, fp) == 8 && png_sig_cmp(sig, 0, 8) == 0;
    fclose(fp);
    return is_png;
}

/* Row pointers into one pixel block, so png_read_image can handle interlacing itself. */
static int alloc_rows(struct png_job *job, size_t rowbytes, size_t ny)
{
    job->pixels = malloc(rowbytes * ny);
    job->rows = malloc(ny * sizeof *job->rows);
    if (!job->pixels || !job->rows) return -1;
    for (size_t y = 0; y < ny; y++)
        job->rows[y] = job->pixels + y * rowbytes;
    return 0;
}

/* A job reading path, its libpng structures made (the caller sets its own setjmp before any
 * libpng call that may fail). NULL with err on failure. */
static struct png_job *read_open(const char *path, char *err, size_t errlen)
{
    /* On the heap: what setjmp's frame holds must not change between setjmp and longjmp. */
    struct png_job *job = calloc(1, sizeof *job);
    if (!job || !(job->fp = fopen(path, "rb"))) {
        snprintf(err, errlen, "cannot open %s", path);
        job_free(job, true);
        return NULL;
    }
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, on_error, on_warning);
    if (job->png) job->info = png_create_info_struct(job->png);
    if (!job->png || !job->info) {
        snprintf(err, errlen, "out of memory reading %s", path);
        job_free(job, true);
        return NULL;
    }
    return job;
}

int png_io_read(const char *path, size_t max_bytes, struct tool_image *img, char *err,
                size_t errlen)
{
    memset(img, 0, sizeof *img);
    img->name = path;
    img->planes = 1;
    struct png_job *job = read_open(path, err, errlen);
    if (!job) goto fail;
    if (setjmp(png_jmpbuf(job->png))) {
        snprintf(err, errlen, "cannot read %s: %s", path, job->message);
        goto fail;
    }
    png_init_io(job->png, job->fp);
    png_read_info(job->png, job->info);
    png_uint_32 width = png_get_image_width(job->png, job->info);
    png_uint_32 height = png_get_image_height(job->png, job->info);
    int color = png_get_color_type(job->png, job->info);
    int depth = png_get_bit_depth(job->png, job->info);
    if (color & (PNG_COLOR_MASK_COLOR | PNG_COLOR_MASK_PALETTE)) {
        snprintf(err, errlen,
                 "%s is a colour PNG; madfilter reads greyscale only (convert it "
                 "first)",
                 path);
        goto fail;
    }
    if (depth < 8) png_set_expand_gray_1_2_4_to_8(job->png);
    if (png_get_valid(job->png, job->info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(job->png);
    png_set_interlace_handling(job->png);
    png_read_update_info(job->png, job->info);

    const size_t nx = width, ny = height;
    const int channels = png_get_channels(job->png, job->info); /* grey, or grey + alpha */
    const int bytes = png_get_bit_depth(job->png, job->info) == 16 ? 2 : 1;
    /* Checked before allocating: a header may claim any size, whatever the file holds. */
    const size_t rowbytes = png_get_rowbytes(job->png, job->info);
    if (ny > 0 && (rowbytes + nx * sizeof(float)) > max_bytes / ny) {
        snprintf(err, errlen,
                 "%s is a %zu x %zu PNG: read whole it needs %zu MiB, more than the memory cap "
                 "of %zu MiB (--max-memory)",
                 path, nx, ny, ((rowbytes + nx * sizeof(float)) * ny) >> 20, max_bytes >> 20);
        goto fail;
    }
    if (alloc_rows(job, rowbytes, ny) != 0 || !(img->data = malloc(nx * ny * sizeof *img->data))) {
        snprintf(err, errlen, "out of memory for a %zu x %zu image", nx, ny);
        goto fail;
    }
    png_read_image(job->png, job->rows);
    png_read_end(job->png, NULL);

    for (size_t y = 0; y < ny; y++) {
        /* PNG rows run top to bottom, FITS rows bottom to top. */
        const unsigned char *row = job->rows[ny - 1 - y];
        for (size_t x = 0; x < nx; x++) {
            const unsigned char *s = row + x * (size_t)(channels * bytes);
            unsigned grey = bytes == 2 ? (unsigned)s[0] << 8 | s[1] : s[0];
            unsigned alpha = channels == 2 ? (bytes == 2 ? (unsigned)s[2] << 8 | s[3] : s[1]) : 1;
            float v = alpha == 0 ? NAN : (float)grey;
            img->data[y * nx + x] = v;
        }
    }
    img->nx = nx;
    img->ny = ny;
    job_free(job, true);
    return 0;

fail:
    job_free(job, true);
    image_close(img);
    return -1;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The 0.5th and 99.5th percentiles of the finite values (nearest rank); false if there are none. */
static bool display_range(const float *data, size_t n, double *lo, double *hi)
{
    float *finite = malloc((n ? n : 1) * sizeof *finite);
    size_t m = 0;
    if (!finite) return false;
    for (size_t i = 0; i < n; i++)
        if (isfinite(data[i])) finite[m++] = data[i];
    if (m > 0) {
        qsort(finite, m, sizeof *finite, compare_floats);
        *lo = finite[(size_t)floor(0.005 * (double)(m - 1) + 0.5)];
        *hi = finite[(size_t)floor(0.995 * (double)(m - 1) + 0.5)];
    }
    free(finite);
    return m > 0;
}

static unsigned grey_level(float v, double lo, double hi)
{
    if (isnan(v)) return 0;
    if (!(hi > lo)) return 32768; /* a flat map: mid-grey */
    double g = 1.0 + (v - lo) / (hi - lo) * 65534.0;
    if (!(g > 1.0)) return 1; /* also -inf */
    if (g >= 65535.0) return 65535;
    return (unsigned)lround(g);
}

/* libpng's own writer says only "Write Error": this one keeps the system's reason. */
/* A job writing path (shown names it in errors), its libpng structures made and ny rows of
 * rowbytes allocated. NULL with err on failure. */
static struct png_job *write_open(const char *path, const char *shown, size_t rowbytes,
                                  size_t ny, char *err, size_t errlen)
{
    /* On the heap: what setjmp's frame holds must not change between setjmp and longjmp. */
    struct png_job *job = calloc(1, sizeof *job);
    if (!job || !(job->fp = fopen(path, "wb"))) {
        snprintf(err, errlen, "cannot create %s: %s", shown, strerror(errno));
        job_free(job, false);
        return NULL;
    }
    job->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, job, on_error, on_warning);
    if (job->png) job->info = png_create_info_struct(job->png);
    if (!job->png || !job->info || alloc_rows(job, rowbytes, ny) != 0) {
        snprintf(err, errlen, "out of memory writing %s", shown);
        job_free(job, false);
        return NULL;
    }
    return job;
}

static void write_data(png_structp png, png_bytep data, size_t length)
{
    struct png_job *job = png_get_io_ptr(png);
    if (fwrite(data, 1, length, job->fp) != length) png_error(png, strerror(errno));
}

static void flush_data(png_structp png)
{
    struct png_job *job = png_get_io_ptr(png);
    if (fflush(job->fp) != 0) png_error(png, strerror(errno));
}

/* The text chunks, the header and the rows written and the file closed, inside the caller's
 * setjmp (libpng's errors jump there). Returns 0, or -1 with err when the file could not be
 * written whole. */
static int write_out(struct png_job *job, png_text *text, int n_text, const char *shown,
                     char *err, size_t errlen)
{
    png_set_text(job->png, job->info, text, n_text);
    png_write_info(job->png, job->info);
    png_write_image(job->png, job->rows);
    png_write_end(job->png, NULL);
    /* A full disk may only show when the last buffer goes out. */
    errno = 0;
    const int write_failed = ferror(job->fp) | fclose(job->fp);
    job->fp = NULL;
    if (write_failed) {
        snprintf(err, errlen, "cannot write %s: %s", shown,
                 errno ? strerror(errno) : "write error");
        return -1;
    }
    return 0;
}

int png_io_write(const char *path, const char *shown, const float *data, size_t nx, size_t ny,
                 const char *description, char *err, size_t errlen)
{
    struct png_job *job = NULL;
    double lo = 0, hi = 0;
    char range[160];
    if (nx > 0x7fffffff / 2 || ny > 0x7fffffff) {
        snprintf(err, errlen, "a %zu x %zu image is too large for PNG", nx, ny);
        return -1;
    }
    if (!display_range(data, nx * ny, &lo, &hi))
        snprintf(range, sizeof range, "no finite values: all black");
    else
        snprintf(range, sizeof range,
                 "grey 1..65535 = %.9g..%.9g (0.5th..99.5th percentile), linear; 0 = NaN", lo, hi);

    if (!(job = write_open(path, shown, nx * 2, ny, err, errlen))) goto fail;
    for (size_t y = 0; y < ny; y++) {
        unsigned char *row = job->rows[ny - 1 - y];
        for (size_t x = 0; x < nx; x++) {
            unsigned g = grey_level(data[y * nx + x], lo, hi);
            row[2 * x] = (unsigned char)(g >> 8);
            row[2 * x + 1] = (unsigned char)(g & 0xff);
        }
    }
    if (setjmp(png_jmpbuf(job->png))) {
        snprintf(err, errlen, "cannot write %s: %s", shown, job->message);
        goto fail;
    }
    png_set_write_fn(job->png, job, write_data, flush_data);
    png_set_IHDR(job->png, job->info, (png_uint_32)nx, (png_uint_32)ny, 16, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_text text[3];
    memset(text, 0, sizeof text);
    text[0].compression = text[1].compression = text[2].compression = PNG_TEXT_COMPRESSION_NONE;
    text[0].key = "Software";
    text[0].text = "madfilter " CLSTATS_VERSION " (libclstats)";
    text[1].key = "Description";
    text[1].text = (char *)description;
    text[2].key = "Comment";
    text[2].text = range;
    if (write_out(job, text, 3, shown, err, errlen) != 0) goto fail;
    job_free(job, false);
    return 0;

fail:
    job_free(job, false);
    return -1;
}

int png_io_read_bands(const char *path, size_t max_bytes, size_t *nx_out, size_t *ny_out,
                      int *bands_out, int *depth_out, float **data_out, char *err,
                      size_t errlen)
{
    *data_out = NULL;
    struct png_job *job = read_open(path, err, errlen);
    if (!job) return -1;
    if (setjmp(png_jmpbuf(job->png))) {
        snprintf(err, errlen, "cannot read %s: %s", path, job->message);
        goto fail;
    }
    png_init_io(job->png, job->fp);
    png_read_info(job->png, job->info);
    const png_uint_32 width = png_get_image_width(job->png, job->info);
    const png_uint_32 height = png_get_image_height(job->png, job->info);
    const int color = png_get_color_type(job->png, job->info);
    /* A palette becomes its RGB colours; low depths and tRNS become 8 bits and alpha. */
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(job->png);
    if (png_get_bit_depth(job->png, job->info) < 8) png_set_expand_gray_1_2_4_to_8(job->png);
    if (png_get_valid(job->png, job->info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(job->png);
    png_set_interlace_handling(job->png);
    png_read_update_info(job->png, job->info);
    const size_t nx = width, ny = height;
    const int channels = png_get_channels(job->png, job->info);
    const int bytes = png_get_bit_depth(job->png, job->info) == 16 ? 2 : 1;
    const bool alpha = channels == 2 || channels == 4;
    const int bands = alpha ? channels - 1 : channels;
    const size_t rowbytes = png_get_rowbytes(job->png, job->info);
    if (ny > 0 && rowbytes + nx * bands * sizeof(float) > max_bytes / ny) {
        snprintf(err, errlen, "%s is a %zu x %zu PNG: read whole it needs more than %zu MiB",
                 path, nx, ny, max_bytes >> 20);
        goto fail;
    }
    if (alloc_rows(job, rowbytes, ny) != 0 ||
        !(job->values = malloc(nx * ny * bands * sizeof *job->values))) {
        snprintf(err, errlen, "out of memory for a %zu x %zu image", nx, ny);
        goto fail;
    }
    png_read_image(job->png, job->rows);
    png_read_end(job->png, NULL);
    float *data = job->values;
    for (size_t y = 0; y < ny; y++) {
        const unsigned char *row = job->rows[ny - 1 - y]; /* PNG top row = last FITS row */
        for (size_t x = 0; x < nx; x++) {
            const unsigned char *s = row + x * (size_t)(channels * bytes);
            const size_t p = (y * nx + x) * bands;
            unsigned level[4];
            for (int c = 0; c < channels; c++)
                level[c] = bytes == 2 ? (unsigned)s[2 * c] << 8 | s[2 * c + 1] : s[c];
            const bool hidden = alpha && level[channels - 1] == 0;
            for (int b = 0; b < bands; b++)
                data[p + b] = hidden ? NAN : (float)level[b];
        }
    }
    *nx_out = nx, *ny_out = ny, *bands_out = bands, *depth_out = 8 * bytes, *data_out = data;
    job->values = NULL;
    job_free(job, true);
    return 0;
fail:
    job_free(job, true);
    return -1;
}

int png_io_write_palette(const char *path, const char *shown, const int32_t *labels, size_t nx,
                         size_t ny, const unsigned char (*colours)[3], int n_colours,
                         const char *description, char *err, size_t errlen)
{
    struct png_job *job = NULL;
    if (nx > 0x7fffffff || ny > 0x7fffffff || n_colours < 1 || n_colours > 255) {
        snprintf(err, errlen, "a %zu x %zu image of %d classes does not fit a palette PNG", nx,
                 ny, n_colours);
        return -1;
    }
    if (!(job = write_open(path, shown, nx ? nx : 1, ny, err, errlen))) goto fail;
    /* Index i is class i; index n_colours, black and transparent, is a pixel without a class. */
    for (size_t y = 0; y < ny; y++) {
        unsigned char *row = job->rows[ny - 1 - y];
        for (size_t x = 0; x < nx; x++) {
            const int32_t l = labels[y * nx + x];
            row[x] = (unsigned char)(l >= 0 && l < n_colours ? l : n_colours);
        }
    }
    png_color palette[256];
    png_byte opacity[256];
    for (int i = 0; i <= n_colours; i++) {
        palette[i].red = i < n_colours ? colours[i][0] : 0;
        palette[i].green = i < n_colours ? colours[i][1] : 0;
        palette[i].blue = i < n_colours ? colours[i][2] : 0;
        opacity[i] = i < n_colours ? 255 : 0;
    }
    if (setjmp(png_jmpbuf(job->png))) {
        snprintf(err, errlen, "cannot write %s: %s", shown, job->message);
        goto fail;
    }
    png_set_write_fn(job->png, job, write_data, flush_data);
    png_set_IHDR(job->png, job->info, (png_uint_32)nx, (png_uint_32)ny, 8, PNG_COLOR_TYPE_PALETTE,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_PLTE(job->png, job->info, palette, n_colours + 1);
    png_set_tRNS(job->png, job->info, opacity, n_colours + 1, NULL);
    png_text text[2];
    memset(text, 0, sizeof text);
    text[0].compression = text[1].compression = PNG_TEXT_COMPRESSION_NONE;
    text[0].key = "Software";
    text[0].text = "libclstats " CLSTATS_VERSION;
    text[1].key = "Description";
    text[1].text = (char *)description;
    if (write_out(job, text, 2, shown, err, errlen) != 0) goto fail;
    job_free(job, false);
    return 0;
fail:
    job_free(job, false);
    return -1;
}
