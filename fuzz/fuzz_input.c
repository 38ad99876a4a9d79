/* fuzz_input.c - a libFuzzer target over madfilter's input path, without OpenCL: the bytes are
 * written to a file and read the way madfilter reads an INPUT (a PNG by its signature, else FITS
 * through cfitsio: the shape and header checks, every plane's rows a strip at a time), and the
 * header is carried into an output written to memory, as fits_output.c writes a map. Built and
 * run by tools/fuzz.sh; fuzz/replay.c runs it over the corpus in the ordinary test suite. */
#include "fits_io.h"
#include "png_io.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bounds madfilter's --max-memory sets in a real run; here they keep each input quick. */
#define MEMORY_CAP (64u << 20)
#define MAX_PIXELS (1u << 22) /* a small file may claim a huge image (tile compression) */

/* $FUZZ_INPUT names the file, else a fresh temporary one: tools/fuzz.sh gives a fixed name so
 * that the name's bytes, which cfitsio compares and libFuzzer learns from, are the same on
 * every run. */
static const char *input_file(const uint8_t *data, size_t size)
{
    static char path[256];
    static int fd = -1;
    if (fd < 0) {
        const char *fixed = getenv("FUZZ_INPUT");
        if (fixed && fixed[0]) {
            snprintf(path, sizeof path, "%s", fixed);
            fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        } else {
            snprintf(path, sizeof path, "/tmp/madfilter-fuzz-XXXXXX");
            fd = mkstemp(path);
        }
        if (fd < 0) abort();
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
    return path;
}

/* Every plane's rows in strips, as strips.c reads them; then the maps' output in memory. */
static void read_and_write(struct tool_image *img)
{
    char err[1024];
    const size_t row_bytes = img->nx * sizeof(float);
    if (row_bytes > MEMORY_CAP) return; /* madfilter refuses the image here: no strip fits */
    size_t height = MEMORY_CAP / row_bytes < img->ny ? MEMORY_CAP / row_bytes : img->ny;
    float *rows = malloc(height * row_bytes);
    if (!rows) abort();
    const int small = img->planes <= MAX_PIXELS && img->nx * img->ny <= MAX_PIXELS / img->planes;
    struct fits_output *out = NULL;
    const struct fits_map map = {"MAD", "median absolute deviation", false};
    const char *history[1] = {"fuzz"};
    if (small && fits_output_create(&out, "mem://", img, &map, 1, history, 1, 1, err, sizeof err))
        out = NULL;
    size_t done = 0;
    for (size_t plane = 0; plane < img->planes && done < MAX_PIXELS; plane++) {
        for (size_t row0 = 0; row0 < img->ny && done < MAX_PIXELS; row0 += height) {
            size_t n = img->ny - row0 < height ? img->ny - row0 : height;
            if (image_read_rows(img, plane, row0, n, rows, err, sizeof err) != 0) goto done;
            if (out && fits_output_write_rows(out, 0, plane, row0, n, rows, err, sizeof err))
                goto done;
            done += n * img->nx;
        }
    }
    if (out) {
        const char *late[1] = {"fuzz, late"};
        fits_output_finish(out, late, 1, err, sizeof err);
        out = NULL;
    }
done:
    fits_output_abort(out);
    free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = input_file(data, size);
    struct tool_image img;
    char err[1024];
    int rc = png_io_is_png(path) ? png_io_read(path, MEMORY_CAP, &img, err, sizeof err)
                                 : fits_io_open(path, false, MEMORY_CAP, &img, err, sizeof err);
    if (rc == 0) read_and_write(&img);
    image_close(&img);
    return 0;
}
