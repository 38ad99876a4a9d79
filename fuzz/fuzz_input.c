/* fuzz_input.c - a libFuzzer target over madfilter's input path, without OpenCL: the bytes are
 * written to a file and opened the way madfilter opens an INPUT (image_open: a PNG by its
 * signature, else FITS through cfitsio: the shape and header checks), every plane's rows are
 * read a strip at a time, and each strip is written into an output file as fits_output.c writes
 * a map. The output's disk usage is checked after every strip and at the end: a damaged input
 * may fail anywhere, but the output never holds more than the rows read justify, and an
 * abandoned output is gone. Built and run by tools/fuzz.sh; fuzz/replay.c runs it over the
 * corpus in the ordinary test suite. */
#include "fits_io.h"
#include "image.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds madfilter's --max-memory sets in a real run; here they keep each input quick. */
#define MEMORY_CAP (64u << 20)
#define MAX_PIXELS (1u << 22) /* a small file may claim a huge image (tile compression) */
/* What a file system may allocate beyond the bytes written: a block at either end of a run. */
#define ALLOCATION_SLACK (64u << 10)

/* $FUZZ_INPUT names the file, else a fresh temporary one: tools/fuzz.sh gives a fixed name so
 * that the name's bytes, which cfitsio compares and libFuzzer learns from, are the same on
 * every run. The output and its scratch file go beside it. */
static char path[256], output[300], scratch[300];

static const char *input_file(const uint8_t *data, size_t size)
{
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
        snprintf(output, sizeof output, "%s.out.fits", path);
        snprintf(scratch, sizeof scratch, "%s.scratch", path);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
    unlink(output);
    unlink(scratch);
    return path;
}

/* Bytes the file occupies on disk (0 when it does not exist). */
static uint64_t disk_usage(const char *file)
{
    struct stat st;
    return stat(file, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

/* The output may hold the rows written and, once finished, its headers; anything more is the
 * bug this harness hunts (an output padded out to what a damaged header declares). */
static void check_disk_usage(uint64_t written, const struct tool_image *img, bool finished)
{
    uint64_t allowed = written + ALLOCATION_SLACK;
    if (finished) allowed += ((uint64_t)img->n_cards + 64) * 80 + 2 * 2880;
    const uint64_t used = disk_usage(output);
    if (used > allowed) {
        fprintf(stderr, "output uses %llu bytes on disk after %llu bytes of pixels\n",
                (unsigned long long)used, (unsigned long long)written);
        abort();
    }
}

/* Every plane's rows in strips, as clstats_filter_rows reads them; each strip into the output. */
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
    if (small && fits_output_create(&out, output, scratch, img, &map, 1, NULL, history, 1, 1, err,
                                    sizeof err))
        out = NULL;
    if (out) check_disk_usage(0, img, false); /* created: nothing written yet */
    size_t done = 0;
    uint64_t written = 0;
    for (size_t plane = 0; plane < img->planes && done < MAX_PIXELS; plane++) {
        for (size_t row0 = 0; row0 < img->ny && done < MAX_PIXELS; row0 += height) {
            size_t n = img->ny - row0 < height ? img->ny - row0 : height;
            if (image_read_rows(img, plane, row0, n, rows, err, sizeof err) != 0) goto done;
            if (out && fits_output_write_rows(out, 0, plane, row0, n, rows, err, sizeof err))
                goto done;
            written += out ? n * row_bytes : 0;
            if (out) check_disk_usage(written, img, false);
            done += n * img->nx;
        }
    }
    if (out) {
        const char *late[1] = {"fuzz, late"};
        if (fits_output_finish(out, late, 1, err, sizeof err) == 0)
            check_disk_usage(written, img, true);
        out = NULL;
    }
done:;
    const bool abandoned = out != NULL;
    fits_output_abort(out);
    if (abandoned && (disk_usage(output) || disk_usage(scratch))) abort(); /* yet still there */
    free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *input = input_file(data, size);
    struct tool_image img;
    char err[1024];
    if (image_open(input, SHAPE_PLANES, MEMORY_CAP, &img, err, sizeof err) == 0)
        read_and_write(&img);
    image_close(&img);
    return 0;
}
