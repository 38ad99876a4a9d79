/* fits_unpacked_size.c - cfitsio unpacks a compressed input (gzip, zip, compress, pack, bzip2)
 * whole into memory, and for gzip and zip it allocates the buffer at the size the file's own
 * bytes claim before unpacking anything. A damaged or hostile file can claim gigabytes; this
 * reads the same bytes cfitsio will read and refuses the file when the claim passes the cap. */
#include "fits_io.h"

#include <fitsio.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* The bytes cfitsio allocates before unpacking; 0 when it sizes the buffer from the file's
 * length instead (compress, pack, bzip2), or the file is not compressed. -1 when the claim
 * itself is missing: cfitsio would then size the buffer from bytes it never read. */
static int64_t claimed_size(FILE *fp)
{
    unsigned char head[2], field[4];
    if (fread(head, 1, 2, fp) != 2 || fseek(fp, 0, SEEK_END) != 0) return 0;
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

int fits_check_unpacked_size(const char *name, uint64_t max_bytes, char *err, size_t errlen)
{
    char root[FLEN_FILENAME], path[FLEN_FILENAME + 8];
    fits_io_rootname(name, root, sizeof root);
    if (!root[0] || strcmp(root, "-") == 0) return 0;
    FILE *fp = open_as_cfitsio_would(root, path, sizeof path);
    if (!fp) return 0; /* cfitsio's own error says why it cannot be opened */
    const int64_t size = claimed_size(fp);
    fclose(fp);
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
