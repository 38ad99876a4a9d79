/* fits_preflight.c - the few bytes of an input that cfitsio 4.2 trusts before it checks them,
 * read here first so that a damaged or hostile file gets a clear error instead of cfitsio
 * allocating gigabytes or aborting:
 * - a compressed input (gzip, zip, compress, pack, bzip2) is unpacked whole into memory, and for
 *   gzip and zip cfitsio allocates the size the file's own bytes claim before unpacking;
 * - a table's TTYPEn value that is unquoted and fills its card is copied into a 70-byte field
 *   with strcpy: one byte over, which glibc's fortified strcpy turns into an abort;
 * - a numeric keyword that holds no number takes an error path that overflows (ffc2j), and a
 *   tile-compressed image's ZTILEn of 0 is divided by (SIGFPE);
 * - a tile is unpacked whole into memory, however large its ZTILEn make it.
 * cfitsio parses the headers it passes on the way to the image (an empty primary HDU, or
 * 'in.fits[SCI]'), so every header of the file is screened. What the screen does not name,
 * fits_probe.c catches: the headers are then opened once in a child process. */
#include "fits_io.h"

#include <fitsio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BLOCK 2880
#define CARD 80

/* cfitsio looks for these when the name itself does not open (in.fits -> in.fits.gz). */
static const char *const suffixes[] = {"", ".gz", ".bz2", ".Z", ".z", ".zip", "-z", "-gz"};

/* The first of root and the names cfitsio falls back to that exists, into path. */
static bool find_as_cfitsio_would(const char *root, char *path, size_t len, struct stat *st)
{
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, len, "%s%s", root, suffixes[i]);
        if (stat(path, st) == 0) return true;
    }
    return false;
}

bool fits_io_disk_file(const char *name, char *path, size_t len)
{
    char root[FLEN_FILENAME];
    struct stat st;
    fits_io_rootname(name, root, sizeof root);
    if (!root[0] || strcmp(root, "-") == 0) return false;
    /* The drivers that read a disk file; others (mem://, http://) are left to cfitsio. */
    const char *file = root;
    if (strncmp(file, "file://", 7) == 0)
        file += 7;
    else if (strncmp(file, "compress://", 11) == 0)
        file += 11;
    else if (strstr(file, "://"))
        return false;
    return find_as_cfitsio_would(file, path, len, &st);
}

/* Only a regular file: a pipe read here would lose its first bytes before cfitsio reads it. */
static FILE *open_as_cfitsio_would(const char *name, char *path, size_t len)
{
    struct stat st;
    if (!fits_io_disk_file(name, path, len) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    return fopen(path, "rb");
}

static uint64_t little_endian_u32(const unsigned char *b)
{
    return b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24;
}

bool fits_compressed_magic(const unsigned char *h)
{
    return (h[0] == 0x1f && (h[1] == 0x8b || h[1] == 0x9d || h[1] == 0x1e || h[1] == 0xa0)) ||
           (h[0] == 'P' && h[1] == 'K') || (h[0] == 'B' && h[1] == 'Z');
}

/* The bytes cfitsio allocates before unpacking; 0 when it sizes the buffer from the file's
 * length instead (compress, pack, bzip2). -1 when the claim itself is missing: cfitsio would
 * then size the buffer from bytes it never read. */
static int64_t claimed_size(FILE *fp, const unsigned char *head)
{
    unsigned char field[4];
    if (fseek(fp, 0, SEEK_END) != 0) return 0;
    const long length = ftell(fp);
    if (head[0] == 0x1f && head[1] == 0x8b) {
        /* gzip's trailer holds the length modulo 4 GiB; cfitsio adds 4 GiB until the result is
         * at least the compressed length, for files above 10000 bytes. */
        if (fseek(fp, -4, SEEK_END) != 0 || fread(field, 1, 4, fp) != 4) return -1;
        uint64_t size = little_endian_u32(field);
        if (length > 10000)
            while (size < (uint64_t)length)
                size += UINT64_C(1) << 32;
        return (int64_t)size;
    }
    if (head[0] == 'P' && head[1] == 'K') {
        /* zip's local header holds the unpacked length at byte 22. */
        if (fseek(fp, 22, SEEK_SET) != 0 || fread(field, 1, 4, fp) != 4) return -1;
        return (int64_t)little_endian_u32(field);
    }
    return 0;
}

static int check_unpacked_size(FILE *fp, const char *path, const unsigned char *head,
                               uint64_t max_bytes, char *err, size_t errlen)
{
    const int64_t size = claimed_size(fp, head);
    if (size < 0) {
        snprintf(err, errlen,
                 "%s is compressed but too short to say how large it is unpacked: the file is "
                 "truncated or damaged",
                 path);
        return -1;
    }
    if ((uint64_t)size <= max_bytes) return 0;
    snprintf(err, errlen,
             "%s is compressed and cfitsio unpacks it whole in memory: %llu MiB, more than the "
             "memory cap of %llu MiB (--max-memory); unpack it first, or raise the cap",
             path, (unsigned long long)(size >> 20), (unsigned long long)(max_bytes >> 20));
    return -1;
}

/* What a header says about the size of its data unit. */
struct layout {
    long long bitpix, naxis, pcount, gcount;
    long long axes[1000]; /* NAXISn, -1 where the header has none */
    bool groups;
    bool zimage;                     /* ZIMAGE = T: a tile-compressed image */
    int tile_axis;                   /* n of a ZTILEn below 1 (0: none), which cfitsio divides by */
    long long tile;                  /* that ZTILEn's value */
    long long ztile[10], znaxis[10]; /* ZTILEn and ZNAXISn for n < 10; 0 where absent */
};

/* A card as cfitsio 4.2 reads it: the keyword is the text before the first '=' (cfitsio 4
 * takes names longer than 8 characters that way), the value's first token follows the '=' and
 * any blanks, up to a blank or '/'. Commentary cards and cards without '=' have no value. */
struct card_view {
    char name[CARD + 1];
    const char *token;
    int len;
};

static bool view_card(const char *card, struct card_view *v)
{
    if (memcmp(card, "COMMENT ", 8) == 0 || memcmp(card, "HISTORY ", 8) == 0 ||
        memcmp(card, "        ", 8) == 0 || memcmp(card, "CONTINUE", 8) == 0)
        return false;
    const char *eq = memchr(card, '=', CARD);
    if (!eq || eq == card) return false;
    int n = (int)(eq - card);
    while (n > 0 && card[n - 1] == ' ')
        n--;
    for (int i = 0; i < n; i++) /* printable: the name may reach an error message */
        v->name[i] = card[i] >= ' ' && card[i] <= '~' ? card[i] : '?';
    v->name[n] = '\0';
    int at = (int)(eq - card) + 1;
    while (at < CARD && card[at] == ' ')
        at++;
    v->token = card + at;
    v->len = 0;
    while (at + v->len < CARD && card[at + v->len] != ' ' && card[at + v->len] != '/')
        v->len++;
    return true;
}

/* The token as an integer, as cfitsio reads a whole-number keyword. */
static bool token_integer(const struct card_view *v, long long *value)
{
    if (v->len < 1) return false;
    char text[CARD + 1], *end;
    memcpy(text, v->token, (size_t)v->len);
    text[v->len] = '\0';
    *value = strtoll(text, &end, 10);
    return end != text;
}

/* n of a keyword such as NAXISn or ZTILEn (prefix, then 1 to 999), or 0. */
static int axis_number(const char *name, const char *prefix)
{
    const size_t p = strlen(prefix);
    if (strncmp(name, prefix, p) != 0 || name[p] < '1' || name[p] > '9') return 0;
    char *end;
    const long n = strtol(name + p, &end, 10);
    return *end == '\0' && n >= 1 && n < 1000 ? (int)n : 0;
}

static bool is_logical_true(const struct card_view *v)
{
    return v->len >= 1 && v->token[0] == 'T';
}

static void note_layout(const struct card_view *v, struct layout *l)
{
    long long x;
    int n;
    if (!token_integer(v, &x)) {
        if (strcmp(v->name, "GROUPS") == 0) l->groups = is_logical_true(v);
        if (strcmp(v->name, "ZIMAGE") == 0) l->zimage = is_logical_true(v);
        return;
    }
    if (strcmp(v->name, "BITPIX") == 0)
        l->bitpix = x;
    else if (strcmp(v->name, "NAXIS") == 0)
        l->naxis = x;
    else if (strcmp(v->name, "PCOUNT") == 0)
        l->pcount = x;
    else if (strcmp(v->name, "GCOUNT") == 0)
        l->gcount = x;
    else if ((n = axis_number(v->name, "NAXIS")) > 0)
        l->axes[n] = x;
    else if ((n = axis_number(v->name, "ZNAXIS")) > 0 && n < 10)
        l->znaxis[n] = x;
    if ((n = axis_number(v->name, "ZTILE")) > 0 && n < 10) l->ztile[n] = x;
    if ((n = axis_number(v->name, "ZTILE")) > 0 && x < 1 && !l->tile_axis) {
        l->tile_axis = n;
        l->tile = x;
    }
}

/* Whether a token reads as a number (FITS writes exponents with E or D). */
static bool is_number(const char *token, int len)
{
    char text[CARD + 1];
    if (len < 1) return false;
    for (int i = 0; i < len; i++)
        text[i] = token[i] == 'D' || token[i] == 'd' ? 'E' : token[i];
    text[len] = '\0';
    char *end;
    strtod(text, &end);
    return end == text + len;
}

/* Keywords cfitsio reads as numbers on its way to an image. A value that is not one sends
 * cfitsio 4.2 into an error path that can overflow its message buffer (ffc2j) or leaves a
 * tile size of 0 that it divides by; so such a card is refused before cfitsio sees it. */
static bool read_as_number(const char *name)
{
    static const char *const exact[] = {"BITPIX", "NAXIS",   "PCOUNT", "GCOUNT",  "TFIELDS",
                                        "THEAP",  "ZBITPIX", "ZNAXIS", "ZPCOUNT", "ZGCOUNT"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(name, exact[i]) == 0) return true;
    return axis_number(name, "NAXIS") || axis_number(name, "ZNAXIS") || axis_number(name, "ZTILE");
}

/* Why cfitsio 4.2 cannot read this card safely, or NULL. A TTYPEn value that is unquoted and
 * 70 characters or more overflows its 70-byte field. */
static const char *unsafe_card(const struct card_view *v)
{
    if (axis_number(v->name, "TTYPE") && v->len >= 70 && v->token[0] != '\'')
        return "is a column name that is not a quoted string and fills its card";
    if (read_as_number(v->name) && !is_number(v->token, v->len)) return "does not hold a number";
    return NULL;
}

/* The data unit's length in whole blocks of bytes; -1 when the header does not say, or says
 * more than any file holds (2^62 bytes, so that no sum here overflows). Random groups
 * (GROUPS = T, NAXIS1 = 0) leave NAXIS1 out of the product. */
static long long data_bytes(const struct layout *l)
{
    const long long limit = 1LL << 62;
    const long long b = l->bitpix;
    if (l->naxis == 0) return 0;
    if (!(b == 8 || b == 16 || b == 32 || b == 64 || b == -32 || b == -64)) return -1;
    if (l->naxis < 0 || l->naxis > 999 || l->pcount < 0 || l->pcount > limit || l->gcount < 0 ||
        l->gcount > limit)
        return -1;
    long long product = 1;
    for (long long n = 1; n <= l->naxis; n++) {
        const long long a = l->axes[n];
        if (a < 0 || a > limit) return -1;
        if (n == 1 && a == 0 && l->groups) continue;
        if (a > 0 && product > limit / a) return -1;
        product *= a;
    }
    const long long elements = product + l->pcount; /* both <= 2^62 */
    const long long bytes_per = (b < 0 ? -b : b) / 8;
    if (l->gcount > 0 && elements > limit / bytes_per / l->gcount) return -1;
    const long long bytes = bytes_per * l->gcount * elements;
    return (bytes + BLOCK - 1) / BLOCK * BLOCK;
}

/* Bytes cfitsio holds to unpack one tile of a tile-compressed image: its pixels (ZTILE1
 * defaults to the whole row, further axes to 1) at 8 bytes, the widest it unpacks into. */
static long long tile_bytes(const struct layout *l)
{
    long long pixels = 8;
    for (int n = 1; n < 10; n++) {
        const long long t = l->ztile[n] > 0 ? l->ztile[n] : n == 1 ? l->znaxis[1] : 1;
        if (t > 0 && pixels > (1LL << 62) / t) return 1LL << 62;
        if (t > 0) pixels *= t;
    }
    return pixels;
}

/* Walks the HDUs from the start: each header's cards up to END, then past its data unit. A
 * header cut short by the end of the file is still screened (cfitsio reads what is there).
 * The walk stops quietly where a header stops making sense; cfitsio's own error takes over. */
static int screen_headers(FILE *fp, const char *path, uint64_t max_bytes, char *err, size_t errlen)
{
    char block[BLOCK];
    long long offset = 0;
    for (int hdu = 1; hdu <= 100000; hdu++) {
        struct layout l = {.pcount = 0, .gcount = 1};
        for (int n = 0; n < 1000; n++)
            l.axes[n] = -1;
        bool end = false;
        size_t got = BLOCK;
        while (!end && got == BLOCK) {
            got = fseek(fp, (long)offset, SEEK_SET) == 0 ? fread(block, 1, BLOCK, fp) : 0;
            offset += BLOCK;
            /* An index, not a pointer, walks the block: libFuzzer learns from the operands
             * of comparisons, and a stack address differs from run to run. */
            for (size_t at = 0; at + CARD <= got && !end; at += CARD) {
                const char *card = block + at;
                struct card_view v;
                const bool has_value = view_card(card, &v);
                const char *why = has_value ? unsafe_card(&v) : NULL;
                if (why) {
                    snprintf(err, errlen,
                             "%s: HDU %d: %s %s; cfitsio cannot read that header safely, so the "
                             "file is refused (repair the card, or copy the image HDU out with "
                             "another tool)",
                             path, hdu, v.name, why);
                    return -1;
                }
                end = memcmp(card, "END     ", 8) == 0;
                if (has_value) note_layout(&v, &l);
            }
        }
        if (l.zimage && l.tile_axis) {
            snprintf(err, errlen,
                     "%s: HDU %d is a tile-compressed image with ZTILE%d = %lld; tiles must be "
                     "at least 1 pixel, and cfitsio cannot read that header safely (it divides "
                     "by the tile size)",
                     path, hdu, l.tile_axis, l.tile);
            return -1;
        }
        if (l.zimage && (uint64_t)tile_bytes(&l) > max_bytes) {
            snprintf(err, errlen,
                     "%s: HDU %d is a tile-compressed image whose tiles cfitsio unpacks into "
                     "%lld MiB each, more than the memory cap of %llu MiB (--max-memory)",
                     path, hdu, tile_bytes(&l) >> 20, (unsigned long long)(max_bytes >> 20));
            return -1;
        }
        if (!end) return 0;
        const long long data = data_bytes(&l);
        if (data < 0 || data > INT64_MAX - offset) return 0;
        offset += data;
    }
    return 0;
}

int fits_preflight(const char *name, uint64_t max_bytes, char *probe_path, size_t probe_len,
                   char *err, size_t errlen)
{
    char path[FLEN_FILENAME + 8];
    probe_path[0] = '\0';
    FILE *fp = open_as_cfitsio_would(name, path, sizeof path);
    if (!fp) return 0; /* cfitsio's own error says why it cannot be opened */
    unsigned char head[2] = {0};
    const bool compressed = fread(head, 1, 2, fp) == 2 && fits_compressed_magic(head);
    const int rc = compressed ? check_unpacked_size(fp, path, head, max_bytes, err, errlen)
                              : screen_headers(fp, path, max_bytes, err, errlen);
    fclose(fp);
    /* Compressed inputs are not probed: the child would unpack the whole file a second time. */
    if (rc == 0 && !compressed) snprintf(probe_path, probe_len, "%s", path);
    return rc;
}
