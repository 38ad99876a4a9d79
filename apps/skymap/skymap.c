/* skymap.c - the skymap command: the background and RMS maps of a FITS image the SExtractor way
 * (libclstats' mesh background, SEP's arithmetic) or with photutils' boxes, written as a FITS file of two image HDUs,
 * BACKGROUND and RMS, that keep the input's header. The library does the work; apps/common reads
 * and writes the files (the output appears whole or not at all). */
#include "atomic_file.h"
#include "clstats.h"
#include "cli.h"
#include "fits_io.h"
#include "image.h"
#include "program_context.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "Usage: skymap [OPTIONS] INPUT.fits OUTPUT.fits\n"
    "\n"
    "Background and RMS maps of a 2-D FITS image made the SExtractor way: each box of a mesh\n"
    "clipped and histogrammed, its background SExtractor's mode (2.5 median - 1.5 mean, the\n"
    "median where the box is skewed) and its RMS the clipped standard deviation; boxes with too\n"
    "few valid pixels filled from their neighbours, the mesh median-filtered and interpolated by\n"
    "bicubic spline. The same numbers as SEP (sep.Background) and SExtractor's BACK_TYPE AUTO.\n"
    "With --clipping sigma the boxes are photutils' (its Background2D mesh, with its MMM,\n"
    "biweight and MAD-std estimators); the maps are the same spline through that mesh.\n"
    "NaN and BLANK pixels are missing. OUTPUT holds two float32 HDUs, BACKGROUND (primary) and\n"
    "RMS, each with the input's header; it must not exist unless --overwrite.\n"
    "\n"
    "Options:\n"
    "  -m, --mesh N[xM]         box of the mesh in pixels, N wide and M high (default 64)\n"
    "  -f, --filter N[xM]       median filter of the mesh in boxes, odd (default 3; 1: none)\n"
    "  -t, --filter-threshold T filter a box only where it differs this much (SEP's fthresh, 0)\n"
    "  -c, --clip K             clipping in standard deviations (default 3)\n"
    "  -e, --estimator NAME     sextractor (default), median or mean; with --clipping sigma\n"
    "                           also mmm (3 median - 2 mean) or biweight (location, c = 6)\n"
    "  -r, --rms-estimator NAME std (default); with --clipping sigma also mad_std (1.4826\n"
    "                           MAD) or biweight (scale, c = 9)\n"
    "      --clipping NAME      histogram (SExtractor's, default) or sigma: photutils'\n"
    "                           Background2D boxes (astropy's SigmaClip, median centre, std)\n"
    "      --maxiters N         sigma clipping's rounds at most (default 10; 0: until none)\n"
    "      --exclude-percentile P  sigma clipping: a box with more than P percent of its pixels\n"
    "                           missing or clipped is filled from its neighbours (default 10)\n"
    "      --overwrite          replace OUTPUT if it exists\n"
    "  -d, --device SPEC        OpenCL device: auto, gpu, cpu, P:D or part of a name\n"
    "  -q, --quiet              no summary line\n"
    "  -h, --help, -V, --version\n"
    "\n"
    "Exit status: 0 success, 1 a file or the device failed, 2 wrong usage.\n";

enum {
    OPT_MESH = 1,
    OPT_FILTER,
    OPT_THRESHOLD,
    OPT_CLIP,
    OPT_ESTIMATOR,
    OPT_RMS_ESTIMATOR,
    OPT_CLIPPING,
    OPT_MAXITERS,
    OPT_EXCLUDE,
    OPT_OVERWRITE
};

struct options {
    struct clstats_background_options bkg;
    bool overwrite;
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("skymap: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_RUNTIME;
}

/* "N" or "NxM" as two positive sizes. */
static bool parse_pair(const char *text, size_t *w, size_t *h)
{
    char *end;
    unsigned long a = strtoul(text, &end, 10), b = a;
    if (end == text || text[0] == '-') return false;
    if (*end == 'x') {
        const char *rest = end + 1;
        b = strtoul(rest, &end, 10);
        if (end == rest || rest[0] == '-') return false;
    }
    if (*end || a < 1 || b < 1 || a > 1u << 30 || b > 1u << 30) return false;
    *w = a, *h = b;
    return true;
}

static int apply(void *user, int id, const char *value)
{
    struct options *o = user;
    double v;
    switch (id) {
    case OPT_MESH:
        if (!parse_pair(value, &o->bkg.box_w, &o->bkg.box_h))
            return cli_usage_error("--mesh %s: give N or NxM, positive", value);
        return EXIT_OK;
    case OPT_FILTER:
        if (!parse_pair(value, &o->bkg.filter_w, &o->bkg.filter_h) || o->bkg.filter_w % 2 == 0 ||
            o->bkg.filter_h % 2 == 0)
            return cli_usage_error("--filter %s: give N or NxM, odd", value);
        return EXIT_OK;
    case OPT_THRESHOLD:
        if (!cli_number(value, &v) || !(v >= 0.0))
            return cli_usage_error("--filter-threshold %s: a number >= 0", value);
        o->bkg.filter_threshold = v;
        return EXIT_OK;
    case OPT_CLIP:
        if (!cli_number(value, &v) || !(v > 0.0) || v > 1e6)
            return cli_usage_error("--clip %s: a positive number", value);
        o->bkg.clip_sigma = v;
        return EXIT_OK;
    case OPT_ESTIMATOR:
        if (!strcmp(value, "sextractor")) o->bkg.estimator = CLSTATS_BKG_SEXTRACTOR;
        else if (!strcmp(value, "median")) o->bkg.estimator = CLSTATS_BKG_MEDIAN;
        else if (!strcmp(value, "mean")) o->bkg.estimator = CLSTATS_BKG_MEAN;
        else if (!strcmp(value, "mmm")) o->bkg.estimator = CLSTATS_BKG_MMM;
        else if (!strcmp(value, "biweight")) o->bkg.estimator = CLSTATS_BKG_BIWEIGHT;
        else
            return cli_usage_error("--estimator %s: sextractor, median, mean, mmm or biweight",
                                   value);
        return EXIT_OK;
    case OPT_RMS_ESTIMATOR:
        if (!strcmp(value, "std")) o->bkg.rms_estimator = CLSTATS_RMS_STD;
        else if (!strcmp(value, "mad_std")) o->bkg.rms_estimator = CLSTATS_RMS_MAD_STD;
        else if (!strcmp(value, "biweight")) o->bkg.rms_estimator = CLSTATS_RMS_BIWEIGHT;
        else return cli_usage_error("--rms-estimator %s: std, mad_std or biweight", value);
        return EXIT_OK;
    case OPT_CLIPPING:
        if (!strcmp(value, "histogram")) o->bkg.clipping = CLSTATS_CLIP_HISTOGRAM;
        else if (!strcmp(value, "sigma")) o->bkg.clipping = CLSTATS_CLIP_SIGMA;
        else return cli_usage_error("--clipping %s: histogram or sigma", value);
        return EXIT_OK;
    case OPT_MAXITERS:
        if (!cli_number(value, &v) || !(v >= 0.0) || v != (int)v || v > 1e6)
            return cli_usage_error("--maxiters %s: a whole number >= 0", value);
        o->bkg.clip_iters = v == 0.0 ? -1 : (int)v;
        return EXIT_OK;
    case OPT_EXCLUDE:
        if (!cli_number(value, &v) || !(v >= 0.0 && v <= 100.0))
            return cli_usage_error("--exclude-percentile %s: 0 to 100", value);
        o->bkg.exclude_percentile = v > 0.0 ? v : -1.0; /* the library's 0 is its default */
        return EXIT_OK;
    case OPT_OVERWRITE: o->overwrite = true; return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* The maps of img into out_path (a temporary file the caller moves into place). */
static int make_maps(clstats_ctx *ctx, struct tool_image *img, const struct options *o,
                     const char *input, const char *out_path, const char *scratch, float *globals)
{
    const size_t n = img->nx * img->ny;
    float *pix = malloc(n * sizeof *pix), *back = malloc(n * sizeof *back),
          *rms = malloc(n * sizeof *rms);
    char err[1024];
    int rc = EXIT_RUNTIME;
    struct clstats_background *bkg = NULL;
    struct fits_output *fits = NULL;
    if (!pix || !back || !rms) {
        fail("%s: no memory for %zu x %zu pixels", input, img->nx, img->ny);
        goto done;
    }
    if (image_read_rows(img, 0, 0, img->ny, pix, err, sizeof err) != 0) {
        fail("%s: %s", input, err);
        goto done;
    }
    struct clstats_array im = {.host = pix, .dtype = CLSTATS_FLOAT32, .nx = img->nx, .ny = img->ny};
    struct clstats_array ob = im, orr = im;
    ob.host = back;
    orr.host = rms;
    int st = clstats_background(ctx, &im, NULL, &o->bkg, &bkg);
    if (st == CLSTATS_OK) st = clstats_background_maps(ctx, bkg, &ob, &orr);
    if (st != CLSTATS_OK) {
        fail("%s: %s (%s)", input, clstats_strerror(st), clstats_ctx_message(ctx));
        goto done;
    }
    globals[0] = bkg->global_back, globals[1] = bkg->global_rms;
    const bool sigma = o->bkg.clipping == CLSTATS_CLIP_SIGMA;
    const struct fits_map maps[2] = {
        {"BACKGROUND",
         sigma ? "background map (photutils mesh)" : "background map (SExtractor mesh)", false},
        {"RMS", sigma ? "background RMS map (photutils mesh)" : "background RMS map (SExtractor mesh)",
         false}};
    char line[600];
    snprintf(line, sizeof line,
             "skymap %s: mesh %zux%zu, filter %zux%zu, fthresh %g, clip %g; global background "
             "%.9g, RMS %.9g",
             clstats_version(), bkg->box_w, bkg->box_h, o->bkg.filter_w ? o->bkg.filter_w : 3,
             o->bkg.filter_h ? o->bkg.filter_h : 3, o->bkg.filter_threshold,
             o->bkg.clip_sigma ? o->bkg.clip_sigma : 3.0, globals[0], globals[1]);
    const char *history[1] = {line};
    if (fits_output_create(&fits, out_path, scratch, img, maps, 2, NULL, history, 1, 0, err,
                           sizeof err) != 0 ||
        fits_output_write_rows(fits, 0, 0, 0, img->ny, back, err, sizeof err) != 0 ||
        fits_output_write_rows(fits, 1, 0, 0, img->ny, rms, err, sizeof err) != 0) {
        fail("%s", err);
        goto done;
    }
    const int frc = fits_output_finish(fits, NULL, 0, err, sizeof err);
    fits = NULL;
    if (frc != 0) {
        fail("%s", err);
        goto done;
    }
    rc = EXIT_OK;
done:
    fits_output_abort(fits);
    clstats_background_free(bkg);
    free(pix), free(back), free(rms);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct cli_option specs[] = {
        {OPT_MESH, "mesh", 'm', true},           {OPT_FILTER, "filter", 'f', true},
        {OPT_THRESHOLD, "filter-threshold", 't', true}, {OPT_CLIP, "clip", 'c', true},
        {OPT_ESTIMATOR, "estimator", 'e', true}, {OPT_RMS_ESTIMATOR, "rms-estimator", 'r', true},
        {OPT_CLIPPING, "clipping", 0, true},     {OPT_MAXITERS, "maxiters", 0, true},
        {OPT_EXCLUDE, "exclude-percentile", 0, true}, {OPT_OVERWRITE, "overwrite", 0, false}};
    struct options o = {.bkg = {.box_w = 64, .box_h = 64, .filter_w = 3, .filter_h = 3,
                                .clip_sigma = 3.0}};
    struct cli_common common = {0};
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    int n_names = 0;
    if (!names) return fail("no memory");
    int rc = cli_parse("skymap", argc, argv, specs, sizeof specs / sizeof *specs, apply, &o,
                       &common, names, &n_names);
    if (rc != EXIT_OK || common.help || common.version) {
        if (rc == EXIT_OK && common.help) fputs(usage, stdout);
        if (rc == EXIT_OK && common.version) printf("skymap (libclstats %s)\n", clstats_version());
        free(names);
        return rc;
    }
    if (n_names != 2) {
        free(names);
        return cli_usage_error("give one INPUT and one OUTPUT");
    }
    if (o.bkg.clipping == CLSTATS_CLIP_HISTOGRAM &&
        (o.bkg.estimator > CLSTATS_BKG_MEAN || o.bkg.rms_estimator != CLSTATS_RMS_STD)) {
        free(names);
        return cli_usage_error("the mmm and biweight estimators and mad_std need --clipping sigma");
    }
    const char *input = names[0], *output = names[1];
    char err[1024];
    struct tool_image img = {0};
    struct atomic_file af = {0};
    clstats_ctx *ctx = NULL;
    float globals[2];
    rc = EXIT_RUNTIME;
    if (!o.overwrite && access(output, F_OK) == 0) {
        fail("%s exists (--overwrite replaces it)", output);
        goto done;
    }
    if (atomic_check_destination(output, err, sizeof err) != 0 && o.overwrite) {
        fail("%s", err);
        goto done;
    }
    if (image_open(input, SHAPE_NO_CUBES, UINT64_MAX / 4, &img, err, sizeof err) != 0) {
        fail("%s", err);
        goto done;
    }
    if (img.nx == 0 || img.ny == 0) {
        fail("%s has no pixel", input);
        goto done;
    }
    if (!img.fits) {
        fail("%s: skymap writes the input's header, and takes FITS only", input);
        goto done;
    }
    int st = program_context_create(&ctx, common.device);
    if (st != CLSTATS_OK) {
        fail("%s (%s)", clstats_strerror(st), clstats_ctx_message(NULL));
        goto done;
    }
    if (atomic_begin(&af, output, err, sizeof err) != 0) {
        fail("%s", err);
        goto done;
    }
    rc = make_maps(ctx, &img, &o, input, af.tmp_path, af.scratch_path, globals);
    if (rc == EXIT_OK && atomic_commit(&af, o.overwrite, err, sizeof err) != 0)
        rc = fail("%s", err);
    if (rc == EXIT_OK && !common.quiet)
        fprintf(stderr, "skymap: %s -> %s: %zu x %zu, global background %.7g, RMS %.7g\n", input,
                output, img.nx, img.ny, globals[0], globals[1]);
done:
    atomic_abort(&af);
    image_close(&img);
    clstats_ctx_destroy(ctx);
    free(names);
    return rc;
}
