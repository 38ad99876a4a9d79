/* options.c - madfilter's options and its manual (--help); the forms an option may take are
 * cli.c's, shared with imstats. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char manual[] =
    "Usage: madfilter [OPTIONS] INPUT OUTPUT\n"
    "       madfilter [OPTIONS] INPUT --png PREVIEW.png\n"
    "       madfilter [OPTIONS] -o DIR|PATTERN INPUT...\n"
    "       madfilter --list-devices | --help | --version\n"
    "\n"
    "Sliding-window median absolute deviation (MAD) and median maps of 2-D images, computed\n"
    "exactly on an OpenCL device by libclstats. For every pixel the window around it (W x W,\n"
    "W x H, or a footprint) gives m, the median of its valid values, and MAD = median(|x - m|)\n"
    "over the same values.\n"
    "The results are exact: the same bits on every device.\n"
    "\n"
    "INPUT   A FITS image (BITPIX 8, 16, 32, 64, -32 or -64). cfitsio's extended syntax picks an\n"
    "        HDU or a section: 'in.fits[1]', 'in.fits[SCI]', 'in.fits.fz', 'in.fits.gz',\n"
    "        'cube.fits[*,*,3:3]'. Without a selector the first HDU with image data is used\n"
    "        (the compressed image in a .fz file). NAXIS 2 is an image; NAXIS 3 a cube, whose\n"
    "        planes are each filtered on their own (see --cube); further axes must have\n"
    "        length 1. Tables are refused. Or an 8- or 16-bit greyscale PNG, recognised by\n"
    "        its signature. '-' reads standard input; a pipe ('-', a FIFO, <(...)) is\n"
    "        copied to a temporary file in $TMPDIR first, up to --max-memory bytes.\n"
    "        An image section ('[a:b,c:d]', '*', '-*', ':step') is read bit for bit.\n"
    "OUTPUT  The FITS file to write: float64 maps (BITPIX -64) of a BITPIX -64, 32 or 64\n"
    "        image, float32 (BITPIX -32) of the others (see --bitpix). A name ending in .png\n"
    "        writes a PNG\n"
    "        of the (single) map instead, see PNG below. A leading '!' means --overwrite, as\n"
    "        in cfitsio; a name ending in .gz is written gzip-compressed (.fz, .Z, .bz2\n"
    "        and .zip are refused: write .fits and compress it afterwards). OUTPUT must\n"
    "        not be a file that an input of the run reads, nor a FIFO, device, directory or\n"
    "        symbolic link. '-' writes the FITS file to standard output (uncompressed; pipe it\n"
    "        to gzip for .gz): it is made whole in $TMPDIR first, so a run that fails writes\n"
    "        nothing there (only a failure while copying, such as a closed pipe, can leave\n"
    "        part of it); a terminal, --png - and several inputs are refused.\n"
    "\n"
    "Options:\n"
    "  -o, --output TARGET  The output, given as an option: a file for one INPUT; for several,\n"
    "                       a directory (each INPUT writes DIR/NAME_maps.fits, so a map never\n"
    "                       takes its input's name; DIR and its parents are made when\n"
    "                       missing: an existing directory, a name ending in '/', or, with\n"
    "                       several inputs, a new name without a .fits/.fz/.gz/.png extension)\n"
    "                       or a pattern in which {} stands for NAME ('maps/{}_mad.fits'). NAME\n"
    "                       is the input's file name without directory, HDU selector and\n"
    "                       .fits/.fit/.fts/.fz/.gz/.png extension. With -o every other file\n"
    "                       name is an INPUT. --png then takes a pattern with {} too.\n"
    "  -w, --width N|WxH    Window size in pixels, 1 to 255 a side, odd or even (default 11):\n"
    "                       N x N, or W columns by H rows ('31x11'). Odd sizes are centred on\n"
    "                       each pixel; an even size follows scipy.ndimage: a 4-pixel side\n"
    "                       covers offsets -2 .. +1.\n"
    "      --origin X,Y     Shift the window as scipy.ndimage's origin=(Y, X) does: it covers\n"
    "                       offsets -(W/2 + X) .. W-1-(W/2 + X) along x (likewise y); each\n"
    "                       must lie in -(W/2) .. (W-1)/2 (default 0,0).\n"
    "      --footprint F    Any window instead of the -w box: circle:R (pixels whose centre\n"
    "                       lies within R of the window centre), ring:RIN,ROUT (RIN < distance\n"
    "                       <= ROUT, IRAF rmedian's annulus; radii below 128), or an image FILE\n"
    "                       (FITS or PNG, up to 255 x 255, non-zero = in the window).\n"
    "      --even RULE      The median of an even count of valid values: mean (default: the\n"
    "                       mean of the two middle values, numpy's), lower or upper (scipy's\n"
    "                       median_filter). MAD, a median too, follows the same rule.\n"
    "      --mask FILE[EXT] Missing-data mask of the input's size (e.g. 'in.fits[DQ]'):\n"
    "                       non-zero (or NaN) pixels are missing, like NaN and BLANK. A 2-D\n"
    "                       mask serves every plane of a cube.\n"
    "      --valid-range LO,HI  Pixels below LO or above HI are missing.\n"
    "      --bitpix -32|-64  The maps' FITS type: -32 (float32) or -64 (float64). Default: -64\n"
    "                       for BITPIX -64, 32 and 64 images, which are filtered in float64\n"
    "                       (the exact medians of the values as stored: an int32 16777217\n"
    "                       stays 16777217), -32 for the others (float32 and 8- and 16-bit\n"
    "                       images, filtered in float32, which holds them exactly). The\n"
    "                       precision of the filter follows the input, not this option.\n"
    "  -m, --maps LIST      Maps to write, comma-separated, in this order (default: mad):\n"
    "                         mad     median absolute deviation, median(|x - median|)\n"
    "                         median  median of the window\n"
    "                         sigma   1.482602218505602 * MAD: the standard deviation of\n"
    "                                 Gaussian noise (astropy's mad_std constant)\n"
    "                         snr     (pixel - median) / sigma\n"
    "                         residual pixel - median: with sigma, a background-subtracted\n"
    "                                 image and its noise for SExtractor\n"
    "  -b, --boundary MODE  How windows are filled beyond the image edges (default reflect).\n"
    "                       The modes are scipy.ndimage's; for a row  a b c d :\n"
    "                         reflect   d c b a | a b c d | d c b a\n"
    "                         mirror      d c b | a b c d | c b a\n"
    "                         nearest     a a a | a b c d | d d d\n"
    "                         constant    k k k | a b c d | k k k   (k = --cval)\n"
    "                         wrap        b c d | a b c d | a b c\n"
    "                       Windows wider than the image continue the pattern.\n"
    "      --cval V         The value k beyond the edges for --boundary constant (default 0;\n"
    "                       with any other boundary --cval is an error). As in scipy, V\n"
    "                       is cast to float32: beyond its range it is -inf or inf.\n"
    "                       --cval nan makes the outside missing: edge windows then hold only\n"
    "                       the pixels inside the image.\n"
    "  -d, --device SPEC    OpenCL device: auto (the first GPU, else the first CPU), gpu, cpu,\n"
    "                       accelerator, P:D as --list-devices numbers them, or any part of the\n"
    "                       platform, device or version --list-devices shows (nvidia, pocl).\n"
    "                       Default: $CLSTATS_DEVICE, else auto.\n"
    "      --list-devices   List the OpenCL devices as \"P:D  type  platform / device  version\"\n"
    "                       and exit.\n"
    "      --png FILE       Also write a PNG preview of the first map to FILE.\n"
    "      --max-memory SIZE  Host memory for pixels, at most (default 1G): 512M, 2G, ... (K, M,\n"
    "                       G, T are powers of 1024). Larger images are filtered in strips of\n"
    "                       rows, each read with the rows its windows reach and written as it\n"
    "                       is done; the maps are the same bits as in one piece. Strips also\n"
    "                       fit half the device's memory, and halve whenever the device runs\n"
    "                       out of memory. PNG inputs and outputs are held whole, within SIZE.\n"
    "                       A compressed input (.gz, .zip, .Z, .bz2) is unpacked whole into\n"
    "                       memory by cfitsio, on top of the strips; a .gz or .zip one that\n"
    "                       claims more than SIZE unpacked is refused. A .gz output is written\n"
    "                       uncompressed next to it first, then compressed.\n"
    "                       (.fz tile-compressed files are read a tile at a time.)\n"
    "      --cube MODE      NAXIS 3 inputs: planes (default) filters each plane on its own and\n"
    "                       writes a cube of maps; refuse makes a cube an error.\n"
    "      --overwrite      Replace OUTPUT (and the --png file) if it exists; without it an\n"
    "                       existing file is an error and is left untouched.\n"
    "  -q, --quiet          No progress and no summary on stderr (errors are still shown).\n"
    "  -h, --help           Show this manual.\n"
    "  -V, --version        Show the versions of madfilter and libclstats.\n"
    "\n"
    "Missing data:\n"
    "  NaN pixels, and BLANK pixels of integer FITS images, are missing: they are left out of\n"
    "  every window, so a window's median and MAD are those of its valid pixels (the mean of\n"
    "  the two middle values when their count is even, or as --even says; so are pixels that\n"
    "  --mask or --valid-range marks). A window without a valid pixel gives\n"
    "  NaN. BSCALE and BZERO are applied first. At a missing pixel MEDIAN and MAD still describe\n"
    "  its neighbours (so MEDIAN fills small holes); SNR is NaN there. SNR is also NaN where\n"
    "  sigma is 0 (a flat window has no noise scale to measure a departure against).\n"
    "  Infinite pixels are values, not missing data: they sort to the ends of a window.\n"
    "  |x - m| is taken as IEEE does, so where the median m is infinite, inf - inf is NaN and\n"
    "  left out, as numpy's nanmedian leaves it: MAD is then inf, or NaN if every value is m.\n"
    "  The mean of two middles never overflows; a zero result is +0.\n"
    "  Float pixels are read bit for bit (-0, subnormals and infinities unchanged), through\n"
    "  image sections too. BSCALE or BZERO that is not a finite number is an error.\n"
    "\n"
    "FITS output:\n"
    "  One float32 image HDU per map, in --maps order: the first map is the primary HDU, the\n"
    "  others follow as IMAGE extensions. Every HDU has EXTNAME = MAD, MEDIAN, SIGMA, SNR or\n"
    "  RESIDUAL and a copy of the input header (WCS, OBJECT, DATE-OBS, COMMENT, HISTORY, ...)\n"
    "  without the structural keywords (BITPIX, NAXISn, BSCALE, BZERO, BLANK, EXTNAME, checksums,\n"
    "  tile-compression keywords) and DATAMIN/DATAMAX; SNR also drops BUNIT. So astropy and ds9\n"
    "  read the WCS of every map. Only the chosen HDU's own header is copied: keywords an\n"
    "  extension inherits from its primary HDU (INHERIT = T) are not merged in. HISTORY\n"
    "  cards record the tool and version, window (and origin, even rule, mask), boundary,\n"
    "  device, maps and input; DATE, CHECKSUM and DATASUM are written. Keywords say the same\n"
    "  for programs (any the input had are replaced): MFWIDTH, MFHEIGHT (the window's extent),\n"
    "  MFFOOT ('square', 'rectangle', 'circle:R', 'ring:RIN,ROUT' or the footprint file as\n"
    "  given), MFORIGX, MFORIGY, MFEVEN (mean, lower, upper), MFBOUND (the boundary), MFCVAL\n"
    "  (the constant; no value unless --boundary constant, nor for nan), MFMAPS ('MAD,MEDIAN'\n"
    "  in HDU order) and MFDEVICE (the OpenCL device). The file appears only when it is complete: "
    "it is\n"
    "  written in a temporary directory next to OUTPUT (madfilter.tmp-XXXXXX, removed on any\n"
    "  failure or interrupt) and renamed into place; it only ever holds the rows computed, so a\n"
    "  damaged input that fails midway leaves nothing behind. A signal the parent ignores\n"
    "  (nohup) stays ignored.\n"
    "\n"
    "PNG:\n"
    "  Input: greyscale, 8 or 16 bits (1, 2 and 4 bits are widened); the values are the raw\n"
    "  grey levels (0-255 or 0-65535); transparent pixels (alpha 0, or the tRNS grey) are\n"
    "  missing. Colour and palette PNGs are refused: convert them to greyscale first. The top\n"
    "  row of the PNG becomes the last FITS row, so both display the same way up.\n"
    "  Output: 16-bit greyscale of one map, linear from its 0.5th percentile of finite values\n"
    "  (grey level 1) to its 99.5th (65535), clipped outside; NaN is black (0). For viewing only.\n"
    "\n"
    "Several inputs:\n"
    "  One OpenCL context and its compiled kernels serve every input. An input that fails is\n"
    "  named on its error line and the others go on; the exit status is then 1. Outputs are\n"
    "  checked before the first input is read: two inputs may not write the same file.\n"
    "\n"
    "Progress is shown on stderr when stderr is a terminal (and not --quiet): for one input\n"
    "once it has run a second, for several inputs as [N/M] NAME PERCENT.\n"
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  runtime or data error: input missing or unreadable, not an image or cube, output\n"
    "     exists or is the input, no OpenCL device, device out of memory even for strips of\n"
    "     one row, kernel build failure, write failure; with several inputs, any input failed\n"
    "  2  usage error: unknown option, bad width, boundary, map name, size or device spec,\n"
    "     wrong argument count, two outputs that are one file\n"
    "\n"
    "Examples:\n"
    "  madfilter image.fits mad.fits -w 11\n"
    "  madfilter image.fits maps.fits -w 31x11 --maps median,mad\n"
    "  madfilter image.fits bg.fits --footprint ring:5,9 --maps median --mask 'image.fits[DQ]'\n"
    "  madfilter 'image.fits[SCI]' maps.fits -w 21 --maps median,mad,snr --boundary nearest\n"
    "  madfilter image.fits.fz sigma.png --maps sigma -w 15\n"
    "  CLSTATS_DEVICE=gpu madfilter big.fits '!mad.fits' -w 31 --png mad.png\n"
    "  madfilter -o maps/ --max-memory 4G night1/*.fits\n"
    "  madfilter -o '{}_sigma.fits' --maps sigma a.fits b.fits.fz 'c.fits[SCI]'\n";

void options_print_help(FILE *f)
{
    fputs(manual, f);
}

/* N (a square) or WxH. */
static int parse_width(const char *text, int *width, int *height)
{
    char *end;
    errno = 0;
    long w = strtol(text, &end, 10), h = w;
    if (end != text && (*end == 'x' || *end == 'X')) {
        const char *rows = end + 1;
        h = strtol(rows, &end, 10);
        if (end == rows) h = 0;
    }
    if (end == text || *end != '\0' || errno == ERANGE || w < 1 || w > CLSTATS_MAX_WIDTH || h < 1 ||
        h > CLSTATS_MAX_WIDTH)
        return cli_usage_error("window size must be N or WxH, each from 1 to %d, not \"%s\"",
                               CLSTATS_MAX_WIDTH, text);
    *width = (int)w;
    *height = (int)h;
    return EXIT_OK;
}

/* Two numbers "A,B" for --origin, --valid-range and ring radii. */
static bool parse_pair(const char *text, double *a, double *b)
{
    const char *comma = strchr(text, ',');
    if (!comma || comma == text) return false;
    char first[64];
    if ((size_t)(comma - text) >= sizeof first) return false;
    memcpy(first, text, (size_t)(comma - text));
    first[comma - text] = '\0';
    return cli_number(first, a) && cli_number(comma + 1, b);
}

static int parse_origin(const char *text, struct options *o)
{
    double x, y;
    if (!parse_pair(text, &x, &y) || x != (int)x || y != (int)y || fabs(x) > 255 || fabs(y) > 255)
        return cli_usage_error("--origin needs two whole numbers X,Y, not \"%s\"", text);
    o->origin_x = (int)x;
    o->origin_y = (int)y;
    return EXIT_OK;
}

static int parse_footprint(const char *text, struct options *o)
{
    o->footprint = text;
    o->footprint_file = NULL;
    if (strncmp(text, "circle:", 7) == 0) {
        o->r_in = -1;
        if (!cli_number(text + 7, &o->r_out) || !(o->r_out >= 0 && o->r_out < 128))
            return cli_usage_error("--footprint circle:R needs a radius from 0 to 127, not \"%s\"",
                                   text);
        return EXIT_OK;
    }
    if (strncmp(text, "ring:", 5) == 0) {
        if (!parse_pair(text + 5, &o->r_in, &o->r_out) || !(o->r_in >= 0) || !(o->r_out < 128) ||
            !(o->r_in < o->r_out))
            return cli_usage_error("--footprint ring:RIN,ROUT needs 0 <= RIN < ROUT < 128, not "
                                   "\"%s\"",
                                   text);
        return EXIT_OK;
    }
    if (!*text) return cli_usage_error("--footprint needs circle:R, ring:RIN,ROUT or a file");
    o->footprint_file = text;
    return EXIT_OK;
}

/* scipy casts cval to the image's dtype: a subnormal stays one, beyond float32's range it
 * becomes an infinity. */
/* The constant as given (a float64 image's) and cast to float32 (a float32 image's). */
static int parse_cval(const char *text, float *out, double *out64)
{
    double v;
    if (!cli_number(text, &v)) return cli_usage_error("--cval needs a number, not \"%s\"", text);
    *out = (float)v;
    *out64 = v;
    return EXIT_OK;
}

/* A byte count with an optional binary suffix: 1048576, 512K, 64M, 2G, 1T (K = 1024 bytes;
 * "B" or "iB" may follow the letter). */
static int parse_size(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    int shift = 0;
    const char *units = "KMGT";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (u) {
        shift = 10 * (int)(u - units + 1);
        end++;
        if (strcmp(end, "B") == 0 || strcmp(end, "iB") == 0) end += strlen(end);
    } else if (strcmp(end, "B") == 0) {
        end++;
    }
    if (end == text || !isdigit((unsigned char)text[0]) || *end != '\0' || errno == ERANGE ||
        v == 0 || (shift && v > (UINT64_MAX >> shift)))
        return cli_usage_error("--max-memory needs a size such as 512M or 4G, not \"%s\"", text);
    *out = (uint64_t)v << shift;
    return EXIT_OK;
}

enum option_id {
    OPT_OUTPUT,
    OPT_MAX_MEMORY,
    OPT_CUBE,
    OPT_WIDTH,
    OPT_MAPS,
    OPT_BOUNDARY,
    OPT_CVAL,
    OPT_LIST_DEVICES,
    OPT_PNG,
    OPT_OVERWRITE,
    OPT_ORIGIN,
    OPT_FOOTPRINT,
    OPT_EVEN,
    OPT_MASK,
    OPT_VALID_RANGE,
    OPT_BITPIX,
};

static const struct cli_option specs[] = {
    {OPT_OUTPUT, "output", 'o', true},
    {OPT_MAX_MEMORY, "max-memory", 0, true},
    {OPT_CUBE, "cube", 0, true},
    {OPT_WIDTH, "width", 'w', true},
    {OPT_MAPS, "maps", 'm', true},
    {OPT_BOUNDARY, "boundary", 'b', true},
    {OPT_CVAL, "cval", 0, true},
    {OPT_LIST_DEVICES, "list-devices", 0, false},
    {OPT_PNG, "png", 0, true},
    {OPT_OVERWRITE, "overwrite", 0, false},
    {OPT_ORIGIN, "origin", 0, true},
    {OPT_FOOTPRINT, "footprint", 0, true},
    {OPT_EVEN, "even", 0, true},
    {OPT_MASK, "mask", 0, true},
    {OPT_VALID_RANGE, "valid-range", 0, true},
    {OPT_BITPIX, "bitpix", 0, true},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

const char *const even_names[3] = {"mean", "lower", "upper"};

static int apply(void *user, int id, const char *value)
{
    struct options *o = user;
    char err[200];
    int n;
    switch (id) {
    case OPT_OUTPUT:
        o->output_target = value;
        o->output_option = true;
        return EXIT_OK;
    case OPT_MAX_MEMORY:
        return parse_size(value, &o->max_memory);
    case OPT_CUBE:
        if (strcmp(value, "planes") != 0 && strcmp(value, "refuse") != 0)
            return cli_usage_error("--cube takes planes or refuse, not \"%s\"", value);
        o->refuse_cubes = strcmp(value, "refuse") == 0;
        return EXIT_OK;
    case OPT_WIDTH:
        return parse_width(value, &o->width, &o->height);
    case OPT_MAPS:
        n = maps_parse(value, o->maps, err, sizeof err);
        if (n < 0) return cli_usage_error("%s", err);
        o->n_maps = n;
        return EXIT_OK;
    case OPT_BOUNDARY:
        if (clstats_boundary_from_name(value, &o->boundary) != CLSTATS_OK)
            return cli_usage_error("unknown boundary mode \"%s\" (reflect, mirror, nearest, "
                                   "constant or wrap)",
                                   value);
        return EXIT_OK;
    case OPT_CVAL:
        o->cval_given = true;
        return parse_cval(value, &o->cval, &o->cval64);
    case OPT_LIST_DEVICES:
        o->list_devices = true;
        return EXIT_OK;
    case OPT_PNG:
        o->png_output = value;
        return EXIT_OK;
    case OPT_OVERWRITE:
        o->overwrite = true;
        return EXIT_OK;
    case OPT_ORIGIN:
        return parse_origin(value, o);
    case OPT_FOOTPRINT:
        return parse_footprint(value, o);
    case OPT_EVEN:
        for (int rule = 0; rule < 3; rule++)
            if (strcmp(value, even_names[rule]) == 0) {
                o->even = (enum clstats_even)rule;
                return EXIT_OK;
            }
        return cli_usage_error("--even takes mean, lower or upper, not \"%s\"", value);
    case OPT_MASK:
        if (!*value) return cli_usage_error("--mask needs a file name");
        o->mask = value;
        return EXIT_OK;
    case OPT_VALID_RANGE:
        if (!parse_pair(value, &o->valid_lo, &o->valid_hi) || !(o->valid_lo <= o->valid_hi))
            return cli_usage_error("--valid-range needs LO,HI with LO <= HI, not \"%s\"", value);
        o->valid_range = true;
        return EXIT_OK;
    case OPT_BITPIX:
        if (strcmp(value, "-32") != 0 && strcmp(value, "-64") != 0)
            return cli_usage_error("--bitpix takes -32 or -64, not \"%s\"", value);
        o->bitpix = atoi(value);
        return EXIT_OK;
    }
    return EXIT_OK;
}

/* Splits the file names: with -o every one is an input; without, INPUT [OUTPUT]. */
static int assign_files(struct options *o, const char **names, int n)
{
    if (n == 0) return cli_usage_error("no input file given");
    if (o->output_option) {
        o->inputs = names;
        o->n_inputs = n;
        if (n > 1 && o->png_output && !strstr(o->png_output, "{}"))
            return cli_usage_error("with several inputs --png needs a pattern with {}, not \"%s\"",
                                   o->png_output);
        return EXIT_OK;
    }
    if (n > 2)
        return cli_usage_error("too many arguments (\"%s\"); several inputs need -o DIR or -o "
                               "PATTERN",
                               names[2]);
    o->inputs = names;
    o->n_inputs = 1;
    o->output_target = n == 2 ? names[1] : NULL;
    return EXIT_OK;
}

int options_parse(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->width = o->height = MADFILTER_DEFAULT_WIDTH;
    o->boundary = CLSTATS_BOUNDARY_REFLECT;
    o->maps[0] = MAP_MAD;
    o->n_maps = 1;
    o->max_memory = MADFILTER_DEFAULT_MAX_MEMORY;

    /* argv outlives the options, so file names are kept as pointers into it. */
    o->names = calloc((size_t)argc, sizeof *o->names);
    if (!o->names) return cli_usage_error("out of memory");
    int n_names = 0;
    struct cli_common common;
    int rc =
        cli_parse("madfilter", argc, argv, specs, N_SPECS, apply, o, &common, o->names, &n_names);
    if (rc != EXIT_OK) return rc;
    o->device = common.device;
    o->quiet = common.quiet;
    o->help = common.help;
    o->version = common.version;

    if (o->help || o->version || o->list_devices) return EXIT_OK;
    /* The window's own rule for origins, checked before any file is read (a footprint file's
     * extent is checked once it is read). */
    if (!o->footprint_file) {
        const int side = o->footprint ? 2 * (int)floor(o->r_out) + 1 : 0;
        const struct clstats_filter_params p = {.width = side ? side : o->width,
                                                .height = side ? side : o->height,
                                                .origin_x = o->origin_x,
                                                .origin_y = o->origin_y};
        if (clstats_filter_window(&p, NULL, NULL, NULL, NULL) != CLSTATS_OK)
            return cli_usage_error("%s", clstats_ctx_message(NULL));
    }
    if (o->cval_given && o->boundary != CLSTATS_BOUNDARY_CONSTANT)
        return cli_usage_error("--cval applies only to --boundary constant (the boundary is %s)",
                               clstats_boundary_name(o->boundary));
    rc = assign_files(o, o->names, n_names);
    if (rc != EXIT_OK) return rc;
    if (!o->output_target && !o->png_output) return cli_usage_error("no output file given");
    if (o->output_target && o->output_target[0] == '!') {
        o->output_target++;
        o->overwrite = true;
    }
    if (o->output_target && o->output_target[0] == '\0')
        return cli_usage_error("the output file name is empty");
    /* OUTPUT "-" is FITS on standard output (outputs.c); a PNG preview is always a file. */
    if (o->png_output && strcmp(o->png_output, "-") == 0)
        return cli_usage_error("--png writes a file, not standard output (-): give a file name");
    return EXIT_OK;
}

void options_free(struct options *o)
{
    free(o->names);
    o->names = NULL;
}
