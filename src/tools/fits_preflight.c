/* fits_preflight.c - the few bytes of an input that cfitsio 4.2 trusts before it checks them,
 * read here first so that a damaged or hostile file gets a clear error instead of cfitsio
 * allocating gigabytes or aborting:
 * - a compressed input (gzip, zip, compress, pack, bzip2) is unpacked whole into memory, and for
 *   gzip and zip cfitsio allocates the size the file's own bytes claim before unpacking;
 * - a table's TTYPEn value that is unquoted and fills its card is copied into a 70-byte field
 *   with strcpy: one byte over, which glibc's fortified strcpy turns into an abort;
 * - a tile-compressed image's ZTILEn of 0 is divided by (SIGFPE).
 * cfitsio parses the headers it passes on the way to the image (an empty primary HDU, or
 * 'in.fits[SCI]'), so every header of the file is screened. */
#include "fits_io.h"

#include <fitsio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 2880
#define CARD 80

/* cfitsio looks for these when the name itself does not open (in.fits -> in.fits.gz). */
static const char *const suffixes[] = {"", ".gz", ".bz2", ".Z", ".z", ".zip", "-z", "-gz"};

static FILE *open_as_cfitsio_would(const char *root, char *path, size_t len)
{
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, len, "%s%s", root, suffixes[i]);
        FILE *fp = fopen(path, "rb");
        if (fp) return fp;
    }
    return NULL;
}

static uint64_t little_endian_u32(const unsigned char *b)
{
    return b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24;
}

static bool is_compressed(const unsigned char *h)
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
    bool zimage;    /* ZIMAGE = T: a tile-compressed image */
    int tile_axis;  /* n of a ZTILEn below 1 (0: none), which cfitsio divides by */
    long long tile; /* that ZTILEn's value */
};

/* The integer after "= " in cols 11-80, as cfitsio reads a fixed-format value. */
static bool card_integer(const char *card, long long *value)
{
    char field[CARD - 9];
    memcpy(field, card + 10, CARD - 10);
    field[CARD - 10] = '\0';
    char *end;
    *value = strtoll(field, &end, 10);
    return end != field;
}

/* n of a keyword NAXISn or ZTILEn (five letters, then 1 to 999), or 0. */
static int axis_number(const char *card)
{
    char digits[4] = {card[5], card[6], card[7], '\0'}, *end;
    const long n = strtol(digits, &end, 10);
    return end != digits && (*end == ' ' || *end == '\0') && n >= 1 && n < 1000 ? (int)n : 0;
}

static void note_layout(const char *card, struct layout *l)
{
    long long v;
    int n;
    if (memcmp(card + 8, "= ", 2) != 0) return;
    if (memcmp(card, "BITPIX  ", 8) == 0 && card_integer(card, &v))
        l->bitpix = v;
    else if (memcmp(card, "NAXIS   ", 8) == 0 && card_integer(card, &v))
        l->naxis = v;
    else if (memcmp(card, "PCOUNT  ", 8) == 0 && card_integer(card, &v))
        l->pcount = v;
    else if (memcmp(card, "GCOUNT  ", 8) == 0 && card_integer(card, &v))
        l->gcount = v;
    else if (memcmp(card, "GROUPS  ", 8) == 0)
        l->groups = memchr(card + 10, 'T', 70) != NULL;
    else if (memcmp(card, "ZIMAGE  ", 8) == 0)
        l->zimage = memchr(card + 10, 'T', 70) != NULL;
    else if (memcmp(card, "ZTILE", 5) == 0 && card_integer(card, &v) && v < 1 && !l->tile_axis &&
             (n = axis_number(card)) > 0) {
        l->tile_axis = n;
        l->tile = v;
    } else if (memcmp(card, "NAXIS", 5) == 0 && card_integer(card, &v) &&
               (n = axis_number(card)) > 0)
        l->axes[n] = v;
}

/* An unquoted value token of 70 characters: cols 11-80 with no blank or '/'. */
static bool overflows_ttype(const char *card)
{
    if (memcmp(card, "TTYPE", 5) != 0 || memcmp(card + 8, "= ", 2) != 0) return false;
    if (card[10] == '\'') return false;
    for (int i = 10; i < CARD; i++)
        if (card[i] == ' ' || card[i] == '/' || card[i] == '\0') return false;
    return true;
}

/* The data unit's length in whole blocks of bytes; -1 when the header does not say, or says
 * more than any file holds (2^62 bytes, so that no sum here overflows). Random groups
 * (GROUPS = T, NAXIS1 = 0) leave NAXIS1 out of the product. */
static long long data_bytes(const struct layout *l)
{
    const long long limit = 1LL << 62;
    const long long b = l->bitpix;
    if (!(b == 8 || b == 16 || b == 32 || b == 64 || b == -32 || b == -64)) return -1;
    if (l->naxis < 0 || l->naxis > 999 || l->pcount < 0 || l->pcount > limit || l->gcount < 0 ||
        l->gcount > limit)
        return -1;
    if (l->naxis == 0) return 0;
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

/* Walks the HDUs from the start: each header's cards up to END, then past its data unit. The
 * walk stops quietly where a header stops making sense; cfitsio's own error takes over there. */
static int screen_headers(FILE *fp, const char *path, char *err, size_t errlen)
{
    char block[BLOCK];
    long long offset = 0;
    for (int hdu = 1; hdu <= 100000; hdu++) {
        struct layout l = {.pcount = 0, .gcount = 1};
        for (int n = 0; n < 1000; n++)
            l.axes[n] = -1;
        bool end = false;
        while (!end) {
            if (fseek(fp, (long)offset, SEEK_SET) != 0 || fread(block, 1, BLOCK, fp) != BLOCK)
                return 0;
            offset += BLOCK;
            /* An index, not a pointer, walks the block: libFuzzer learns from the operands
             * of comparisons, and a stack address differs from run to run. */
            for (int at = 0; at < BLOCK && !end; at += CARD) {
                const char *card = block + at;
                if (overflows_ttype(card)) {
                    snprintf(err, errlen,
                             "%s: HDU %d has a table column name (%.*s) that is not a quoted "
                             "string and fills its card; cfitsio cannot read that header "
                             "safely. Quote the value, or copy the image HDU out first",
                             path, hdu, (int)strcspn(card, " ="), card);
                    return -1;
                }
                end = memcmp(card, "END     ", 8) == 0;
                note_layout(card, &l);
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
        const long long data = data_bytes(&l);
        if (data < 0 || data > INT64_MAX - offset) return 0;
        offset += data;
    }
    return 0;
}

int fits_preflight(const char *name, uint64_t max_bytes, char *err, size_t errlen)
{
    char root[FLEN_FILENAME], path[FLEN_FILENAME + 8];
    fits_io_rootname(name, root, sizeof root);
    if (!root[0] || strcmp(root, "-") == 0) return 0;
    /* The drivers that read a disk file; others (mem://, http://) are left to cfitsio. */
    const char *file = root;
    if (strncmp(file, "file://", 7) == 0)
        file += 7;
    else if (strncmp(file, "compress://", 11) == 0)
        file += 11;
    FILE *fp = open_as_cfitsio_would(file, path, sizeof path);
    if (!fp) return 0; /* cfitsio's own error says why it cannot be opened */
    unsigned char head[2] = {0};
    int rc = 0;
    if (fread(head, 1, 2, fp) == 2 && is_compressed(head))
        rc = check_unpacked_size(fp, path, head, max_bytes, err, errlen);
    else
        rc = screen_headers(fp, path, err, errlen);
    fclose(fp);
    return rc;
}
