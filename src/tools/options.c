/* options.c - madfilter's command-line parsing and its manual (--help). Hand-written rather than
 * getopt_long so that it builds the same on any C11 system; accepts "-w 11", "-w11",
 * "--width 11" and "--width=11", options before or after the file names, and "--". */
#include "options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char manual[] =
    "Usage: madfilter [OPTIONS] INPUT OUTPUT\n"
    "       madfilter [OPTIONS] INPUT --png PREVIEW.png\n"
    "       madfilter --list-devices | --help | --version\n"
    "\n"
    "Sliding-window median absolute deviation (MAD) and median maps of a 2-D image, computed\n"
    "exactly on an OpenCL device by libclstats. For every pixel the W x W window centred on it\n"
    "gives m, the median of its valid values, and MAD = median(|x - m|) over the same values.\n"
    "The results are exact: the same bits on every device.\n"
    "\n"
    "INPUT   A FITS image (BITPIX 8, 16, 32, 64, -32 or -64). cfitsio's extended syntax picks an\n"
    "        HDU or a section: 'in.fits[1]', 'in.fits[SCI]', 'in.fits.fz', 'in.fits.gz',\n"
    "        'cube.fits[*,*,3:3]'. Without a selector the first HDU with image data is used\n"
    "        (the compressed image in a .fz file). NAXIS must be 2; further axes of length 1\n"
    "        are accepted. Or an 8- or 16-bit greyscale PNG, recognised by its signature.\n"
    "OUTPUT  The FITS file to write (float32, BITPIX -32). A name ending in .png writes a PNG\n"
    "        of the (single) map instead, see PNG below. A leading '!' means --overwrite, as\n"
    "        in cfitsio; a name ending in .gz is written gzip-compressed.\n"
    "\n"
    "Options:\n"
    "  -w, --width N        Window width in pixels: odd, 1 to 255 (default 11). The window is\n"
    "                       N x N pixels, centred on each pixel.\n"
    "  -m, --maps LIST      Maps to write, comma-separated, in this order (default: mad):\n"
    "                         mad     median absolute deviation, median(|x - median|)\n"
    "                         median  median of the window\n"
    "                         sigma   1.4826 * MAD: the standard deviation for Gaussian noise\n"
    "                         snr     (pixel - median) / sigma\n"
    "  -b, --boundary MODE  How windows are filled beyond the image edges (default reflect).\n"
    "                       The modes are scipy.ndimage's; for a row  a b c d :\n"
    "                         reflect   d c b a | a b c d | d c b a\n"
    "                         mirror      d c b | a b c d | c b a\n"
    "                         nearest     a a a | a b c d | d d d\n"
    "                         constant    k k k | a b c d | k k k   (k = --cval)\n"
    "                         wrap        b c d | a b c d | a b c\n"
    "                       Windows wider than the image continue the pattern.\n"
    "      --cval V         The value k beyond the edges for --boundary constant (default 0).\n"
    "                       --cval nan makes the outside missing: edge windows then hold only\n"
    "                       the pixels inside the image.\n"
    "  -d, --device SPEC    OpenCL device: auto (the first GPU, else the first CPU), gpu, cpu,\n"
    "                       accelerator, P:D as --list-devices numbers them, or any part of the\n"
    "                       \"platform / device\" name. Default: $CLSTATS_DEVICE, else auto.\n"
    "      --list-devices   List the OpenCL devices as \"P:D  type  platform / device  version\"\n"
    "                       and exit.\n"
    "      --png FILE       Also write a PNG preview of the first map to FILE.\n"
    "      --overwrite      Replace OUTPUT (and the --png file) if it exists; without it an\n"
    "                       existing file is an error and is left untouched.\n"
    "  -q, --quiet          No progress and no summary on stderr (errors are still shown).\n"
    "  -h, --help           Show this manual.\n"
    "  -V, --version        Show the versions of madfilter and libclstats.\n"
    "\n"
    "Missing data:\n"
    "  NaN pixels, and BLANK pixels of integer FITS images, are missing: they are left out of\n"
    "  every window, so a window's median and MAD are those of its valid pixels (the mean of\n"
    "  the two middle values when their count is even). A window without a valid pixel gives\n"
    "  NaN. BSCALE and BZERO are applied first. At a missing pixel MEDIAN and MAD still describe\n"
    "  its neighbours (so MEDIAN fills small holes); SNR is NaN there. SNR is also NaN where\n"
    "  sigma is 0 (a flat window has no noise scale to measure a departure against).\n"
    "  Infinite pixels are values, not missing data: they sort to the ends of a window.\n"
    "  Float pixels are read bit for bit (-0, subnormals and infinities unchanged).\n"
    "\n"
    "FITS output:\n"
    "  One float32 image HDU per map, in --maps order: the first map is the primary HDU, the\n"
    "  others follow as IMAGE extensions. Every HDU has EXTNAME = MAD, MEDIAN, SIGMA or SNR and\n"
    "  a copy of the input header (WCS, OBJECT, DATE-OBS, COMMENT, HISTORY, ...) without the\n"
    "  structural keywords (BITPIX, NAXISn, BSCALE, BZERO, BLANK, EXTNAME, checksums,\n"
    "  tile-compression keywords) and DATAMIN/DATAMAX; SNR also drops BUNIT. So astropy and ds9\n"
    "  read the WCS of every map. Only the chosen HDU's own header is copied: keywords an\n"
    "  extension inherits from its primary HDU (INHERIT = T) are not merged in. HISTORY\n"
    "  cards record the tool and version, width, boundary, device, maps and input; DATE,\n"
    "  CHECKSUM and DATASUM are written. The file appears only when it is complete: it is\n"
    "  written in a temporary directory next to OUTPUT (madfilter.tmp-XXXXXX, removed on any\n"
    "  failure or interrupt) and renamed into place.\n"
    "\n"
    "PNG:\n"
    "  Input: greyscale, 8 or 16 bits (1, 2 and 4 bits are widened); the values are the raw\n"
    "  grey levels (0-255 or 0-65535); transparent pixels (alpha 0, or the tRNS grey) are\n"
    "  missing. Colour and palette PNGs are refused: convert them to greyscale first. The top\n"
    "  row of the PNG becomes the last FITS row, so both display the same way up.\n"
    "  Output: 16-bit greyscale of one map, linear from its 0.5th percentile of finite values\n"
    "  (grey level 1) to its 99.5th (65535), clipped outside; NaN is black (0). For viewing only.\n"
    "\n"
    "Progress is shown on stderr for long runs when stderr is a terminal.\n"
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  runtime or data error: input missing or unreadable, not a 2-D image, output exists or\n"
    "     is the input, no OpenCL device, kernel build failure, write failure\n"
    "  2  usage error: unknown option, bad width, boundary or map name, wrong argument count\n"
    "\n"
    "Examples:\n"
    "  madfilter image.fits mad.fits -w 11\n"
    "  madfilter 'image.fits[SCI]' maps.fits -w 21 --maps median,mad,snr --boundary nearest\n"
    "  madfilter image.fits.fz sigma.png --maps sigma -w 15\n"
    "  CLSTATS_DEVICE=gpu madfilter big.fits '!mad.fits' -w 31 --png mad.png\n";

void options_print_help(FILE *f)
{
    fputs(manual, f);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("madfilter: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see madfilter --help)\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

static int parse_width(const char *text, int *out)
{
    char *end;
    errno = 0;
    long w = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || w < 1 || w > CLSTATS_MAX_WIDTH)
        return usage_error("window width must be an odd number from 1 to %d, not \"%s\"",
                           CLSTATS_MAX_WIDTH, text);
    if (w % 2 == 0)
        return usage_error("window width %ld is even: it must be odd so the window has a centre",
                           w);
    *out = (int)w;
    return EXIT_OK;
}

static int parse_cval(const char *text, float *out)
{
    char *end;
    errno = 0;
    float v = strtof(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE)
        return usage_error("--cval needs a number, not \"%s\"", text);
    *out = v;
    return EXIT_OK;
}

enum option_id {
    OPT_WIDTH,
    OPT_MAPS,
    OPT_BOUNDARY,
    OPT_CVAL,
    OPT_DEVICE,
    OPT_LIST_DEVICES,
    OPT_PNG,
    OPT_OVERWRITE,
    OPT_QUIET,
    OPT_HELP,
    OPT_VERSION,
};

struct option_spec {
    enum option_id id;
    const char *name;
    char letter; /* 0: long form only */
    bool has_value;
};

static const struct option_spec specs[] = {
    {OPT_WIDTH, "width", 'w', true},
    {OPT_MAPS, "maps", 'm', true},
    {OPT_BOUNDARY, "boundary", 'b', true},
    {OPT_CVAL, "cval", 0, true},
    {OPT_DEVICE, "device", 'd', true},
    {OPT_LIST_DEVICES, "list-devices", 0, false},
    {OPT_PNG, "png", 0, true},
    {OPT_OVERWRITE, "overwrite", 0, false},
    {OPT_QUIET, "quiet", 'q', false},
    {OPT_HELP, "help", 'h', false},
    {OPT_VERSION, "version", 'V', false},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

static int apply(struct options *o, enum option_id id, const char *value)
{
    char err[200];
    int n;
    switch (id) {
    case OPT_WIDTH:
        return parse_width(value, &o->width);
    case OPT_MAPS:
        n = maps_parse(value, o->maps, err, sizeof err);
        if (n < 0) return usage_error("%s", err);
        o->n_maps = n;
        return EXIT_OK;
    case OPT_BOUNDARY:
        if (clstats_boundary_from_name(value, &o->boundary) != CLSTATS_OK)
            return usage_error("unknown boundary mode \"%s\" (reflect, mirror, nearest, "
                               "constant or wrap)",
                               value);
        return EXIT_OK;
    case OPT_CVAL:
        o->cval_given = true;
        return parse_cval(value, &o->cval);
    case OPT_DEVICE:
        o->device = value;
        return EXIT_OK;
    case OPT_LIST_DEVICES:
        o->list_devices = true;
        return EXIT_OK;
    case OPT_PNG:
        o->png_output = value;
        return EXIT_OK;
    case OPT_OVERWRITE:
        o->overwrite = true;
        return EXIT_OK;
    case OPT_QUIET:
        o->quiet = true;
        return EXIT_OK;
    case OPT_HELP:
        o->help = true;
        return EXIT_OK;
    case OPT_VERSION:
        o->version = true;
        return EXIT_OK;
    }
    return EXIT_OK;
}

/* The spec an argument names, and where its attached value starts ("--width=11", "-w11"). */
static const struct option_spec *lookup(const char *arg, const char **attached)
{
    *attached = NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        for (size_t i = 0; i < N_SPECS; i++) {
            if (strlen(specs[i].name) == len && strncmp(specs[i].name, name, len) == 0) {
                if (eq) *attached = eq + 1;
                return &specs[i];
            }
        }
        return NULL;
    }
    for (size_t i = 0; i < N_SPECS; i++) {
        if (specs[i].letter && specs[i].letter == arg[1]) {
            if (arg[2] != '\0') *attached = arg + 2;
            return &specs[i];
        }
    }
    return NULL;
}

int options_parse(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->width = MADFILTER_DEFAULT_WIDTH;
    o->boundary = CLSTATS_BOUNDARY_REFLECT;
    o->maps[0] = MAP_MAD;
    o->n_maps = 1;

    const char *positional[3];
    int n_positional = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        /* "-" alone is a file name (cfitsio reads stdin), not an option. */
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            if (n_positional == 3) return usage_error("too many arguments (\"%s\")", arg);
            positional[n_positional++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        const char *value;
        const struct option_spec *s = lookup(arg, &value);
        if (!s) return usage_error("unknown option \"%s\"", arg);
        if (s->has_value && !value) {
            if (i + 1 >= argc) return usage_error("option \"%s\" needs a value", arg);
            value = argv[++i];
        } else if (!s->has_value && value) {
            return usage_error("option \"%s\" takes no value", arg);
        }
        int rc = apply(o, s->id, value);
        if (rc != EXIT_OK) return rc;
    }

    if (o->help || o->version || o->list_devices) return EXIT_OK;
    if (n_positional == 0) return usage_error("no input file given");
    if (n_positional == 3) return usage_error("too many arguments (\"%s\")", positional[2]);
    o->input = positional[0];
    o->output = n_positional == 2 ? positional[1] : NULL;
    if (!o->output && !o->png_output) return usage_error("no output file given");
    if (o->output && o->output[0] == '!') {
        o->output++;
        o->overwrite = true;
    }
    if (o->output && o->output[0] == '\0') return usage_error("the output file name is empty");
    if ((o->output && strcmp(o->output, "-") == 0) ||
        (o->png_output && strcmp(o->png_output, "-") == 0))
        return usage_error("writing to standard output is not supported: give a file name");
    return EXIT_OK;
}
