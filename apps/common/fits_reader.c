/* fits_reader.c - the pixels of a tile-compressed image, unpacked in a child process. cfitsio 4.2
 * trusts a tile's bytes: a garbled Rice tile makes fits_rdecomp_short read past its buffer (the
 * fuzzer found it), and a crash there would end madfilter and every input after it. The child
 * holds its own copy of the open file and answers requests for rows over a socket; when it dies
 * the read fails with one line, and the parent goes on. Nothing is unpacked twice: the parent
 * never unpacks these pixels itself. Each tile's place in the heap is checked first, since
 * cfitsio allocates what a damaged descriptor claims (gigabytes) before it reads. */
#include "fits_io.h"

#include <errno.h>
#include <fitsio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct request {
    uint64_t plane, row0, rows, f64; /* f64: doubles wanted, else floats */
};

struct reply {
    int32_t status; /* 0: rows * nx pixels follow; else `length` bytes of message */
    uint32_t length;
};

static int send_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t done = send(fd, p, n, MSG_NOSIGNAL);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return -1;
        p += done;
        n -= (size_t)done;
    }
    return 0;
}

/* 0 when all n bytes came, -1 on an error or the end of the stream. */
static int receive_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t done = recv(fd, p, n, 0);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return -1;
        p += done;
        n -= (size_t)done;
    }
    return 0;
}

/* The child: rows for each request until the parent closes its end. */
static void serve(struct tool_image *img, int fd)
{
    fits_child_defaults();
    double *rows = NULL; /* room for floats or doubles */
    size_t held = 0;
    struct request q;
    while (receive_all(fd, &q, sizeof q) == 0) {
        char err[1024] = "";
        struct reply r = {0, 0};
        const size_t n = (size_t)q.rows * img->nx;
        if (n > held) {
            free(rows);
            held = 0;
            if ((rows = malloc(n * sizeof *rows)) != NULL) held = n;
        }
        if (!rows)
            snprintf(err, sizeof err, "out of memory unpacking %zu pixels", n);
        else if (q.f64)
            fits_io_read_rows_f64(img, (size_t)q.plane, (size_t)q.row0, (size_t)q.rows, rows, err,
                                  sizeof err);
        else
            fits_io_read_rows(img, (size_t)q.plane, (size_t)q.row0, (size_t)q.rows, (float *)rows,
                              err, sizeof err);
        r.status = err[0] ? -1 : 0;
        r.length = err[0] ? (uint32_t)strlen(err) + 1 : 0;
        if (send_all(fd, &r, sizeof r) != 0 ||
            send_all(fd, r.status ? (void *)err : (void *)rows,
                     r.status ? r.length : n * (q.f64 ? 8 : 4)) != 0)
            break;
    }
    _exit(0); /* the parent owns every buffer and file this process shares */
}

/* Every variable-length cell of the compressed table (a tile's bytes, and any other such column)
 * must lie inside the heap that PCOUNT declares. */
static int check_descriptors(struct tool_image *img, char *err, size_t errlen)
{
    fitsfile *f = img->fits;
    int status = 0, columns = 0;
    LONGLONG rows = 0, heap = 0;
    fits_get_num_rowsll(f, &rows, &status);
    fits_get_num_cols(f, &columns, &status);
    fits_read_key_lnglng(f, "PCOUNT", &heap, NULL, &status);
    for (int c = 1; c <= columns && status == 0; c++) {
        int type = 0;
        LONGLONG repeat = 0, width = 0;
        fits_get_coltypell(f, c, &type, &repeat, &width, &status);
        if (status || type >= 0) continue; /* fixed width: no heap */
        const LONGLONG size = width > 0 ? width : 1;
        for (LONGLONG r = 1; r <= rows && status == 0; r++) {
            LONGLONG length = 0, offset = 0;
            fits_read_descriptll(f, c, r, &length, &offset, &status);
            if (status == 0 &&
                (length < 0 || offset < 0 || offset > heap || length > (heap - offset) / size)) {
                snprintf(err, errlen,
                         "%s: tile %lld claims %lld bytes at byte %lld of a heap of %lld: the "
                         "file is damaged, so it is refused",
                         img->name, (long long)r, (long long)(length * size), (long long)offset,
                         (long long)heap);
                return -1;
            }
        }
    }
    if (status) {
        fits_io_describe(status, "cannot read the tile table", err, errlen);
        return -1;
    }
    return 0;
}

int fits_reader_start(struct tool_image *img, char *err, size_t errlen)
{
    if (check_descriptors(img, err, errlen) != 0) return -1;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        snprintf(err, errlen, "cannot start a reader for %s: %s", img->name, strerror(errno));
        return -1;
    }
    fflush(NULL); /* so the child cannot repeat buffered output (it never writes any) */
    const pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start a reader for %s: %s", img->name, strerror(errno));
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    if (pid == 0) {
        close(pair[0]);
        serve(img, pair[1]);
    }
    close(pair[1]);
    img->reader = true;
    img->reader_pid = pid;
    img->reader_fd = pair[0];
    return 0;
}

/* How the child ended, in words, once it has. */
static void describe_end(struct tool_image *img, char *err, size_t errlen)
{
    int how = 0;
    while (waitpid(img->reader_pid, &how, 0) < 0 && errno == EINTR) {
    }
    img->reader_pid = 0;
    char cause[64];
    fits_child_cause(how, cause, sizeof cause);
    snprintf(err, errlen,
             "cfitsio crashed unpacking the pixels of %s (%s): a compressed tile is damaged, so "
             "the image is refused",
             img->name, cause);
}

int fits_reader_read(struct tool_image *img, size_t plane, size_t row0, size_t rows, void *dst,
                     bool f64, char *err, size_t errlen)
{
    if (img->reader_pid <= 0) {
        snprintf(err, errlen, "cannot read the pixels of %s: its reader has stopped", img->name);
        return -1;
    }
    const struct request q = {plane, row0, rows, f64};
    struct reply r;
    if (send_all(img->reader_fd, &q, sizeof q) != 0 ||
        receive_all(img->reader_fd, &r, sizeof r) != 0) {
        describe_end(img, err, errlen);
        return -1;
    }
    if (r.status == 0) {
        if (receive_all(img->reader_fd, dst, rows * img->nx * (f64 ? 8 : 4)) == 0) return 0;
        describe_end(img, err, errlen);
        return -1;
    }
    char message[1024] = "";
    const size_t n = r.length < sizeof message ? r.length : sizeof message - 1;
    if (receive_all(img->reader_fd, message, n) != 0) {
        describe_end(img, err, errlen);
        return -1;
    }
    message[n] = '\0';
    snprintf(err, errlen, "%s", message);
    return -1;
}

void fits_reader_stop(struct tool_image *img)
{
    if (!img->reader) return;
    close(img->reader_fd); /* the child sees the end of its requests and leaves */
    img->reader = false;
    if (img->reader_pid > 0)
        while (waitpid(img->reader_pid, NULL, 0) < 0 && errno == EINTR) {
        }
    img->reader_pid = 0;
}
