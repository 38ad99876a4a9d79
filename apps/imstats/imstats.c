/* imstats.c - the imstats command: robust statistics of a whole FITS (or PNG) image, computed
 * exactly on an OpenCL device by libclstats: count, median, MAD and sigma (astropy's mad_std),
 * percentiles, and sigma-clipped mean, median and standard deviation as astropy's
 * sigma_clipped_stats defines them. NaN and BLANK pixels are missing data and left out. Every
 * statistic follows the peer users know, NaN included: numpy for the median, MAD and
 * percentiles, astropy for the clipped statistics.
 *
 *   imstats [-p 5,25,75,95] [--sigma 3] [--maxiters 5] [-d DEVICE] IMAGE
 * Prints one "name = value" line per statistic (values with 9 significant digits, enough to
 * give a float32 back exactly). */
#include "cli.h"
#include "clstats.h"
#include "image.h"
#include "program_context.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: imstats [OPTIONS] IMAGE\n"
    "\n"
    "Robust statistics of a FITS image (any HDU cfitsio's syntax selects, e.g. 'in.fits[SCI]';\n"
    "every pixel of a 1-D image, a cube or more axes counts) or an 8/16-bit greyscale PNG,\n"
    "computed exactly on an OpenCL device. NaN and BLANK pixels are missing data and left out.\n"
    "IMAGE may be '-' (standard input) or a pipe.\n"
    "\n"
    "Prints: n (valid pixels), missing, median, mad (median of |x - median|), sigma\n"
    "(1.482602218505602 mad: astropy's mad_std), one pQ line per percentile (numpy's default\n"
    "'linear' definition), and clipped_mean, clipped_median, clipped_std, clipped_n: astropy's\n"
    "sigma_clipped_stats with cenfunc median and stdfunc std (ddof 0): infinite values are left\n"
    "out first, then values further than SIGMA standard deviations from the median, again,\n"
    "until none is or MAXITERS rounds have run. Where numpy or astropy give NaN, so does\n"
    "imstats (no valid pixel, an infinite median, every value clipped; |inf - inf| is NaN and\n"
    "left out of the MAD, as numpy's nanmedian leaves it out), and the exit status is still 0.\n"
    "\n"
    "Options:\n"
    "  -p, --percentiles LIST  comma-separated, each in [0, 100] (default 5,25,75,95)\n"
    "      --sigma S           clipping threshold in standard deviations (default 3)\n"
    "      --maxiters N        clipping rounds at most (default 5; 0: until none is clipped)\n"
    "      --mask FILE[EXT]    missing-data mask of the image's shape (e.g. 'in.fits[DQ]', as\n"
    "                          madfilter's): non-zero (or NaN) pixels are left out, as NaN is;\n"
    "                          a 2-D mask serves every plane of a cube\n"
    "  -d, --device SPEC       OpenCL device, as madfilter --device (default $CLSTATS_DEVICE,\n"
    "                          else auto)\n"
    "  -q, --quiet             no notes on stderr (errors are still shown)\n"
    "  -h, --help              show this and exit\n"
    "  -V, --version           show the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 data or device error, 2 usage error.\n";

struct stats_options {
    const char *input;
    const char *mask;
    double *q;
    size_t nq;
    double sigma;
    int maxiters;
    struct cli_common common; /* --device, --quiet, --help, --version */
};

enum { OPT_PERCENTILES, OPT_SIGMA, OPT_MAXITERS, OPT_MASK };

static const struct cli_option specs[] = {
    {OPT_PERCENTILES, "percentiles", 'p', true},
    {OPT_SIGMA, "sigma", 0, true},
    {OPT_MAXITERS, "maxiters", 0, true},
    {OPT_MASK, "mask", 0, true},
};

static int parse_percentiles(const char *text, struct stats_options *o)
{
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    double *q = malloc(n * sizeof *q);
    if (!q) return cli_usage_error("out of memory");
    size_t nq = 0;
    char *copy = strdup(text);
    bool ok = copy != NULL;
    for (char *item = copy, *next; ok && item; item = next) {
        next = strchr(item, ',');
        if (next) *next++ = '\0';
        ok = cli_number(item, &q[nq]) && q[nq] >= 0.0 && q[nq] <= 100.0;
        nq++;
    }
    free(copy);
    if (!ok) {
        free(q);
        return cli_usage_error("--percentiles needs a list of numbers in [0, 100], not \"%s\"",
                               text);
    }
    free(o->q);
    o->q = q;
    o->nq = nq;
    return EXIT_OK;
}

static int apply(void *user, int id, const char *v)
{
    struct stats_options *o = user;
    double x;
    switch (id) {
    case OPT_PERCENTILES:
        return parse_percentiles(v, o);
    case OPT_SIGMA:
        if (!cli_number(v, &x) || !(x > 0.0) || isinf(x))
            return cli_usage_error("--sigma needs a positive number, not \"%s\"", v);
        o->sigma = x;
        return EXIT_OK;
    case OPT_MAXITERS:
        if (!cli_number(v, &x) || x < 0 || x > 1000000 || x != floor(x))
            return cli_usage_error("--maxiters needs a whole number from 0, not \"%s\"", v);
        o->maxiters = (int)x;
        return EXIT_OK;
    case OPT_MASK:
        if (!*v) return cli_usage_error("--mask needs a file name");
        o->mask = v;
        return EXIT_OK;
    }
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct stats_options *o, const char **names)
{
    memset(o, 0, sizeof *o);
    o->sigma = 3.0;
    o->maxiters = 5;
    int n = 0;
    int rc = parse_percentiles("5,25,75,95", o);
    if (rc == EXIT_OK)
        rc = cli_parse("imstats", argc, argv, specs, sizeof specs / sizeof specs[0], apply, o,
                       &o->common, names, &n);
    if (rc != EXIT_OK || o->common.help || o->common.version) return rc;
    if (n == 0) return cli_usage_error("no image given");
    if (n > 1) return cli_usage_error("one image at a time (%s is a second)", names[1]);
    o->input = names[0];
    return EXIT_OK;
}

/* NaN wherever the mask (one plane, or one per plane) is non-zero or NaN; 0, or -1 after a
 * message. */
static int apply_mask(const struct stats_options *o, size_t nx, size_t ny, size_t planes,
                      float *data)
{
    struct tool_image mask;
    char err[1024];
    if (image_open(o->mask, SHAPE_ANY, UINT64_MAX, &mask, err, sizeof err) != 0) {
        fprintf(stderr, "imstats: %s\n", err);
        return -1;
    }
    int rc = 0;
    float *row = NULL;
    if (mask.nx != nx || mask.ny != ny || (mask.planes != 1 && mask.planes != planes)) {
        fprintf(stderr, "imstats: mask %s is %zu x %zu x %zu, the image %zu x %zu x %zu\n",
                o->mask, mask.nx, mask.ny, mask.planes, nx, ny, planes);
        rc = -1;
    } else if (nx * ny > 0 && !(row = malloc(nx * ny * sizeof *row))) {
        fprintf(stderr, "imstats: no memory for the mask's %zu pixels\n", nx * ny);
        rc = -1;
    }
    for (size_t p = 0; rc == 0 && row && p < planes; p++) {
        if ((p == 0 || mask.planes > 1) &&
            image_read_rows(&mask, mask.planes > 1 ? p : 0, 0, ny, row, err, sizeof err) != 0) {
            fprintf(stderr, "imstats: %s\n", err);
            rc = -1;
            break;
        }
        for (size_t i = 0; i < nx * ny; i++)
            if (row[i] != 0.0f) data[p * nx * ny + i] = NAN; /* NaN != 0: a missing value masks */
    }
    free(row);
    image_close(&mask);
    return rc;
}

/* Every pixel of every plane, NaN where missing; NULL after a message. */
static float *read_all(const struct stats_options *o, size_t *n)
{
    struct tool_image img;
    char err[1024];
    if (image_open(o->input, SHAPE_ANY, UINT64_MAX, &img, err, sizeof err) != 0) {
        fprintf(stderr, "imstats: %s\n", err);
        return NULL;
    }
    if (img.notice[0] && !o->common.quiet) fprintf(stderr, "imstats: note: %s\n", img.notice);
    const size_t plane = img.nx * img.ny;
    *n = plane * img.planes;
    float *data = malloc((*n ? *n : 1) * sizeof *data);
    if (!data) {
        fprintf(stderr, "imstats: no memory for %zu pixels\n", *n);
        image_close(&img);
        return NULL;
    }
    for (size_t p = 0; p < img.planes && plane > 0; p++) {
        if (image_read_rows(&img, p, 0, img.ny, data + p * plane, err, sizeof err) != 0) {
            fprintf(stderr, "imstats: %s\n", err);
            free(data);
            image_close(&img);
            return NULL;
        }
    }
    const size_t nx = img.nx, ny = img.ny, planes = img.planes;
    image_close(&img);
    if (o->mask && apply_mask(o, nx, ny, planes, data) != 0) {
        free(data);
        return NULL;
    }
    return data;
}

/* The median of the non-NaN values, NaN when there is none (numpy's nanmedian). */
static int nan_median(clstats_ctx *ctx, const float *x, size_t n, uint64_t *nan_count, float *out)
{
    struct clstats_select_options so = {.nan_count = nan_count};
    int status = clstats_median(ctx, x, n, &so, out);
    if (status == CLSTATS_ERR_EMPTY) {
        *out = NAN;
        return CLSTATS_OK;
    }
    return status;
}

/* Sigma clipping as astropy.stats.sigma_clipped_stats (cenfunc median, stdfunc std): work holds
 * the data with every value that is not finite already NaN (astropy masks them first); clipped
 * values become NaN there too, so the device's median leaves them out. NaN statistics and
 * kept = 0 when nothing is left. */
static int clipped_stats(clstats_ctx *ctx, float *work, size_t n, const struct stats_options *o,
                         double *mean, double *median, double *std, size_t *kept)
{
    for (int iter = 0; o->maxiters == 0 || iter <= o->maxiters; iter++) {
        float med;
        int status = nan_median(ctx, work, n, NULL, &med);
        if (status != CLSTATS_OK) return status;
        double sum = 0.0, sumsq = 0.0;
        size_t count = 0;
        for (size_t i = 0; i < n; i++)
            if (!isnan(work[i])) count++, sum += work[i];
        const double m = count ? sum / (double)count : NAN;
        for (size_t i = 0; i < n; i++)
            if (!isnan(work[i])) sumsq += (work[i] - m) * (work[i] - m);
        *mean = m;
        *median = med;
        *std = count ? sqrt(sumsq / (double)count) : NAN;
        *kept = count;
        if (count == 0 || (o->maxiters && iter == o->maxiters)) break;
        /* astropy clips against float64 bounds and stops when a round clips nothing. */
        const double lo = (double)med - o->sigma * *std, hi = (double)med + o->sigma * *std;
        size_t clipped = 0;
        for (size_t i = 0; i < n; i++) {
            if (!isnan(work[i]) && (work[i] < lo || work[i] > hi)) {
                work[i] = NAN;
                clipped++;
            }
        }
        if (clipped == 0) break;
    }
    return CLSTATS_OK;
}

/* The shortest text that reads back as q, so two different percentiles never share a label. */
static void percentile_label(double q, char *label, size_t len)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(label, len, "p%.*g", digits, q);
        if (strtod(label + 1, NULL) == q) return;
    }
}

struct results {
    uint64_t missing;
    float median, mad, *pct;
    double cmean, cmedian, cstd;
    size_t kept;
};

static int compute(clstats_ctx *ctx, const float *data, size_t n, const struct stats_options *o,
                   struct results *r)
{
    int status = nan_median(ctx, data, n, &r->missing, &r->median);
    if (status != CLSTATS_OK) return status;
    if (r->missing < n) {
        status = clstats_percentiles(ctx, data, n, o->q, o->nq, NULL, r->pct);
        if (status != CLSTATS_OK) return status;
    } else {
        for (size_t i = 0; i < o->nq; i++)
            r->pct[i] = NAN;
    }
    float *work = malloc((n ? n : 1) * sizeof *work);
    if (!work) return CLSTATS_ERR_NOMEM;
    /* MAD: numpy's nanmedian of |x - median|, where inf - inf is NaN and so left out. */
    for (size_t i = 0; i < n; i++)
        work[i] = fabsf(data[i] - r->median);
    status = nan_median(ctx, work, n, NULL, &r->mad);
    if (status == CLSTATS_OK) {
        for (size_t i = 0; i < n; i++)
            work[i] = isfinite(data[i]) ? data[i] : NAN;
        status = clipped_stats(ctx, work, n, o, &r->cmean, &r->cmedian, &r->cstd, &r->kept);
    }
    free(work);
    return status;
}

int main(int argc, char **argv)
{
    struct stats_options o;
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    int rc = names ? parse_args(argc, argv, &o, names) : EXIT_RUNTIME;
    if (rc != EXIT_OK || o.common.help || o.common.version) {
        if (rc == EXIT_OK && o.common.help) fputs(usage, stdout);
        if (rc == EXIT_OK && o.common.version)
            printf("imstats %s (libclstats %s)\n", CLSTATS_VERSION, CLSTATS_VERSION);
        free(o.q);
        free(names);
        return rc;
    }
    size_t n = 0;
    clstats_ctx *ctx = NULL;
    struct results r = {.pct = malloc((o.nq ? o.nq : 1) * sizeof(float))};
    float *data = r.pct ? read_all(&o, &n) : NULL;
    if (!data) {
        rc = EXIT_RUNTIME;
        goto done;
    }
    int status = program_context_create(&ctx, o.common.device);
    if (status == CLSTATS_OK) status = compute(ctx, data, n, &o, &r);
    if (status != CLSTATS_OK) {
        fprintf(stderr, "imstats: %s: %s\n", clstats_strerror(status), clstats_ctx_message(ctx));
        rc = EXIT_RUNTIME;
        goto done;
    }
    printf("image = %s\n", o.input);
    printf("device = %s\n", clstats_ctx_device_name(ctx));
    printf("n = %llu\n", (unsigned long long)(n - r.missing));
    printf("missing = %llu\n", (unsigned long long)r.missing);
    printf("median = %.9g\n", r.median);
    printf("mad = %.9g\n", r.mad);
    printf("sigma = %.9g\n", CLSTATS_MAD_TO_SIGMA * r.mad);
    for (size_t i = 0; i < o.nq; i++) {
        char label[40];
        percentile_label(o.q[i], label, sizeof label);
        printf("%s = %.9g\n", label, r.pct[i]);
    }
    printf("clipped_mean = %.17g\n", r.cmean);
    printf("clipped_median = %.9g\n", r.cmedian);
    printf("clipped_std = %.17g\n", r.cstd);
    printf("clipped_n = %zu\n", r.kept);
done:
    clstats_ctx_destroy(ctx);
    free(data);
    free(r.pct);
    free(o.q);
    free(names);
    return rc;
}
