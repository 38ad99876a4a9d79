/* madfilter.c - the madfilter command: reads FITS or PNG images, computes sliding-window median
 * and MAD maps with libclstats (plus SIGMA and SNR on the host) a strip of rows at a time, and
 * writes them as FITS and/or PNG. Several inputs share one context and its compiled programs; a
 * failed input is reported by name and the rest go on. This file only orchestrates: options.c
 * parses, outputs.c names the outputs, the library plans and filters the strips
 * (clstats_filter_rows), apps/common does the files. */
#include "atomic_file.h"
#include "clstats.h"
#include "fits_io.h"
#include "keywords.h"
#include "maps.h"
#include "mpi_run.h"
#include "options.h"
#include "outputs.h"
#include "paths.h"
#include "png_io.h"
#include "program_context.h"
#include "timeline.h"
#include "warm.h"
#include "window.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Progress of a single input only for runs long enough to wonder about. */
#define PROGRESS_AFTER_S 1.0

/* What every input shares. */
struct session {
    struct options opt;
    clstats_ctx *ctx; /* created for the first input that gets that far, kept for all */
    struct pending_context pending; /* the context, made while the first input is read */
    struct warm_request warm;       /* the first input's filter, prepared on that thread */
    uint64_t device_bytes, device_max_alloc;
    bool is_gpu;
    /* The device given back on a thread of its own once the last strip is filtered, while the
     * maps are written (release_device). */
    pthread_t releaser;
    bool releasing;
    bool show_progress; /* stderr is a terminal and not --quiet */
    int index, count;   /* the input in hand, of how many */
    struct output_names outputs;
    struct window window; /* --footprint's cells, loaded once */
};

/* One input and its outputs. */
struct job {
    struct session *s;
    const char *input, *output, *png_output; /* output NULL when only --png */
    bool png_only;                           /* OUTPUT itself ends in .png */
    bool to_stdout; /* OUTPUT "-": written to a temporary file, then copied to stdout */
    bool f64;       /* filtered in float64: a BITPIX -64, 32 or 64 image (image_is_wide) */
    struct tool_image image;
    struct missing missing; /* --mask and --valid-range */
    struct atomic_file out_file, preview_file;
    struct fits_output *fits;
    float *png_map; /* the first map whole, for a PNG */
    char err[1024]; /* the reader's or writer's words when it stopped the filter */
    bool prefilled; /* the FITS output's temporary made and filled with zeros (prefill_output) */
    size_t n_nan, n_strips, height;
    double start;
    int progress_len; /* characters of the progress line on screen; 0: none shown */
};

/* The input that error lines are about, when there are several. */
static const char *error_subject;

static int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("madfilter: ", stderr);
    if (error_subject) fprintf(stderr, "%s: ", error_subject);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_RUNTIME;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int list_devices(void)
{
    struct clstats_device_info info[64];
    size_t count = 0;
    int status = clstats_list_devices(info, 64, &count);
    if (status != CLSTATS_OK)
        return error("%s: %s", clstats_strerror(status), clstats_ctx_message(NULL));
    for (size_t i = 0; i < count && i < 64; i++)
        printf("%d:%d  %-5s %s / %s  %s\n", info[i].platform_index, info[i].device_index,
               info[i].type, info[i].platform_name, info[i].device_name, info[i].version);
    return EXIT_OK;
}

/* The library's message may be a build log: its first line goes on our error line, the rest
 * (the compiler's words, needed for a bug report) follows indented. */
static int library_error(const char *doing, int status, const char *message)
{
    const char *nl = strchr(message, '\n');
    int len = nl ? (int)(nl - message) : (int)strlen(message);
    error("%s%s%s: %.*s", doing, doing[0] ? ": " : "", clstats_strerror(status), len, message);
    for (const char *p = nl; p && p[1];) {
        const char *next = strchr(p + 1, '\n');
        int n = next ? (int)(next - p - 1) : (int)strlen(p + 1);
        if (n > 0) fprintf(stderr, "    %.*s\n", n, p + 1);
        p = next;
    }
    return EXIT_RUNTIME;
}

/* ---- Progress ------------------------------------------------------------------------------ */

static void clear_progress(struct job *j)
{
    if (j->progress_len == 0) return;
    fprintf(stderr, "\r%*s\r", j->progress_len, "");
    j->progress_len = 0;
}

static void on_progress(void *user, double fraction)
{
    struct job *j = user;
    const struct session *s = j->s;
    if (!s->outputs.batch && j->progress_len == 0 && now() - j->start < PROGRESS_AFTER_S) return;
    int len;
    if (s->outputs.batch)
        len = fprintf(stderr, "\rmadfilter: [%d/%d] %s %3.0f%%", s->index + 1, s->count, j->input,
                      100.0 * fraction);
    else
        len = fprintf(stderr, "\rmadfilter: filtering %3.0f%%", 100.0 * fraction);
    fflush(stderr);
    if (len > j->progress_len) j->progress_len = len - 1; /* less the \r */
}

static void on_notice(void *user, const char *text)
{
    struct job *j = user;
    if (j->s->opt.quiet) return;
    clear_progress(j);
    error("%s", text);
}

/* ---- One input ----------------------------------------------------------------------------- */

/* Checks that need no computation, so a long run cannot fail at its very end for them. Whether
 * an output is an input of the run was settled by outputs_plan before any input was read. */
static int check_outputs(struct job *j)
{
    const struct options *o = &j->s->opt;
    char err[512];
    struct stat st;
    const char *outs[2] = {j->to_stdout ? NULL : j->output, j->png_output};
    if (j->to_stdout && isatty(STDOUT_FILENO))
        return error("standard output is a terminal: redirect it to a file or a pipe for FITS");
    for (int i = 0; i < 2; i++) {
        if (!outs[i] || lstat(outs[i], &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) return error("output %s is a directory", outs[i]);
        if (atomic_check_destination(outs[i], err, sizeof err) != 0) return error("%s", err);
        if (!o->overwrite) return error("%s exists (use --overwrite to replace it)", outs[i]);
    }
    /* Standard output's FITS is made whole in $TMPDIR first: stdout gets all of it or nothing. */
    char spool[4096];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(spool, sizeof spool, "%s/madfilter-stdout.fits", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (j->output &&
        atomic_begin(&j->out_file, j->to_stdout ? spool : j->output, err, sizeof err) != 0)
        return error("%s", err);
    if (j->png_output && atomic_begin(&j->preview_file, j->png_output, err, sizeof err) != 0)
        return error("%s", err);
    return EXIT_OK;
}

static int open_input(struct job *j)
{
    char err[1024];
    const struct options *o = &j->s->opt;
    if (image_open(j->input, o->refuse_cubes ? SHAPE_NO_CUBES : SHAPE_PLANES, o->max_memory,
                   &j->image, err, sizeof err) != 0)
        return error("%s", err);
    if (j->image.notice[0] && !o->quiet) error("note: %s", j->image.notice);
    if (missing_open(&j->missing, o, &j->image, err, sizeof err) != EXIT_OK)
        return error("%s", err);
    j->f64 = image_is_wide(&j->image);
    if (j->image.planes > 1 && (j->png_only || j->png_output))
        return error("%s is a cube of %zu planes and a PNG holds one: write FITS, or select a "
                     "plane, e.g. 'cube.fits[*,*,1:1]'",
                     j->input, j->image.planes);
    return EXIT_OK;
}

static void print_library_log(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "clstats: %s\n", line);
}

/* The context, created once for all inputs. Returns EXIT_OK, or EXIT_RUNTIME after its line. */
static int ensure_context(struct session *s)
{
    if (s->ctx) return EXIT_OK;
    int status = program_context_finish(&s->pending, &s->ctx);
    timeline_mark("context made and the filter prepared");
    if (status != CLSTATS_OK) return library_error("", status, s->pending.message);
    if (timeline_on()) clstats_ctx_set_log(s->ctx, print_library_log, NULL);
    struct clstats_device_limits limits;
    clstats_ctx_limits(s->ctx, &limits);
    /* Half: the device may have other users, and the runtime needs room of its own. */
    s->device_bytes = limits.global_memory / 2;
    s->device_max_alloc = limits.max_allocation;
    s->is_gpu = !limits.is_cpu;
    return EXIT_OK;
}

static bool wants(const struct options *o, enum map_kind k)
{
    for (int i = 0; i < o->n_maps; i++)
        if (o->maps[i] == k) return true;
    return false;
}

/* The maps madfilter asks the library for (CLSTATS_MAP_*). */
static unsigned library_maps(const struct options *o)
{
    static const unsigned bits[MAP_KINDS] = {[MAP_MAD] = CLSTATS_MAP_MAD,
                                             [MAP_MEDIAN] = CLSTATS_MAP_MEDIAN,
                                             [MAP_SIGMA] = CLSTATS_MAP_SIGMA,
                                             [MAP_SNR] = CLSTATS_MAP_SNR,
                                             [MAP_RESIDUAL] = CLSTATS_MAP_RESIDUAL};
    unsigned maps = 0;
    for (int i = 0; i < o->n_maps; i++)
        maps |= bits[o->maps[i]];
    return maps;
}

/* Strip height within --max-memory and the device (the library plans it), and the first map
 * whole when a PNG is written. */
static int plan_strips(struct job *j)
{
    const struct options *o = &j->s->opt;
    const size_t nx = j->image.nx, ny = j->image.ny;
    const uint64_t whole = (uint64_t)nx * ny * sizeof(float);
    const bool png_out = j->png_only || j->png_output;
    /* Held whole beside the strips: a PNG input's pixels, a PNG output's map. */
    const uint64_t held = (j->image.data ? whole : 0) + (png_out ? whole : 0);
    if (png_out && (uint64_t)nx * ny * PNG_WRITE_BYTES_PER_PIXEL > o->max_memory)
        return error("a PNG of %zu x %zu pixels is made whole in memory and needs %llu MiB, more "
                     "than the memory cap of %llu MiB (--max-memory)",
                     nx, ny,
                     (unsigned long long)((uint64_t)nx * ny * PNG_WRITE_BYTES_PER_PIXEL >> 20),
                     (unsigned long long)(o->max_memory >> 20));
    const uint64_t host_bytes = o->max_memory > held ? o->max_memory - held : 0;
    const struct clstats_filter_params p = window_params(o, &j->s->window);
    int rows;
    clstats_filter_window(&p, NULL, &rows, NULL, NULL);
    const int status = (j->f64 ? clstats_filter_strip_height_f64 : clstats_filter_strip_height)(
        j->s->ctx, nx, ny, rows, library_maps(o), host_bytes, &j->height);
    const char *why = clstats_ctx_message(j->s->ctx), *host = strstr(why, " MiB of host memory");
    /* The host memory the library was given is what --max-memory leaves: say it so. */
    if (status == CLSTATS_ERR_NOMEM && host)
        return error("the memory cap of %.*s MiB (--max-memory)%s", (int)(host - why), why,
                     host + strlen(" MiB of host memory"));
    if (status != CLSTATS_OK) return error("%s", why);
    if (png_out && !(j->png_map = malloc(whole)))
        return error("out of memory for a PNG of %zu x %zu pixels", nx, ny);
    return EXIT_OK;
}

/* The maps' BITPIX: --bitpix, else float64 for an image filtered in float64. */
static int output_bitpix(const struct job *j)
{
    return j->s->opt.bitpix ? j->s->opt.bitpix : j->f64 ? -64 : -32;
}

static void history_lines(const struct job *j, char lines[][600], int *n)
{
    const struct options *o = &j->s->opt;
    int nh = 0;
    snprintf(lines[nh++], 600, "madfilter %s (libclstats): sliding-window robust statistics maps",
             CLSTATS_VERSION);
    char window[300];
    window_describe(o, &j->s->window, window, sizeof window);
    if (o->boundary == CLSTATS_BOUNDARY_CONSTANT)
        snprintf(lines[nh++], 600, "madfilter: %s, boundary constant, cval %.9g", window, o->cval);
    else
        snprintf(lines[nh++], 600, "madfilter: %s, boundary %s", window,
                 clstats_boundary_name(o->boundary));
    if (o->origin_x || o->origin_y || o->even != CLSTATS_EVEN_MEAN)
        snprintf(lines[nh++], 600, "madfilter: origin %d,%d, even counts take the %s", o->origin_x,
                 o->origin_y, even_names[o->even]);
    if (o->mask || o->valid_range)
        snprintf(lines[nh++], 600, "madfilter: missing also: %s%.300s%s%s", o->mask ? "mask " : "",
                 o->mask ? o->mask : "", o->mask && o->valid_range ? ", " : "",
                 o->valid_range ? "outside --valid-range" : "");
    char list[64] = "";
    for (int i = 0; i < o->n_maps; i++) {
        strcat(list, i ? "," : "");
        strcat(list, map_extname(o->maps[i]));
    }
    snprintf(lines[nh++], 600, "madfilter: maps %s (EXTNAME of each HDU), BITPIX %d", list,
             output_bitpix(j));
    if (j->f64)
        snprintf(lines[nh++], 600, "madfilter: filtered in float64 (input BITPIX %d)",
                 j->image.bitpix);
    if (j->image.cube)
        snprintf(lines[nh++], 600, "madfilter: each of the %zu planes filtered on its own",
                 j->image.planes);
    if (wants(o, MAP_SIGMA) || wants(o, MAP_SNR))
        snprintf(lines[nh++], 600,
                 "madfilter: SIGMA = 1.482602218505602 * MAD (astropy's mad_std constant)");
    if (wants(o, MAP_SNR))
        snprintf(lines[nh++], 600, "madfilter: SNR = (x - MEDIAN) / SIGMA, NaN where SIGMA = 0");
    if (wants(o, MAP_RESIDUAL))
        snprintf(lines[nh++], 600, "madfilter: RESIDUAL = x - MEDIAN");
    snprintf(lines[nh++], 600, "madfilter: device %.500s", clstats_ctx_device_name(j->s->ctx));
    snprintf(lines[nh++], 600, "madfilter: input %.500s", j->input);
    *n = nh;
}

static int create_fits_output(struct job *j)
{
    const struct options *o = &j->s->opt;
    char err[1024], lines[13][600];
    const char *history[13];
    int nh = 0;
    history_lines(j, lines, &nh);
    for (int i = 0; i < nh; i++)
        history[i] = lines[i];
    struct fits_map maps[MAP_KINDS];
    for (int i = 0; i < o->n_maps; i++) {
        maps[i].extname = map_extname(o->maps[i]);
        maps[i].comment = map_description(o->maps[i]);
        maps[i].unitless = o->maps[i] == MAP_SNR;
    }
    struct keyword_text text;
    struct fits_key keys[MADFILTER_KEYS];
    const struct fits_output_format format = {
        .bitpix = output_bitpix(j),
        .prefilled = j->prefilled,
        .keys = keys,
        .n_keys = keywords_make(o, &j->s->window, clstats_ctx_device_name(j->s->ctx), &text, keys)};
    /* One late line: the count of missing pixels, known once every strip is read. */
    if (fits_output_create(&j->fits, j->out_file.tmp_path, j->out_file.scratch_path, &j->image,
                           maps, o->n_maps, &format, history, nh, 1, err, sizeof err) != 0)
        return error("%s: %s", j->output, err);
    return EXIT_OK;
}

static bool context_ready(void *arg)
{
    return program_context_ready(arg);
}

/* While the context is still being made, the FITS output's pages are filled with zeros, so that
 * writing the maps later is a copy over pages the page cache holds (bench/RESULTS.md): only
 * for an input whose pixels are all in a disk file (so that the zeros never exceed what the
 * input really holds), never for a compressed output. */
static void prefill_output(struct job *j)
{
    const struct tool_image *im = &j->image;
    struct stat st;
    if (!j->output || j->png_only || fits_output_is_gzip(j->output) || !im->direct ||
        fstat(im->direct_fd, &st) != 0)
        return;
    const uint64_t input = (uint64_t)im->nx * im->ny * im->planes *
                           (uint64_t)(im->bitpix < 0 ? -im->bitpix : im->bitpix) / 8;
    if ((uint64_t)st.st_size < im->direct_offset + input) return;
    const uint64_t bytes =
        fits_output_data_size(im->nx, im->ny, im->planes, j->s->opt.n_maps, output_bitpix(j));
    if (fits_output_prefill(j->out_file.tmp_path, bytes, context_ready, &j->s->pending) != 0)
        return;
    j->prefilled = true;
    timeline_mark("output's pages filled with zeros ahead");
}

/* The library's source of rows: the input's, keeping cfitsio's words for the error line. */
static int read_rows(void *user, size_t plane, size_t row0, size_t rows, float *dst)
{
    struct job *j = user;
    if (image_read_rows(&j->image, plane, row0, rows, dst, j->err, sizeof j->err) != 0) return -1;
    timeline_mark("rows read");
    return missing_apply(&j->missing, &j->s->opt, plane, row0, rows, j->image.nx, dst, j->err,
                         sizeof j->err);
}

static int read_rows_f64(void *user, size_t plane, size_t row0, size_t rows, double *dst)
{
    struct job *j = user;
    if (image_read_rows_f64(&j->image, plane, row0, rows, dst, j->err, sizeof j->err) != 0)
        return -1;
    return missing_apply_f64(&j->missing, &j->s->opt, plane, row0, rows, j->image.nx, dst, j->err,
                             sizeof j->err);
}

static void *release_device_now(void *arg)
{
    clstats_ctx_release_device(arg);
    timeline_mark("device released");
    return NULL;
}

/* After the last strip of the last input the device is not needed again: a GPU driver's
 * teardown (a tenth of a second on the H100, which the process's exit would otherwise wait for)
 * runs on a thread while the maps are written. A CPU device's costs little, and its cores are
 * the writer's, so it keeps its context to the end. MADFILTER_EARLY_RELEASE=1 gives back any
 * device so (the suites' way to this path without a GPU), =0 none (for comparisons). */
static void release_device(struct job *j, const struct clstats_strip *st)
{
    struct session *s = j->s;
    const char *asked = getenv("MADFILTER_EARLY_RELEASE");
    const bool wanted = asked && *asked ? strcmp(asked, "0") != 0 : s->is_gpu;
    if (!wanted || s->releasing || mpi_ranks() > 1 || s->index != s->count - 1 ||
        st->plane + 1 != j->image.planes || st->row0 + st->rows != j->image.ny)
        return;
    s->releasing = pthread_create(&s->releaser, NULL, release_device_now, s->ctx) == 0;
}

/* The library hands each finished strip here: FITS rows, and the PNG's map (a preview: a
 * float64 map is rounded to float32 there). */
static int take_strip(void *user, const struct clstats_strip *st)
{
    struct job *j = user;
    const struct options *o = &j->s->opt;
    const size_t n = st->rows * j->image.nx;
    timeline_mark("strip filtered");
    release_device(j, st);
    const float *data[MAP_KINDS] = {[MAP_MAD] = st->mad,
                                    [MAP_MEDIAN] = st->median,
                                    [MAP_SIGMA] = st->sigma,
                                    [MAP_SNR] = st->snr,
                                    [MAP_RESIDUAL] = st->residual};
    const double *data64[MAP_KINDS] = {[MAP_MAD] = st->mad_f64,
                                       [MAP_MEDIAN] = st->median_f64,
                                       [MAP_SIGMA] = st->sigma_f64,
                                       [MAP_SNR] = st->snr_f64,
                                       [MAP_RESIDUAL] = st->residual_f64};
    for (int i = 0; j->fits && i < o->n_maps; i++) {
        char why[512];
        const int rc = j->f64
                           ? fits_output_write_rows_f64(j->fits, i, st->plane, st->row0, st->rows,
                                                        data64[o->maps[i]], why, sizeof why)
                           : fits_output_write_rows(j->fits, i, st->plane, st->row0, st->rows,
                                                    data[o->maps[i]], why, sizeof why);
        if (rc != 0) {
            snprintf(j->err, sizeof j->err, "%s: %s", j->output, why);
            return -1;
        }
    }
    float *png = j->png_map ? j->png_map + st->row0 * j->image.nx : NULL;
    if (png && j->f64)
        for (size_t i = 0; i < n; i++)
            png[i] = (float)data64[o->maps[0]][i];
    else if (png)
        memcpy(png, data[o->maps[0]], n * sizeof(float));
    timeline_mark("strip written");
    return 0;
}

static int filter(struct job *j)
{
    const struct options *o = &j->s->opt;
    struct clstats_filter_params params = window_params(o, &j->s->window);
    params.progress = j->s->show_progress ? on_progress : NULL;
    params.progress_user = j;
    struct clstats_rows_job rj = {
        .nx = j->image.nx,
        .ny = j->image.ny,
        .planes = j->image.planes,
        .params = params,
        .maps = library_maps(o),
        .height = j->height,
        .read = j->f64 ? NULL : read_rows,
        .read_f64 = j->f64 ? read_rows_f64 : NULL,
        .write = take_strip,
        .notice = on_notice,
        .user = j,
    };
    if (mpi_ranks() > 1 && !j->s->outputs.batch) { /* one input, this rank's band (mpi_run.h) */
        mpi_band(j->image.ny, &rj.row_begin, &rj.row_end);
        mpi_strips_begin(j->image.nx, j->image.planes, j->f64);
        if (mpi_keeps_strips()) rj.write = mpi_keep_strip;
    }
    j->err[0] = '\0';
    const int status = clstats_filter_rows(j->s->ctx, &rj);
    clear_progress(j);
    j->n_nan = rj.n_nan;
    j->n_strips = rj.n_strips;
    j->height = rj.height;
    if (status == CLSTATS_OK) return EXIT_OK;
    if (status == CLSTATS_ERR_CALLBACK) return error("%s", j->err);
    if (status == CLSTATS_ERR_NOMEM) return error("%s", clstats_ctx_message(j->s->ctx));
    return library_error("filtering failed", status, clstats_ctx_message(j->s->ctx));
}

/* The finished FITS file to standard output. A failure here (a closed pipe, a full disk) can
 * leave part of it written: that is the only partial output stdout can get. */
static int copy_to_stdout(const char *path, char *err, size_t errlen)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        snprintf(err, errlen, "cannot read back the output: %s", strerror(errno));
        return -1;
    }
    static char buf[1 << 16];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, stdout) != n) rc = -1;
    if (rc == 0 && ferror(in)) {
        snprintf(err, errlen, "cannot read back the output: %s", strerror(errno));
        fclose(in);
        return -1;
    }
    fclose(in);
    if (rc != 0 || fflush(stdout) != 0) {
        snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int write_outputs(struct job *j)
{
    const struct options *o = &j->s->opt;
    char err[1024], nan_line[200];
    snprintf(nan_line, sizeof nan_line,
             "madfilter: NaN/BLANK pixels are missing data (%zu in the input)", j->n_nan);
    const char *late[1] = {nan_line};
    if (j->fits) {
        int rc = fits_output_finish(j->fits, late, 1, err, sizeof err);
        j->fits = NULL;
        if (rc != 0) return error("%s: %s", j->output, err);
    }
    /* A PNG is scaled from the whole map: the input's pixels are no longer needed. */
    image_close(&j->image);
    char description[600], window[300];
    window_describe(o, &j->s->window, window, sizeof window);
    snprintf(description, sizeof description, "%s map of %.200s, %s, boundary %s",
             map_extname(o->maps[0]), j->input, window, clstats_boundary_name(o->boundary));
    const size_t nx = j->image.nx, ny = j->image.ny;
    if (j->png_only && png_io_write(j->out_file.tmp_path, j->output, j->png_map, nx, ny,
                                    description, err, sizeof err) != 0)
        return error("%s", err);
    if (j->png_output && png_io_write(j->preview_file.tmp_path, j->png_output, j->png_map, nx, ny,
                                      description, err, sizeof err) != 0)
        return error("%s", err);

    /* Both outputs are complete before either is moved into place. */
    if (j->to_stdout && copy_to_stdout(j->out_file.tmp_path, err, sizeof err) != 0)
        return error("%s", err);
    if (j->to_stdout)
        atomic_abort(&j->out_file);
    else if (j->output && atomic_commit(&j->out_file, o->overwrite, err, sizeof err) != 0)
        return error("%s", err);
    if (j->png_output && atomic_commit(&j->preview_file, o->overwrite, err, sizeof err) != 0)
        return error("%s", err);
    return EXIT_OK;
}

static void summary(const struct job *j)
{
    const struct options *o = &j->s->opt;
    char list[64] = "", shape[80], strips[80] = "", window[300];
    for (int i = 0; i < o->n_maps; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, map_extname(o->maps[i]));
    }
    if (j->image.cube)
        snprintf(shape, sizeof shape, "%zu x %zu x %zu", j->image.nx, j->image.ny, j->image.planes);
    else
        snprintf(shape, sizeof shape, "%zu x %zu", j->image.nx, j->image.ny);
    if (o->footprint || o->width != o->height)
        window_describe(o, &j->s->window, window, sizeof window);
    else
        snprintf(window, sizeof window, "width %d", o->width);
    if (j->n_strips > j->image.planes)
        snprintf(strips, sizeof strips, ", %zu strips of up to %zu rows", j->n_strips, j->height);
    fprintf(stderr,
            "madfilter: wrote %s%s%s: %s of %s pixels (%zu missing), %s, %s%s, %.2f s on "
            "%s\n",
            j->output ? j->output : "", j->output && j->png_output ? " and " : "",
            j->png_output ? j->png_output : "", list, shape, j->n_nan, window,
            clstats_boundary_name(o->boundary), strips, now() - j->start,
            clstats_ctx_device_name(j->s->ctx));
}

/* Filters one input into its outputs. *fatal is set when no later input could do better (there
 * is no device). */
static int run_one(struct session *s, int i, bool *fatal)
{
    struct job j = {.s = s, .input = s->opt.inputs[i], .start = now()};
    /* One input over several ranks: rank 0 alone writes (mpi_run.h). */
    const bool writes = s->outputs.batch || mpi_leads();
    j.output = writes ? outputs_file(&s->outputs, i) : NULL;
    j.png_output = writes ? outputs_png(&s->outputs, i) : NULL;
    j.to_stdout = outputs_is_stdout(j.output);
    j.png_only = j.output && !j.to_stdout && path_has_suffix(j.output, ".png");
    error_subject = s->outputs.batch ? j.input : NULL;
    s->index = i;

    int rc = open_input(&j);
    timeline_mark("input opened");
    /* The context is made on a thread from here, not before: opening an input forks a probe
     * (fits_probe.c), and a child forked while another thread holds an allocator's lock waits
     * on it for ever (seen under AddressSanitizer while the thread loaded the OpenCL driver). */
    if (rc == EXIT_OK && !s->ctx && !s->pending.started)
        program_context_start(&s->pending, mpi_device(s->opt.device));
    if (rc == EXIT_OK && !s->ctx) {
        s->warm = (struct warm_request){.params = window_params(&s->opt, &s->window),
                                        .maps = library_maps(&s->opt),
                                        .f64 = j.f64};
        program_context_warm(&s->pending, warm_filter, &s->warm);
    }
    if (rc == EXIT_OK) rc = check_outputs(&j);
    if (rc == EXIT_OK && !s->ctx) prefill_output(&j);
    if (rc == EXIT_OK && (rc = ensure_context(s)) != EXIT_OK) *fatal = true;
    if (rc == EXIT_OK) rc = plan_strips(&j);
    if (rc == EXIT_OK && j.output && !j.png_only) rc = create_fits_output(&j);
    timeline_mark("strips planned and the output created");
    if (rc == EXIT_OK) rc = filter(&j);
    timeline_mark("filtered and written");
    if (!s->outputs.batch && mpi_ranks() > 1) {
        const int before = rc;
        rc = mpi_gather_strips(rc, take_strip, &j, &j.n_nan, &j.n_strips);
        if (before == EXIT_OK && rc != EXIT_OK && j.err[0]) error("%s", j.err);
    }
    if (rc == EXIT_OK && writes) rc = write_outputs(&j);
    timeline_mark("outputs finished and in place");
    if (rc == EXIT_OK && writes && !s->opt.quiet) summary(&j);

    fits_output_abort(j.fits);
    atomic_abort(&j.out_file);
    atomic_abort(&j.preview_file);
    missing_close(&j.missing);
    image_close(&j.image);
    free(j.png_map);
    error_subject = NULL;
    return rc;
}

static int run_all(struct session *s)
{
    const struct options *o = &s->opt;
    int rc = outputs_plan(o, &s->outputs);
    if (rc != EXIT_OK) return rc;
    char err[1024];
    if (window_load(o, o->max_memory, &s->window, err, sizeof err) != EXIT_OK)
        return error("%s", err);
    s->count = o->n_inputs;
    s->show_progress = !o->quiet && isatty(STDERR_FILENO);
    int failed = 0;
    bool fatal = false;
    const double start = now();
    if (s->outputs.batch) mpi_share_inputs(o->inputs, o->n_inputs);
    for (int i = 0; i < o->n_inputs && !fatal; i++) {
        if (s->outputs.batch && !mpi_takes(i)) continue;
        rc = run_one(s, i, &fatal);
        if (rc != EXIT_OK) failed++;
    }
    if (!s->outputs.batch) return rc;
    failed = mpi_batch_end(failed, &fatal, o->n_inputs, now() - start);
    if (!mpi_leads())
        ; /* rank 0 speaks for all */
    else if (fatal && o->n_inputs > 1)
        error("stopped: no input can be filtered without a device");
    else if (failed && mpi_ranks() == 1)
        error("%d of %d inputs failed", failed, o->n_inputs);
    return failed ? EXIT_RUNTIME : EXIT_OK;
}

int main(int argc, char **argv)
{
    timeline_start();
    mpi_start(&argc, &argv);
    struct session s;
    memset(&s, 0, sizeof s);
    int rc = options_parse(argc, argv, &s.opt);
    if (rc == EXIT_OK && s.opt.help)
        options_print_help(stdout);
    else if (rc == EXIT_OK && s.opt.version)
        printf("madfilter %s (libclstats %s)\n", CLSTATS_VERSION, CLSTATS_VERSION);
    else if (rc == EXIT_OK && s.opt.list_devices)
        rc = list_devices();
    else if (rc == EXIT_OK)
        rc = run_all(&s);
    if (s.pending.started && program_context_finish(&s.pending, &s.ctx) != CLSTATS_OK)
        s.ctx = NULL; /* no input got as far as the device: its failure is not reported */
    if (s.releasing) pthread_join(s.releaser, NULL);
    timeline_mark("device given back");
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    /* Every output is complete, closed and in place: the process ends without tearing the
     * context down, which a GPU driver takes longer to do (a sixth of a second on the H100,
     * bench/RESULTS.md) than the operating system takes to reclaim it. Sanitizer builds tear
     * down, so that their leak checks see the program's own memory. */
    if (s.ctx) {
        rc = mpi_finish(rc);
        timeline_mark("exit");
        fflush(NULL);
        _exit(rc);
    }
#endif
    clstats_ctx_destroy(s.ctx);
    outputs_free(&s.outputs);
    window_free(&s.window);
    options_free(&s.opt);
    return mpi_finish(rc);
}
