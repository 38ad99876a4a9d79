/* fits_output.c - madfilter's FITS output: one float32 or float64 HDU per map, each carrying the
 * input's header and the program's keywords. The whole layout (every header's size, every data
 * unit's place) is fixed when the file is created, so each strip's rows go straight to their place
 * with pwrite and the file holds only what has been computed, or zeros the caller chose to write
 * ahead (fits_output_prefill, which the caller bounds by pixels its input really holds). An
 * abandoned output is unlinked as it stands: it is never padded out to the size its headers
 * declare. (cfitsio zero-fills every data unit it moves past or closes, so a damaged input that
 * declared a huge image once filled the disk on the way out.) The headers, which end with what is
 * known only at the end (late HISTORY lines, checksums), are written last. A .gz name is written
 * uncompressed to a scratch file first and compressed at the end, a block at a time, so no output
 * is ever held whole in memory. */
#include "fits_io.h"
#include "parallel.h"

#include <errno.h>
#include <fcntl.h>
#include <fitsio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define BLOCK 2880
#define CARD 80
#define MAX_MAPS 8
/* A late HISTORY line wraps onto this many cards at most (lines up to 216 characters). */
#define CARDS_PER_LATE_LINE 3
#define HISTORY_TEXT 72 /* characters of text after "HISTORY " */
#define CHUNK 16384     /* pixels converted and written at a time */

struct hdu {
    char *cards; /* the header's cards up to DATE, without room, checksums and END */
    int n_cards;
    uint64_t start, data; /* file offsets of the header and of the data unit */
    uint64_t sum;         /* ones' complement sum of the data written so far */
    uint64_t next_pixel;  /* rows arrive in order: the pixel the next write must start at */
    int header_blocks;
};

struct fits_output {
    int fd;
    char *path;    /* the FITS file being written: the output, or the scratch file for .gz */
    char *gz_path; /* the .gz output compressed from path at the end; NULL when plain */
    size_t nx, ny, planes;
    int n_maps, late_cards;
    int bitpix, pixel_bytes;
    const struct fits_key *keys; /* the caller's, read only while the headers are counted */
    int n_keys;
    uint64_t data_bytes; /* one map's pixels, unpadded */
    uint64_t total_bytes;
    char date[32]; /* UTC, as FITS writes dates */
    struct hdu hdus[MAX_MAPS];
};

static uint64_t padded(uint64_t bytes)
{
    return (bytes + BLOCK - 1) / BLOCK * BLOCK;
}

/* ---- Cards ------------------------------------------------------------------------------- */

/* Pads a card to 80 characters and keeps it to printable ASCII, as FITS headers must be. */
static void finish_card(char *card)
{
    size_t n = strnlen(card, CARD);
    for (size_t i = 0; i < CARD; i++) {
        if (i >= n)
            card[i] = ' ';
        else if (card[i] < ' ' || card[i] > '~')
            card[i] = ' ';
    }
}

/* A card of fixed-format FITS: the value right-justified in columns 11-30. */
static void card_value(char *card, const char *key, const char *value, const char *comment)
{
    char text[CARD + 64];
    snprintf(text, sizeof text, "%-8.8s= %20s%s%s", key, value, comment ? " / " : "",
             comment ? comment : "");
    memcpy(card, text, CARD);
    card[CARD] = '\0';
    finish_card(card);
}

static void card_int(char *card, const char *key, long long v, const char *comment)
{
    char value[32];
    snprintf(value, sizeof value, "%lld", v);
    card_value(card, key, value, comment);
}

/* A string value starts in column 11, quotes doubled, at least 8 characters inside the quotes. */
static void card_string(char *card, const char *key, const char *value, const char *comment)
{
    char quoted[CARD * 2 + 3];
    size_t n = 0;
    quoted[n++] = '\'';
    for (const char *p = value; *p && n < CARD - 12; p++) {
        if (*p == '\'') quoted[n++] = '\'';
        quoted[n++] = *p;
    }
    while (n < 9)
        quoted[n++] = ' ';
    quoted[n++] = '\'';
    quoted[n] = '\0';
    char text[CARD * 3];
    snprintf(text, sizeof text, "%-8.8s= %-20s%s%s", key, quoted, comment ? " / " : "",
             comment ? comment : "");
    memcpy(card, text, CARD);
    card[CARD] = '\0';
    finish_card(card);
}

/* A real value as FITS reads it back exactly: the shortest form that round-trips, with a decimal
 * point or an exponent so that it is not read as an integer; NaN has no FITS form and leaves the
 * value undefined (blank). */
static void card_real(char *card, const char *key, double v, const char *comment)
{
    char value[40] = "";
    if (v == v) {
        for (int digits = 1; digits <= 17; digits++) {
            snprintf(value, sizeof value, "%.*G", digits, v);
            if (strtod(value, NULL) == v) break;
        }
        if (!strpbrk(value, ".EN")) strcat(value, ".");
        if (strchr(value, 'N') || strchr(value, 'I')) snprintf(value, sizeof value, "%s", "");
    }
    card_value(card, key, value, comment);
}

static void card_key(char *card, const struct fits_key *k)
{
    if (k->type == 'I')
        card_int(card, k->name, k->i, k->comment);
    else if (k->type == 'F')
        card_real(card, k->name, k->f, k->comment);
    else
        card_string(card, k->name, k->s ? k->s : "", k->comment);
}

/* Whether a card of the input carries one of the program's keywords: the output states this
 * run's, not an earlier run's as well. */
static bool is_own_key(const struct fits_output *o, const char *card)
{
    for (int i = 0; i < o->n_keys; i++) {
        const size_t n = strlen(o->keys[i].name);
        if (strncmp(card, o->keys[i].name, n) == 0 && (n == 8 || card[n] == ' ' || card[n] == '='))
            return true;
    }
    return false;
}

/* HISTORY cards for text: as many as it needs, 72 characters each. Writes them at cards (NULL:
 * only counts) and returns how many. */
static int history_cards(char *cards, const char *text)
{
    size_t len = strlen(text);
    int n = 0;
    for (size_t at = 0; at < len || n == 0; at += HISTORY_TEXT, n++) {
        if (!cards) continue;
        char card[CARD + 1];
        snprintf(card, sizeof card, "HISTORY %.*s", HISTORY_TEXT, text + at);
        finish_card(card);
        memcpy(cards + (size_t)n * CARD, card, CARD);
    }
    return n;
}

/* ---- Checksums (the FITS standard's ones' complement sums) ------------------------------- */

static uint64_t fold(uint64_t sum)
{
    while (sum >> 32)
        sum = (sum & 0xffffffffu) + (sum >> 32);
    return sum;
}

/* Sum of bytes taken as big-endian 32-bit words (n a multiple of 4). */
static uint64_t sum_bytes(const unsigned char *b, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i + 4 <= n; i += 4)
        sum += (uint64_t)b[i] << 24 | (uint64_t)b[i + 1] << 16 | (uint64_t)b[i + 2] << 8 | b[i + 3];
    return fold(sum);
}

/* ---- Writing ----------------------------------------------------------------------------- */

static int write_at(int fd, const void *buf, size_t n, uint64_t offset)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t done = pwrite(fd, p, n, (off_t)offset);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) {
            if (done == 0) errno = EIO;
            return -1;
        }
        p += done;
        n -= (size_t)done;
        offset += (uint64_t)done;
    }
    return 0;
}

static void io_error(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "cannot %s the output: %s", what, strerror(errno));
}

/* The header of one map up to DATE: structural keywords, EXTNAME, the input's cards (less DATE,
 * which is the output's own, and BUNIT for a unitless map), the HISTORY lines and DATE. Writes
 * the cards at cards (NULL: only counts) and returns how many. */
static int header_cards(char *cards, const struct fits_output *o, int map,
                        const struct tool_image *img, const struct fits_map *m,
                        const char *const *history, int n_history)
{
    char card[CARD + 1];
    int n = 0;
#define PUT(fill)                                                                                  \
    do {                                                                                           \
        if (cards) {                                                                               \
            fill;                                                                                  \
            memcpy(cards + (size_t)n * CARD, card, CARD);                                          \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
    const int naxis = img->cube ? 3 : 2;
    const long long axes[3] = {(long long)o->nx, (long long)o->ny, (long long)o->planes};
    static const char *const axis_keys[3] = {"NAXIS1", "NAXIS2", "NAXIS3"};
    if (map == 0)
        PUT(card_value(card, "SIMPLE", "T", "file does conform to FITS standard"));
    else
        PUT(card_string(card, "XTENSION", "IMAGE", "IMAGE extension"));
    PUT(card_int(card, "BITPIX", o->bitpix, "number of bits per data pixel"));
    PUT(card_int(card, "NAXIS", naxis, "number of data axes"));
    for (int a = 0; a < naxis; a++)
        PUT(card_int(card, axis_keys[a], axes[a], "length of data axis"));
    if (map == 0) {
        PUT(card_value(card, "EXTEND", "T", "FITS dataset may contain extensions"));
    } else {
        PUT(card_int(card, "PCOUNT", 0, "required keyword; must = 0"));
        PUT(card_int(card, "GCOUNT", 1, "required keyword; must = 1"));
    }
    PUT(card_string(card, "EXTNAME", m->extname, m->comment));
    for (int i = 0; i < img->n_cards; i++) {
        const char *c = img->cards + 80 * (size_t)i;
        if (strncmp(c, "DATE    ", 8) == 0 || (m->unitless && strncmp(c, "BUNIT   ", 8) == 0) ||
            is_own_key(o, c))
            continue;
        PUT((memcpy(card, c, CARD), card[CARD] = '\0', finish_card(card)));
    }
    for (int i = 0; i < o->n_keys; i++)
        PUT(card_key(card, &o->keys[i]));
    for (int i = 0; i < n_history; i++) {
        if (cards) history_cards(cards + (size_t)n * CARD, history[i]);
        n += history_cards(NULL, history[i]);
    }
    PUT(card_string(card, "DATE", o->date, "file creation date (YYYY-MM-DDThh:mm:ss UT)"));
#undef PUT
    return n;
}

int fits_output_create(struct fits_output **out, const char *path, const char *scratch_path,
                       const struct tool_image *img, const struct fits_map *maps, int n_maps,
                       const struct fits_output_format *format, const char *const *history,
                       int n_history, int n_late, char *err, size_t errlen)
{
    *out = NULL;
    if (n_maps < 1 || n_maps > MAX_MAPS) {
        snprintf(err, errlen, "cannot write %d maps to one file", n_maps);
        return -1;
    }
    const int bitpix = format ? format->bitpix : -32;
    if (bitpix != -32 && bitpix != -64) {
        snprintf(err, errlen, "cannot write maps of BITPIX %d", bitpix);
        return -1;
    }
    struct fits_output *o = calloc(1, sizeof *o);
    if (!o) goto no_memory;
    o->fd = -1;
    o->nx = img->nx, o->ny = img->ny, o->planes = img->planes;
    o->n_maps = n_maps;
    o->late_cards = n_late * CARDS_PER_LATE_LINE;
    o->bitpix = bitpix;
    o->pixel_bytes = bitpix == -64 ? 8 : 4;
    o->keys = format ? format->keys : NULL;
    o->n_keys = format ? format->n_keys : 0;
    o->data_bytes = (uint64_t)img->nx * img->ny * img->planes * (uint64_t)o->pixel_bytes;
    const time_t t = time(NULL);
    struct tm utc;
    gmtime_r(&t, &utc);
    strftime(o->date, sizeof o->date, "%Y-%m-%dT%H:%M:%S", &utc);
    const bool gz = fits_output_is_gzip(path);
    if (!(o->path = strdup(gz ? scratch_path : path)) || (gz && !(o->gz_path = strdup(path))))
        goto no_memory;

    uint64_t at = 0;
    for (int i = 0; i < n_maps; i++) {
        struct hdu *h = &o->hdus[i];
        h->n_cards = header_cards(NULL, o, i, img, &maps[i], history, n_history);
        if (!(h->cards = malloc((size_t)h->n_cards * CARD))) goto no_memory;
        header_cards(h->cards, o, i, img, &maps[i], history, n_history);
        const uint64_t all = (uint64_t)h->n_cards + (uint64_t)o->late_cards + 3; /* sums, END */
        h->header_blocks = (int)padded(all * CARD) / BLOCK;
        h->start = at;
        h->data = at + (uint64_t)h->header_blocks * BLOCK;
        at = h->data + padded(o->data_bytes);
    }
    o->keys = NULL; /* every header's cards are made: the caller's keys are not kept */
    o->n_keys = 0;
    o->total_bytes = at;
    /* O_EXCL: the caller's temporary directory is its own, so an existing file is a mistake,
     * unless the caller filled it with zeros to be written over (fits_output_prefill). */
    o->fd = -1;
    if (format && format->prefilled && !gz) o->fd = open(o->path, O_WRONLY | O_CLOEXEC);
    if (o->fd < 0)
        o->fd = open(o->path, (gz ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        io_error(err, errlen, "create");
        fits_output_abort(o);
        return -1;
    }
    *out = o;
    return 0;

no_memory:
    snprintf(err, errlen, "out of memory creating the output");
    fits_output_abort(o);
    return -1;
}

int fits_output_prefill(const char *path, uint64_t bytes, bool (*stop)(void *arg), void *arg)
{
    static const char zeros[1 << 20];
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    for (uint64_t done = 0; done < bytes && !(stop && stop(arg));) {
        const size_t n = bytes - done < sizeof zeros ? (size_t)(bytes - done) : sizeof zeros;
        if (write_at(fd, zeros, n, done) != 0) break;
        done += n;
    }
    close(fd);
    return 0;
}

uint64_t fits_output_data_size(size_t nx, size_t ny, size_t planes, int n_maps, int bitpix)
{
    const uint64_t pixel = bitpix == -64 ? 8 : 4;
    return (uint64_t)n_maps * padded((uint64_t)nx * ny * planes * pixel);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BIG32(u) (u)
#define BIG64(u) (u)
#else
#define BIG32(u) __builtin_bswap32(u)
#define BIG64(u) __builtin_bswap64(u)
#endif

/* Pixels as big-endian words of the output's type, and their checksum: a float32 pixel's
 * big-endian word is its bits, so the sum is taken on native words before the swap (a loop the
 * compiler vectorises). Returns the ones' complement sum of the words, unfolded below 2^64. */
static uint64_t to_big_endian(unsigned char *dst, const void *data, bool f64, int size, uint64_t k,
                              size_t n)
{
    uint64_t sum = 0;
    if (size == 4) {
        uint32_t *w = (uint32_t *)dst;
        for (size_t i = 0; i < n; i++) {
            const float v =
                f64 ? (float)((const double *)data)[k + i] : ((const float *)data)[k + i];
            uint32_t u;
            memcpy(&u, &v, 4);
            sum += u;
            w[i] = BIG32(u);
        }
    } else {
        uint64_t *w = (uint64_t *)dst;
        for (size_t i = 0; i < n; i++) {
            const double v = f64 ? ((const double *)data)[k + i] : ((const float *)data)[k + i];
            uint64_t u;
            memcpy(&u, &v, 8);
            sum += (u >> 32) + (u & 0xffffffffu);
            w[i] = BIG64(u);
        }
    }
    return sum;
}

/* One thread's share of a write: its pixels converted a chunk at a time and written in place. */
struct write_job {
    const struct fits_output *out;
    const struct hdu *h;
    const void *data;
    bool f64;
    uint64_t first, count;
    uint64_t sums[PARALLEL_MAX_PARTS];
    int errnos[PARALLEL_MAX_PARTS];
};

static void write_part(void *arg, int part, int parts)
{
    struct write_job *job = arg;
    const int size = job->out->pixel_bytes;
    const uint64_t share = (job->count / (uint64_t)parts + CHUNK - 1) / CHUNK * CHUNK;
    const uint64_t from = share * (uint64_t)part < job->count ? share * (uint64_t)part : job->count;
    const uint64_t to = from + share < job->count ? from + share : job->count;
    uint64_t buf[CHUNK], sum = 0;
    job->errnos[part] = 0;
    for (uint64_t done = from; done < to;) {
        const size_t n = to - done < CHUNK ? (size_t)(to - done) : CHUNK;
        /* Chunk sums stay far below 2^64: 2^14 words of 2^32 each. */
        sum = fold(sum +
                   fold(to_big_endian((unsigned char *)buf, job->data, job->f64, size, done, n)));
        if (write_at(job->out->fd, buf, (size_t)size * n,
                     job->h->data + (uint64_t)size * (job->first + done)) != 0) {
            job->errnos[part] = errno;
            break;
        }
        done += n;
    }
    job->sums[part] = sum;
}

/* Rows of float32 (f64 false) or float64 values, as big-endian pixels of the output's type,
 * converted and written by a few threads at once. The ones' complement sum does not depend on
 * the order its words are added in, so the parts' sums add up to the one sequential sum. */
static int write_rows(struct fits_output *out, int map, size_t plane, size_t row0, size_t rows,
                      const void *data, bool f64, char *err, size_t errlen)
{
    if (map < 0 || map >= out->n_maps) {
        snprintf(err, errlen, "internal error: map %d written, of %d maps", map, out->n_maps);
        return -1;
    }
    struct hdu *h = &out->hdus[map];
    const uint64_t first = ((uint64_t)plane * out->ny + row0) * out->nx;
    const uint64_t count = (uint64_t)rows * out->nx;
    /* In order and once each: so the checksum counts every pixel once and none is left out. */
    if (first != h->next_pixel || rows > out->ny - row0 || plane >= out->planes) {
        snprintf(err, errlen, "internal error: rows %zu-%zu of plane %zu written out of order",
                 row0, row0 + rows, plane);
        return -1;
    }
    struct write_job job = {
        .out = out, .h = h, .data = data, .f64 = f64, .first = first, .count = count};
    const int parts = parallel_threads((size_t)(count * (uint64_t)out->pixel_bytes));
    parallel_run(parts, write_part, &job);
    for (int i = 0; i < parts; i++) {
        if (job.errnos[i]) {
            errno = job.errnos[i];
            io_error(err, errlen, "write");
            return -1;
        }
        h->sum = fold(h->sum + job.sums[i]);
    }
    h->next_pixel = first + count;
    return 0;
}

int fits_output_write_rows(struct fits_output *out, int map, size_t plane, size_t row0, size_t rows,
                           const float *data, char *err, size_t errlen)
{
    return write_rows(out, map, plane, row0, rows, data, false, err, errlen);
}

int fits_output_write_rows_f64(struct fits_output *out, int map, size_t plane, size_t row0,
                               size_t rows, const double *data, char *err, size_t errlen)
{
    return write_rows(out, map, plane, row0, rows, data, true, err, errlen);
}

/* The whole header of one HDU: its cards, the late HISTORY lines, blank cards for the room they
 * left, CHECKSUM, DATASUM, END and blank padding; CHECKSUM makes the sum of the HDU all ones, as
 * the FITS standard defines. END stays at the end of the room reserved: a reader takes the data
 * to start at the block after END's, so an END that unused room left a block early would move
 * the data (blank cards before END are valid FITS). */
static void build_header(const struct fits_output *o, const struct hdu *h, const char *const *late,
                         int n_late, char *buf)
{
    const size_t size = (size_t)h->header_blocks * BLOCK;
    memset(buf, ' ', size);
    memcpy(buf, h->cards, (size_t)h->n_cards * CARD);
    char *at = buf + (size_t)h->n_cards * CARD;
    int room = o->late_cards;
    for (int i = 0; i < n_late; i++) {
        const int n = history_cards(NULL, late[i]);
        if (n > room) break;
        history_cards(at, late[i]);
        at += (size_t)n * CARD;
        room -= n;
    }
    at += (size_t)room * CARD;
    char card[CARD + 1], value[32], comment[64];
    snprintf(comment, sizeof comment, "HDU checksum updated %s", o->date);
    card_string(card, "CHECKSUM", "0000000000000000", comment);
    char *checksum = at;
    memcpy(at, card, CARD), at += CARD;
    snprintf(value, sizeof value, "%llu", (unsigned long long)h->sum);
    snprintf(comment, sizeof comment, "data unit checksum updated %s", o->date);
    card_string(card, "DATASUM", value, comment);
    memcpy(at, card, CARD), at += CARD;
    memcpy(at, "END", 3);
    char encoded[17];
    fits_encode_chksum((unsigned long)fold(sum_bytes((unsigned char *)buf, size) + h->sum), 1,
                       encoded);
    memcpy(checksum + 11, encoded, 16);
}

/* Compresses the finished scratch file into the .gz output, a block at a time. */
static int compress_to_gzip(struct fits_output *o, char *err, size_t errlen)
{
    if (lseek(o->fd, 0, SEEK_SET) != 0) {
        io_error(err, errlen, "compress");
        return -1;
    }
    gzFile gz = gzopen(o->gz_path, "wbx");
    if (!gz) {
        io_error(err, errlen, "create");
        return -1;
    }
    static char buf[1 << 20];
    int rc = 0;
    for (;;) {
        ssize_t n = read(o->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            io_error(err, errlen, "compress");
            rc = -1;
            break;
        }
        if (n == 0) break;
        if (gzwrite(gz, buf, (unsigned)n) != (int)n) {
            int z;
            const char *why = gzerror(gz, &z);
            snprintf(err, errlen, "cannot write the output: %s",
                     z == Z_ERRNO ? strerror(errno) : why);
            rc = -1;
            break;
        }
    }
    errno = 0;
    const int closed = gzclose(gz);
    if (rc == 0 && closed != Z_OK) {
        snprintf(err, errlen, "cannot finish writing the output: %s",
                 closed == Z_ERRNO && errno ? strerror(errno) : "gzip failed");
        rc = -1;
    }
    return rc;
}

int fits_output_finish(struct fits_output *out, const char *const *late, int n_late, char *err,
                       size_t errlen)
{
    int rc = -1;
    char *header = NULL;
    for (int i = 0; i < out->n_maps; i++) {
        if (out->hdus[i].next_pixel != out->data_bytes / (uint64_t)out->pixel_bytes) {
            snprintf(err, errlen, "internal error: map %d is incomplete", i + 1);
            goto done;
        }
    }
    /* The last data unit's padding: zeros, like every gap the file system leaves. */
    if (ftruncate(out->fd, (off_t)out->total_bytes) != 0) {
        io_error(err, errlen, "write");
        goto done;
    }
    for (int i = 0; i < out->n_maps; i++) {
        const struct hdu *h = &out->hdus[i];
        char *grown = realloc(header, (size_t)h->header_blocks * BLOCK);
        if (!grown) {
            snprintf(err, errlen, "out of memory finishing the output");
            goto done;
        }
        header = grown;
        build_header(out, h, late, n_late, header);
        if (write_at(out->fd, header, (size_t)h->header_blocks * BLOCK, h->start) != 0) {
            io_error(err, errlen, "write");
            goto done;
        }
    }
    if (out->gz_path && compress_to_gzip(out, err, errlen) != 0) goto done;
    /* close() is where some file systems (NFS) report a failed write. */
    const int fd = out->fd;
    out->fd = -1;
    if (close(fd) != 0) {
        io_error(err, errlen, "finish writing");
        goto done;
    }
    if (out->gz_path) unlink(out->path);
    rc = 0;
done:
    free(header);
    if (rc == 0) {
        free(out->path), free(out->gz_path);
        for (int i = 0; i < out->n_maps; i++)
            free(out->hdus[i].cards);
        free(out);
    } else {
        fits_output_abort(out);
    }
    return rc;
}

void fits_output_abort(struct fits_output *out)
{
    if (!out) return;
    if (out->fd >= 0) close(out->fd);
    if (out->path) unlink(out->path);
    if (out->gz_path) unlink(out->gz_path);
    free(out->path);
    free(out->gz_path);
    for (int i = 0; i < MAX_MAPS; i++)
        free(out->hdus[i].cards);
    free(out);
}

bool fits_output_is_gzip(const char *path)
{
    const size_t n = strlen(path);
    return n > 3 && strcasecmp(path + n - 3, ".gz") == 0;
}
