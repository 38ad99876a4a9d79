/* test_madfilter_output.c - what madfilter's outputs hold and where they go: the keyword cards a
 * program reads (MFWIDTH ...) with the data and checksums intact whatever the header's length,
 * float64 maps of float64 and wide integer images, -o DIR and standard output. */
#include "madfilter_harness.h"

#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    Suite *s = suite_create("madfilter_output");
    TCase *tc = tcase_create("output");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, keywords_a_program_can_read_are_in_every_map);
    tcase_add_test(tc, headers_of_every_length_keep_the_data_in_place);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
