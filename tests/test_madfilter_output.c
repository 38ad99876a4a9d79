/* test_madfilter_output.c - what madfilter's outputs hold and where they go: the keyword cards a
 * program reads (MFWIDTH ...) with the data and checksums intact whatever the header's length,
 * float64 maps of float64 and wide integer images, -o DIR and standard output. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "madfilter_harness.h"

#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every HDU of path passes cfitsio's CHECKSUM and DATASUM verification. */
static void check_checksums(const char *path)
{
    fitsfile *f;
    int status = 0, hdus = 0;
    fits_open_file(&f, path, READONLY, &status);
    fits_get_num_hdus(f, &hdus, &status);
    for (int h = 1; h <= hdus; h++) {
        int data_ok = 0, hdu_ok = 0;
        fits_movabs_hdu(f, h, NULL, &status);
        fits_verify_chksum(f, &data_ok, &hdu_ok, &status);
        ck_assert_msg(status == 0 && data_ok == 1 && hdu_ok == 1, "%s HDU %d: checksums %d %d",
                      path, h, data_ok, hdu_ok);
    }
    fits_close_file(f, &status);
    fits_check(status, path);
}

static long read_key_long(const char *path, int hdu, const char *key)
{
    fitsfile *f;
    int status = 0;
    long v = 0;
    fits_open_file(&f, path, READONLY, &status);
    fits_movabs_hdu(f, hdu, NULL, &status);
    fits_read_key(f, TLONG, key, &v, NULL, &status);
    fits_close_file(f, &status);
    fits_check(status, key);
    return v;
}

/* How many cards of the HDU carry key. */
static int count_key(const char *path, int hdu, const char *key)
{
    char *hdr = read_header(path, hdu), name[9];
    snprintf(name, sizeof name, "%-8s", key);
    int n = 0;
    for (size_t i = 0; hdr[i]; i += 80)
        n += strncmp(hdr + i, name, 8) == 0;
    free(hdr);
    return n;
}


/* HDU hdu's pixels as float64, bits untouched (no null check), and its BITPIX. */
static double *read_hdu_f64(const char *path, int hdu, size_t n, int *bitpix)
{
    fitsfile *f;
    int status = 0, anynul = 0;
    double nulval = 0.0, *data = malloc(n * sizeof *data);
    fits_open_file(&f, path, READONLY, &status);
    fits_movabs_hdu(f, hdu, NULL, &status);
    fits_get_img_type(f, bitpix, &status);
    fits_read_img(f, TDOUBLE, 1, (LONGLONG)n, &nulval, data, &anynul, &status);
    fits_close_file(f, &status);
    fits_check(status, "reading a float64 output");
    return data;
}

/* Equal bits, NaN for NaN (the library writes one NaN; cfitsio keeps it). */
static size_t differ_f64(const double *got, const double *want, size_t n, size_t *first)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const bool same = (isnan(got[i]) && isnan(want[i])) || memcmp(&got[i], &want[i], 8) == 0;
        if (!same && bad++ == 0) *first = i;
    }
    return bad;
}

/* A float64 image with ties, NaN, +-inf, -0 and values float32 cannot hold. */
static double *random_image_f64(size_t nx, size_t ny, uint64_t salt)
{
    double *img = malloc(nx * ny * sizeof *img);
    uint64_t x = 0x9e3779b97f4a7c15ULL ^ salt;
    for (size_t i = 0; i < nx * ny; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const unsigned r = (unsigned)(x % 1000);
        img[i] = r < 20    ? NAN
                 : r < 25  ? INFINITY
                 : r < 30  ? -INFINITY
                 : r < 35  ? -0.0
                 : r < 300 ? (double)(x % 7) + 0.1 /* ties */
                           : 16777216.0 + (double)(x % 64) + 1e-9 * (double)(x % 1000);
    }
    return img;
}

/* A float64 or integer FITS image of values (BLANK where NaN for integers). */
static void write_fits_f64(const char *path, int bitpix, const double *v, size_t nx, size_t ny)
{
    fitsfile *f;
    int status = 0;
    long naxes[2] = {(long)nx, (long)ny};
    remove(path);
    fits_create_file(&f, path, &status);
    fits_create_img(f, bitpix, 2, naxes, &status);
    if (bitpix > 0) {
        long long blank = -999;
        fits_write_key(f, TLONGLONG, "BLANK", &blank, NULL, &status);
        double null = -999;
        double *copy = malloc(nx * ny * sizeof *copy);
        for (size_t i = 0; i < nx * ny; i++)
            copy[i] = isnan(v[i]) ? null : v[i];
        fits_write_imgnull(f, TDOUBLE, 1, (LONGLONG)(nx * ny), copy, &null, &status);
        free(copy);
    } else {
        fits_write_img(f, TDOUBLE, 1, (LONGLONG)(nx * ny), (double *)v, &status);
    }
    fits_close_file(f, &status);
    fits_check(status, path);
}

START_TEST(keywords_a_program_can_read_are_in_every_map)
{
    const size_t nx = 19, ny = 13;
    float *img = random_image(nx, ny, 7);
    write_float_fits(tmp("in.fits"), img, nx, ny);
    ck_run_ok(run(tmp("in.fits"), tmp("ring.fits"), "--footprint", "ring:1,3", "--boundary",
                  "constant", "--cval", "2.5", "--origin", "1,-1", "--even", "upper", "--maps",
                  "mad,median,snr", "-q", NULL));
    check_checksums(tmp("ring.fits"));
    for (int h = 1; h <= 3; h++) {
        char v[FLEN_VALUE];
        ck_assert_int_eq(read_key_long(tmp("ring.fits"), h, "MFWIDTH"), 7);
        ck_assert_int_eq(read_key_long(tmp("ring.fits"), h, "MFHEIGHT"), 7);
        ck_assert_int_eq(read_key_long(tmp("ring.fits"), h, "MFORIGX"), 1);
        ck_assert_int_eq(read_key_long(tmp("ring.fits"), h, "MFORIGY"), -1);
        read_key_string(tmp("ring.fits"), h, "MFFOOT", v);
        ck_assert_str_eq(v, "ring:1,3");
        read_key_string(tmp("ring.fits"), h, "MFEVEN", v);
        ck_assert_str_eq(v, "upper");
        read_key_string(tmp("ring.fits"), h, "MFBOUND", v);
        ck_assert_str_eq(v, "constant");
        read_key_string(tmp("ring.fits"), h, "MFCVAL", v);
        ck_assert_msg(atof(v) == 2.5 && strchr(v, '.'), "MFCVAL %s", v);
        read_key_string(tmp("ring.fits"), h, "MFMAPS", v);
        ck_assert_str_eq(v, "MAD,MEDIAN,SNR");
        read_key_string(tmp("ring.fits"), h, "MFDEVICE", v);
        ck_assert_msg(strlen(v) > 0, "no device name");
        char *hdr = read_header(tmp("ring.fits"), h);
        ck_assert_msg(strstr(hdr, "HISTORY madfilter: device "), "HISTORY lost");
        free(hdr);
    }
    /* A map filtered again states the new run's window once, not the old one's as well. */
    ck_run_ok(run(tmp("ring.fits[MEDIAN]"), tmp("again.fits"), "-w", "4x2", "-q", NULL));
    check_checksums(tmp("again.fits"));
    char v[FLEN_VALUE];
    ck_assert_int_eq(count_key(tmp("again.fits"), 1, "MFWIDTH"), 1);
    ck_assert_int_eq(count_key(tmp("again.fits"), 1, "MFCVAL"), 1);
    char *hdr = read_header(tmp("again.fits"), 1);
    ck_assert_msg(strstr(hdr, "MFCVAL  =                      /"),
                  "MFCVAL outside constant mode should be undefined");
    free(hdr);
    ck_assert_int_eq(read_key_long(tmp("again.fits"), 1, "MFWIDTH"), 4);
    ck_assert_int_eq(read_key_long(tmp("again.fits"), 1, "MFHEIGHT"), 2);
    read_key_string(tmp("again.fits"), 1, "MFFOOT", v);
    ck_assert_str_eq(v, "rectangle");
    read_key_string(tmp("again.fits"), 1, "MFMAPS", v);
    ck_assert_str_eq(v, "MAD");
    /* NaN has no FITS value: the card is there, its value undefined. */
    ck_run_ok(run(tmp("in.fits"), tmp("nan.fits"), "-w", "3", "--boundary", "constant", "--cval",
                  "nan", "-q", NULL));
    check_checksums(tmp("nan.fits"));
    ck_assert_int_eq(count_key(tmp("nan.fits"), 1, "MFCVAL"), 1);
    read_key_string(tmp("nan.fits"), 1, "MFFOOT", v);
    ck_assert_str_eq(v, "square");
    free(img);
}
END_TEST

/* Inputs whose headers hold 0 .. 80 cards of their own put the maps' header ends on every card
 * of a 2880-byte block: the data must start where the header says, the checksums hold, and the
 * pixels are the library's. */
START_TEST(headers_of_every_length_keep_the_data_in_place)
{
    const size_t nx = 9, ny = 7;
    float *img = random_image(nx, ny, 11);
    float *median = malloc(nx * ny * sizeof *median), *mad = malloc(nx * ny * sizeof *mad);
    library_maps(img, nx, ny, 3, CLSTATS_BOUNDARY_REFLECT, median, mad);
    for (int extra = 0; extra <= 80; extra++) {
        fitsfile *f;
        int status = 0;
        long naxes[2] = {(long)nx, (long)ny};
        remove(tmp("pad.fits"));
        remove(tmp("pad_out.fits"));
        fits_create_file(&f, tmp("pad.fits"), &status);
        fits_create_img(f, FLOAT_IMG, 2, naxes, &status);
        for (int k = 0; k < extra; k++) {
            char key[16];
            snprintf(key, sizeof key, "KEY%d", k);
            fits_write_key_lng(f, key, k, "a card of the input", &status);
        }
        fits_write_img(f, TFLOAT, 1, (LONGLONG)(nx * ny), img, &status);
        fits_close_file(f, &status);
        fits_check(status, "writing an input");
        ck_run_ok(run(tmp("pad.fits"), tmp("pad_out.fits"), "-w", "3", "--maps", "median,mad", "-q",
                      NULL));
        check_checksums(tmp("pad_out.fits"));
        for (int h = 1; h <= 2; h++) {
            long gx, gy;
            float *got = read_hdu(tmp("pad_out.fits"), h, &gx, &gy);
            ck_assert_msg(test_compare_bits(got, h == 1 ? median : mad, nx * ny, nx, "map") == 0,
                          "%d cards of the input: HDU %d differs", extra, h);
            free(got);
        }
    }
    free(img);
    free(median);
    free(mad);
}
END_TEST

/* An int32 of 16 777 217 is not a float32: a BITPIX 32 image is filtered in float64, and its
 * maps are float64 unless --bitpix -32 asks otherwise. */
START_TEST(wide_integers_are_filtered_exactly_in_float64)
{
    const size_t nx = 5, ny = 4;
    double v[20];
    for (size_t i = 0; i < 20; i++)
        v[i] = 16777217.0 + 2.0 * (double)(i % 3);
    v[7] = NAN; /* BLANK */
    write_fits_f64(tmp("int32.fits"), LONG_IMG, v, nx, ny);
    ck_run_ok(run(tmp("int32.fits"), tmp("w1.fits"), "-w", "1", "--maps", "median", "-q", NULL));
    int bitpix = 0;
    double *got = read_hdu_f64(tmp("w1.fits"), 1, 20, &bitpix);
    ck_assert_int_eq(bitpix, DOUBLE_IMG);
    ck_assert_double_eq(got[0], 16777217.0);
    ck_assert(isnan(got[7]));
    free(got);
    ck_run_ok(run(tmp("int32.fits"), tmp("w1_32.fits"), "-w", "1", "--maps", "median", "--bitpix",
                  "-32", "-q", NULL));
    got = read_hdu_f64(tmp("w1_32.fits"), 1, 20, &bitpix);
    ck_assert_int_eq(bitpix, FLOAT_IMG);
    ck_assert_double_eq(got[0], (double)(float)16777217.0);
    free(got);
    /* A float32 image keeps float32 maps, unless --bitpix -64 widens them. */
    const float f[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    write_float_fits(tmp("f32.fits"), f, nx, ny);
    ck_run_ok(run(tmp("f32.fits"), tmp("f32_out.fits"), "-w", "3", "-q", NULL));
    free(read_hdu_f64(tmp("f32_out.fits"), 1, 20, &bitpix));
    ck_assert_int_eq(bitpix, FLOAT_IMG);
    ck_run_ok(run(tmp("f32.fits"), tmp("f32_64.fits"), "-w", "3", "--bitpix", "-64", "-q", NULL));
    free(read_hdu_f64(tmp("f32_64.fits"), 1, 20, &bitpix));
    ck_assert_int_eq(bitpix, DOUBLE_IMG);
    check_checksums(tmp("f32_64.fits"));
    struct result *r = run(tmp("f32.fits"), tmp("x.fits"), "--bitpix", "16", NULL);
    check_one_line_error(r, 2, "--bitpix takes -32 or -64", "a bad --bitpix");
}
END_TEST

/* BITPIX -64, 32 and 64 images in every shape the filter takes, against the library's float64
 * filter bit for bit; SIGMA and SNR in float64 arithmetic; strips of a few rows give the same
 * bits as one piece. */
START_TEST(float64_maps_are_the_librarys_in_every_strip)
{
    const size_t nx = 61, ny = 47, n = nx * ny;
    const int bitpixes[3] = {DOUBLE_IMG, LONG_IMG, LONGLONG_IMG};
    for (int b = 0; b < 3; b++) {
        double *img = random_image_f64(nx, ny, 40u + (unsigned)b);
        if (bitpixes[b] > 0) /* integers: no infinities, NaN stands for BLANK */
            for (size_t i = 0; i < n; i++)
                img[i] = isinf(img[i]) ? 5.0 : isnan(img[i]) ? NAN : floor(img[i]);
        write_fits_f64(tmp("wide.fits"), bitpixes[b], img, nx, ny);
        struct {
            const char *args[8];
            struct clstats_filter_params p;
        } cases[3] = {
            {{"-w", "5x3", "--boundary", "nearest", NULL},
             {.width = 5, .height = 3, .boundary = CLSTATS_BOUNDARY_NEAREST}},
            {{"--footprint", "circle:2", "--even", "lower", NULL}, {.even = CLSTATS_EVEN_LOWER}},
            {{"-w", "4", "--boundary", "constant", "--cval", "16777217", NULL},
             {.width = 4, .boundary = CLSTATS_BOUNDARY_CONSTANT, .cval = 16777217.0f}},
        };
        unsigned char circle[25];
        ck_assert_int_eq(clstats_footprint_circle(2, circle, 25), 5);
        cases[1].p.footprint = circle, cases[1].p.footprint_width = 5;
        cases[1].p.footprint_height = 5;
        const double cval = 16777217.0;
        cases[2].p.cval_f64 = &cval;
        double *median = malloc(n * sizeof *median), *mad = malloc(n * sizeof *mad);
        double *sigma = malloc(n * sizeof *sigma), *snr = malloc(n * sizeof *snr);
        for (int c = 0; c < 3; c++) {
            library_maps_of(img, CLSTATS_FLOAT64, nx, ny, &cases[c].p, median, mad);
            for (size_t i = 0; i < n; i++) {
                sigma[i] = 1.482602218505602 * mad[i];
                snr[i] = sigma[i] == 0.0 ? NAN : (img[i] - median[i]) / sigma[i];
            }
            const double *want[4] = {median, mad, sigma, snr};
            for (int strips = 0; strips < 2; strips++) {
                const char *a[16];
                int k = 0;
                a[k++] = tmp("wide.fits"), a[k++] = tmp("wide_out.fits");
                for (int i = 0; cases[c].args[i]; i++)
                    a[k++] = cases[c].args[i];
                a[k++] = "--maps", a[k++] = "median,mad,sigma,snr", a[k++] = "--overwrite";
                /* 64K of host memory holds strips of a few rows of this image. */
                if (strips) a[k++] = "--max-memory", a[k++] = "64K";
                a[k] = NULL;
                remove(tmp("wide_out.fits"));
                struct result *r = run(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                                       a[10], a[11], a[12], a[13], NULL);
                ck_assert_msg(r->code == 0, "madfilter failed: %s", r->err);
                ck_assert_msg(!strips || strstr(r->err, "strips of"), "no strips: %s", r->err);
                check_checksums(tmp("wide_out.fits"));
                for (int h = 0; h < 4; h++) {
                    int bitpix = 0;
                    size_t first = 0;
                    double *got = read_hdu_f64(tmp("wide_out.fits"), h + 1, n, &bitpix);
                    ck_assert_int_eq(bitpix, DOUBLE_IMG);
                    const size_t bad = differ_f64(got, want[h], n, &first);
                    ck_assert_msg(bad == 0,
                                  "BITPIX %d case %d strips %d HDU %d: %zu differ, first %zu: "
                                  "%.17g vs %.17g",
                                  bitpixes[b], c, strips, h + 1, bad, first, got[first],
                                  want[h][first]);
                    free(got);
                }
            }
        }
        free(img);
        free(median);
        free(mad);
        free(sigma);
        free(snr);
    }
}
END_TEST

/* -o DIR makes the directory (and its parents) when missing and names each map file after its
 * input, never with the input's own name: a map cannot be mistaken for the image. */
START_TEST(output_directories_are_made_and_maps_named_after_inputs)
{
    const size_t nx = 9, ny = 7;
    float *img = random_image(nx, ny, 21);
    float *median = malloc(nx * ny * sizeof *median), *mad = malloc(nx * ny * sizeof *mad);
    library_maps(img, nx, ny, 3, CLSTATS_BOUNDARY_REFLECT, median, mad);
    write_float_fits(tmp("a.fits"), img, nx, ny);
    write_float_fits(tmp("b.fits"), img, nx, ny);
    /* One input, a name ending in '/': a directory, two levels made. */
    ck_run_ok(run("-o", tmp("new/deeper/"), tmp("a.fits"), "-w", "3", "-q", NULL));
    ck_assert(exists(tmp("new/deeper/a_maps.fits")) && !exists(tmp("new/deeper/a.fits")));
    /* Several inputs, a new name without an image extension: a directory. */
    ck_run_ok(run("-o", tmp("maps"), tmp("a.fits"), tmp("b.fits[0]"), "-w", "3", "-q", NULL));
    const char *outs[3] = {"new/deeper/a_maps.fits", "maps/a_maps.fits", "maps/b_maps.fits"};
    for (int i = 0; i < 3; i++) {
        long gx, gy;
        float *got = read_hdu(tmp(outs[i]), 1, &gx, &gy);
        ck_assert_msg(test_compare_bits(got, mad, nx * ny, nx, outs[i]) == 0, "%s", outs[i]);
        free(got);
    }
    /* Written into the input's own directory, the map still has a name of its own. */
    ck_run_ok(run("-o", tmp(""), tmp("a.fits"), "-w", "3", "-q", NULL));
    ck_assert(exists(tmp("a_maps.fits")));
    /* A name with an image extension stays a file name: several inputs cannot share it, and no
     * directory of that name is made; nor is one made when a name is refused. */
    struct result *r = run("-o", tmp("plain.fits"), tmp("a.fits"), tmp("b.fits"), NULL);
    check_one_line_error(r, 2, "a directory or a pattern", "-o FILE for two inputs");
    ck_assert(!exists(tmp("plain.fits")));
    r = run("-o", tmp("never/"), tmp("a.fits"), tmp("a.fits"), NULL);
    check_one_line_error(r, 2, "would both write", "one input twice");
    ck_assert(!exists(tmp("never")));
    /* A file where the directory should be: one line, exit 1. */
    FILE *f = fopen(tmp("afile"), "w");
    fclose(f);
    r = run("-o", tmp("afile/sub/"), tmp("a.fits"), "-q", NULL);
    check_one_line_error(r, 1, "cannot make the output directory", "a file in the way");
    free(img);
    free(median);
    free(mad);
}
END_TEST

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* OUTPUT "-" writes the FITS file to standard output, whole, and nothing else there; a run that
 * fails writes nothing to it; --png, several inputs and a terminal are refused. */
START_TEST(standard_output_gets_the_whole_fits_file_or_nothing)
{
    const size_t nx = 12, ny = 10;
    float *img = random_image(nx, ny, 23);
    float *median = malloc(nx * ny * sizeof *median), *mad = malloc(nx * ny * sizeof *mad);
    library_maps(img, nx, ny, 5, CLSTATS_BOUNDARY_REFLECT, median, mad);
    write_float_fits(tmp("in.fits"), img, nx, ny);
    char copy[600];
    snprintf(copy, sizeof copy, "%s", tmp("from_stdout.fits"));
    run_stdout_to = copy;
    struct result *r = run(tmp("in.fits"), "-", "-w", "5", "--maps", "median,mad", NULL);
    ck_run_ok(r);
    ck_assert_msg(strstr(r->err, "madfilter: wrote -"), "summary: %s", r->err);
    check_checksums(copy);
    ck_assert_int_eq(count_hdus(copy), 2);
    for (int h = 1; h <= 2; h++) {
        long gx, gy;
        float *got = read_hdu(copy, h, &gx, &gy);
        ck_assert(test_compare_bits(got, h == 1 ? median : mad, nx * ny, nx, "stdout") == 0);
        free(got);
    }
    ck_assert_int_eq(file_size(copy) % 2880, 0);
    ck_assert_int_eq(count_temporaries(), 0);
    ck_assert(!exists(tmp("-")));
    /* -o - is the same. */
    ck_run_ok(run("-o", "-", tmp("in.fits"), "-w", "5", "-q", NULL));
    ck_assert_int_gt(file_size(copy), 2880);
    /* A device lost: an error line, and not a byte on standard output. */
    shim_set("OPENCL_SHIM_LOSE_AFTER", "0");
    r = run(tmp("in.fits"), "-", "-w", "5", "-q", "--max-memory", "4K", NULL);
    shim_clear();
    check_one_line_error(r, 1, "filtering failed", "lost device");
    ck_assert_int_eq(file_size(copy), 0);
    r = run(tmp("missing.fits"), "-", "-q", NULL);
    ck_assert_int_eq(r->code, 1);
    ck_assert_int_eq(file_size(copy), 0);
    r = run(tmp("in.fits"), "-", "--png", "-", NULL);
    check_one_line_error(r, 2, "--png writes a file, not standard output", "--png -");
    r = run("-o", "-", tmp("in.fits"), tmp("in.fits[0]"), NULL);
    check_one_line_error(r, 2, "standard output (-) takes the maps of one input", "two inputs");
    run_stdout_to = NULL;
    free(img);
    free(median);
    free(mad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("madfilter_output");
    TCase *tc = tcase_create("output");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, keywords_a_program_can_read_are_in_every_map);
    tcase_add_test(tc, headers_of_every_length_keep_the_data_in_place);
    tcase_add_test(tc, wide_integers_are_filtered_exactly_in_float64);
    tcase_add_test(tc, float64_maps_are_the_librarys_in_every_strip);
    tcase_add_test(tc, output_directories_are_made_and_maps_named_after_inputs);
    tcase_add_test(tc, standard_output_gets_the_whole_fits_file_or_nothing);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
