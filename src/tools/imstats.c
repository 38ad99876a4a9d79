/* imstats.c - the imstats command: robust statistics of a whole FITS (or PNG) image, computed
 * exactly on an OpenCL device by libclstats: count, median, MAD and sigma (1.4826 MAD),
 * percentiles, and sigma-clipped mean, median and standard deviation as astropy's
 * sigma_clipped_stats defines them. NaN and BLANK pixels are missing data and left out.
 *
 *   imstats [-p 5,25,75,95] [--sigma 3] [--maxiters 5] [-d DEVICE] IMAGE
 * Prints one "name = value" line per statistic (values with 9 significant digits, enough to
 * give a float32 back exactly). */
#include "clstats.h"
#include "fits_io.h"
#include "png_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PERCENTILES 32

static const char usage[] =
    "Usage: imstats [OPTIONS] IMAGE\n"
    "\n"
    "Robust statistics of a FITS image (any HDU cfitsio's syntax selects, e.g. 'in.fits[SCI]';\n"
    "a cube counts all its planes) or an 8/16-bit greyscale PNG, computed exactly on an OpenCL\n"
    "device. NaN and BLANK pixels are missing data and left out.\n"
    "\n"
    "Prints: n (valid pixels), missing, median, mad (median of |x - median|), sigma\n"
    "(1.4826 mad), one pNN line per percentile (numpy's default 'linear' definition), and\n"
    "clipped_mean, clipped_median, clipped_std, clipped_n: astropy's sigma_clipped_stats with\n"
    "cenfunc median and stdfunc std (ddof 0): values further than SIGMA standard deviations\n"
    "from the median are left out, and again, until none is or MAXITERS rounds have run.\n"
    "\n"
    "Options:\n"
    "  -p, --percentiles LIST  comma-separated, each in [0, 100] (default 5,25,75,95)\n"
    "      --sigma S           clipping threshold in standard deviations (default 3)\n"
    "      --maxiters N        clipping rounds at most (default 5; 0: until none is clipped)\n"
    "  -d, --device SPEC       OpenCL device, as madfilter --device (default $CLSTATS_DEVICE,\n"
    "                          else auto)\n"
    "  -h, --help              show this and exit\n"
    "  -V, --version           show the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 data or device error, 2 usage error.\n";

struct stats_options {
    const char *input, *device;
    double q[MAX_PERCENTILES];
    size_t nq;
    double sigma;
    int maxiters;
};

static int usage_error(const char *fmt, const char *arg)
{
    fputs("imstats: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (imstats --help)\n", stderr);
    return 2;
}

static int parse_percentiles(const char *text, struct stats_options *o)
{
    o->nq = 0;
    const char *p = text;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0.0 && v <= 100.0) || o->nq == MAX_PERCENTILES) return -1;
        o->q[o->nq++] = v;
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        p = end;
    }
    return o->nq ? 0 : -1;
}

static int parse_args(int argc, char **argv, struct stats_options *o)
{
    memset(o, 0, sizeof *o);
    parse_percentiles("5,25,75,95", o);
    o->sigma = 3.0;
    o->maxiters = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            exit(0);
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("imstats %s (libclstats %s)\n", CLSTATS_VERSION, CLSTATS_VERSION);
            exit(0);
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--percentiles") == 0) {
            if (!v || parse_percentiles(v, o) != 0)
                return usage_error("%s needs a list of percentiles in [0, 100]", a);
            i++;
        } else if (strcmp(a, "--sigma") == 0) {
            char *end;
            o->sigma = v ? strtod(v, &end) : -1.0;
            if (!v || *end || !(o->sigma > 0.0) || isinf(o->sigma))
                return usage_error("%s needs a positive number", a);
            i++;
        } else if (strcmp(a, "--maxiters") == 0) {
            char *end;
            long n = v ? strtol(v, &end, 10) : -1;
            if (!v || *end || n < 0 || n > 1000000)
                return usage_error("%s needs a whole number from 0", a);
            o->maxiters = (int)n;
            i++;
        } else if (strcmp(a, "-d") == 0 || strcmp(a, "--device") == 0) {
            if (!v || !*v) return usage_error("%s needs a device spec", a);
            o->device = v;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option %s", a);
        } else if (o->input) {
            return usage_error("one image at a time (%s is a second)", a);
        } else {
            o->input = a;
        }
    }
    if (!o->input) return usage_error("%s", "no image given");
    return 0;
}

/* Every pixel of every plane, NaN where missing; NULL after a message. */
static float *read_all(const struct stats_options *o, size_t *n)
{
    struct tool_image img = {0};
    char err[1024];
    const uint64_t no_limit = UINT64_MAX;
    int rc = png_io_is_png(o->input)
                 ? png_io_read(o->input, (size_t)-1, &img, err, sizeof err)
                 : fits_io_open(o->input, false, no_limit, &img, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "imstats: %s\n", err);
        return NULL;
    }
    const size_t plane = img.nx * img.ny;
    *n = plane * img.planes;
    float *data = malloc((*n ? *n : 1) * sizeof *data);
    if (!data) {
        fprintf(stderr, "imstats: no memory for %zu pixels\n", *n);
        image_close(&img);
        return NULL;
    }
    for (size_t p = 0; p < img.planes; p++) {
        if (image_read_rows(&img, p, 0, img.ny, data + p * plane, err, sizeof err) != 0) {
            fprintf(stderr, "imstats: %s\n", err);
            free(data);
            image_close(&img);
            return NULL;
        }
    }
    image_close(&img);
    return data;
}

static int library_error(clstats_ctx *ctx, int status)
{
    fprintf(stderr, "imstats: %s: %s\n", clstats_strerror(status), clstats_ctx_message(ctx));
    return 1;
}

/* Sigma clipping as astropy.stats.sigma_clipped_stats (cenfunc median, stdfunc std): work holds
 * the data, clipped values become NaN there, so the device's median leaves them out. */
static int clipped_stats(clstats_ctx *ctx, float *work, size_t n, const struct stats_options *o,
                         double *mean, double *median, double *std, size_t *kept)
{
    for (int iter = 0; o->maxiters == 0 || iter <= o->maxiters; iter++) {
        float med;
        int status = clstats_median(ctx, work, n, NULL, &med);
        if (status != CLSTATS_OK) return status;
        double sum = 0.0, sumsq = 0.0;
        size_t count = 0;
        for (size_t i = 0; i < n; i++)
            if (!isnan(work[i])) count++, sum += work[i];
        const double m = sum / (double)count;
        for (size_t i = 0; i < n; i++)
            if (!isnan(work[i])) sumsq += (work[i] - m) * (work[i] - m);
        *mean = m;
        *median = med;
        *std = sqrt(sumsq / (double)count);
        *kept = count;
        if (o->maxiters && iter == o->maxiters) break;
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

int main(int argc, char **argv)
{
    struct stats_options o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) return rc;
    size_t n = 0;
    float *data = read_all(&o, &n);
    if (!data) return 1;

    clstats_ctx *ctx = NULL;
    int status = clstats_ctx_create(&ctx, o.device);
    if (status != CLSTATS_OK) {
        fprintf(stderr, "imstats: %s: %s\n", clstats_strerror(status), clstats_ctx_message(NULL));
        free(data);
        return 1;
    }
    float med = NAN, mad = NAN, pct[MAX_PERCENTILES];
    uint64_t missing = 0;
    struct clstats_select_options so = {.nan_count = &missing};
    status = clstats_median(ctx, data, n, &so, &med);
    if (status == CLSTATS_ERR_EMPTY) {
        fprintf(stderr, "imstats: %s has no valid pixel\n", o.input);
        rc = 1;
        goto done;
    }
    if (status == CLSTATS_OK) status = clstats_percentiles(ctx, data, n, o.q, o.nq, NULL, pct);
    if (status != CLSTATS_OK) {
        rc = library_error(ctx, status);
        goto done;
    }
    /* MAD: the median of |x - median| over the valid pixels (as madfilter: 0 where x == m). */
    float *work = malloc((n ? n : 1) * sizeof *work);
    if (!work) {
        fprintf(stderr, "imstats: no memory\n");
        rc = 1;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        work[i] = data[i] == med ? 0.0f : fabsf(data[i] - med);
    status = clstats_median(ctx, work, n, NULL, &mad);
    double cmean = NAN, cmedian = NAN, cstd = NAN;
    size_t kept = 0;
    if (status == CLSTATS_OK) {
        memcpy(work, data, n * sizeof *work);
        status = clipped_stats(ctx, work, n, &o, &cmean, &cmedian, &cstd, &kept);
    }
    free(work);
    if (status != CLSTATS_OK) {
        rc = library_error(ctx, status);
        goto done;
    }
    printf("image = %s\n", o.input);
    printf("device = %s\n", clstats_ctx_device_name(ctx));
    printf("n = %llu\n", (unsigned long long)(n - missing));
    printf("missing = %llu\n", (unsigned long long)missing);
    printf("median = %.9g\n", med);
    printf("mad = %.9g\n", mad);
    printf("sigma = %.9g\n", 1.4826 * mad);
    for (size_t i = 0; i < o.nq; i++)
        printf("p%g = %.9g\n", o.q[i], pct[i]);
    printf("clipped_mean = %.17g\n", cmean);
    printf("clipped_median = %.9g\n", cmedian);
    printf("clipped_std = %.17g\n", cstd);
    printf("clipped_n = %zu\n", kept);
done:
    clstats_ctx_destroy(ctx);
    free(data);
    return rc;
}
