/* skyfit.c - the skyfit command: a robust 2-D polynomial sky surface fitted to a FITS image by
 * Least Trimmed Squares on the device (clstats_lts_fit), so that stars, galaxies and artefacts,
 * the pixels far above the sky, are the fit's outliers instead of pulling it up as they pull a
 * least-squares fit. Writes the MODEL and the RESIDUAL (image - model) as image HDUs that keep
 * the input's header.
 *
 *   skyfit [--degree 3] [--mesh N | --sample S] [-d DEVICE] IN.fits OUT.fits */
#include "atomic_file.h"
#include "cli.h"
#include "clstats.h"
#include "fits_io.h"
#include "image.h"
#include "points.h"
#include "program_context.h"
#include "surface.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Up to this many pixels every valid pixel is fitted; a larger image fits the medians of
 * DEFAULT_MESH-pixel tiles unless --mesh or --sample says otherwise. */
#define ALL_PIXELS_UP_TO 262144u
#define DEFAULT_MESH 32u

static const char usage[] =
    "Usage: skyfit [OPTIONS] INPUT OUTPUT\n"
    "\n"
    "Fits a smooth sky to a 2-D FITS image (any HDU cfitsio's syntax selects, e.g.\n"
    "'in.fits[SCI]') as a polynomial surface of total degree D in x and y, by Least Trimmed\n"
    "Squares on an OpenCL device: the fit minimises the sum of the smallest half of the squared\n"
    "residuals, so stars, galaxies and artefacts are left out as outliers instead of pulling the\n"
    "surface up. The terms are Legendre polynomials of the coordinates scaled to [-1, 1].\n"
    "NaN, BLANK and infinite pixels are missing data. Writes OUTPUT (which must not exist,\n"
    "unless --overwrite) with two image HDUs that keep the input's header: MODEL, the surface at\n"
    "every pixel, and RESIDUAL, the image less the model (NaN where the image is missing);\n"
    "float64 for BITPIX -64, 32 and 64 inputs, else float32. Keywords SFDEGREE, SFPOINTS, SFSTEP,\n"
    "SFNFIT, SFNOUT and SFSCALE and HISTORY cards say what was fitted.\n"
    "\n"
    "Which points are fitted: every valid pixel of an image of up to 262144 pixels; on a larger\n"
    "one the medians of 32 x 32-pixel tiles, each at its tile's centre (a note says so).\n"
    "\n"
    "Options:\n"
    "      --degree D       total degree of the surface, 1 to 8 (default 3)\n"
    "      --mesh N         fit the medians of N x N-pixel tiles (1: every pixel)\n"
    "      --sample S       fit every S-th pixel in x and in y (S from 2)\n"
    "      --overwrite      replace OUTPUT if it exists\n"
    "  -d, --device SPEC    OpenCL device, as madfilter --device (default $CLSTATS_DEVICE, else\n"
    "                       auto)\n"
    "  -q, --quiet          no notes on stderr (errors are still shown)\n"
    "  -h, --help           show this and exit\n"
    "  -V, --version        show the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 data or device error, 2 usage error.\n";

struct skyfit_options {
    const char *input, *output;
    int degree;
    enum points_kind kind;
    size_t step;
    bool chosen; /* --mesh or --sample given */
    bool overwrite;
    struct cli_common common;
};

enum { OPT_DEGREE, OPT_MESH, OPT_SAMPLE, OPT_OVERWRITE };

static const struct cli_option specs[] = {
    {OPT_DEGREE, "degree", 0, true},
    {OPT_MESH, "mesh", 0, true},
    {OPT_SAMPLE, "sample", 0, true},
    {OPT_OVERWRITE, "overwrite", 0, false},
};

static int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("skyfit: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_RUNTIME;
}

static bool whole(const char *v, double lo, double hi, double *x)
{
    return cli_number(v, x) && *x >= lo && *x <= hi && *x == floor(*x);
}

static int apply(void *user, int id, const char *v)
{
    struct skyfit_options *o = user;
    double x;
    switch (id) {
    case OPT_DEGREE:
        if (!whole(v, 1, SURFACE_MAX_DEGREE, &x))
            return cli_usage_error("--degree needs a whole number from 1 to %d, not \"%s\"",
                                   SURFACE_MAX_DEGREE, v);
        o->degree = (int)x;
        return EXIT_OK;
    case OPT_MESH:
    case OPT_SAMPLE:
        if (o->chosen) return cli_usage_error("--mesh and --sample: give one of them, once");
        if (!whole(v, id == OPT_MESH ? 1 : 2, 1e9, &x))
            return cli_usage_error("--%s needs a whole number from %d, not \"%s\"",
                                   id == OPT_MESH ? "mesh" : "sample", id == OPT_MESH ? 1 : 2, v);
        o->chosen = true;
        o->step = (size_t)x;
        o->kind = id == OPT_SAMPLE ? POINTS_SAMPLE : x == 1 ? POINTS_ALL : POINTS_MESH;
        return EXIT_OK;
    case OPT_OVERWRITE:
        o->overwrite = true;
        return EXIT_OK;
    }
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct skyfit_options *o, const char **names)
{
    memset(o, 0, sizeof *o);
    o->degree = 3;
    int n = 0;
    int rc = cli_parse("skyfit", argc, argv, specs, sizeof specs / sizeof specs[0], apply, o,
                       &o->common, names, &n);
    if (rc != EXIT_OK || o->common.help || o->common.version) return rc;
    if (n < 2) return cli_usage_error(n ? "no output given" : "no input given");
    if (n > 2) return cli_usage_error("one input and one output (%s is a third name)", names[2]);
    o->input = names[0];
    o->output = names[1];
    if (strcmp(o->output, "-") == 0)
        return cli_usage_error("OUTPUT must be a file name (standard output is not supported)");
    return EXIT_OK;
}

/* The job of one run: what every step after parsing needs and the one clean-up of it. */
struct job {
    const struct skyfit_options *o;
    struct tool_image image;
    struct atomic_file out_file;
    struct fits_output *fits;
    clstats_ctx *ctx;
    double *pixels, *model, *residual;
    struct surface surface;
    struct points points;
    enum points_kind kind;
    size_t step;
    double coef[(SURFACE_MAX_DEGREE + 1) * (SURFACE_MAX_DEGREE + 2) / 2];
    struct clstats_regress_result fit;
    size_t n_outliers;
};

static int check_output(struct job *j)
{
    char err[512];
    struct stat st;
    const char *out = j->o->output;
    if (lstat(out, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return error("output %s is a directory", out);
        if (atomic_check_destination(out, err, sizeof err) != 0) return error("%s", err);
        if (!j->o->overwrite) return error("%s exists (use --overwrite to replace it)", out);
    }
    if (atomic_begin(&j->out_file, out, err, sizeof err) != 0) return error("%s", err);
    return EXIT_OK;
}

static int read_input(struct job *j)
{
    char err[1024];
    if (image_open(j->o->input, SHAPE_NO_CUBES, UINT64_MAX, &j->image, err, sizeof err) != 0)
        return error("%s", err);
    if (j->image.notice[0] && !j->o->common.quiet) error("note: %s", j->image.notice);
    const size_t n = j->image.nx * j->image.ny;
    if (n == 0) return error("%s: the image has no pixel", j->o->input);
    j->pixels = malloc(n * sizeof *j->pixels);
    j->model = malloc(n * sizeof *j->model);
    j->residual = malloc(n * sizeof *j->residual);
    if (!j->pixels || !j->model || !j->residual)
        return error("no memory for %zu pixels", n);
    if (image_read_rows_f64(&j->image, 0, 0, j->image.ny, j->pixels, err, sizeof err) != 0)
        return error("%s", err);
    return EXIT_OK;
}

static void describe_points(const struct job *j, char *text, size_t len)
{
    if (j->kind == POINTS_ALL)
        snprintf(text, len, "every valid pixel (%zu)", j->points.n);
    else if (j->kind == POINTS_MESH)
        snprintf(text, len, "the medians of %zu x %zu-pixel tiles (%zu)", j->step, j->step,
                 j->points.n);
    else
        snprintf(text, len, "one pixel in %zu along x and y (%zu)", j->step, j->points.n);
}

static int library_error(const char *doing, int status, clstats_ctx *ctx)
{
    return error("%s: %s: %s", doing, clstats_strerror(status), clstats_ctx_message(ctx));
}

static int fit(struct job *j)
{
    const struct skyfit_options *o = j->o;
    const size_t nx = j->image.nx, ny = j->image.ny;
    surface_init(&j->surface, o->degree, nx, ny);
    j->kind = o->chosen ? o->kind : nx * ny <= ALL_PIXELS_UP_TO ? POINTS_ALL : POINTS_MESH;
    j->step = o->chosen ? o->step : DEFAULT_MESH;
    int status = program_context_create(&j->ctx, o->common.device);
    if (status != CLSTATS_OK)
        return error("%s: %s", clstats_strerror(status), clstats_ctx_message(NULL));
    status = points_make(j->ctx, j->pixels, &j->surface, j->kind, j->step, &j->points);
    if (status != CLSTATS_OK) return library_error("tile medians", status, j->ctx);
    if (!o->chosen && j->kind == POINTS_MESH && !o->common.quiet) {
        char what[200];
        describe_points(j, what, sizeof what);
        error("note: %zu x %zu image: fitting %s; --mesh 1 fits every pixel", nx, ny, what);
    }
    const size_t p = j->surface.n_terms, n = j->points.n;
    if (n < p + 2)
        return error("%s: %zu points with a value, and a degree-%d surface needs at least %zu",
                     o->input, n, o->degree, p + 2);
    const struct clstats_array x = {.host = j->points.x, .dtype = CLSTATS_FLOAT64, .nx = p,
                                    .ny = n};
    const struct clstats_array y = {.host = j->points.y, .dtype = CLSTATS_FLOAT64, .nx = n,
                                    .ny = 1};
    unsigned char *flags = malloc(n);
    if (!flags) return error("no memory for %zu points", n);
    j->fit = (struct clstats_regress_result){.coef = j->coef, .outliers = flags};
    status = clstats_lts_fit(j->ctx, &x, &y, NULL, &j->fit);
    j->fit.outliers = NULL;
    size_t n_out = 0;
    for (size_t i = 0; status == CLSTATS_OK && i < n; i++)
        n_out += flags[i];
    free(flags);
    j->n_outliers = n_out;
    if (status != CLSTATS_OK) return library_error("LTS fit", status, j->ctx);
    for (size_t yy = 0; yy < ny; yy++)
        for (size_t xx = 0; xx < nx; xx++) {
            const size_t i = yy * nx + xx;
            j->model[i] = surface_value(&j->surface, j->coef, j->fit.intercept, (double)xx,
                                        (double)yy);
            j->residual[i] = isfinite(j->pixels[i]) ? j->pixels[i] - j->model[i] : NAN;
        }
    return EXIT_OK;
}

static int write_output(struct job *j)
{
    const struct skyfit_options *o = j->o;
    char err[1024], points[200], lines[4][600];
    describe_points(j, points, sizeof points);
    snprintf(lines[0], 600,
             "skyfit: LTS fit of a degree-%d polynomial surface, Legendre terms of x and y "
             "scaled to [-1, 1]",
             o->degree);
    snprintf(lines[1], 600, "skyfit: fitted %s", points);
    snprintf(lines[2], 600, "skyfit: device %.500s", clstats_ctx_device_name(j->ctx));
    snprintf(lines[3], 600, "skyfit: input %.500s", o->input);
    const char *history[4] = {lines[0], lines[1], lines[2], lines[3]};
    const char *kind = j->kind == POINTS_ALL ? "PIXELS" : j->kind == POINTS_MESH ? "MESH" : "SAMPLE";
    const struct fits_key keys[] = {
        {"SFDEGREE", 'I', .i = o->degree, .comment = "skyfit: degree of the surface"},
        {"SFPOINTS", 'S', .s = kind, .comment = "skyfit: what was fitted"},
        {"SFSTEP", 'I', .i = j->kind == POINTS_ALL ? 1 : (long long)j->step,
         .comment = "skyfit: tile side or sample spacing [pixels]"},
        {"SFNFIT", 'I', .i = (long long)j->points.n, .comment = "skyfit: points fitted"},
        {"SFNOUT", 'I', .i = (long long)j->n_outliers, .comment = "skyfit: outliers among them"},
        {"SFSCALE", 'F', .f = j->fit.scale, .comment = "skyfit: LTS scale of the residuals"},
    };
    static const struct fits_map maps[2] = {
        {"MODEL", "skyfit: the fitted sky surface", false},
        {"RESIDUAL", "skyfit: the image less the model", false},
    };
    const struct fits_output_format format = {
        .bitpix = image_is_wide(&j->image) ? -64 : -32,
        .keys = keys,
        .n_keys = (int)(sizeof keys / sizeof keys[0])};
    if (fits_output_create(&j->fits, j->out_file.tmp_path, j->out_file.scratch_path, &j->image,
                           maps, 2, &format, history, 4, 0, err, sizeof err) != 0 ||
        fits_output_write_rows_f64(j->fits, 0, 0, 0, j->image.ny, j->model, err, sizeof err) != 0 ||
        fits_output_write_rows_f64(j->fits, 1, 0, 0, j->image.ny, j->residual, err, sizeof err) !=
            0)
        return error("%s: %s", o->output, err);
    int rc = fits_output_finish(j->fits, NULL, 0, err, sizeof err);
    j->fits = NULL;
    if (rc != 0) return error("%s: %s", o->output, err);
    if (atomic_commit(&j->out_file, o->overwrite, err, sizeof err) != 0) return error("%s", err);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    struct skyfit_options o;
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    int rc = names ? parse_args(argc, argv, &o, names) : EXIT_RUNTIME;
    if (rc != EXIT_OK || o.common.help || o.common.version) {
        if (rc == EXIT_OK && o.common.help) fputs(usage, stdout);
        if (rc == EXIT_OK && o.common.version)
            printf("skyfit %s (libclstats %s)\n", CLSTATS_VERSION, clstats_version());
        free(names);
        return rc;
    }
    struct job j = {.o = &o};
    rc = check_output(&j);
    if (rc == EXIT_OK) rc = read_input(&j);
    if (rc == EXIT_OK) rc = fit(&j);
    if (rc == EXIT_OK) rc = write_output(&j);
    if (rc == EXIT_OK && !o.common.quiet) {
        char what[200];
        describe_points(&j, what, sizeof what);
        fprintf(stderr, "skyfit: %s (%zu x %zu) -> %s: degree %d on %s, %zu outliers, scale %.6g\n",
                o.input, j.image.nx, j.image.ny, o.output, o.degree, what, j.n_outliers,
                j.fit.scale);
    }
    fits_output_abort(j.fits);
    atomic_abort(&j.out_file);
    image_close(&j.image);
    points_free(&j.points);
    clstats_ctx_destroy(j.ctx);
    free(j.pixels);
    free(j.model);
    free(j.residual);
    free(names);
    return rc;
}
