/* fits_input.c - FITS input for madfilter, through cfitsio: cfitsio applies BSCALE and BZERO,
 * turns BLANK into NaN, decompresses .fz and .gz and resolves "in.fits[SCI]"; this file checks
 * the shape and the scaling keywords, keeps the header without its structural keywords, reads
 * rows on demand (image sections too, which cfitsio would copy through its null checks) and
 * words the errors. */
#include "fits_io.h"
#include "parallel.h"

#include <errno.h>
#include <fcntl.h>
#include <fitsio.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Whether a card's keyword is one of the structural ones (cfitsio's patterns). */
static bool is_structural(const char *card)
{
    char name[FLEN_KEYWORD] = "";
    int len = 0, status = 0;
    fits_get_keyname((char *)card, name, &len, &status);
    if (status || !name[0]) return false;
    for (int i = 0; i < N_STRUCTURAL; i++) {
        int match = 0, exact = 0;
        fits_compare_str(structural[i], name, CASEINSEN, &match, &exact);
        if (match) return true;
    }
    return false;
}

static void keep_card(struct tool_image *img, const char *card)
{
    if (strncmp(card, "END     ", 8) == 0 || is_cfitsio_boilerplate(card)) return;
    memcpy(img->cards + 80 * (size_t)img->n_cards++, card, 80);
}

/* A tile-compressed image whose header cfitsio cannot convert (cfitsio 4.2 refuses some valid
 * files, astropy's comp.fits among them, while it reads their pixels) keeps the compressed
 * HDU's own cards, less the structural and compression keywords: the image's keywords are
 * among them under their own names. What is left out is said in img->notice. */
static int read_compressed_cards(fitsfile *f, struct tool_image *img, const char *name,
                                 const char *why)
{
    int nkeys = 0, status = 0, unreadable = 0;
    if (fits_get_hdrspace(f, &nkeys, NULL, &status) ||
        !(img->cards = malloc(80 * (size_t)nkeys + 1)))
        return -1;
    img->n_cards = 0;
    for (int k = 1; k <= nkeys; k++) {
        char card[FLEN_CARD];
        status = 0;
        if (fits_read_record(f, k, card, &status)) {
            unreadable++;
            continue;
        }
        size_t n = strlen(card);
        memset(card + n, ' ', 80 - n);
        if (!is_structural(card)) keep_card(img, card);
    }
    fits_clear_errmsg();
    snprintf(img->notice, sizeof img->notice,
             "cfitsio cannot convert the compressed image header of %.150s (%.80s): its cards "
             "were copied from the compressed HDU's own header, less the compression keywords%s",
             name, why, unreadable ? ", and some unreadable cards were left out" : "");
    return 0;
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
        char what[FLEN_FILENAME + 40], why[FLEN_STATUS] = "";
        fits_get_errstatus(status, why);
        ignored = 0;
        if (fits_is_compressed_image(f, &ignored) && read_compressed_cards(f, img, name, why) == 0)
            return 0;
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
    for (size_t i = 0; i < total; i++)
        keep_card(img, header + 80 * i);
    fits_free_memory(header, &status);
    return 0;
}

/* BSCALE and BZERO, when present, must be finite numbers: cfitsio reads a value such as NaN or
 * 1E400 as an error and quietly leaves the integers unscaled, which would be wrong numbers. */
static int check_scaling(fitsfile *f, const char *name, char *err, size_t errlen)
{
    static const char *const keys[] = {"BSCALE", "BZERO"};
    for (int i = 0; i < 2; i++) {
        char value[FLEN_VALUE] = "", text[FLEN_VALUE], *end;
        int status = 0;
        if (fits_read_keyword(f, keys[i], value, NULL, &status)) {
            fits_clear_errmsg();
            continue; /* absent: no scaling */
        }
        size_t n = 0;
        for (const char *p = value; *p && n + 1 < sizeof text; p++)
            if (*p != ' ') text[n++] = *p == 'D' || *p == 'd' ? 'E' : *p;
        text[n] = '\0';
        errno = 0;
        const double v = strtod(text, &end);
        if (n == 0 || *end != '\0' || errno == ERANGE || !isfinite(v)) {
            snprintf(err, errlen,
                     "%s: %s = %s is not a finite number, so its pixel values cannot be "
                     "computed; repair the keyword",
                     name, keys[i], value);
            return -1;
        }
    }
    return 0;
}

/* Whether an empty primary HDU stands before a table: a table file, which is worth saying. */
static bool holds_table(fitsfile *f)
{
    int n = 0, type = IMAGE_HDU, status = 0;
    fits_get_num_hdus(f, &n, &status);
    const bool table =
        status == 0 && n > 1 && fits_movabs_hdu(f, 2, &type, &status) == 0 && type != IMAGE_HDU;
    fits_clear_errmsg();
    return table;
}

/* An empty HDU (NAXIS 0). */
static void describe_empty(fitsfile *f, const char *name, char *err, size_t errlen)
{
    if (holds_table(f))
        snprintf(err, errlen,
                 "%s holds a table, not an image: its primary HDU is empty and extension 1 is a "
                 "table",
                 name);
    else
        snprintf(err, errlen, "%s has no image data (NAXIS = 0)", name);
}

/* The shape madfilter or imstats can work on: NAXIS 2, or 3 for a cube of planes, any further
 * axis of length 1 (imstats: any shape, its planes being every axis past the second). */
static int check_shape(const char *name, int naxis, const LONGLONG *naxes, enum image_shape want,
                       char *err, size_t errlen)
{
    for (int i = 0; i < naxis; i++) {
        if (naxes[i] < (want == SHAPE_ANY ? 0 : 1) || naxes[i] > INT32_MAX / 2) {
            snprintf(err, errlen, "%s has an unusable size (NAXIS%d = %lld)", name, i + 1,
                     (long long)naxes[i]);
            return -1;
        }
    }
    if (want == SHAPE_ANY) return 0;
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
    if (naxis >= 3 && naxes[2] > 1 && want == SHAPE_NO_CUBES) {
        snprintf(err, errlen,
                 "%s is a cube of %lld planes (NAXIS3) and --cube refuse was given: select a "
                 "plane, e.g. 'cube.fits[*,*,1:1]'",
                 name, (long long)naxes[2]);
        return -1;
    }
    return 0;
}

/* One number of a section, 1 to n. */
static bool section_number(const char **p, long long n, long long *out)
{
    char *end;
    errno = 0;
    const long long v = strtoll(*p, &end, 10);
    if (end == *p || errno == ERANGE || v < 1 || v > n) return false;
    *out = v;
    *p = end;
    return true;
}

/* A cfitsio image section, "[a:b,c:d]" with '*' for a whole axis, '-*' for a whole axis
 * backwards, a > b for a backward range and ":s" for every s-th pixel; axes it leaves out are
 * whole. Fills s and replaces naxes with the section's lengths. */
static int parse_section(const char *text, int naxis, LONGLONG *naxes, struct image_section *s,
                         const char *name, char *err, size_t errlen)
{
    const char *p = text;
    memset(s, 0, sizeof *s);
    s->active = true;
    s->naxis = naxis;
    for (int a = 0; a < naxis; a++) {
        while (*p == ' ')
            p++;
        long long first = 1, last = naxes[a], step = 1;
        const bool given = a == 0 || *p == ',';
        if (a > 0 && given) p++;
        while (given && *p == ' ')
            p++;
        if (!given) {
            /* an axis the section leaves out is taken whole */
        } else if (strncmp(p, "-*", 2) == 0) {
            first = naxes[a], last = 1, p += 2;
        } else if (*p == '*') {
            p++;
        } else if (!section_number(&p, naxes[a], &first) || *p++ != ':' ||
                   !section_number(&p, naxes[a], &last)) {
            goto bad;
        }
        if (given && *p == ':' && (p++, !section_number(&p, INT32_MAX, &step))) goto bad;
        while (*p == ' ')
            p++;
        s->first[a] = first;
        s->step[a] = first <= last ? step : -step;
        s->length[a] = (first <= last ? last - first : first - last) / step + 1;
        naxes[a] = s->length[a];
    }
    if (*p == '\0') return 0;
bad:
    snprintf(err, errlen,
             "%s: cannot read the image section [%s] (wanted a:b, *, -* or a:b:step for each of "
             "%d axes, within the image)",
             name, text, naxis);
    return -1;
}

/* The name cfitsio should open when name selects an image section: the same without the
 * section, which fits_io_read_rows applies itself; "" when there is none (or cfitsio's other
 * filters are there too, which are left to cfitsio). */
static void section_split(const char *name, char *plain, size_t len, char *section, size_t slen)
{
    char type[FLEN_FILENAME], in[FLEN_FILENAME], out[FLEN_FILENAME], ext[FLEN_FILENAME],
        filter[FLEN_FILENAME], bin[FLEN_FILENAME], col[FLEN_FILENAME], pix[FLEN_FILENAME];
    int status = 0;
    plain[0] = section[0] = '\0';
    if (strlen(name) >= FLEN_FILENAME ||
        fits_parse_input_filename((char *)name, type, in, out, ext, filter, bin, col, pix,
                                  &status) ||
        !filter[0] || out[0] || bin[0] || col[0] || pix[0] ||
        filter[strspn(filter, "0123456789*:,- ")] != '\0') {
        fits_clear_errmsg();
        return;
    }
    const bool plain_file = strcmp(type, "file://") == 0 && strncmp(name, "file://", 7) != 0;
    if (snprintf(plain, len, "%s%s%s%s%s", plain_file ? "" : type, in, ext[0] ? "[" : "", ext,
                 ext[0] ? "]" : "") >= (int)len ||
        snprintf(section, slen, "%s", filter) >= (int)slen)
        plain[0] = section[0] = '\0';
}

/* Everything fits_io_open asks of cfitsio before pixels are read. */
static int open_image(const char *name, enum image_shape want, struct tool_image *img, char *err,
                      size_t errlen)
{
    fitsfile *f = NULL;
    int status = 0, bitpix = 0, naxis = 0;
    LONGLONG naxes[9] = {0};
    char plain[FLEN_FILENAME], section[FLEN_FILENAME];
    memset(img, 0, sizeof *img);
    img->name = name;
    section_split(name, plain, sizeof plain, section, sizeof section);
    if (fits_open_image(&f, plain[0] ? plain : name, READONLY, &status)) {
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
    if (naxis == 0 && (want != SHAPE_ANY || holds_table(f))) {
        describe_empty(f, name, err, errlen);
        goto fail;
    }
    if (section[0] && parse_section(section, naxis, naxes, &img->section, name, err, errlen) != 0)
        goto fail;
    if (check_shape(name, naxis, naxes, want, err, errlen) != 0) goto fail;
    img->nx = naxis >= 1 ? (size_t)naxes[0] : 0; /* imstats: an empty image has no pixel */
    img->ny = naxis >= 2 ? (size_t)naxes[1] : 1;
    img->planes = 1;
    for (int i = 2; i < naxis; i++)
        img->planes *= (size_t)naxes[i]; /* each below 2^30, and at most 7 of them */
    img->cube = img->planes > 1;
    img->naxis = naxis;
    img->bitpix = bitpix;
    for (int i = 0; i < naxis; i++)
        img->axes[i] = naxes[i];
    if (check_scaling(f, name, err, errlen) != 0) goto fail;
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
    enum image_shape want;
};

/* The probe's child opens the image exactly as the parent will. */
static void open_in_probe(void *arg)
{
    const struct open_request *r = arg;
    struct tool_image img;
    char err[256];
    open_image(r->name, r->want, &img, err, sizeof err);
}

/* Whether a keyword is absent or holds exactly `value`. */
static bool keyword_is(fitsfile *f, const char *key, double value)
{
    double v = value;
    int status = 0;
    if (fits_read_key(f, TDOUBLE, key, &v, NULL, &status)) {
        fits_clear_errmsg();
        return status == KEY_NO_EXIST;
    }
    return v == value;
}

/* Plain float pixels in an uncompressed disk file, unscaled and whole (no section), are read
 * straight from the file by a few threads (read_direct): cfitsio copies them through its buffers
 * on one core, several times slower (bench/RESULTS.md). The bits are the same: cfitsio would
 * only swap their bytes, the null check being off for floats. */
static void open_direct(struct tool_image *img)
{
    fitsfile *f = img->fits;
    char url[FLEN_FILENAME] = "", path[FLEN_FILENAME] = "";
    LONGLONG head = 0, data = 0, end = 0;
    int status = 0;
    if (!img->raw_floats || img->section.active || img->reader ||
        (img->bitpix != -32 && img->bitpix != -64) || !keyword_is(f, "BSCALE", 1.0) ||
        !keyword_is(f, "BZERO", 0.0) || fits_url_type(f, url, &status) ||
        strcmp(url, "file://") != 0 || fits_file_name(f, path, &status) ||
        fits_get_hduaddrll(f, &head, &data, &end, &status)) {
        fits_clear_errmsg();
        return;
    }
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    img->direct = true;
    img->direct_fd = fd;
    img->direct_offset = (uint64_t)data;
}

int fits_io_open(const char *name, enum image_shape want, uint64_t max_bytes,
                 struct tool_image *img, char *err, size_t errlen)
{
    char probe_path[FLEN_FILENAME + 8];
    memset(img, 0, sizeof *img);
    img->name = name;
    if (fits_preflight(name, max_bytes, probe_path, sizeof probe_path, err, errlen) != 0) return -1;
    struct open_request request = {name, want};
    if (probe_path[0] && fits_probe(probe_path, open_in_probe, &request, err, errlen) != 0)
        return -1;
    if (open_image(name, want, img, err, errlen) != 0) return -1;
    int status = 0;
    if (fits_is_compressed_image(img->fits, &status) && fits_reader_start(img, err, errlen) != 0) {
        image_close(img);
        return -1;
    }
    open_direct(img);
    return 0;
}

/* The 1-based source pixel of axis a at position i of the selection. */
static long source_pixel(const struct tool_image *img, int a, long long i)
{
    const struct image_section *s = &img->section;
    return (long)(s->active ? s->first[a] + i * s->step[a] : i + 1);
}

/* Fills the axes past the second of first (1-based) for one plane: plane counts through axis 3,
 * then 4, ... of the selection. */
static void plane_position(const struct tool_image *img, size_t plane, long *first)
{
    for (int a = 2; a < img->naxis; a++) {
        first[a] = source_pixel(img, a, (long long)(plane % (size_t)img->axes[a]));
        plane /= (size_t)img->axes[a];
    }
}

/* Reverses n elements of `size` bytes (4 or 8). */
static void reverse(void *v, size_t n, size_t size)
{
    char *b = v, t[8];
    for (size_t i = 0, j = n - 1; n > 1 && i < j; i++, j--) {
        memcpy(t, b + i * size, size);
        memcpy(b + i * size, b + j * size, size);
        memcpy(b + j * size, t, size);
    }
}

/* Rows of an image section: one cfitsio subset read for rows that run forward, else a row at a
 * time; a backward x axis is reversed in place. */
static int read_section_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows,
                             int type, void *dst, void *null, int *status)
{
    const size_t size = type == TDOUBLE ? sizeof(double) : sizeof(float);
    const struct image_section *s = &img->section;
    long first[9] = {0}, last[9] = {0}, inc[9] = {0};
    for (int a = 0; a < img->naxis; a++)
        inc[a] = 1;
    plane_position(img, plane, first);
    memcpy(last, first, sizeof first);
    const long long xa = s->first[0], xb = xa + (s->length[0] - 1) * s->step[0];
    first[0] = (long)(xa < xb ? xa : xb), last[0] = (long)(xa < xb ? xb : xa);
    inc[0] = (long)(s->step[0] < 0 ? -s->step[0] : s->step[0]);
    const bool forward = img->naxis < 2 || s->step[1] == 1;
    for (size_t r = 0; r < rows; r += forward ? rows : 1) {
        const size_t n = forward ? rows : 1;
        if (img->naxis >= 2) {
            first[1] = source_pixel(img, 1, (long long)(row0 + r));
            last[1] = first[1] + (long)n - 1;
        }
        int anynul = 0;
        if (fits_read_subset(img->fits, type, first, last, inc, null,
                             (char *)dst + r * img->nx * size, &anynul, status))
            return -1;
    }
    if (s->step[0] < 0)
        for (size_t r = 0; r < rows; r++)
            reverse((char *)dst + r * img->nx * size, img->nx, size);
    return 0;
}

/* One thread's share of a direct read: its bytes from the file, then swapped in place. */
struct direct_read {
    int fd;
    uint64_t offset;
    char *dst;
    size_t bytes;
    int size;
    bool failed[PARALLEL_MAX_PARTS];
};

static void read_part(void *arg, int part, int parts)
{
    struct direct_read *r = arg;
    const size_t unit = (size_t)r->size * 4096;
    const size_t share = (r->bytes / (size_t)parts + unit - 1) / unit * unit;
    const size_t from = share * (size_t)part < r->bytes ? share * (size_t)part : r->bytes;
    const size_t to = from + share < r->bytes ? from + share : r->bytes;
    r->failed[part] = false;
    for (size_t at = from; at < to;) {
        const ssize_t n = pread(r->fd, r->dst + at, to - at, (off_t)(r->offset + at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            r->failed[part] = true;
            return;
        }
        at += (size_t)n;
    }
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
    if (r->size == 4) {
        uint32_t *w = (uint32_t *)(r->dst + from);
        for (size_t i = 0; i < (to - from) / 4; i++)
            w[i] = __builtin_bswap32(w[i]);
    } else {
        uint64_t *w = (uint64_t *)(r->dst + from);
        for (size_t i = 0; i < (to - from) / 8; i++)
            w[i] = __builtin_bswap64(w[i]);
    }
#endif
}

/* Rows read straight from the file (open_direct). Returns false when the file ends early, for
 * cfitsio to read them again and word the error. */
static bool read_direct(struct tool_image *img, size_t plane, size_t row0, size_t rows, int size,
                        void *dst)
{
    const uint64_t first = ((uint64_t)plane * img->ny + row0) * img->nx;
    struct direct_read r = {.fd = img->direct_fd,
                            .offset = img->direct_offset + first * (uint64_t)size,
                            .dst = dst,
                            .bytes = rows * img->nx * (size_t)size,
                            .size = size};
    const int parts = parallel_threads(r.bytes);
    parallel_run(parts, read_part, &r);
    for (int i = 0; i < parts; i++)
        if (r.failed[i]) return false;
    return true;
}

/* Rows as cfitsio's type TFLOAT or TDOUBLE. */
static int read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, int type,
                     void *dst, char *err, size_t errlen)
{
    if (img->reader)
        return fits_reader_read(img, plane, row0, rows, dst, type == TDOUBLE, err, errlen);
    const int size = type == TDOUBLE ? 8 : 4;
    if (img->direct && img->bitpix == -8 * size && read_direct(img, plane, row0, rows, size, dst))
        return 0;
    int status = 0, anynul = 0;
    float nan_null = NAN, no_check = 0.0f;
    double nan_null64 = NAN, no_check64 = 0.0;
    void *null = type == TDOUBLE ? (img->raw_floats ? (void *)&no_check64 : (void *)&nan_null64)
                                 : (img->raw_floats ? (void *)&no_check : (void *)&nan_null);
    if (img->section.active) {
        read_section_rows(img, plane, row0, rows, type, dst, null, &status);
    } else {
        long position[9] = {1, (long)row0 + 1, 1, 1, 1, 1, 1, 1, 1};
        plane_position(img, plane, position);
        LONGLONG first[9];
        for (int a = 0; a < 9; a++)
            first[a] = position[a] ? position[a] : 1;
        fits_read_pixll(img->fits, type, first, (LONGLONG)(rows * img->nx), null, dst, &anynul,
                        &status);
    }
    if (status) {
        char what[FLEN_FILENAME + 40];
        snprintf(what, sizeof what, "cannot read the pixels of %s", img->name);
        fits_io_describe(status, what, err, errlen);
        return -1;
    }
    return 0;
}

int fits_io_read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, float *dst,
                      char *err, size_t errlen)
{
    return read_rows(img, plane, row0, rows, TFLOAT, dst, err, errlen);
}

int fits_io_read_rows_f64(struct tool_image *img, size_t plane, size_t row0, size_t rows,
                          double *dst, char *err, size_t errlen)
{
    return read_rows(img, plane, row0, rows, TDOUBLE, dst, err, errlen);
}

void fits_io_close(struct tool_image *img)
{
    fits_reader_stop(img);
    if (img->direct) close(img->direct_fd);
    img->direct = false;
    if (!img->fits) return;
    int status = 0;
    fits_close_file(img->fits, &status);
    fits_clear_errmsg();
    img->fits = NULL;
}
