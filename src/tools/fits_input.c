/* fits_input.c - FITS input for madfilter, through cfitsio: cfitsio applies BSCALE and BZERO,
 * turns BLANK into NaN, decompresses .fz and .gz and resolves "in.fits[SCI]"; this file checks
 * the shape, keeps the header without its structural keywords, reads rows on demand and words
 * the errors. */
#include "fits_io.h"

#include <errno.h>
#include <fitsio.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Keywords that describe the input's layout rather than the sky, so must not be copied: the
 * output is a float32 image with its own structure (cfitsio patterns: '#' is any digits). */
static char *structural[] = {
    "SIMPLE",  "XTENSION", "BITPIX",  "NAXIS",    "NAXIS#",   "EXTEND",   "PCOUNT",   "GCOUNT",
    "BSCALE",  "BZERO",    "BLANK",   "CHECKSUM", "DATASUM",  "EXTNAME",  "EXTVER",   "EXTLEVEL",
    "HDUNAME", "INHERIT",  "DATAMIN", "DATAMAX",  "END",      "ZIMAGE",   "ZSIMPLE",  "ZTENSION",
    "ZBITPIX", "ZNAXIS",   "ZNAXIS#", "ZTILE#",   "ZCMPTYPE", "ZNAME#",   "ZVAL#",    "ZMASKCMP",
    "ZEXTEND", "ZBLOCKED", "ZPCOUNT", "ZGCOUNT",  "ZHECKSUM", "ZDATASUM", "ZQUANTIZ", "ZDITHER0",
    "ZSCALE",  "ZZERO",    "ZBLANK",  "TFIELDS",  "TTYPE#",   "TFORM#",   "TUNIT#",   "TNULL#",
    "TSCAL#",  "TZERO#",   "TDIM#",   "THEAP",
};
#define N_STRUCTURAL ((int)(sizeof structural / sizeof structural[0]))

/* cfitsio writes these two COMMENT cards into every primary header it creates; copying the
 * input's would repeat them. */
static bool is_cfitsio_boilerplate(const char *card)
{
    static const char *const lines[] = {
        "COMMENT   FITS (Flexible Image Transport System) format is defined in 'Astronomy",
        "COMMENT   and Astrophysics', volume 376, page 359; bibcode: 2001A&A...376..359H",
    };
    for (int i = 0; i < 2; i++)
        if (strncmp(card, lines[i], strlen(lines[i])) == 0) return true;
    return false;
}

/* Whether a file starts the way a FITS file, or one that cfitsio would decompress, starts. */
static bool looks_like_fits(const char *path)
{
    unsigned char head[10] = {0};
    FILE *fp = fopen(path, "rb");
    if (!fp) return true; /* not ours to judge: let cfitsio's words stand */
    size_t n = fread(head, 1, sizeof head, fp);
    fclose(fp);
    if (n >= 9 && (memcmp(head, "SIMPLE  =", 9) == 0 || memcmp(head, "XTENSION=", 9) == 0))
        return true;
    return n >= 2 && fits_compressed_magic(head);
}

/* Why fits_open_image failed, in the words an astronomer would use. */
static void describe_open(int status, const char *name, char *err, size_t errlen)
{
    char root[FLEN_FILENAME] = "";
    int s = 0;
    fits_parse_rootname((char *)name, root, &s);
    if (s == 0 && root[0] && strcmp(root, "-") != 0 && strstr(root, "://") == NULL &&
        access(root, R_OK) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", root, strerror(errno));
        fits_clear_errmsg();
        return;
    }
    if (s == 0 && root[0] && !looks_like_fits(root)) {
        snprintf(err, errlen, "%s is not a FITS file (nor a PNG)", root);
        fits_clear_errmsg();
        return;
    }
    switch (status) {
    case NOT_IMAGE:
        snprintf(err, errlen,
                 "%s is a table, not an image (select an image HDU, e.g. "
                 "'file.fits[1]')",
                 name);
        fits_clear_errmsg();
        return;
    case UNKNOWN_REC:
    case NO_SIMPLE:
    case BAD_SIMPLE:
    case NO_XTENSION:
    case UNKNOWN_EXT:
        snprintf(err, errlen, "%s is not a FITS file (nor a PNG)", root[0] ? root : name);
        fits_clear_errmsg();
        return;
    case BAD_HDU_NUM:
    case END_OF_FILE:
        snprintf(err, errlen, "%s: no such HDU in the file", name);
        fits_clear_errmsg();
        return;
    default: {
        char what[FLEN_FILENAME + 20];
        snprintf(what, sizeof what, "cannot read %s", name);
        fits_io_describe(status, what, err, errlen);
    }
    }
}

void fits_io_rootname(const char *name, char *root, size_t len)
{
    char buf[FLEN_FILENAME] = "";
    int status = 0;
    if (fits_parse_rootname((char *)name, buf, &status) != 0) buf[0] = '\0';
    fits_clear_errmsg();
    snprintf(root, len, "%s", buf);
}

/* The input header without structural keywords, as 80-character cards. */
static int read_cards(fitsfile *f, struct tool_image *img, const char *name, char *err,
                      size_t errlen)
{
    char *header = NULL;
    int nkeys = 0, status = 0;
    /* The "convert" variant shows a tile-compressed image's header as the image's own. */
    if (fits_convert_hdr2str(f, 0, structural, N_STRUCTURAL, &header, &nkeys, &status)) {
        /* cfitsio 4.2 can fail after it has allocated the string, and leaves it to us. */
        int ignored = 0;
        if (header) fits_free_memory(header, &ignored);
        char what[FLEN_FILENAME + 40];
        snprintf(what, sizeof what, "cannot read the header of %s", name);
        fits_io_describe(status, what, err, errlen);
        return -1;
    }
    size_t total = strlen(header) / 80;
    img->cards = malloc(total * 80 + 1);
    if (!img->cards) {
        fits_free_memory(header, &status);
        snprintf(err, errlen, "out of memory reading the header of %s", name);
        return -1;
    }
    img->n_cards = 0;
    for (size_t i = 0; i < total; i++) {
        const char *card = header + 80 * i;
        if (strncmp(card, "END     ", 8) == 0 || is_cfitsio_boilerplate(card)) continue;
        memcpy(img->cards + 80 * (size_t)img->n_cards++, card, 80);
    }
    fits_free_memory(header, &status);
    return 0;
}

/* An empty HDU (NAXIS 0): often a table file's primary HDU, which is worth saying. */
static void describe_empty(fitsfile *f, const char *name, char *err, size_t errlen)
{
    int n = 0, type = IMAGE_HDU, status = 0;
    fits_get_num_hdus(f, &n, &status);
    if (status == 0 && n > 1 && fits_movabs_hdu(f, 2, &type, &status) == 0 && type != IMAGE_HDU)
        snprintf(err, errlen,
                 "%s holds a table, not an image: its primary HDU is empty and extension 1 is a "
                 "table",
                 name);
    else
        snprintf(err, errlen, "%s has no image data (NAXIS = 0)", name);
    fits_clear_errmsg();
}

/* NAXIS 2, or 3 for a cube of planes; any further axis must have length 1. */
static int check_shape(const char *name, int naxis, const LONGLONG *naxes, bool refuse_cubes,
                       char *err, size_t errlen)
{
    if (naxis == 1) {
        snprintf(err, errlen, "%s is 1-D (NAXIS1 = %lld); madfilter needs a 2-D image", name,
                 (long long)naxes[0]);
        return -1;
    }
    for (int i = 3; i < naxis; i++) {
        if (naxes[i] != 1) {
            snprintf(err, errlen,
                     "%s is %d-D (NAXIS%d = %lld); madfilter takes 2-D images and cubes (NAXIS "
                     "3): select one, e.g. 'in.fits[*,*,*,1:1]'",
                     name, naxis, i + 1, (long long)naxes[i]);
            return -1;
        }
    }
    if (naxis >= 3 && naxes[2] > 1 && refuse_cubes) {
        snprintf(err, errlen,
                 "%s is a cube of %lld planes (NAXIS3) and --cube refuse was given: select a "
                 "plane, e.g. 'cube.fits[*,*,1:1]'",
                 name, (long long)naxes[2]);
        return -1;
    }
    for (int i = 0; i < naxis; i++) {
        if (naxes[i] < 1 || (i < 2 && naxes[i] > INT32_MAX / 2)) {
            snprintf(err, errlen, "%s has an unusable size (NAXIS%d = %lld)", name, i + 1,
                     (long long)naxes[i]);
            return -1;
        }
    }
    return 0;
}

/* Everything fits_io_open asks of cfitsio before pixels are read. */
static int open_image(const char *name, bool refuse_cubes, struct tool_image *img, char *err,
                      size_t errlen)
{
    fitsfile *f = NULL;
    int status = 0, bitpix = 0, naxis = 0;
    LONGLONG naxes[9] = {0};
    memset(img, 0, sizeof *img);
    img->name = name;
    if (fits_open_image(&f, name, READONLY, &status)) {
        describe_open(status, name, err, errlen);
        /* cfitsio leaves the file open when it is a table (NOT_IMAGE). */
        img->fits = f;
        image_close(img);
        return -1;
    }
    img->fits = f;
    if (fits_get_img_paramll(f, 9, &bitpix, &naxis, naxes, &status)) {
        char what[FLEN_FILENAME + 20];
        snprintf(what, sizeof what, "cannot read %s", name);
        fits_io_describe(status, what, err, errlen);
        goto fail;
    }
    if (naxis > 9) naxis = 9;
    if (naxis == 0) {
        describe_empty(f, name, err, errlen);
        goto fail;
    }
    if (check_shape(name, naxis, naxes, refuse_cubes, err, errlen) != 0) goto fail;
    img->nx = (size_t)naxes[0];
    img->ny = (size_t)naxes[1];
    img->planes = naxis >= 3 ? (size_t)naxes[2] : 1;
    img->cube = img->planes > 1;
    if (read_cards(f, img, name, err, errlen) != 0) goto fail;
    /* Integer images: a NaN null value makes cfitsio turn BLANK into NaN. Float images have no
     * BLANK, and cfitsio's null check would also turn +-Inf into the null value and -0 and
     * subnormals into 0, so their bits are read untouched (a null value of 0 means no check).
     * Tile-compressed images keep the check: it is how their blank tiles come back as NaN. */
    img->raw_floats = bitpix < 0 && !fits_is_compressed_image(f, &status);
    return 0;

fail:
    image_close(img);
    return -1;
}

struct open_request {
    const char *name;
    bool refuse_cubes;
};

/* The probe's child opens the image exactly as the parent will. */
static void open_in_probe(void *arg)
{
    const struct open_request *r = arg;
    struct tool_image img;
    char err[256];
    open_image(r->name, r->refuse_cubes, &img, err, sizeof err);
}

int fits_io_open(const char *name, bool refuse_cubes, uint64_t max_bytes, struct tool_image *img,
                 char *err, size_t errlen)
{
    char probe_path[FLEN_FILENAME + 8];
    memset(img, 0, sizeof *img);
    img->name = name;
    if (fits_preflight(name, max_bytes, probe_path, sizeof probe_path, err, errlen) != 0) return -1;
    struct open_request request = {name, refuse_cubes};
    if (probe_path[0] && fits_probe(probe_path, open_in_probe, &request, err, errlen) != 0)
        return -1;
    return open_image(name, refuse_cubes, img, err, errlen);
}

int fits_io_read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, float *dst,
                      char *err, size_t errlen)
{
    int status = 0, anynul = 0;
    LONGLONG first[9] = {1, (LONGLONG)row0 + 1, (LONGLONG)plane + 1, 1, 1, 1, 1, 1, 1};
    float nan_null = NAN, no_check = 0.0f;
    if (fits_read_pixll(img->fits, TFLOAT, first, (LONGLONG)(rows * img->nx),
                        img->raw_floats ? &no_check : &nan_null, dst, &anynul, &status)) {
        char what[FLEN_FILENAME + 40];
        snprintf(what, sizeof what, "cannot read the pixels of %s", img->name);
        fits_io_describe(status, what, err, errlen);
        return -1;
    }
    return 0;
}

void fits_io_close(struct tool_image *img)
{
    if (!img->fits) return;
    int status = 0;
    fits_close_file(img->fits, &status);
    fits_clear_errmsg();
    img->fits = NULL;
}
