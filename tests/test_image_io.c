/* test_image_io.c - the programs' file I/O on its own (apps/common, no OpenCL): image sections read
 * bit for bit and where cfitsio puts them, outputs that hold only what was written and vanish
 * when abandoned, checksums cfitsio accepts, piped inputs, and shapes imstats takes. */
#include "fits_io.h"
#include "image.h"
#include "test_util.h"

#include <fcntl.h>
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/test_image_io-XXXXXX";

static const char *path(const char *name)
{
    static char buf[4][512];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static void make_dir(void)
{
    ck_assert_ptr_nonnull(mkdtemp(strcpy(dir, "/tmp/test_image_io-XXXXXX")));
}

static void remove_dir(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void check(int status, const char *what)
{
    char text[FLEN_STATUS];
    fits_get_errstatus(status, text);
    ck_assert_msg(status == 0, "%s: cfitsio %d (%s)", what, status, text);
}

static void write_image(const char *file, const float *data, int naxis, const long *axes)
{
    fitsfile *f;
    int status = 0;
    long n = 1;
    for (int i = 0; i < naxis; i++)
        n *= axes[i];
    fits_create_file(&f, file, &status);
    fits_create_img(f, FLOAT_IMG, naxis, (long *)axes, &status);
    fits_write_img(f, TFLOAT, 1, n, (float *)data, &status);
    fits_close_file(f, &status);
    check(status, file);
}

/* Every pixel of an opened image, plane after plane. */
static float *read_image(struct tool_image *img)
{
    char err[512];
    const size_t plane = img->nx * img->ny;
    float *out = malloc(plane * img->planes * sizeof *out + 1);
    for (size_t p = 0; p < img->planes; p++)
        ck_assert_msg(image_read_rows(img, p, 0, img->ny, out + p * plane, err, sizeof err) == 0,
                      "%s", err);
    return out;
}

static bool same_bits(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y;
}

/* A 6 x 5 x 3 cube whose values say where they are (100 z + 10 y + x, 1-based), with the values
 * a null check would change in plane 1: -0, subnormals, infinities. */
static void write_cube(const char *file, float *v)
{
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 6; x++)
                v[(z * 5 + y) * 6 + x] = (float)(100 * (z + 1) + 10 * (y + 1) + x + 1);
    v[0] = -0.0f, v[1] = 1e-40f, v[2] = INFINITY, v[3] = -INFINITY, v[7] = -1e-45f;
    const long axes[3] = {6, 5, 3};
    write_image(file, v, 3, axes);
}

START_TEST(sections_are_read_bit_for_bit_where_cfitsio_puts_them)
{
    float cube[90];
    write_cube(path("cube.fits"), cube);
    /* Each section with its geometry, first pixel and step per axis (1-based) and lengths. */
    const struct {
        const char *section;
        long first[3], step[3], len[3];
    } cases[] = {
        {"[*,*,1:1]", {1, 1, 1}, {1, 1, 1}, {6, 5, 1}},
        {"[2:5,2:4,1:1]", {2, 2, 1}, {1, 1, 1}, {4, 3, 1}},
        {"[-*,*,1:1]", {6, 1, 1}, {-1, 1, 1}, {6, 5, 1}},
        {"[*,-*,1:1]", {1, 5, 1}, {1, -1, 1}, {6, 5, 1}},
        {"[5:2,4:1,1:1]", {5, 4, 1}, {-1, -1, 1}, {4, 4, 1}},
        {"[1:6:2, *, 1:1]", {1, 1, 1}, {2, 1, 1}, {3, 5, 1}},
        {"[-*:2,2:5:3,1:1]", {6, 2, 1}, {-2, 3, 1}, {3, 2, 1}},
        {"[*,*,3:1]", {1, 1, 3}, {1, 1, -1}, {6, 5, 3}},
        {"[2:3,*:2,*:2]", {2, 1, 1}, {1, 2, 2}, {2, 3, 2}},
        {"[*,*]", {1, 1, 1}, {1, 1, 1}, {6, 5, 3}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char name[600], err[512];
        snprintf(name, sizeof name, "%s%s", path("cube.fits"), cases[c].section);
        struct tool_image img;
        ck_assert_msg(image_open(name, SHAPE_PLANES, 1 << 30, &img, err, sizeof err) == 0, "%s: %s",
                      cases[c].section, err);
        ck_assert_int_eq(img.nx, cases[c].len[0]);
        ck_assert_int_eq(img.ny, cases[c].len[1]);
        ck_assert_int_eq(img.planes, cases[c].len[2]);
        float *got = read_image(&img);
        /* cfitsio's own reading of the section: the same pixels, through its null checks. */
        fitsfile *f;
        int status = 0, anynul;
        const long n = cases[c].len[0] * cases[c].len[1] * cases[c].len[2];
        float *peer = malloc((size_t)n * sizeof *peer);
        fits_open_file(&f, name, READONLY, &status);
        fits_read_img(f, TFLOAT, 1, n, NULL, peer, &anynul, &status);
        fits_close_file(f, &status);
        check(status, name);
        long i = 0;
        for (long z = 0; z < cases[c].len[2]; z++)
            for (long y = 0; y < cases[c].len[1]; y++)
                for (long x = 0; x < cases[c].len[0]; x++, i++) {
                    const long sx = cases[c].first[0] + x * cases[c].step[0] - 1;
                    const long sy = cases[c].first[1] + y * cases[c].step[1] - 1;
                    const long sz = cases[c].first[2] + z * cases[c].step[2] - 1;
                    const float want = cube[(sz * 5 + sy) * 6 + sx];
                    ck_assert_msg(same_bits(got[i], want), "%s: pixel %ld is %a, want %a",
                                  cases[c].section, i, got[i], want);
                    if (isnormal(want))
                        ck_assert_msg(peer[i] == want, "%s: cfitsio puts %g at %ld, not %g",
                                      cases[c].section, peer[i], i, want);
                }
        free(peer);
        free(got);
        image_close(&img);
    }
}
END_TEST

START_TEST(imstats_takes_any_shape)
{
    float v[24];
    for (int i = 0; i < 24; i++)
        v[i] = (float)i;
    const long one[1] = {24}, four[4] = {2, 3, 2, 2};
    write_image(path("line.fits"), v, 1, one);
    write_image(path("four.fits"), v, 4, four);
    const char *names[2] = {"line.fits", "four.fits"};
    for (int k = 0; k < 2; k++) {
        struct tool_image img;
        char err[512];
        ck_assert_msg(image_open(path(names[k]), SHAPE_ANY, 1 << 30, &img, err, sizeof err) == 0,
                      "%s", err);
        ck_assert_int_eq(img.nx * img.ny * img.planes, 24);
        float *got = read_image(&img);
        for (int i = 0; i < 24; i++)
            ck_assert_msg(got[i] == v[i], "%s: pixel %d", names[k], i);
        free(got);
        image_close(&img);
        /* madfilter's shapes refuse both, in its own words. */
        ck_assert_int_ne(image_open(path(names[k]), SHAPE_PLANES, 1 << 30, &img, err, sizeof err),
                         0);
        ck_assert_msg(strstr(err, "madfilter") != NULL, "%s", err);
    }
}
END_TEST

static uint64_t disk_bytes(const char *file)
{
    struct stat st;
    return stat(file, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static struct tool_image image_of(size_t nx, size_t ny, size_t planes)
{
    struct tool_image img;
    memset(&img, 0, sizeof img);
    img.nx = nx, img.ny = ny, img.planes = planes, img.cube = planes > 1;
    static char cards[3 * 80 + 1];
    snprintf(cards, sizeof cards, "%-80s%-80s%-80s", "OBJECT  = 'M 31'", "DATE    = '1999-01-01'",
             "BUNIT   = 'adu'");
    img.cards = cards;
    img.n_cards = 3;
    return img;
}

START_TEST(an_output_holds_only_what_was_written)
{
    /* Four maps of a declared 4096 x 4096 image: 256 MiB if padded out. Only two rows of each
     * are written, and the file may take no more than those rows and the headers. */
    struct tool_image img = image_of(4096, 4096, 1);
    const struct fits_map maps[4] = {
        {"MAD", "m", false}, {"MEDIAN", "m", false}, {"SIGMA", "s", false}, {"SNR", "r", true}};
    const char *history[1] = {"test"};
    struct fits_output *out;
    char err[512];
    ck_assert_msg(fits_output_create(&out, path("o.fits"), path("scratch"), &img, maps, 4, NULL,
                                     history, 1, 1, err, sizeof err) == 0,
                  "%s", err);
    float *rows = calloc(2 * 4096, sizeof *rows);
    for (int m = 0; m < 4; m++)
        ck_assert(fits_output_write_rows(out, m, 0, 0, 2, rows, err, sizeof err) == 0);
    const uint64_t written = 4 * 2 * 4096 * 4;
    ck_assert_msg(disk_bytes(path("o.fits")) <= written + 4 * 16384,
                  "%llu bytes on disk for %llu written",
                  (unsigned long long)disk_bytes(path("o.fits")), (unsigned long long)written);
    /* Rows out of order would make the checksum lie: refused. */
    ck_assert(fits_output_write_rows(out, 0, 0, 5, 1, rows, err, sizeof err) != 0);
    /* A map the output does not have is refused before its HDU is looked at. */
    for (int bad = -1; bad <= 4; bad += 5) {
        err[0] = '\0';
        ck_assert(fits_output_write_rows(out, bad, 0, 2, 1, rows, err, sizeof err) != 0);
        ck_assert_msg(strstr(err, "of 4 maps") != NULL, "map %d: %s", bad, err);
    }
    /* Finishing an incomplete output is refused, and removes it, as abandoning does. */
    ck_assert(fits_output_finish(out, history, 1, err, sizeof err) != 0);
    ck_assert_msg(strstr(err, "incomplete") != NULL, "%s", err);
    ck_assert(access(path("o.fits"), F_OK) != 0);
    ck_assert(fits_output_create(&out, path("o.fits"), path("scratch"), &img, maps, 1, NULL,
                                 history, 1, 1, err, sizeof err) == 0);
    ck_assert(fits_output_write_rows(out, 0, 0, 0, 2, rows, err, sizeof err) == 0);
    fits_output_abort(out);
    ck_assert(access(path("o.fits"), F_OK) != 0);
    free(rows);
}
END_TEST

/* Writes a finished output of a 7 x 5 x planes image with two maps (values v and -v) to name. */
static void write_finished(const char *name, size_t planes, const float *v)
{
    struct tool_image img = image_of(7, 5, planes);
    const struct fits_map maps[2] = {{"MAD", "m", false}, {"SNR", "ratio", true}};
    const char *history[2] = {"a line of history", "a much longer line of history that goes on "
                                                   "past the seventy-two characters of one card"};
    const char *late[1] = {"a late line, known at the end"};
    struct fits_output *out;
    char err[512];
    float neg[35];
    for (int i = 0; i < 35; i++)
        neg[i] = -v[i];
    ck_assert(fits_output_create(&out, name, path("scratch"), &img, maps, 2, NULL, history, 2, 1,
                                 err, sizeof err) == 0);
    for (size_t p = 0; p < planes; p++)
        for (int m = 0; m < 2; m++) /* strips of 3 and 2 rows */
            for (size_t r = 0; r < 5; r += 3)
                ck_assert_msg(fits_output_write_rows(out, m, p, r, r ? 2 : 3, (m ? neg : v) + r * 7,
                                                     err, sizeof err) == 0,
                              "%s", err);
    ck_assert_msg(fits_output_finish(out, late, 1, err, sizeof err) == 0, "%s", err);
}

START_TEST(outputs_are_valid_fits_with_checksums)
{
    float v[35];
    for (int i = 0; i < 35; i++)
        v[i] = (float)i * 0.5f - 3.0f;
    v[3] = NAN, v[4] = -0.0f, v[5] = INFINITY, v[6] = 1e-42f;
    const char *names[3] = {"plain.fits", "packed.fits.gz", "cube.fits"};
    for (int k = 0; k < 3; k++) {
        const size_t planes = k == 2 ? 2 : 1;
        write_finished(path(names[k]), planes, v);
        fitsfile *f;
        int status = 0, hdus = 0, data_ok, hdu_ok, anynul, naxis;
        long axes[3];
        fits_open_file(&f, path(names[k]), READONLY, &status);
        fits_get_num_hdus(f, &hdus, &status);
        ck_assert_int_eq(hdus, 2);
        for (int h = 1; h <= 2; h++) {
            char value[FLEN_VALUE], card[FLEN_CARD];
            int keys = 0, dates = 0;
            fits_movabs_hdu(f, h, NULL, &status);
            fits_verify_chksum(f, &data_ok, &hdu_ok, &status);
            check(status, names[k]);
            ck_assert_msg(data_ok == 1 && hdu_ok == 1, "%s HDU %d: checksums %d %d", names[k], h,
                          data_ok, hdu_ok);
            fits_read_key_str(f, "EXTNAME", value, NULL, &status);
            ck_assert_str_eq(value, h == 1 ? "MAD" : "SNR");
            /* The input's DATE is replaced by the output's own, not repeated. */
            fits_get_hdrspace(f, &keys, NULL, &status);
            for (int i = 1; i <= keys; i++) {
                fits_read_record(f, i, card, &status);
                dates += strncmp(card, "DATE    ", 8) == 0;
            }
            ck_assert_int_eq(dates, 1);
            fits_read_key_str(f, "DATE", value, NULL, &status);
            ck_assert_msg(strcmp(value, "1999-01-01") != 0, "the input's DATE was kept");
            int unit = fits_read_key_str(f, "BUNIT", value, NULL, &status) == 0;
            status = 0;
            fits_clear_errmsg();
            ck_assert_int_eq(unit, h == 1); /* SNR is unitless */
            fits_get_img_dim(f, &naxis, &status);
            fits_get_img_size(f, 3, axes, &status);
            ck_assert_int_eq(naxis, planes > 1 ? 3 : 2);
            float got[70], zero = 0.0f;
            fits_read_img(f, TFLOAT, 1, 35 * (long)planes, &zero, got, &anynul, &status);
            check(status, names[k]);
            for (size_t i = 0; i < 35 * planes; i++) {
                const float want = h == 1 ? v[i % 35] : -v[i % 35];
                ck_assert_msg(same_bits(got[i], want), "%s HDU %d pixel %zu", names[k], h, i);
            }
        }
        char history[FLEN_CARD] = "";
        int keys = 0;
        fits_movabs_hdu(f, 2, NULL, &status);
        fits_get_hdrspace(f, &keys, NULL, &status);
        for (int i = 1; i <= keys; i++) {
            char card[FLEN_CARD];
            fits_read_record(f, i, card, &status);
            if (strstr(card, "late line")) snprintf(history, sizeof history, "%s", card);
        }
        ck_assert_msg(history[0], "%s: no late HISTORY line", names[k]);
        fits_close_file(f, &status);
        check(status, names[k]);
    }
    /* The .gz output is gzip, and its uncompressed scratch file is gone. */
    unsigned char magic[2] = {0};
    FILE *fp = fopen(path("packed.fits.gz"), "rb");
    ck_assert_int_eq(fread(magic, 1, 2, fp), 2);
    fclose(fp);
    ck_assert(magic[0] == 0x1f && magic[1] == 0x8b);
    ck_assert(access(path("scratch"), F_OK) != 0);
}
END_TEST

START_TEST(a_piped_input_is_read_whole)
{
    float cube[90];
    write_cube(path("cube.fits"), cube);
    ck_assert_int_eq(mkfifo(path("pipe"), 0600), 0);
    const char *selectors[2] = {"", "[2:3,*,1:1]"};
    for (int k = 0; k < 2; k++) {
        char name[600], err[512];
        snprintf(name, sizeof name, "%s%s", path("pipe"), selectors[k]);
        pid_t pid = test_feed_fifo(path("pipe"), path("cube.fits"));
        struct tool_image img;
        ck_assert_msg(image_open(name, SHAPE_PLANES, 1 << 30, &img, err, sizeof err) == 0, "%s",
                      err);
        ck_assert_int_eq(img.nx, k ? 2 : 6);
        float *got = read_image(&img);
        ck_assert(same_bits(got[0], k ? cube[1] : cube[0]));
        ck_assert(same_bits(got[1], cube[k ? 2 : 1]));
        free(got);
        image_close(&img);
        waitpid(pid, NULL, 0);
    }
    /* A stream larger than the cap is refused, and its copy removed. */
    char err[512];
    struct tool_image img;
    pid_t pid = test_feed_fifo(path("pipe"), path("cube.fits"));
    ck_assert_int_ne(image_open(path("pipe"), SHAPE_PLANES, 1000, &img, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "is a pipe and holds more than") != NULL, "%s", err);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("image_io");
    TCase *tc = tcase_create("io");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sections_are_read_bit_for_bit_where_cfitsio_puts_them);
    tcase_add_test(tc, imstats_takes_any_shape);
    tcase_add_test(tc, an_output_holds_only_what_was_written);
    tcase_add_test(tc, outputs_are_valid_fits_with_checksums);
    tcase_add_test(tc, a_piped_input_is_read_whole);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
