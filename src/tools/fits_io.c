/* fits_io.c - FITS reading and writing for madfilter, through cfitsio: cfitsio applies BSCALE and
 * BZERO, turns BLANK into NaN, decompresses .fz and .gz and resolves "in.fits[SCI]"; this file
 * checks the shape, carries the header over without its structural keywords, and words errors. */
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
    /* gzip, Unix compress, pack, bzip2, zip */
    return n >= 2 &&
           ((head[0] == 0x1f && (head[1] == 0x8b || head[1] == 0x9d || head[1] == 0x1e)) ||
            (head[0] == 'B' && head[1] == 'Z') || (head[0] == 'P' && head[1] == 'K'));
}

/* One line from a cfitsio failure: the status words and the first (most specific) message. */
static void describe(int status, const char *what, char *err, size_t errlen)
{
    char text[FLEN_STATUS] = "", detail[FLEN_ERRMSG] = "";
    fits_get_errstatus(status, text);
    fits_read_errmsg(detail);
    fits_clear_errmsg();
    size_t len = strlen(detail);
    while (len && (detail[len - 1] == ' ' || detail[len - 1] == '\n'))
        detail[--len] = '\0';
    if (detail[0] && strcmp(detail, text) != 0)
        snprintf(err, errlen, "%s: %s (%s)", what, text, detail);
    else
        snprintf(err, errlen, "%s: %s", what, text);
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
        describe(status, what, err, errlen);
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
        char what[FLEN_FILENAME + 40];
        snprintf(what, sizeof what, "cannot read the header of %s", name);
        describe(status, what, err, errlen);
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

/* NAXIS 2, or more with every further axis of length 1. */
static int check_shape(const char *name, int naxis, const LONGLONG *naxes, char *err, size_t errlen)
{
    if (naxis == 0) {
        snprintf(err, errlen, "%s has no image data (NAXIS = 0)", name);
        return -1;
    }
    if (naxis == 1) {
        snprintf(err, errlen, "%s is 1-D (NAXIS1 = %lld); madfilter needs a 2-D image", name,
                 (long long)naxes[0]);
        return -1;
    }
    for (int i = 2; i < naxis; i++) {
        if (naxes[i] != 1) {
            snprintf(err, errlen,
                     "%s is %d-D (NAXIS%d = %lld); madfilter needs a 2-D image: select a "
                     "plane, e.g. 'cube.fits[*,*,1:1]'",
                     name, naxis, i + 1, (long long)naxes[i]);
            return -1;
        }
    }
    if (naxes[0] < 1 || naxes[1] < 1 || naxes[0] > INT32_MAX / 2 || naxes[1] > INT32_MAX / 2) {
        snprintf(err, errlen, "%s has an unusable size %lld x %lld", name, (long long)naxes[0],
                 (long long)naxes[1]);
        return -1;
    }
    return 0;
}

int fits_io_read(const char *name, struct tool_image *img, char *err, size_t errlen)
{
    fitsfile *f = NULL;
    int status = 0, bitpix = 0, naxis = 0, anynul = 0;
    LONGLONG naxes[9] = {0};
    memset(img, 0, sizeof *img);

    if (fits_open_image(&f, name, READONLY, &status)) {
        describe_open(status, name, err, errlen);
        return -1;
    }
    if (fits_get_img_paramll(f, 9, &bitpix, &naxis, naxes, &status)) {
        char what[FLEN_FILENAME + 20];
        snprintf(what, sizeof what, "cannot read %s", name);
        describe(status, what, err, errlen);
        goto fail;
    }
    if (naxis > 9) naxis = 9;
    if (check_shape(name, naxis, naxes, err, errlen) != 0) goto fail;
    img->nx = (size_t)naxes[0];
    img->ny = (size_t)naxes[1];
    if (read_cards(f, img, name, err, errlen) != 0) goto fail;

    size_t n = img->nx * img->ny;
    img->data = malloc(n * sizeof *img->data);
    if (!img->data) {
        snprintf(err, errlen, "out of memory for a %zu x %zu image", img->nx, img->ny);
        goto fail;
    }
    /* Integer images: a NaN null value makes cfitsio turn BLANK into NaN. Float images have no
     * BLANK, and cfitsio's null check would also turn +-Inf into the null value and -0 and
     * subnormals into 0, so their bits are read untouched (a null value of 0 means no check).
     * Tile-compressed images keep the check: it is how their blank tiles come back as NaN. */
    float nan_null = NAN, no_check = 0.0f;
    int compressed = fits_is_compressed_image(f, &status);
    float *nulval = bitpix < 0 && !compressed ? &no_check : &nan_null;
    if (fits_read_img(f, TFLOAT, 1, (LONGLONG)n, nulval, img->data, &anynul, &status)) {
        char what[FLEN_FILENAME + 40];
        snprintf(what, sizeof what, "cannot read the pixels of %s", name);
        describe(status, what, err, errlen);
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        img->n_nan += isnan(img->data[i]) ? 1 : 0;
    fits_close_file(f, &status);
    return 0;

fail:
    status = 0;
    fits_close_file(f, &status);
    fits_clear_errmsg();
    tool_image_free(img);
    return -1;
}

static void write_hdu(fitsfile *f, const struct tool_image *in, const struct fits_map *m,
                      const char *const *history, int n_history, int *status)
{
    long naxes[2] = {(long)in->nx, (long)in->ny};
    char card[81];
    fits_create_img(f, FLOAT_IMG, 2, naxes, status);
    fits_write_key_str(f, "EXTNAME", (char *)m->extname, (char *)m->comment, status);
    for (int i = 0; i < in->n_cards && *status == 0; i++) {
        memcpy(card, in->cards + 80 * (size_t)i, 80);
        card[80] = '\0';
        if (m->unitless && strncmp(card, "BUNIT   ", 8) == 0) continue;
        fits_write_record(f, card, status);
    }
    for (int i = 0; i < n_history; i++)
        fits_write_history(f, (char *)history[i], status);
    fits_write_date(f, status);
    fits_write_img(f, TFLOAT, 1, (LONGLONG)(in->nx * in->ny), (float *)m->data, status);
    fits_write_chksum(f, status);
}

int fits_io_write(const char *path, const struct tool_image *in, const struct fits_map *maps,
                  int n_maps, const char *const *history, int n_history, char *err, size_t errlen)
{
    fitsfile *f = NULL;
    int status = 0;
    if (fits_create_file(&f, path, &status)) {
        describe(status, "cannot create the output", err, errlen);
        return -1;
    }
    for (int i = 0; i < n_maps && status == 0; i++)
        write_hdu(f, in, &maps[i], history, n_history, &status);
    if (status) {
        describe(status, "cannot write the output", err, errlen);
        status = 0;
        fits_close_file(f, &status);
        fits_clear_errmsg();
        return -1;
    }
    /* Closing flushes the buffers (and gzips a .gz file): a failure here is a failed write. */
    if (fits_close_file(f, &status)) {
        describe(status, "cannot finish writing the output", err, errlen);
        return -1;
    }
    return 0;
}
