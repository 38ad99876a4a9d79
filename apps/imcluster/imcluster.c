/* imcluster.c - the imcluster command: the pixels of a multi-band image (a FITS cube, one plane a
 * band, a 2-D FITS image or a grey or colour PNG) classified into k classes by k-means on the
 * device (clstats_kmeans), written as a label image (FITS with the centres, and a palette PNG)
 * and a table of centres. Pixels without a value in every band get class -1. */
#include "atomic_file.h"
#include "cli.h"
#include "clstats.h"
#include "fits_io.h"
#include "image.h"
#include "outputs.h"
#include "paths.h"
#include "pixels.h"
#include "png_io.h"
#include "program_context.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "Usage: imcluster [OPTIONS] INPUT OUTPUT\n"
    "\n"
    "Classifies the pixels of an image into k classes by k-means (Lloyd's algorithm, as\n"
    "scikit-learn's KMeans) on an OpenCL device. Each pixel is one point whose features are its\n"
    "bands: the planes of a FITS cube (NAXIS3 planes; cfitsio's syntax picks an HDU or some\n"
    "planes, 'in.fits[SCI][*,*,1:3]'), the one plane of a 2-D FITS image, or the grey or R, G, B\n"
    "channels of a PNG (colour quantisation). A pixel that is NaN, BLANK or infinite in any band,\n"
    "or transparent in a PNG, gets class -1 and takes no part.\n"
    "\n"
    "OUTPUT is a FITS file (a .gz name is compressed) with two HDUs: LABELS (primary, int16, -1\n"
    "for no class: the class of each pixel, with the input's header and the WCS of its first two axes kept,\n"
    "keywords KMK, KMINIT, KMSEED, KMNITER, KMINERT ...) and CENTRES (float64, one row a class, one\n"
    "column a band, in the input's units, KMCNTj pixels of class j); or, when it ends in .png, a\n"
    "palette PNG of the classes only. Outputs must not exist unless --overwrite; each appears\n"
    "whole or not at all.\n"
    "\n"
    "Options:\n"
    "  -k, --clusters K      classes (default 8)\n"
    "  -s, --standardise     scale each band to mean 0 and standard deviation 1 over the valid\n"
    "                        pixels first (scikit-learn's StandardScaler); centres are still\n"
    "                        written in the input's units\n"
    "      --init WHAT       k-means++ (default), random, or a text FILE of k rows of one value a\n"
    "                        band (the input's units; '#' starts a comment)\n"
    "      --n-init N        runs from different starts, the lowest inertia kept (default 1)\n"
    "      --max-iter N      Lloyd iterations at most (default 300)\n"
    "      --tol T           stop when the centres move less than T times the bands' mean\n"
    "                        variance, squared (scikit-learn's tol, default 1e-4)\n"
    "      --seed S          seed of the initialisation (default 0): the same seed gives the\n"
    "                        same classes on every run and device\n"
    "      --png FILE        also write the classes as a palette PNG (at most 255 classes)\n"
    "      --colours WHICH   the PNG's colours: centres (each class in its centre's colour; the\n"
    "                        default for PNG inputs of 1 or 3 bands) or distinct\n"
    "      --centres FILE    also write the centres as text: label, pixels, one value a band\n"
    "      --overwrite       replace outputs that exist\n"
    "  -d, --device SPEC     OpenCL device: auto, gpu, cpu, P:D or part of a name\n"
    "  -q, --quiet           no summary line\n"
    "  -h, --help, -V, --version\n"
    "\n"
    "Exit status: 0 success, 1 a file or the device failed, 2 wrong usage.\n";

enum {
    OPT_K = 1,
    OPT_STANDARDISE,
    OPT_INIT,
    OPT_N_INIT,
    OPT_MAX_ITER,
    OPT_TOL,
    OPT_SEED,
    OPT_PNG,
    OPT_COLOURS,
    OPT_CENTRES,
    OPT_OVERWRITE
};

struct options {
    long k;
    bool k_given, standardise, overwrite;
    enum clstats_kmeans_init init;
    const char *init_file, *png, *centres;
    int colours; /* -1 the input decides, 0 distinct, 1 centres */
    long n_init, max_iter;
    double tol;
    unsigned long long seed;
};

static bool parse_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static int apply(void *user, int id, const char *value)
{
    struct options *o = user;
    switch (id) {
    case OPT_K:
        if (!parse_long(value, 1, 65535, &o->k))
            return cli_usage_error("--clusters %s: a whole number from 1 to 65535", value);
        o->k_given = true;
        return EXIT_OK;
    case OPT_STANDARDISE: o->standardise = true; return EXIT_OK;
    case OPT_INIT:
        o->init_file = NULL;
        if (!strcmp(value, "k-means++")) o->init = CLSTATS_KMEANS_PLUSPLUS;
        else if (!strcmp(value, "random")) o->init = CLSTATS_KMEANS_RANDOM;
        else o->init = CLSTATS_KMEANS_GIVEN, o->init_file = value;
        return EXIT_OK;
    case OPT_N_INIT:
        if (!parse_long(value, 1, 1000, &o->n_init))
            return cli_usage_error("--n-init %s: a whole number from 1 to 1000", value);
        return EXIT_OK;
    case OPT_MAX_ITER:
        if (!parse_long(value, 1, 1000000, &o->max_iter))
            return cli_usage_error("--max-iter %s: a whole number from 1 to 1000000", value);
        return EXIT_OK;
    case OPT_TOL:
        if (!cli_number(value, &o->tol) || !(o->tol >= 0) || !isfinite(o->tol))
            return cli_usage_error("--tol %s: a number >= 0", value);
        return EXIT_OK;
    case OPT_SEED: {
        char *end;
        errno = 0;
        o->seed = strtoull(value, &end, 10);
        if (end == value || *end || errno || value[0] == '-')
            return cli_usage_error("--seed %s: a whole number >= 0", value);
        return EXIT_OK;
    }
    case OPT_PNG: o->png = value; return EXIT_OK;
    case OPT_CENTRES: o->centres = value; return EXIT_OK;
    case OPT_COLOURS:
        if (!strcmp(value, "centres")) o->colours = 1;
        else if (!strcmp(value, "distinct")) o->colours = 0;
        else return cli_usage_error("--colours %s: centres or distinct", value);
        return EXIT_OK;
    case OPT_OVERWRITE: o->overwrite = true; return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* The k x bands centres of an --init FILE (input units) into *out, k from its rows. */
static int read_init(const char *path, int bands, double **out, long *k)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return cli_fail("--init %s: %s (give k-means++, random or a file)", path, strerror(errno));
    size_t cap = 0, n = 0;
    double *v = NULL;
    char line[65536];
    long rows = 0, at = 0;
    int rc = EXIT_OK;
    while (rc == EXIT_OK && fgets(line, sizeof line, fp)) {
        at++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        int in_row = 0;
        for (char *p = line, *end;; p = end) {
            while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\n' || *p == '\r')
                p++;
            if (!*p) break;
            const double x = strtod(p, &end);
            if (end == p || !isfinite(x)) {
                rc = cli_fail("--init %s line %ld: not a finite number: %.40s", path, at, p);
                break;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                double *grown = realloc(v, cap * sizeof *v);
                if (!grown) {
                    rc = cli_fail("no memory");
                    break;
                }
                v = grown;
            }
            v[n++] = x;
            in_row++;
        }
        if (rc == EXIT_OK && in_row && in_row != bands)
            rc = cli_fail("--init %s line %ld: %d values, the image has %d band%s", path, at, in_row,
                      bands, bands == 1 ? "" : "s");
        rows += in_row > 0;
    }
    fclose(fp);
    if (rc == EXIT_OK && rows == 0) rc = cli_fail("--init %s holds no centre", path);
    if (rc != EXIT_OK) {
        free(v);
        return rc;
    }
    *out = v, *k = rows;
    return EXIT_OK;
}

/* Refuses a destination that exists (without --overwrite), is not a regular file, or is the
 * input itself. */
static int check_output(const char *output, const char *input, bool overwrite)
{
    char err[1024], a[4096], b[4096], root[4096];
    if (!overwrite && access(output, F_OK) == 0)
        return cli_fail("%s exists (--overwrite replaces it)", output);
    if (atomic_check_destination(output, err, sizeof err) != 0) return cli_fail("%s", err);
    fits_io_rootname(input, root, sizeof root);
    if (!root[0]) snprintf(root, sizeof root, "%s", input);
    if (path_resolve(output, a, sizeof a) && path_resolve(root, b, sizeof b) && !strcmp(a, b))
        return cli_fail("%s is the input: give another output", output);
    return EXIT_OK;
}

/* k-means of the table's valid pixels; labels and centres (input units) into r's buffers. */
static int cluster(clstats_ctx *ctx, const struct pixel_table *t, const struct options *o,
                   const double *init_centres, int32_t *labels, double *centres, size_t *counts,
                   struct cluster_result *r)
{
    const size_t n = t->nx * t->ny, d = (size_t)t->bands, k = (size_t)o->k;
    const enum clstats_dtype dtype = t->f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32;
    const size_t es = t->f64 ? 8 : 4;
    void *raw = malloc(k * d * es), *init = malloc(k * d * es);
    double *row = malloc(d * sizeof *row);
    int rc = EXIT_RUNTIME;
    if (!raw || !init || !row) {
        cli_fail("no memory");
        goto done;
    }
    struct clstats_array xa = {.host = t->values, .dtype = dtype, .nx = d, .ny = n},
                         ca = {.host = raw, .dtype = dtype, .nx = d, .ny = k},
                         ia = {.host = init, .dtype = dtype, .nx = d, .ny = k};
    struct clstats_kmeans_options ko;
    clstats_kmeans_options_init(&ko);
    ko.init = o->init;
    ko.n_init = (int)o->n_init;
    ko.max_iter = (int)o->max_iter;
    ko.tol = o->tol;
    ko.seed = o->seed;
    ko.skip_nan = 1;
    ko.n_iter = &r->n_iter;
    ko.inertia = &r->inertia;
    if (init_centres) {
        for (size_t j = 0; j < k; j++) {
            pixels_to_table(t, init_centres + j * d, row);
            for (size_t b = 0; b < d; b++) {
                if (t->f64) ((double *)init)[j * d + b] = row[b];
                else ((float *)init)[j * d + b] = (float)row[b];
            }
        }
        ko.init_centers = &ia;
    }
    const int st = clstats_kmeans(ctx, &xa, k, &ko, &ca, labels);
    if (st != CLSTATS_OK) {
        cli_fail("k-means: %s (%s)", clstats_strerror(st), clstats_ctx_message(ctx));
        goto done;
    }
    for (size_t j = 0; j < k; j++) {
        for (size_t b = 0; b < d; b++)
            row[b] = t->f64 ? ((double *)raw)[j * d + b] : (double)((float *)raw)[j * d + b];
        pixels_from_table(t, row, centres + j * d);
        counts[j] = 0;
    }
    for (size_t p = 0; p < n; p++)
        if (labels[p] >= 0) counts[labels[p]]++;
    rc = EXIT_OK;
done:
    free(raw), free(init), free(row);
    return rc;
}

/* Writes one output through a temporary file that is renamed into place. */
static int write_output(const char *dest, bool overwrite, const struct tool_image *img,
                        const struct pixel_table *t, const struct cluster_result *r,
                        int kind, bool centre_colours)
{
    struct atomic_file af = {0};
    char err[1024];
    int rc = EXIT_RUNTIME;
    if (atomic_begin(&af, dest, err, sizeof err) != 0) {
        cli_fail("%s", err);
        goto done;
    }
    const int w = kind == 0   ? outputs_fits(af.tmp_path, img, t, r, err, sizeof err)
                  : kind == 1 ? outputs_png(af.tmp_path, dest, t, r, centre_colours, err,
                                            sizeof err)
                              : outputs_centres_text(af.tmp_path, dest, t, r, err, sizeof err);
    if (w != 0 || atomic_commit(&af, overwrite, err, sizeof err) != 0) {
        cli_fail("%s: %s", dest, err);
        goto done;
    }
    rc = EXIT_OK;
done:
    atomic_abort(&af);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct cli_option specs[] = {
        {OPT_K, "clusters", 'k', true},         {OPT_STANDARDISE, "standardise", 's', false},
        {OPT_INIT, "init", 0, true},            {OPT_N_INIT, "n-init", 0, true},
        {OPT_MAX_ITER, "max-iter", 0, true},    {OPT_TOL, "tol", 0, true},
        {OPT_SEED, "seed", 0, true},            {OPT_PNG, "png", 0, true},
        {OPT_COLOURS, "colours", 0, true},      {OPT_CENTRES, "centres", 0, true},
        {OPT_OVERWRITE, "overwrite", 0, false}};
    struct options o = {.k = 8, .init = CLSTATS_KMEANS_PLUSPLUS, .colours = -1, .n_init = 1,
                        .max_iter = 300, .tol = 1e-4};
    struct cli_common common = {0};
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    int n_names = 0;
    if (!names) {
        fputs("imcluster: no memory\n", stderr);
        return EXIT_RUNTIME;
    }
    int rc = cli_parse("imcluster", argc, argv, specs, sizeof specs / sizeof *specs, apply, &o,
                       &common, names, &n_names);
    if (rc != EXIT_OK || common.help || common.version) {
        if (rc == EXIT_OK && common.help) fputs(usage, stdout);
        if (rc == EXIT_OK && common.version)
            printf("imcluster (libclstats %s)\n", clstats_version());
        free(names);
        return rc;
    }
    if (n_names != 2) {
        free(names);
        return cli_usage_error("give one INPUT and one OUTPUT");
    }
    const char *input = names[0], *output = names[1];
    const bool png_out = path_has_suffix(output, ".png");
    char err[1024];
    struct tool_image img = {0};
    struct pixel_table t = {0};
    clstats_ctx *ctx = NULL;
    double *init = NULL, *centres = NULL;
    int32_t *labels = NULL;
    size_t *counts = NULL;
    rc = EXIT_RUNTIME;
    const char *dests[3] = {output, o.png, o.centres};
    for (int i = 0; i < 3; i++) {
        if (!dests[i]) continue;
        for (int j = 0; j < i; j++)
            if (dests[j] && !strcmp(dests[i], dests[j])) {
                rc = cli_usage_error("%s is named as two outputs", dests[i]);
                goto done;
            }
        if ((rc = check_output(dests[i], input, o.overwrite)) != EXIT_OK) goto done;
    }
    rc = EXIT_RUNTIME;
    const bool png_in = png_io_is_png(input);
    if (!png_in && image_open(input, SHAPE_PLANES, UINT64_MAX / 4, &img, err, sizeof err) != 0) {
        cli_fail("%s", err);
        goto done;
    }
    if (pixels_read(png_in ? NULL : &img, input, SIZE_MAX / 2, &t, err, sizeof err) != 0) {
        cli_fail("%s", err);
        goto done;
    }
    if (t.nx == 0 || t.ny == 0) {
        cli_fail("%s has no pixel", input);
        goto done;
    }
    if (o.init_file) {
        long rows;
        if ((rc = read_init(o.init_file, t.bands, &init, &rows)) != EXIT_OK) goto done;
        rc = EXIT_RUNTIME;
        if (o.k_given && rows != o.k) {
            rc = cli_usage_error("--init %s holds %ld centres, not the %ld of -k", o.init_file,
                                 rows, o.k);
            goto done;
        }
        o.k = rows;
    }
    if (t.n_valid == 0) {
        cli_fail("%s: no pixel has a value in every band", input);
        goto done;
    }
    if ((size_t)o.k > t.n_valid) {
        cli_fail("%s: %zu pixel%s a value in every band, fewer than the %ld classes asked for", input,
             t.n_valid, t.n_valid == 1 ? " has" : "s have", o.k);
        goto done;
    }
    if ((png_out || o.png) && o.k > 255) {
        rc = cli_usage_error("a palette PNG holds at most 255 classes, not %ld", o.k);
        goto done;
    }
    if (o.standardise) pixels_standardise(&t);
    const size_t n = t.nx * t.ny;
    labels = malloc(n * sizeof *labels);
    centres = malloc((size_t)o.k * t.bands * sizeof *centres);
    counts = malloc((size_t)o.k * sizeof *counts);
    if (!labels || !centres || !counts) {
        cli_fail("no memory for %zu labels", n);
        goto done;
    }
    int st = program_context_create(&ctx, common.device);
    if (st != CLSTATS_OK) {
        cli_fail("%s (%s)", clstats_strerror(st), clstats_ctx_message(NULL));
        goto done;
    }
    struct cluster_result r = {.k = (int)o.k, .labels = labels, .centres = centres,
                               .counts = counts, .n_init = (int)o.n_init,
                               .init = o.init_file                            ? o.init_file
                                       : o.init == CLSTATS_KMEANS_RANDOM ? "random"
                                                                         : "k-means++",
                               .seed = o.seed, .device = clstats_ctx_device_name(ctx)};
    if (o.init_file) r.n_init = 1;
    if ((rc = cluster(ctx, &t, &o, init, labels, centres, counts, &r)) != EXIT_OK) goto done;
    const bool centre_colours = o.colours >= 0 ? o.colours == 1
                                               : t.png && (t.bands == 1 || t.bands == 3);
    if ((rc = write_output(output, o.overwrite, png_in ? NULL : &img, &t, &r, png_out ? 1 : 0,
                           centre_colours)) != EXIT_OK ||
        (o.png && (rc = write_output(o.png, o.overwrite, NULL, &t, &r, 1, centre_colours))) ||
        (o.centres && (rc = write_output(o.centres, o.overwrite, NULL, &t, &r, 2, false))))
        goto done;
    if (!common.quiet)
        fprintf(stderr,
                "imcluster: %s -> %s: %zu x %zu pixels of %d band%s (%zu with a class), %d "
                "classes, %d iterations, inertia %.7g\n",
                input, output, t.nx, t.ny, t.bands, t.bands == 1 ? "" : "s", t.n_valid, r.k,
                r.n_iter, r.inertia);
done:
    image_close(&img);
    pixels_free(&t);
    clstats_ctx_destroy(ctx);
    free(init), free(centres), free(labels), free(counts), free(names);
    return rc;
}
