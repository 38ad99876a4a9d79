/* madfilter.c - the madfilter command: reads a FITS or PNG image, computes sliding-window median
 * and MAD maps with libclstats (plus SIGMA and SNR on the host) and writes them as FITS and/or PNG.
 * This file only orchestrates: options.c parses, fits_io.c / png_io.c do the files. */
#include "atomic_file.h"
#include "clstats.h"
#include "fits_io.h"
#include "maps.h"
#include "options.h"
#include "png_io.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Progress only for runs long enough to wonder about. */
#define PROGRESS_AFTER_S 1.0

struct run {
    struct options opt;
    struct tool_image image;
    float *median, *mad, *derived[MAP_KINDS];
    clstats_ctx *ctx;
    struct atomic_file out_file, preview_file; /* OUTPUT, --png */
    bool png_only;                             /* OUTPUT itself ends in .png */
    double start;
    bool progress_shown;
};

static int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("madfilter: ", stderr);
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

static bool ends_with_nocase(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
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

static void on_progress(void *user, double fraction)
{
    struct run *r = user;
    if (!r->progress_shown && now() - r->start < PROGRESS_AFTER_S) return;
    fprintf(stderr, "\rmadfilter: filtering %3.0f%%", 100.0 * fraction);
    fflush(stderr);
    r->progress_shown = true;
}

/* Checks that need no computation, so a long run cannot fail at its very end for them. */
static int check_outputs(struct run *r)
{
    const struct options *o = &r->opt;
    char err[512];
    char in_root[4096] = "";
    struct stat in_st, st;
    if (png_io_is_png(o->input))
        snprintf(in_root, sizeof in_root, "%s", o->input);
    else
        fits_io_rootname(o->input, in_root, sizeof in_root);
    bool have_in = in_root[0] && stat(in_root, &in_st) == 0;

    const char *outs[2] = {o->output, o->png_output};
    for (int i = 0; i < 2; i++) {
        if (!outs[i]) continue;
        if (stat(outs[i], &st) == 0) {
            if (have_in && st.st_dev == in_st.st_dev && st.st_ino == in_st.st_ino)
                return error("output %s is the input file; choose another name", outs[i]);
            if (S_ISDIR(st.st_mode)) return error("output %s is a directory", outs[i]);
            if (!o->overwrite) return error("%s exists (use --overwrite to replace it)", outs[i]);
        }
    }
    if (o->output && o->png_output && strcmp(o->output, o->png_output) == 0)
        return error("--png names the same file as OUTPUT");
    if (o->output && atomic_begin(&r->out_file, o->output, err, sizeof err) != 0)
        return error("%s", err);
    if (o->png_output && atomic_begin(&r->preview_file, o->png_output, err, sizeof err) != 0)
        return error("%s", err);
    return EXIT_OK;
}

static int read_input(struct run *r)
{
    char err[1024];
    const char *in = r->opt.input;
    int rc = png_io_is_png(in) ? png_io_read(in, &r->image, err, sizeof err)
                               : fits_io_read(in, &r->image, err, sizeof err);
    return rc == 0 ? EXIT_OK : error("%s", err);
}

static int compute(struct run *r)
{
    const struct options *o = &r->opt;
    const size_t n = r->image.nx * r->image.ny;
    int status = clstats_ctx_create(&r->ctx, o->device);
    if (status != CLSTATS_OK) return library_error("", status, clstats_ctx_message(NULL));

    if (maps_need_median(o->maps, o->n_maps) && !(r->median = malloc(n * sizeof(float))))
        return error("out of memory for a %zu x %zu map", r->image.nx, r->image.ny);
    if (maps_need_mad(o->maps, o->n_maps) && !(r->mad = malloc(n * sizeof(float))))
        return error("out of memory for a %zu x %zu map", r->image.nx, r->image.ny);

    struct clstats_filter_params p = {
        .width = o->width,
        .boundary = o->boundary,
        .cval = o->cval,
        .progress = (!o->quiet && isatty(STDERR_FILENO)) ? on_progress : NULL,
        .progress_user = r,
    };
    status = clstats_median_filter(r->ctx, r->image.data, r->image.nx, r->image.ny, r->image.nx, &p,
                                   r->median, r->mad);
    if (r->progress_shown) fputs("\r                              \r", stderr);
    if (status != CLSTATS_OK)
        return library_error("filtering failed", status, clstats_ctx_message(r->ctx));

    /* SIGMA is needed by SNR too; each derived map is computed once. */
    bool want_sigma = false, want_snr = false;
    for (int i = 0; i < o->n_maps; i++) {
        want_sigma |= o->maps[i] == MAP_SIGMA || o->maps[i] == MAP_SNR;
        want_snr |= o->maps[i] == MAP_SNR;
    }
    if (want_sigma) {
        if (!(r->derived[MAP_SIGMA] = malloc(n * sizeof(float))))
            return error("out of memory for the SIGMA map");
        maps_sigma(r->mad, n, r->derived[MAP_SIGMA]);
    }
    if (want_snr) {
        if (!(r->derived[MAP_SNR] = malloc(n * sizeof(float))))
            return error("out of memory for the SNR map");
        maps_snr(r->image.data, r->median, r->derived[MAP_SIGMA], n, r->derived[MAP_SNR]);
    }
    return EXIT_OK;
}

static const float *map_data(const struct run *r, enum map_kind k)
{
    switch (k) {
    case MAP_MAD:
        return r->mad;
    case MAP_MEDIAN:
        return r->median;
    default:
        return r->derived[k];
    }
}

static int write_outputs(struct run *r)
{
    const struct options *o = &r->opt;
    char err[1024];
    char lines[8][600];
    const char *history[8];
    int nh = 0;

    snprintf(lines[nh++], sizeof lines[0],
             "madfilter %s (libclstats): sliding-window robust statistics maps", CLSTATS_VERSION);
    if (o->boundary == CLSTATS_BOUNDARY_CONSTANT)
        snprintf(lines[nh++], sizeof lines[0],
                 "madfilter: window %d x %d, boundary constant, "
                 "cval %.9g",
                 o->width, o->width, o->cval);
    else
        snprintf(lines[nh++], sizeof lines[0], "madfilter: window %d x %d, boundary %s", o->width,
                 o->width, clstats_boundary_name(o->boundary));
    char list[64] = "";
    for (int i = 0; i < o->n_maps; i++) {
        strcat(list, i ? "," : "");
        strcat(list, map_extname(o->maps[i]));
    }
    snprintf(lines[nh++], sizeof lines[0], "madfilter: maps %s (EXTNAME of each HDU)", list);
    snprintf(lines[nh++], sizeof lines[0],
             "madfilter: NaN/BLANK pixels are missing data (%zu in the input)", r->image.n_nan);
    if (r->derived[MAP_SIGMA])
        snprintf(lines[nh++], sizeof lines[0], "madfilter: SIGMA = 1.4826 * MAD");
    if (r->derived[MAP_SNR])
        snprintf(lines[nh++], sizeof lines[0],
                 "madfilter: SNR = (x - MEDIAN) / SIGMA, NaN where SIGMA = 0");
    snprintf(lines[nh++], sizeof lines[0], "madfilter: device %.500s",
             clstats_ctx_device_name(r->ctx));
    snprintf(lines[nh++], sizeof lines[0], "madfilter: input %.500s", o->input);
    for (int i = 0; i < nh; i++)
        history[i] = lines[i];

    if (o->output && !r->png_only) {
        struct fits_map maps[MAP_KINDS];
        for (int i = 0; i < o->n_maps; i++) {
            maps[i].extname = map_extname(o->maps[i]);
            maps[i].comment = map_description(o->maps[i]);
            maps[i].data = map_data(r, o->maps[i]);
            maps[i].unitless = o->maps[i] == MAP_SNR;
        }
        if (fits_io_write(r->out_file.tmp_path, &r->image, maps, o->n_maps, history, nh, err,
                          sizeof err) != 0)
            return error("%s: %s", o->output, err);
    }

    char description[300];
    snprintf(description, sizeof description, "%s map of %.200s, window %d x %d, boundary %s",
             map_extname(o->maps[0]), o->input, o->width, o->width,
             clstats_boundary_name(o->boundary));
    const float *first = map_data(r, o->maps[0]);
    if (r->png_only && png_io_write(r->out_file.tmp_path, first, r->image.nx, r->image.ny,
                                    description, err, sizeof err) != 0)
        return error("%s", err);
    if (o->png_output && png_io_write(r->preview_file.tmp_path, first, r->image.nx, r->image.ny,
                                      description, err, sizeof err) != 0)
        return error("%s", err);

    /* Both outputs are complete before either is moved into place. */
    if (o->output && atomic_commit(&r->out_file, o->overwrite, err, sizeof err) != 0)
        return error("%s", err);
    if (o->png_output && atomic_commit(&r->preview_file, o->overwrite, err, sizeof err) != 0)
        return error("%s", err);
    return EXIT_OK;
}

static void summary(const struct run *r)
{
    const struct options *o = &r->opt;
    char list[64] = "";
    for (int i = 0; i < o->n_maps; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, map_extname(o->maps[i]));
    }
    fprintf(stderr,
            "madfilter: wrote %s%s%s: %s of %zu x %zu pixels (%zu missing), width %d, %s, "
            "%.2f s on %s\n",
            o->output ? o->output : "", o->output && o->png_output ? " and " : "",
            o->png_output ? o->png_output : "", list, r->image.nx, r->image.ny, r->image.n_nan,
            o->width, clstats_boundary_name(o->boundary), now() - r->start,
            clstats_ctx_device_name(r->ctx));
}

static int run(struct run *r)
{
    const struct options *o = &r->opt;
    if (o->output) {
        r->png_only = ends_with_nocase(o->output, ".png");
        if (r->png_only && o->n_maps > 1) {
            fprintf(stderr,
                    "madfilter: a PNG output holds one map, not %d (write FITS, or add "
                    "--png FILE for a preview of the first map)\n",
                    o->n_maps);
            return EXIT_USAGE;
        }
        /* cfitsio would read brackets and parentheses as filters or templates. */
        if (!r->png_only && strpbrk(o->output, "[]()")) {
            fprintf(stderr,
                    "madfilter: output name \"%s\" contains brackets or parentheses, "
                    "which cfitsio would read as a filter\n",
                    o->output);
            return EXIT_USAGE;
        }
    }
    int rc = read_input(r);
    if (rc == EXIT_OK) rc = check_outputs(r);
    if (rc == EXIT_OK) rc = compute(r);
    if (rc == EXIT_OK) rc = write_outputs(r);
    if (rc == EXIT_OK && !o->quiet) summary(r);
    return rc;
}

int main(int argc, char **argv)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.start = now();
    int rc = options_parse(argc, argv, &r.opt);
    if (rc != EXIT_OK) return rc;
    if (r.opt.help) {
        options_print_help(stdout);
        return EXIT_OK;
    }
    if (r.opt.version) {
        printf("madfilter %s (libclstats %s)\n", CLSTATS_VERSION, CLSTATS_VERSION);
        return EXIT_OK;
    }
    if (r.opt.list_devices) return list_devices();

    rc = run(&r);

    atomic_abort(&r.out_file);
    atomic_abort(&r.preview_file);
    clstats_ctx_destroy(r.ctx);
    tool_image_free(&r.image);
    free(r.median);
    free(r.mad);
    for (int i = 0; i < MAP_KINDS; i++)
        free(r.derived[i]);
    return rc;
}
