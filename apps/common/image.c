/* image.c - opening an input image whatever it is (PNG, FITS, or either arriving through a pipe)
 * and reading its rows: from the FITS file on demand (fits_input.c), or copied from a PNG held
 * in memory. */
#include "image.h"
#include "atomic_file.h"
#include "fits_io.h"
#include "png_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The stream a name stands for when it is not a regular file: "-" (standard input), a FIFO, a
 * character device or socket (a shell's <(...) is /dev/fd/N, a pipe). *root_len is how much of
 * name is the stream's own name; what follows is cfitsio's selector ("[SCI]"). -1: no stream. */
static int stream_of(const char *name, size_t *root_len)
{
    char root[4096];
    struct stat st;
    if (strcmp(name, "-") == 0 || strcmp(name, "stdin") == 0) {
        *root_len = strlen(name);
        return STDIN_FILENO;
    }
    /* A literal name first: a PNG's name has no selector to strip. */
    if (stat(name, &st) == 0) {
        snprintf(root, sizeof root, "%s", name);
    } else {
        fits_io_rootname(name, root, sizeof root);
        if (!root[0] || strncmp(name, root, strlen(root)) != 0 || stat(root, &st) != 0) return -1;
    }
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return -1;
    *root_len = strlen(root);
    return open(root, O_RDONLY | O_CLOEXEC);
}

/* Copies the stream into a temporary file of at most max_bytes (removed with the image). */
static int spool(int fd, const char *name, uint64_t max_bytes, struct atomic_file *af, char *err,
                 size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    char dest[4096];
    snprintf(dest, sizeof dest, "%s/input", dir && dir[0] ? dir : "/tmp");
    if (atomic_begin(af, dest, err, errlen) != 0) return -1;
    int out = open(af->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        snprintf(err, errlen, "cannot copy the piped input %s: %s: %s", name, af->tmp_path,
                 strerror(errno));
        return -1;
    }
    static char buf[1 << 16];
    uint64_t total = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            snprintf(err, errlen, "cannot read %s: %s", name, strerror(errno));
            rc = -1;
            break;
        }
        if (n == 0) break;
        total += (uint64_t)n;
        if (total > max_bytes) {
            snprintf(err, errlen,
                     "%s is a pipe and holds more than the memory cap of %llu MiB "
                     "(--max-memory): a piped input is copied whole to a temporary file first; "
                     "save it to a file, or raise the cap",
                     name, (unsigned long long)(max_bytes >> 20));
            rc = -1;
            break;
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                snprintf(err, errlen, "cannot copy the piped input %s to %s: %s", name, af->tmp_dir,
                         strerror(errno));
                rc = -1;
                break;
            }
            done += w;
        }
        if (rc) break;
    }
    if (close(out) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot copy the piped input %s: %s", name, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && total == 0) {
        snprintf(err, errlen, "%s is empty", name);
        rc = -1;
    }
    return rc;
}

/* Messages about the copy name the input the user gave. */
static void name_the_input(char *err, size_t errlen, const char *copy_path, const char *name)
{
    char out[2048];
    size_t n = 0, len = strlen(copy_path);
    for (const char *p = err; *p && n + 1 < sizeof out;) {
        if (strncmp(p, copy_path, len) == 0) {
            n += (size_t)snprintf(out + n, sizeof out - n, "%s", name);
            if (n >= sizeof out) n = sizeof out - 1;
            p += len;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    snprintf(err, errlen, "%s", out);
}

int image_open(const char *name, enum image_shape want, uint64_t max_bytes, struct tool_image *img,
               char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    img->name = name;
    size_t root_len = 0;
    const int fd = stream_of(name, &root_len);
    struct atomic_file *copy = NULL;
    char path[8192 + 512];
    const char *open_name = name;
    if (fd >= 0) {
        copy = calloc(1, sizeof *copy);
        int rc = copy ? spool(fd, name, max_bytes, copy, err, errlen) : -1;
        if (!copy) snprintf(err, errlen, "out of memory for %s", name);
        if (fd != STDIN_FILENO) close(fd);
        if (rc == 0 && snprintf(path, sizeof path, "%s%s", copy->tmp_path, name + root_len) >=
                           (int)sizeof path) {
            snprintf(err, errlen, "%s: name too long", name);
            rc = -1;
        }
        if (rc != 0) {
            if (copy) atomic_abort(copy);
            free(copy);
            return -1;
        }
        open_name = path;
    }
    const int rc =
        png_io_is_png(open_name)
            ? png_io_read(open_name, (size_t)(max_bytes > SIZE_MAX ? SIZE_MAX : max_bytes), img,
                          err, errlen)
            : fits_io_open(open_name, want, max_bytes, img, err, errlen);
    img->name = name;
    img->spool = copy;
    if (rc != 0) {
        if (copy) name_the_input(err, errlen, copy->tmp_path, name);
        image_close(img);
    }
    return rc;
}

int image_read_rows(struct tool_image *img, size_t plane, size_t row0, size_t rows, float *dst,
                    char *err, size_t errlen)
{
    if (img->fits) return fits_io_read_rows(img, plane, row0, rows, dst, err, errlen);
    memcpy(dst, img->data + (plane * img->ny + row0) * img->nx, rows * img->nx * sizeof *dst);
    return 0;
}

int image_read_rows_f64(struct tool_image *img, size_t plane, size_t row0, size_t rows, double *dst,
                        char *err, size_t errlen)
{
    if (img->fits) return fits_io_read_rows_f64(img, plane, row0, rows, dst, err, errlen);
    const float *src = img->data + (plane * img->ny + row0) * img->nx;
    for (size_t i = 0; i < rows * img->nx; i++)
        dst[i] = src[i];
    return 0;
}

bool image_is_wide(const struct tool_image *img)
{
    return img->fits && (img->bitpix == -64 || img->bitpix == 32 || img->bitpix == 64);
}

void image_close(struct tool_image *img)
{
    fits_io_close(img);
    free(img->data);
    free(img->cards);
    img->data = NULL;
    img->cards = NULL;
    if (img->spool) {
        atomic_abort(img->spool);
        free(img->spool);
        img->spool = NULL;
    }
}
