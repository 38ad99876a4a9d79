/* test_madfilter.c - end-to-end tests of the madfilter program: each test writes its input files
 * with cfitsio or libpng into a temporary directory, runs the built binary (MADFILTER_PATH) and
 * checks the files it writes, its exit code and its one-line errors, against direct library calls.
 */
#include "madfilter_harness.h"

#include <fitsio.h>
#include <math.h>
#include <png.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- Tests --------------------------------------------------------------------------------- */

START_TEST(fits_maps_match_the_library_bit_for_bit)
{
    const size_t nx = 37, ny = 23;
    float *img = random_image(nx, ny, 1);
    for (size_t y = 10; y < 18; y++) /* a flat patch: sigma 0 there, so SNR NaN */
        for (size_t x = 20; x < 28; x++)
            img[y * nx + x] = 7.0f;
    /* Values a FITS reader could quietly change: -0, infinities, a subnormal. */
    img[3] = -0.0f;
    img[40] = INFINITY;
    img[41] = -INFINITY;
    img[100] = 1e-40f;
    img[101] = -1e-42f;
    write_float_fits(tmp("in.fits"), img, nx, ny);
    struct result *r = run(tmp("in.fits"), tmp("out.fits"), "-w", "5", "--boundary", "nearest",
                           "--maps", "median,mad,sigma,snr", "-q", NULL);
    ck_run_ok(r);
    ck_assert_str_eq(r->err, ""); /* -q: nothing on stderr */

    float *median = malloc(nx * ny * sizeof(float)), *mad = malloc(nx * ny * sizeof(float));
    float *sigma = malloc(nx * ny * sizeof(float)), *snr = malloc(nx * ny * sizeof(float));
    library_maps(img, nx, ny, 5, CLSTATS_BOUNDARY_NEAREST, median, mad);
    size_t nan_snr = 0;
    for (size_t i = 0; i < nx * ny; i++) {
        sigma[i] = (float)1.482602218505602 * mad[i]; /* astropy's mad_std constant */
        snr[i] = sigma[i] == 0.0f ? NAN : (img[i] - median[i]) / sigma[i];
        nan_snr += isnan(snr[i]) && !isnan(img[i]);
    }
    ck_assert_msg(nan_snr > 0, "the test image should have flat windows (sigma 0)");
    const float *want[4] = {median, mad, sigma, snr};
    const char *names[4] = {"MEDIAN", "MAD", "SIGMA", "SNR"};
    for (int h = 0; h < 4; h++) {
        long gx, gy;
        float *got = read_hdu(tmp("out.fits"), h + 1, &gx, &gy);
        ck_assert_int_eq(gx, (long)nx);
        ck_assert_int_eq(gy, (long)ny);
        ck_assert_msg(test_compare_bits(got, want[h], nx * ny, nx, names[h]) == 0, "%s differs",
                      names[h]);
        free(got);
    }
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
    free(median);
    free(mad);
    free(sigma);
    free(snr);
}
END_TEST

/* RESIDUAL (x - median) beside the maps it comes from, alone too (the library then computes the
 * median it needs without writing it). */
START_TEST(residual_map_is_pixel_minus_median)
{
    const size_t nx = 41, ny = 19;
    float *img = random_image(nx, ny, 3);
    img[5] = NAN;
    write_float_fits(tmp("res.fits"), img, nx, ny);
    float *median = malloc(nx * ny * sizeof(float)), *mad = malloc(nx * ny * sizeof(float));
    float *want = malloc(nx * ny * sizeof(float));
    library_maps(img, nx, ny, 7, CLSTATS_BOUNDARY_REFLECT, median, mad);
    for (size_t i = 0; i < nx * ny; i++)
        want[i] = img[i] - median[i];
    const char *lists[2] = {"sigma,residual", "residual"};
    for (int k = 0; k < 2; k++) {
        unlink(tmp("res_out.fits"));
        struct result *r =
            run(tmp("res.fits"), tmp("res_out.fits"), "-w", "7", "--maps", lists[k], "-q", NULL);
        ck_run_ok(r);
        long gx, gy;
        float *got = read_hdu(tmp("res_out.fits"), k == 0 ? 2 : 1, &gx, &gy);
        ck_assert_int_eq(gx, (long)nx);
        ck_assert_msg(test_compare_bits(got, want, nx * ny, nx, "RESIDUAL") == 0, "%s",
                      lists[k]);
        ck_assert_msg(isnan(got[5]), "a NaN pixel has no residual");
        free(got);
    }
    free(img);
    free(median);
    free(mad);
    free(want);
}
END_TEST

START_TEST(tiny_image_by_hand)
{
    /* 1..9 in a 3 x 3 image: the centre window is the whole image, median 5, and |x - 5| is
     * 4 3 2 1 0 1 2 3 4, so MAD 2. */
    const float img[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    write_float_fits(tmp("tiny.fits"), img, 3, 3);
    ck_run_ok(run(tmp("tiny.fits"), tmp("tiny_out.fits"), "-w", "3", "--maps", "median,mad", NULL));
    long nx, ny;
    float *median = read_hdu(tmp("tiny_out.fits"), 1, &nx, &ny);
    float *mad = read_hdu(tmp("tiny_out.fits"), 2, &nx, &ny);
    ck_assert_float_eq(median[4], 5.0f);
    ck_assert_float_eq(mad[4], 2.0f);
    /* Corner (0, 0) under reflect: rows and columns 0 0 1, so the values 1 1 2 1 1 2 4 4 5:
     * median 2, and |x - 2| = 1 1 0 1 1 0 2 2 3, MAD 1. */
    ck_assert_float_eq(median[0], 2.0f);
    ck_assert_float_eq(mad[0], 1.0f);
    free(median);
    free(mad);
}
END_TEST

START_TEST(header_is_kept_and_history_added)
{
    const float img[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    write_float_fits(tmp("hdr.fits"), img, 4, 3);
    ck_run_ok(
        run(tmp("hdr.fits"), tmp("hdr_out.fits"), "-w", "3", "--maps", "mad,snr", "-q", NULL));
    ck_assert_int_eq(count_hdus(tmp("hdr_out.fits")), 2);
    for (int h = 1; h <= 2; h++) {
        char *hdr = read_header(tmp("hdr_out.fits"), h);
        ck_assert_msg(strstr(hdr, "OBJECT  = 'NGC 1234'"), "HDU %d lost OBJECT:\n%s", h, hdr);
        ck_assert_msg(strstr(hdr, "CTYPE1  = 'RA---TAN'"), "HDU %d lost CTYPE1", h);
        ck_assert_msg(strstr(hdr, "COMMENT a comment that must survive"), "HDU %d lost COMMENT", h);
        ck_assert_msg(strstr(hdr, "HISTORY an earlier processing step"), "HDU %d lost HISTORY", h);
        ck_assert_msg(strstr(hdr, "HISTORY madfilter " CLSTATS_VERSION), "no tool HISTORY");
        ck_assert_msg(strstr(hdr, "window 3 x 3, boundary reflect"), "no width HISTORY");
        ck_assert_msg(strstr(hdr, "maps MAD,SNR"), "no maps HISTORY");
        ck_assert_msg(strstr(hdr, "HISTORY madfilter: device "), "no device HISTORY");
        ck_assert_msg(strstr(hdr, "hdr.fits"), "no input HISTORY");
        ck_assert_msg(strstr(hdr, "BITPIX  =                  -32"), "not float32");
        ck_assert_msg(strstr(hdr, "CHECKSUM="), "no CHECKSUM");
        /* BUNIT is the input's unit: right for MAD, wrong for a ratio. */
        ck_assert_msg((strstr(hdr, "BUNIT   = 'adu") != NULL) == (h == 1), "BUNIT in HDU %d", h);
        free(hdr);
    }
    char value[FLEN_VALUE];
    double crval1 = 0;
    fitsfile *f;
    int status = 0;
    fits_open_file(&f, tmp("hdr_out.fits[1]"), READONLY, &status);
    fits_read_key(f, TDOUBLE, "CRVAL1", &crval1, NULL, &status);
    fits_close_file(f, &status);
    fits_check(status, "CRVAL1");
    ck_assert_double_eq(crval1, 150.25);
    read_key_string(tmp("hdr_out.fits"), 1, "EXTNAME", value);
    ck_assert_str_eq(value, "MAD");
}
END_TEST

START_TEST(maps_come_in_the_order_asked)
{
    const float img[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    write_float_fits(tmp("order.fits"), img, 4, 3);
    ck_run_ok(run(tmp("order.fits"), tmp("order_out.fits"), "-w", "3", "-q", "--maps",
                  "snr,MEDIAN,sigma,mad", NULL));
    const char *want[4] = {"SNR", "MEDIAN", "SIGMA", "MAD"};
    ck_assert_int_eq(count_hdus(tmp("order_out.fits")), 4);
    char value[FLEN_VALUE];
    for (int h = 0; h < 4; h++) {
        read_key_string(tmp("order_out.fits"), h + 1, "EXTNAME", value);
        ck_assert_str_eq(value, want[h]);
    }
    /* Without --maps: one HDU, the MAD map. */
    ck_run_ok(run(tmp("order.fits"), tmp("order_default.fits"), "-w", "3", "-q", NULL));
    ck_assert_int_eq(count_hdus(tmp("order_default.fits")), 1);
    read_key_string(tmp("order_default.fits"), 1, "EXTNAME", value);
    ck_assert_str_eq(value, "MAD");
}
END_TEST

START_TEST(blank_pixels_of_scaled_integers_are_missing)
{
    /* BITPIX 16 with BSCALE 0.5, BZERO 1000 and a 3 x 3 block of BLANK at (4..6, 4..6). */
    enum { NX = 12, NY = 10 };
    short raw[NX * NY];
    float want_in[NX * NY];
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() ^ 2);
    for (int i = 0; i < NX * NY; i++) {
        int x = i % NX, y = i / NX;
        bool blank = x >= 4 && x <= 6 && y >= 4 && y <= 6;
        raw[i] = blank ? -32768 : (short)(test_rng_next(&rng) % 201) - 100;
        want_in[i] = blank ? NAN : 1000.0f + 0.5f * raw[i];
    }
    fitsfile *f;
    int status = 0;
    long naxes[2] = {NX, NY};
    double bscale = 0.5, bzero = 1000;
    int blank = -32768;
    fits_create_file(&f, tmp("blank.fits"), &status);
    fits_create_img(f, SHORT_IMG, 2, naxes, &status);
    fits_write_key(f, TDOUBLE, "BSCALE", &bscale, NULL, &status);
    fits_write_key(f, TDOUBLE, "BZERO", &bzero, NULL, &status);
    fits_write_key(f, TINT, "BLANK", &blank, NULL, &status);
    fits_set_bscale(f, 1.0, 0.0, &status); /* write the stored integers as they are */
    fits_write_img(f, TSHORT, 1, NX * NY, raw, &status);
    fits_close_file(f, &status);
    fits_check(status, "writing the BLANK image");

    ck_run_ok(run(tmp("blank.fits"), tmp("blank_out.fits"), "-w", "3", "-q", "--maps", "median,mad",
                  NULL));
    float median[NX * NY], mad[NX * NY];
    library_maps(want_in, NX, NY, 3, CLSTATS_BOUNDARY_REFLECT, median, mad);
    long nx, ny;
    float *got_median = read_hdu(tmp("blank_out.fits"), 1, &nx, &ny);
    float *got_mad = read_hdu(tmp("blank_out.fits"), 2, &nx, &ny);
    ck_assert_msg(isnan(got_median[5 * NX + 5]) && isnan(got_mad[5 * NX + 5]),
                  "the all-BLANK window should give NaN");
    ck_assert_msg(!isnan(got_median[5 * NX + 4]), "a window with valid pixels gave NaN");
    ck_assert_int_eq(test_compare_bits(got_median, median, NX * NY, NX, "median"), 0);
    ck_assert_int_eq(test_compare_bits(got_mad, mad, NX * NY, NX, "MAD"), 0);
    char *hdr = read_header(tmp("blank_out.fits"), 1);
    ck_assert_msg(!strstr(hdr, "BSCALE") && !strstr(hdr, "BZERO") && !strstr(hdr, "BLANK   ="),
                  "scaling keywords copied:\n%s", hdr);
    free(hdr);
    free(got_median);
    free(got_mad);
}
END_TEST

START_TEST(compressed_fz_input)
{
    enum { NX = 40, NY = 30 };
    short raw[NX * NY];
    float want_in[NX * NY];
    struct test_rng rng;
    test_rng_seed(&rng, test_seed() ^ 3);
    for (int i = 0; i < NX * NY; i++) {
        raw[i] = (short)(test_rng_next(&rng) % 50);
        want_in[i] = raw[i];
    }
    fitsfile *f;
    int status = 0;
    long naxes[2] = {NX, NY};
    fits_create_file(&f, tmp("packed.fits.fz"), &status);
    fits_set_compression_type(f, RICE_1, &status); /* lossless for integers */
    fits_create_img(f, SHORT_IMG, 2, naxes, &status);
    fits_write_key_str(f, "OBJECT", "packed", NULL, &status);
    fits_write_img(f, TSHORT, 1, NX * NY, raw, &status);
    fits_close_file(f, &status);
    fits_check(status, "writing the compressed image");
    ck_assert_int_eq(count_hdus(tmp("packed.fits.fz")), 2); /* empty primary + compressed HDU */

    ck_run_ok(run(tmp("packed.fits.fz"), tmp("packed_out.fits"), "-w", "3", "-q", "--maps",
                  "median", NULL));
    float median[NX * NY];
    library_maps(want_in, NX, NY, 3, CLSTATS_BOUNDARY_REFLECT, median, NULL);
    long nx, ny;
    float *got = read_hdu(tmp("packed_out.fits"), 1, &nx, &ny);
    ck_assert_int_eq(nx, NX);
    ck_assert_int_eq(ny, NY);
    ck_assert_int_eq(test_compare_bits(got, median, NX * NY, NX, "median"), 0);
    char *hdr = read_header(tmp("packed_out.fits"), 1);
    ck_assert_msg(strstr(hdr, "OBJECT  = 'packed"), "OBJECT lost:\n%s", hdr);
    ck_assert_msg(!strstr(hdr, "ZIMAGE") && !strstr(hdr, "ZCMPTYPE") && !strstr(hdr, "TFIELDS"),
                  "compression keywords copied:\n%s", hdr);
    free(hdr);
    free(got);
}
END_TEST

START_TEST(extension_is_chosen_with_cfitsio_syntax)
{
    /* Primary image of 1s, extension SCI of 2s: w = 1 makes the median map the image itself. */
    float a[6] = {1, 1, 1, 1, 1, 1}, b[6] = {2, 2, 2, 2, 2, NAN};
    fitsfile *f;
    int status = 0;
    long naxes[2] = {3, 2};
    fits_create_file(&f, tmp("mef.fits"), &status);
    fits_create_img(f, FLOAT_IMG, 2, naxes, &status);
    fits_write_img(f, TFLOAT, 1, 6, a, &status);
    fits_create_img(f, FLOAT_IMG, 2, naxes, &status);
    fits_write_key_str(f, "EXTNAME", "SCI", NULL, &status);
    fits_write_img(f, TFLOAT, 1, 6, b, &status);
    fits_close_file(f, &status);
    fits_check(status, "writing the MEF");

    const char *inputs[3] = {"mef.fits", "mef.fits[1]", "mef.fits[SCI]"};
    const float *want[3] = {a, b, b};
    for (int i = 0; i < 3; i++) {
        ck_run_ok(run(tmp(inputs[i]), "--maps", "median", "-w", "1", "-q", "--overwrite",
                      tmp("mef_out.fits"), NULL));
        long nx, ny;
        float *got = read_hdu(tmp("mef_out.fits"), 1, &nx, &ny);
        ck_assert_msg(test_compare_bits(got, want[i], 6, 3, inputs[i]) == 0, "%s", inputs[i]);
        free(got);
        char value[FLEN_VALUE];
        read_key_string(tmp("mef_out.fits"), 1, "EXTNAME", value);
        ck_assert_str_eq(value, "MEDIAN"); /* the input's EXTNAME is not carried over */
    }
}
END_TEST

START_TEST(existing_output_is_refused_unless_asked)
{
    const float img[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    write_float_fits(tmp("keep_in.fits"), img, 3, 3);
    FILE *f = fopen(tmp("keep.fits"), "wb");
    fputs("precious data, not to be lost", f);
    fclose(f);
    char before[100], after[100];
    size_t nb, na;
    file_bytes(tmp("keep.fits"), before, sizeof before, &nb);

    struct result *r = run(tmp("keep_in.fits"), tmp("keep.fits"), "-w", "3", NULL);
    check_one_line_error(r, 1, "exists", "existing output");
    file_bytes(tmp("keep.fits"), after, sizeof after, &na);
    ck_assert(nb == na && memcmp(before, after, nb) == 0);
    r = run(tmp("keep_in.fits"), "--png", tmp("keep.fits"), "-w", "3", NULL);
    check_one_line_error(r, 1, "exists", "existing --png output");
    file_bytes(tmp("keep.fits"), after, sizeof after, &na);
    ck_assert(nb == na && memcmp(before, after, nb) == 0);

    /* cfitsio's "!" prefix and --overwrite both replace it. */
    char bang[600];
    snprintf(bang, sizeof bang, "!%s", tmp("keep.fits"));
    ck_run_ok(run(tmp("keep_in.fits"), bang, "-w", "3", "-q", NULL));
    ck_assert_int_eq(count_hdus(tmp("keep.fits")), 1);
    ck_run_ok(run(tmp("keep_in.fits"), tmp("keep.fits"), "-w", "3", "-q", "--overwrite", "--maps",
                  "mad,median", NULL));
    ck_assert_int_eq(count_hdus(tmp("keep.fits")), 2);
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

START_TEST(failure_leaves_no_temporary_file)
{
    const float img[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    write_float_fits(tmp("fail_in.fits"), img, 3, 3);
    /* The output's temporary directory exists before the device is opened (so that an
     * unwritable directory fails before a long computation): a device failure must remove it. */
    struct result *r = run(tmp("fail_in.fits"), tmp("fail_out.fits"), "--png", tmp("fail_out.png"),
                           "--device", "no-such-device-anywhere", NULL);
    check_one_line_error(r, 1, "no-such-device-anywhere", "unknown device");
    ck_assert(!exists(tmp("fail_out.fits")));
    ck_assert(!exists(tmp("fail_out.png")));
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 100; i++)
        fputs(text, f);
    fclose(f);
}

/* A PNG of 16-bit samples (channels 1 or 2; colour when rgb), rows given top first. */
static void write_png(const char *path, int nx, int ny, int color_type, int depth,
                      const unsigned short *samples)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    ck_assert(png && info);
    if (setjmp(png_jmpbuf(png))) ck_abort_msg("libpng failed writing %s", path);
    png_init_io(png, fp);
    png_set_IHDR(png, info, nx, ny, depth, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    int channels = color_type == PNG_COLOR_TYPE_GRAY         ? 1
                   : color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                                                             : 3;
    int bytes = depth / 8;
    unsigned char *row = malloc((size_t)(nx * channels * bytes));
    for (int y = 0; y < ny; y++) {
        for (int i = 0; i < nx * channels; i++) {
            unsigned v = samples[y * nx * channels + i];
            if (bytes == 2) {
                row[2 * i] = (unsigned char)(v >> 8);
                row[2 * i + 1] = (unsigned char)v;
            } else {
                row[i] = (unsigned char)v;
            }
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    fclose(fp);
}

/* Reads a PNG that must be 16-bit greyscale of nx x ny; grey[] gets its rows, top first. */
static void read_png_grey16(const char *path, int nx, int ny, unsigned *grey)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    ck_assert(png && info);
    if (setjmp(png_jmpbuf(png))) ck_abort_msg("libpng failed reading %s", path);
    png_init_io(png, fp);
    png_read_info(png, info);
    ck_assert_int_eq(png_get_image_width(png, info), nx);
    ck_assert_int_eq(png_get_image_height(png, info), ny);
    ck_assert_int_eq(png_get_bit_depth(png, info), 16);
    ck_assert_int_eq(png_get_color_type(png, info), PNG_COLOR_TYPE_GRAY);
    unsigned char *row = malloc((size_t)nx * 2);
    for (int y = 0; y < ny; y++) {
        png_read_row(png, row, NULL);
        for (int x = 0; x < nx; x++)
            grey[y * nx + x] = (unsigned)row[2 * x] << 8 | row[2 * x + 1];
    }
    free(row);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(fp);
}

/* Writes `text`, blank-padded to 80 bytes, at byte `at` of a file, or over the first card
 * whose first 8 bytes are those of `key` when `at` is negative. */
static void replace_card(const char *path, long at, const char *key, const char *text)
{
    char card[81];
    snprintf(card, sizeof card, "%-80.80s", text);
    FILE *fp = fopen(path, "r+b");
    ck_assert_ptr_nonnull(fp);
    char old[80];
    for (long pos = 0; at < 0 && fread(old, 1, 80, fp) == 80; pos += 80)
        if (memcmp(old, key, 8) == 0) at = pos;
    ck_assert_msg(at >= 0, "%s has no %.8s card", path, key);
    ck_assert_int_eq(fseek(fp, at, SEEK_SET), 0);
    ck_assert_int_eq(fwrite(card, 1, 80, fp), 80);
    fclose(fp);
}

/* Writes an 80-byte card `name` = `value` (unquoted, blank-padded) at byte `at` of a file, or
 * over the first card named `name` when `at` is negative: values FITS does not allow. */
static void put_card(const char *path, long at, const char *name, const char *value)
{
    char card[81];
    snprintf(card, sizeof card, "%-8.8s= %-70.70s", name, value);
    replace_card(path, at, card, card);
}

/* A Rice-compressed 4 x 3 image whose card `name` then holds `value` as it is. */
static void write_tiled_with(const char *path, const char *name, const char *value)
{
    fitsfile *f;
    int status = 0;
    long naxes[2] = {4, 3};
    float zeros[12] = {0};
    fits_create_file(&f, path, &status);
    fits_set_compression_type(f, RICE_1, &status);
    fits_create_img(f, FLOAT_IMG, 2, naxes, &status);
    fits_write_img(f, TFLOAT, 1, 12, zeros, &status);
    fits_close_file(f, &status);
    fits_check(status, path);
    put_card(path, -1, name, value);
}

/* A table of one empty column whose TTYPE1 card holds `value` as it is. */
static void write_table_named(const char *path, const char *value)
{
    fitsfile *f;
    int status = 0;
    char *ttype[1] = {"FLUX"}, *tform[1] = {"E"};
    fits_create_file(&f, path, &status);
    fits_create_tbl(f, BINARY_TBL, 0, 1, ttype, tform, NULL, "EVENTS", &status);
    fits_close_file(f, &status);
    fits_check(status, path);
    put_card(path, -1, "TTYPE1", value);
}

/* A 16-bit image with BSCALE 2, then the card `name` holding `value` as it is. */
static void write_scaled(const char *path, const char *name, const char *value)
{
    fitsfile *f;
    int status = 0;
    long naxes[2] = {4, 3};
    short raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    fits_create_file(&f, path, &status);
    fits_create_img(f, SHORT_IMG, 2, naxes, &status);
    fits_write_key_dbl(f, "BSCALE", 2.0, -3, NULL, &status);
    fits_write_key_dbl(f, "BZERO", 0.0, -3, NULL, &status);
    fits_set_bscale(f, 1.0, 0.0, &status);
    fits_write_img(f, TSHORT, 1, 12, raw, &status);
    fits_close_file(f, &status);
    fits_check(status, path);
    put_card(path, -1, name, value);
}

START_TEST(bad_inputs_give_one_line_and_an_exit_code)
{
    const float img[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    write_float_fits(tmp("good.fits"), img, 4, 3);
    write_text(tmp("text.fits"), "this is not a FITS file at all\n");
    fitsfile *f;
    int status = 0;
    long n1[1] = {10}, n3[3] = {4, 3, 2};
    float zeros[24] = {0};
    fits_create_file(&f, tmp("oned.fits"), &status);
    fits_create_img(f, FLOAT_IMG, 1, n1, &status);
    fits_write_img(f, TFLOAT, 1, 10, zeros, &status);
    fits_close_file(f, &status);
    fits_create_file(&f, tmp("cube.fits"), &status);
    fits_create_img(f, FLOAT_IMG, 3, n3, &status);
    fits_write_img(f, TFLOAT, 1, 24, zeros, &status);
    fits_close_file(f, &status);
    char *ttype[1] = {"FLUX"}, *tform[1] = {"E"};
    fits_create_file(&f, tmp("table.fits"), &status);
    fits_create_tbl(f, BINARY_TBL, 3, 1, ttype, tform, NULL, "EVENTS", &status);
    fits_write_col(f, TFLOAT, 1, 1, 1, 3, zeros, &status);
    fits_close_file(f, &status);
    /* The table again, after an image extension, with TTYPE1 made an unquoted value that fills
     * its card: cfitsio 4.2 copies it one byte past its 70-byte field (the fuzzer found it). */
    long n2[2] = {4, 3};
    fits_create_file(&f, tmp("ttype.fits"), &status);
    fits_create_img(f, FLOAT_IMG, 0, NULL, &status);
    fits_create_img(f, FLOAT_IMG, 2, n2, &status);
    fits_write_img(f, TFLOAT, 1, 12, zeros, &status);
    fits_create_tbl(f, BINARY_TBL, 3, 1, ttype, tform, NULL, "EVENTS", &status);
    fits_write_col(f, TFLOAT, 1, 1, 1, 3, zeros, &status);
    fits_close_file(f, &status);
    fits_check(status, "writing the bad inputs");
    char filled[71];
    memset(filled, 'Q', 70);
    filled[70] = '\0';
    put_card(tmp("ttype.fits"), -1, "TTYPE1", filled);
    /* An unquoted TTYPE1 that does not fill its card is cfitsio's to judge, not the screen's,
     * and so is a quoted one of 68 characters, as long as FITS allows. */
    memset(filled, 'Q', 69);
    filled[69] = ' ';
    write_table_named(tmp("ttype_short.fits"), filled);
    filled[0] = filled[69] = '\'';
    write_table_named(tmp("ttype_quoted.fits"), filled);
    /* Tile-compressed images with tiles 0 rows tall, or of no size at all, which cfitsio 4.2
     * divides by; and a Rice block size of 0, which no screen names: cfitsio divides by it while
     * it opens the header, and only the probe in a child process stands between that and
     * madfilter. */
    write_tiled_with(tmp("tile0.fits.fz"), "ZTILE2", "0");
    write_tiled_with(tmp("tile_nan.fits.fz"), "ZTILE1", "%");
    write_tiled_with(tmp("rice0.fits.fz"), "ZVAL1", "0");
    /* Tiles of 4 x 10^8 pixels, which cfitsio would unpack whole; and a tile whose descriptor
     * claims 2 GiB of a heap of a few bytes, which cfitsio would allocate before reading. */
    write_tiled_with(tmp("tile_huge.fits.fz"), "ZTILE2", "100000000");
    write_tiled_with(tmp("descriptor.fits.fz"), "ZTILE2", "1");
    LONGLONG head_at, data_at, end_at;
    fits_open_file(&f, tmp("descriptor.fits.fz[1]"), READONLY, &status);
    fits_get_hduaddrll(f, &head_at, &data_at, &end_at, &status);
    fits_close_file(f, &status);
    fits_check(status, "descriptor.fits.fz");
    FILE *tiles = fopen(tmp("descriptor.fits.fz"), "r+b");
    const unsigned char claim[4] = {0x7f, 0xff, 0xff, 0xff}; /* tile 1's length, big-endian */
    fseek(tiles, (long)data_at, SEEK_SET);
    fwrite(claim, 1, 4, tiles);
    fclose(tiles);
    /* The bad TTYPE behind an image whose NAXIS1 is written as cfitsio 4 also reads it, '='
     * after a blank: the screen must read it so too, to step over the image's three blocks. */
    long wide[2] = {720, 3};
    float *pixels = calloc(720 * 3, sizeof *pixels);
    fits_create_file(&f, tmp("longname.fits"), &status);
    fits_create_img(f, FLOAT_IMG, 2, wide, &status);
    fits_write_img(f, TFLOAT, 1, 720 * 3, pixels, &status);
    fits_create_tbl(f, BINARY_TBL, 3, 1, ttype, tform, NULL, "EVENTS", &status);
    fits_close_file(f, &status);
    free(pixels);
    fits_check(status, "writing the bad inputs");
    memset(filled, 'Q', 70);
    put_card(tmp("longname.fits"), -1, "TTYPE1", filled);
    replace_card(tmp("longname.fits"), -1, "NAXIS1  ", "NAXIS1    =                  720");
    unsigned short rgb[2 * 2 * 3] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9};
    write_png(tmp("colour.png"), 2, 2, PNG_COLOR_TYPE_RGB, 8, rgb);
    FILE *fp;
    /* A gzip file whose trailer claims 4 GiB: cfitsio would allocate that before unpacking. */
    const unsigned char claims[24] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0,    3,    1,    2,
                                      3,    4,    5, 6, 0, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff};
    fp = fopen(tmp("claims.fits.gz"), "wb");
    fwrite(claims, 1, sizeof claims, fp);
    fclose(fp);
    /* The same under the name cfitsio tries when hidden.fits itself is missing. */
    fp = fopen(tmp("hidden.fits.gz"), "wb");
    fwrite(claims, 1, sizeof claims, fp);
    fclose(fp);
    /* Above 10000 bytes cfitsio adds 4 GiB to a trailer smaller than the file. */
    unsigned char grown[10004] = {0x1f, 0x8b, 8};
    grown[10000] = 100;
    fp = fopen(tmp("grown.fits.gz"), "wb");
    fwrite(grown, 1, sizeof grown, fp);
    fclose(fp);
    /* A zip whose local header claims 2.5 GiB at byte 22 (what the fuzzer found), and one too
     * short to hold the claim, where cfitsio would size its buffer from bytes it never read. */
    unsigned char zip[30] = {'P', 'K', 3, 4};
    zip[22] = 0x00, zip[23] = 0x01, zip[24] = 0xfb, zip[25] = 0x9d;
    fp = fopen(tmp("claims.zip"), "wb");
    fwrite(zip, 1, sizeof zip, fp);
    fclose(fp);
    fp = fopen(tmp("short.zip"), "wb");
    fwrite(zip, 1, 20, fp);
    fclose(fp);
    unsigned short grey[64 * 64] = {0};
    write_png(tmp("grey64.png"), 64, 64, PNG_COLOR_TYPE_GRAY, 8, grey);
    fp = fopen(tmp("exists.fits"), "w");
    fclose(fp);
    ck_assert_int_eq(symlink("good.fits", tmp("alias.fits")), 0);
    ck_assert_int_eq(mkdir(tmp("sub"), 0755), 0);
    /* Scaling keywords that are no finite number: cfitsio would quietly leave the integers
     * unscaled. */
    write_scaled(tmp("bscale_nan.fits"), "BSCALE", "NaN");
    write_scaled(tmp("bzero_huge.fits"), "BZERO", "1E400");
    write_scaled(tmp("bscale_text.fits"), "BSCALE", "'two'");

    /* Two file names (in the test directory), then options as they are. */
    struct {
        const char *files[2];
        const char *opts[4];
        int code;
        const char *words;
    } cases[] = {
        {{"missing.fits", "o.fits"}, {NULL}, 1, "No such file"},
        {{"text.fits", "o.fits"}, {NULL}, 1, "not a FITS file"},
        {{"table.fits[1]", "o.fits"}, {NULL}, 1, "table"},
        {{"table.fits[EVENTS]", "o.fits"}, {NULL}, 1, "table"},
        {{"good.fits[3]", "o.fits"}, {NULL}, 1, "no such HDU"},
        {{"oned.fits", "o.fits"}, {NULL}, 1, "1-D"},
        {{"table.fits", "o.fits"}, {NULL}, 1, "holds a table"},
        {{"cube.fits", "o.fits"}, {"--cube", "refuse"}, 1, "cube of 2 planes"},
        {{"colour.png", "o.fits"}, {NULL}, 1, "colour"},
        {{"good.fits", "exists.fits"}, {NULL}, 1, "exists"},
        {{"good.fits", "good.fits"}, {"--overwrite"}, 1, "is the input"},
        {{"good.fits", "alias.fits"}, {"--overwrite"}, 1, "is the input"},
        {{"good.fits", "sub/../good.fits"}, {"--overwrite"}, 1, "is the input"},
        {{"alias.fits", "./good.fits"}, {"--overwrite"}, 1, "is the input"},
        {{"good.fits", "o.fits"}, {"--device", "no-such-device"}, 1, "no OpenCL device matches"},
        {{"good.fits", "o.fits"}, {"-w", "4x0"}, 2, "window size must be N or WxH"},
        {{"good.fits", "o.fits"}, {"-w", "0"}, 2, "window size must be N or WxH"},
        {{"good.fits", "o.fits"}, {"--width=-3"}, 2, "window size must be N or WxH"},
        {{"good.fits", "o.fits"}, {"-w", "257"}, 2, "window size must be N or WxH"},
        {{"good.fits", "o.fits"}, {"-w", "eleven"}, 2, "window size must be N or WxH"},
        {{"good.fits", "o.fits"}, {"-w", "3x4x5"}, 2, "window size must be N or WxH"},
        {{"good.fits", "o.fits"}, {"-w", "3", "--origin", "2,0"}, 2, "origin 2,0 is outside"},
        {{"good.fits", "o.fits"}, {"--origin", "1"}, 2, "--origin needs two whole numbers"},
        {{"good.fits", "o.fits"}, {"--even", "middle"}, 2, "--even takes mean, lower or upper"},
        {{"good.fits", "o.fits"}, {"--footprint", "ring:3,1"}, 2, "needs 0 <= RIN < ROUT"},
        {{"good.fits", "o.fits"}, {"--footprint", "circle:200"}, 2, "radius from 0 to 127"},
        {{"good.fits", "o.fits"}, {"--valid-range", "5,1"}, 2, "LO <= HI"},
        {{"good.fits", "o.fits"}, {"--mask", "nothere.fits"}, 1, "nothere.fits"},
        {{"good.fits", "o.fits"}, {"--frobnicate"}, 2, "unknown option"},
        {{"good.fits", "o.fits"}, {"--boundary", "sideways"}, 2, "unknown boundary"},
        {{"good.fits", "o.fits"}, {"--maps", "mad,noise"}, 2, "unknown map"},
        {{"good.fits", "o.fits"}, {"--maps", "mad,mad"}, 2, "twice"},
        {{"good.fits", "o.png"}, {"--maps", "mad,median"}, 2, "one map"},
        {{"good.fits", "o.fits"}, {"extra.fits"}, 2, "too many"},
        {{"good.fits", "o.fits"}, {"--cval", "abc"}, 2, "cval"},
        {{"good.fits", "o.fits"}, {"--cval", "1"}, 2, "only to --boundary constant"},
        {{"good.fits", "o.fits"}, {"--device", ""}, 2, "needs a device spec"},
        {{"good.fits", "o.fits"}, {"--cube", "sideways"}, 2, "--cube takes planes or refuse"},
        {{"good.fits", "o.fits"}, {"--max-memory", "lots"}, 2, "--max-memory needs a size"},
        {{"good.fits", "o.fits"}, {"--max-memory", "0"}, 2, "--max-memory needs a size"},
        {{"good.fits", "o.fits"}, {"--max-memory", "12Q"}, 2, "--max-memory needs a size"},
        {{"good.fits", "o.fits"}, {"--max-memory", "-5M"}, 2, "--max-memory needs a size"},
        {{"good.fits", "o.fits"}, {"--max-memory", "100"}, 1, "cannot hold one strip"},
        {{"grey64.png", "o.fits"}, {"--max-memory", "8K"}, 1, "PNG: read whole"},
        {{"claims.fits.gz", "o.fits"}, {NULL}, 1, "4095 MiB, more than the memory cap"},
        {{"hidden.fits", "o.fits"}, {NULL}, 1, "hidden.fits.gz is compressed and cfitsio unpacks"},
        {{"grown.fits.gz", "o.fits"}, {NULL}, 1, "4096 MiB, more than the memory cap"},
        {{"claims.zip", "o.fits"}, {NULL}, 1, "2527 MiB, more than the memory cap"},
        {{"short.zip", "o.fits"}, {NULL}, 1, "too short to say how large"},
        {{"file://claims.zip", "o.fits"}, {NULL}, 1, "2527 MiB, more than the memory cap"},
        {{"ttype.fits", "o.fits"},
         {NULL},
         1,
         "HDU 3: TTYPE1 is a column name that is not a quoted"},
        {{"ttype_short.fits", "o.fits"}, {NULL}, 1, "holds a table"},
        {{"ttype_quoted.fits", "o.fits"}, {NULL}, 1, "holds a table"},
        {{"tile0.fits.fz", "o.fits"},
         {NULL},
         1,
         "HDU 2 is a tile-compressed image with ZTILE2 = 0"},
        {{"tile_nan.fits.fz", "o.fits"}, {NULL}, 1, "HDU 2: ZTILE1 does not hold a number"},
        {{"rice0.fits.fz", "o.fits"}, {NULL}, 1, "cfitsio crashed reading its headers"},
        {{"tile_huge.fits.fz", "o.fits"}, {NULL}, 1, "whose tiles cfitsio unpacks into 3051 MiB"},
        {{"descriptor.fits.fz", "o.fits"}, {NULL}, 1, "tile 1 claims 2147483647 bytes at byte 0"},
        {{"longname.fits", "o.fits"}, {NULL}, 1, "HDU 2: TTYPE1 is a column name that is not"},
        {{"good.fits", "good.fits"}, {"-o", "{}.fits"}, 2, "would both write"},
        {{"good.fits", "text.fits"}, {"-o", "plain.fits"}, 2, "a directory or a pattern"},
        {{"good.fits", "text.fits"},
         {"-o", "{}.fits", "--png", "p.png"},
         2,
         "--png needs a pattern"},
        {{"good.fits", "o.fits"}, {"-w"}, 2, "needs a value"},
        {{"bscale_nan.fits", "o.fits"}, {NULL}, 1, "BSCALE = NaN is not a finite number"},
        {{"bzero_huge.fits", "o.fits"}, {NULL}, 1, "BZERO = 1E400 is not a finite number"},
        {{"bscale_text.fits", "o.fits"}, {NULL}, 1, "BSCALE = 'two' is not a finite number"},
        {{"good.fits[5:6,*]", "o.fits"}, {NULL}, 1, "cannot read the image section [5:6,*]"},
        {{"good.fits[1:4:0,*]", "o.fits"}, {NULL}, 1, "cannot read the image section"},
        {{"good.fits[*,*,*]", "o.fits"}, {NULL}, 1, "for each of 2 axes"},
        {{"good.fits", "o.fits.fz"}, {NULL}, 2, "not .fz files; write .fits and compress it"},
        {{"good.fits", "o.fits.Z"}, {NULL}, 2, "not .Z files"},
        {{"good.fits", "o.fits.bz2"}, {NULL}, 2, "not .bz2 files"},
        {{"good.fits", NULL}, {"--png", "-"}, 2, "standard output"},
        {{"good.fits", NULL}, {NULL}, 2, "no output"},
        {{NULL, NULL}, {NULL}, 2, "no input"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *a[7] = {NULL};
        char what[200] = "", url[2][600];
        int n = 0;
        for (int i = 0; i < 2 && cases[c].files[i]; i++) {
            /* A cfitsio driver prefix stays in front of the test directory. */
            const char *file = cases[c].files[i];
            const size_t prefix = strncmp(file, "file://", 7) == 0 ? 7 : 0;
            snprintf(url[i], sizeof url[i], "%.*s%s", (int)prefix, file, tmp(file + prefix));
            a[n++] = url[i];
            strcat(what, cases[c].files[i]);
            strcat(what, " ");
        }
        for (int i = 0; i < 4 && cases[c].opts[i]; i++) {
            a[n++] = cases[c].opts[i];
            strcat(what, cases[c].opts[i]);
            strcat(what, " ");
        }
        struct result *r = run(a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL);
        check_one_line_error(r, cases[c].code, cases[c].words, what);
    }
    /* The same file through another spelling is still the same file. */
    struct result *same = run(tmp("good.fits"), tmp("o.fits"), "--png", tmp("sub/../o.fits"), NULL);
    check_one_line_error(same, 2, "same file as OUTPUT", "--png spelled differently");
    ck_assert(!exists(tmp("o.fits")));
    ck_assert_int_eq(count_temporaries(), 0);

    /* No OpenCL platform at all: the ICD loader finds no vendor file. Some loaders (a GPU
     * driver's own) ignore OCL_ICD_VENDORS: there the case cannot be staged, and is skipped. */
    setenv("OCL_ICD_VENDORS", "/nonexistent-icd-dir", 1);
    struct result *r = run("--list-devices", NULL);
    if (r->code != 0) {
        r = run(tmp("good.fits"), tmp("o.fits"), NULL);
        check_one_line_error(r, 1, "no OpenCL", "no platform");
    } else {
        printf("no-platform case skipped: this ICD loader ignores OCL_ICD_VENDORS\n");
    }
    unsetenv("OCL_ICD_VENDORS");

    /* Without --device, $CLSTATS_DEVICE chooses. */
    setenv("CLSTATS_DEVICE", "device-from-environment", 1);
    r = run(tmp("good.fits"), tmp("o.fits"), NULL);
    unsetenv("CLSTATS_DEVICE");
    check_one_line_error(r, 1, "device-from-environment", "CLSTATS_DEVICE");
}
END_TEST

/* A whole file's bytes (at most 64 KiB), to check that a run left it alone. */
struct snapshot {
    char bytes[65536];
    size_t n;
};

static void take(struct snapshot *s, const char *path)
{
    file_bytes(path, s->bytes, sizeof s->bytes, &s->n);
}

static void unchanged(const struct snapshot *s, const char *path)
{
    struct snapshot now;
    take(&now, path);
    ck_assert_msg(now.n == s->n && memcmp(now.bytes, s->bytes, s->n) == 0, "%s was changed", path);
}

START_TEST(outputs_never_replace_an_input_however_spelled)
{
    float *img = random_image(9, 7, 5);
    write_float_fits(tmp("a.fits"), img, 9, 7);
    write_float_fits(tmp("c.fits.gz"), img, 9, 7); /* cfitsio compresses a .gz name */
    write_float_fits(tmp("e.fits"), img, 9, 7);
    write_float_fits(tmp("e_mad.fits"), img, 9, 7);
    free(img);
    struct snapshot a, c, e_mad;
    take(&a, tmp("a.fits"));
    take(&c, tmp("c.fits.gz"));
    take(&e_mad, tmp("e_mad.fits"));
    char url[600], section[600], bang[600], missing[600], pattern[600];
    snprintf(url, sizeof url, "file://%s", tmp("a.fits"));
    snprintf(section, sizeof section, "%s[2:5,*]", tmp("a.fits"));
    snprintf(bang, sizeof bang, "!%s", tmp("a.fits"));
    snprintf(missing, sizeof missing, "%s", tmp("c.fits")); /* cfitsio opens c.fits.gz */
    snprintf(pattern, sizeof pattern, "%s", tmp("{}_mad.fits"));
    /* The input through cfitsio's file:// prefix, a section, a leading '!' on the output, the
     * .gz that cfitsio falls back to, and the output through file://. */
    const char *runs[][5] = {
        {url, tmp("a.fits"), "--overwrite", NULL},
        {section, tmp("a.fits"), "--overwrite", NULL},
        {tmp("a.fits"), bang, NULL},
        {missing, tmp("c.fits.gz"), "--overwrite", NULL},
        {tmp("a.fits"), url, "--overwrite", NULL},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        struct result *r = run(runs[i][0], runs[i][1], runs[i][2], runs[i][3], NULL);
        check_one_line_error(r, 1, "is the input file", runs[i][0]);
    }
    /* In a batch, the first input's output is the second input: refused before anything is
     * written, so the second input is still there to be read. */
    struct result *r =
        run("-o", pattern, tmp("e.fits"), tmp("e_mad.fits"), "--overwrite", "-q", NULL);
    check_one_line_error(r, 1, "is input", "batch");
    ck_assert(!exists(tmp("e_mad_mad.fits")));
    unchanged(&a, tmp("a.fits"));
    unchanged(&c, tmp("c.fits.gz"));
    unchanged(&e_mad, tmp("e_mad.fits"));
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

START_TEST(outputs_are_regular_files_only)
{
    const float img[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    write_float_fits(tmp("in.fits"), img, 4, 3);
    write_float_fits(tmp("other.fits"), img, 4, 3);
    struct snapshot other;
    take(&other, tmp("other.fits"));
    ck_assert_int_eq(mkfifo(tmp("fifo.fits"), 0600), 0);
    ck_assert_int_eq(symlink("other.fits", tmp("link.fits")), 0);
    const struct {
        const char *output, *words;
    } cases[] = {
        {tmp("fifo.fits"), "is a FIFO"},
        {tmp("link.fits"), "is a symbolic link"},
        {"/dev/null", "is a device"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct result *r = run(tmp("in.fits"), cases[i].output, "--overwrite", NULL);
        check_one_line_error(r, 1, cases[i].words, cases[i].output);
    }
    struct stat st;
    ck_assert(lstat(tmp("fifo.fits"), &st) == 0 && S_ISFIFO(st.st_mode));
    ck_assert(lstat(tmp("link.fits"), &st) == 0 && S_ISLNK(st.st_mode));
    ck_assert(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    unchanged(&other, tmp("other.fits"));
    /* Without --overwrite too, what the node is comes first. */
    check_one_line_error(run(tmp("in.fits"), tmp("fifo.fits"), NULL), 1, "is a FIFO", "fifo");
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

START_TEST(sections_keep_float_bits)
{
    /* Infinities and subnormals through cfitsio's section syntax: cfitsio's own section copy
     * would turn them into NaN and 0. A 1-pixel window's MEDIAN is the pixel itself. */
    const size_t nx = 6, ny = 4;
    float img[24];
    for (size_t i = 0; i < 24; i++)
        img[i] = (float)i + 0.25f;
    img[1] = 1e-40f, img[2] = INFINITY, img[3] = -INFINITY, img[8] = -3e-44f;
    write_float_fits(tmp("sp.fits"), img, (long)nx, (long)ny);
    const struct {
        const char *section;
        size_t x0, y0, gx, gy; /* the part of img it selects, forward */
    } cases[] = {{"[*,*]", 0, 0, 6, 4}, {"[2:5,1:2]", 1, 0, 4, 2}, {"[1:6,1:1]", 0, 0, 6, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char name[600];
        snprintf(name, sizeof name, "%s%s", tmp("sp.fits"), cases[c].section);
        ck_run_ok(run(name, tmp("sp_out.fits"), "-w", "1", "--maps", "median", "--overwrite", "-q",
                      NULL));
        long gx, gy;
        float *got = read_hdu(tmp("sp_out.fits"), 1, &gx, &gy);
        ck_assert_int_eq(gx, (long)cases[c].gx);
        ck_assert_int_eq(gy, (long)cases[c].gy);
        float want[24];
        for (size_t y = 0; y < cases[c].gy; y++)
            for (size_t x = 0; x < cases[c].gx; x++)
                want[y * cases[c].gx + x] = img[(cases[c].y0 + y) * nx + cases[c].x0 + x];
        ck_assert_msg(test_compare_bits(got, want, cases[c].gx * cases[c].gy, cases[c].gx,
                                        cases[c].section) == 0,
                      "%s changed pixels", cases[c].section);
        free(got);
    }
}
END_TEST

START_TEST(a_compressed_header_cfitsio_cannot_convert_is_copied)
{
    /* astropy writes ZTENSION after the image's own keywords (its comp.fits, NGC 1316, is such a
     * file); cfitsio 4.2 then fails to convert the header while it reads the pixels fine. */
    fitsfile *f;
    int status = 0;
    long naxes[2] = {9, 7};
    float *img = random_image(9, 7, 8);
    for (int i = 0; i < 63; i++)
        if (isnan(img[i])) img[i] = 0.5f; /* lossless: integer-valued Rice tiles keep them */
    short raw[63];
    for (int i = 0; i < 63; i++)
        raw[i] = (short)(2 * img[i]);
    fits_create_file(&f, tmp("astropy.fits"), &status);
    fits_create_img(f, SHORT_IMG, 0, NULL, &status);
    fits_set_compression_type(f, RICE_1, &status);
    fits_create_img(f, SHORT_IMG, 2, naxes, &status);
    fits_write_key_str(f, "OBJECT", "NGC 1316", NULL, &status);
    fits_write_img(f, TSHORT, 1, 63, raw, &status);
    fits_write_key_str(f, "ZTENSION", "IMAGE", "Image extension", &status);
    fits_close_file(f, &status);
    fits_check(status, "astropy.fits");
    struct result *r = run(tmp("astropy.fits"), tmp("astropy_out.fits"), "-w", "3", NULL);
    ck_run_ok(r);
    ck_assert_msg(strstr(r->err, "note: cfitsio cannot convert the compressed image header"),
                  "no note on what was left out: %s", r->err);
    char *hdr = read_header(tmp("astropy_out.fits"), 1);
    ck_assert_msg(strstr(hdr, "OBJECT  = 'NGC 1316'"), "OBJECT lost:\n%s", hdr);
    ck_assert_msg(!strstr(hdr, "ZTENSION") && !strstr(hdr, "TTYPE1") && !strstr(hdr, "ZIMAGE"),
                  "compression keywords copied:\n%s", hdr);
    free(hdr);
    float *want = malloc(63 * sizeof *want), *mad = malloc(63 * sizeof *mad);
    for (int i = 0; i < 63; i++)
        img[i] = raw[i];
    library_maps(img, 9, 7, 3, CLSTATS_BOUNDARY_REFLECT, want, mad);
    long gx, gy;
    float *got = read_hdu(tmp("astropy_out.fits"), 1, &gx, &gy);
    ck_assert(test_compare_bits(got, mad, 63, 9, "MAD") == 0);
    /* -q: no note. */
    r = run(tmp("astropy.fits"), tmp("astropy_out.fits"), "-w", "3", "--overwrite", "-q", NULL);
    ck_run_ok(r);
    ck_assert_str_eq(r->err, "");
    free(got), free(want), free(mad), free(img);
}
END_TEST

START_TEST(piped_inputs_give_the_files_maps)
{
    float *img = random_image(23, 17, 11);
    write_float_fits(tmp("p.fits"), img, 23, 17);
    free(img);
    unsigned short grey[5 * 4] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                  11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    write_png(tmp("p.png"), 5, 4, PNG_COLOR_TYPE_GRAY, 8, grey);
    ck_assert_int_eq(mkfifo(tmp("pipe"), 0600), 0);
    const char *files[2] = {"p.fits", "p.png"};
    for (int k = 0; k < 2; k++) {
        ck_run_ok(run(tmp(files[k]), tmp("direct.fits"), "-w", "3", "--overwrite", "-q", NULL));
        pid_t pid = test_feed_fifo(tmp("pipe"), tmp(files[k]));
        ck_run_ok(run(tmp("pipe"), tmp("piped.fits"), "-w", "3", "--overwrite", "-q", NULL));
        waitpid(pid, NULL, 0);
        run_stdin = tmp(files[k]);
        ck_run_ok(run("-", tmp("stdin.fits"), "-w", "3", "--overwrite", "-q", NULL));
        run_stdin = NULL;
        long nx, ny;
        float *direct = read_hdu(tmp("direct.fits"), 1, &nx, &ny);
        const char *others[2] = {"piped.fits", "stdin.fits"};
        for (int i = 0; i < 2; i++) {
            long gx, gy;
            float *got = read_hdu(tmp(others[i]), 1, &gx, &gy);
            ck_assert_int_eq(gx * gy, nx * ny);
            ck_assert_msg(
                test_compare_bits(got, direct, (size_t)(nx * ny), (size_t)nx, others[i]) == 0,
                "%s of %s differs", others[i], files[k]);
            free(got);
        }
        free(direct);
    }
    /* A stream beyond --max-memory: one line, and no copy left behind. */
    pid_t pid = test_feed_fifo(tmp("pipe"), tmp("p.fits"));
    struct result *r = run(tmp("pipe"), tmp("big.fits"), "--max-memory", "4K", NULL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    check_one_line_error(r, 1, "is a pipe and holds more than the memory cap", "big pipe");
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

START_TEST(cval_is_cast_to_float32_as_scipy_does)
{
    /* scipy casts cval to the image's dtype: a subnormal stays, beyond float32 is infinite. */
    const float img[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    write_float_fits(tmp("c.fits"), img, 4, 3);
    const struct {
        const char *cval, *history;
    } cases[] = {{"1e-40", "cval 9.9999461e-41"}, {"1e40", "cval inf"}, {"-1e39", "cval -inf"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_run_ok(run(tmp("c.fits"), tmp("c_out.fits"), "-w", "5", "--boundary", "constant",
                      "--cval", cases[i].cval, "--maps", "median", "--overwrite", "-q", NULL));
        char *hdr = read_header(tmp("c_out.fits"), 1);
        ck_assert_msg(strstr(hdr, cases[i].history), "--cval %s: no \"%s\" in\n%s", cases[i].cval,
                      cases[i].history, hdr);
        free(hdr);
    }
}
END_TEST

START_TEST(output_names_the_programs_cannot_write_are_refused_first)
{
    const float img[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    write_float_fits(tmp("n.fits"), img, 4, 3);
    char name[400];
    memset(name, 'x', 300);
    snprintf(name + 300, sizeof name - 300, ".fits");
    struct result *r = run(tmp("n.fits"), tmp(name), NULL);
    check_one_line_error(r, 2, "is too long: its last part has 305 bytes", "long name");
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

START_TEST(header_screen_reads_headers_not_pixels)
{
    /* Pixels whose bytes spell the card the screen refuses, at the start of the data and of its
     * second block: only a walk that skips each data unit whole, NAXIS1 x NAXIS2 rounded up to
     * blocks, reads past them as it should. */
    float *zeros = calloc(720 * 3, sizeof *zeros);
    write_float_fits(tmp("cardlike.fits"), zeros, 720, 3);
    free(zeros);
    fitsfile *f;
    int status = 0;
    LONGLONG header, data, end;
    fits_open_file(&f, tmp("cardlike.fits"), READONLY, &status);
    fits_get_hduaddrll(f, &header, &data, &end, &status);
    fits_close_file(f, &status);
    fits_check(status, "reading cardlike.fits");
    ck_assert_int_eq(end - data, 3 * 2880);
    char filled[71];
    memset(filled, 'Q', 70);
    filled[70] = '\0';
    put_card(tmp("cardlike.fits"), (long)data, "TTYPE1", filled);
    put_card(tmp("cardlike.fits"), (long)data + 2880, "TTYPE1", filled);
    ck_run_ok(run(tmp("cardlike.fits"), tmp("cardlike_out.fits"), "--maps", "median", "-w", "1",
                  "-q", NULL));
}
END_TEST

START_TEST(every_bitpix_is_read_as_float)
{
    /* 4 x 3 values 1..12 stored as each FITS type; w = 1 makes the MEDIAN map the image. A
     * degenerate third axis (NAXIS3 = 1) is accepted. */
    const int bitpixes[6] = {BYTE_IMG, SHORT_IMG, LONG_IMG, LONGLONG_IMG, FLOAT_IMG, DOUBLE_IMG};
    float want[12];
    double values[12];
    for (int i = 0; i < 12; i++)
        values[i] = want[i] = (float)(i + 1);
    for (int b = 0; b < 7; b++) {
        fitsfile *f;
        int status = 0, bitpix = bitpixes[b % 6];
        long naxes[3] = {4, 3, 1};
        char name[32];
        snprintf(name, sizeof name, "bitpix%d%s.fits", bitpix, b == 6 ? "_cube" : "");
        fits_create_file(&f, tmp(name), &status);
        fits_create_img(f, bitpix, b == 6 ? 3 : 2, naxes, &status);
        fits_write_img(f, TDOUBLE, 1, 12, values, &status);
        fits_close_file(f, &status);
        fits_check(status, name);
        ck_run_ok(run(tmp(name), tmp("bitpix_out.fits"), "-w", "1", "-q", "--overwrite", "--maps",
                      "median", NULL));
        long nx, ny;
        float *got = read_hdu(tmp("bitpix_out.fits"), 1, &nx, &ny);
        ck_assert_msg(test_compare_bits(got, want, 12, 4, name) == 0, "%s", name);
        free(got);
    }
}
END_TEST

START_TEST(png_in_and_out)
{
    /* 16-bit grey + alpha, 5 x 4, value 100 * row + column (row 0 on top); one transparent. */
    enum { NX = 5, NY = 4 };
    unsigned short ga[NX * NY * 2];
    for (int y = 0; y < NY; y++) {
        for (int x = 0; x < NX; x++) {
            ga[2 * (y * NX + x)] = (unsigned short)(100 * y + x + 40000);
            ga[2 * (y * NX + x) + 1] = (x == 2 && y == 1) ? 0 : 65535;
        }
    }
    write_png(tmp("grey.png"), NX, NY, PNG_COLOR_TYPE_GRAY_ALPHA, 16, ga);
    ck_run_ok(run(tmp("grey.png"), tmp("grey.fits"), "-w", "1", "-q", "--maps", "median", NULL));
    long nx, ny;
    float *got = read_hdu(tmp("grey.fits"), 1, &nx, &ny);
    ck_assert_int_eq(nx, NX);
    ck_assert_int_eq(ny, NY);
    for (int y = 0; y < NY; y++) {
        for (int x = 0; x < NX; x++) {
            /* FITS row 0 is the bottom: PNG row NY - 1. */
            int png_row = NY - 1 - y;
            float v = got[y * NX + x];
            if (x == 2 && png_row == 1)
                ck_assert_msg(isnan(v), "transparent pixel should be missing");
            else
                ck_assert_float_eq(v, (float)(100 * png_row + x + 40000));
        }
    }
    free(got);

    /* 8-bit grey in, PNG out (named .png) and --png beside a FITS output. */
    unsigned short g8[NX * NY];
    for (int i = 0; i < NX * NY; i++)
        g8[i] = (unsigned short)(i * 10);
    write_png(tmp("grey8.png"), NX, NY, PNG_COLOR_TYPE_GRAY, 8, g8);
    ck_run_ok(run(tmp("grey8.png"), tmp("grey8_out.fits"), "-w", "1", "-q", "--maps", "median",
                  "--png", tmp("preview.png"), NULL));
    got = read_hdu(tmp("grey8_out.fits"), 1, &nx, &ny);
    ck_assert_float_eq(got[0], (float)((NY - 1) * NX * 10)); /* bottom-left = last PNG row */
    free(got);

    /* A float image with a NaN to PNG: NaN black, the minimum grey 1, the maximum 65535. */
    float img[NX * NY];
    for (int i = 0; i < NX * NY; i++)
        img[i] = (float)i * 0.25f - 1.0f;
    img[7] = NAN;
    write_float_fits(tmp("to_png.fits"), img, NX, NY);
    ck_run_ok(run(tmp("to_png.fits"), tmp("view.png"), "-w", "1", "-q", "--maps", "median", NULL));
    unsigned grey[NX * NY];
    read_png_grey16(tmp("preview.png"), NX, NY, grey);
    ck_assert_uint_eq(grey[0], 1); /* top-left of grey8 is its minimum, 0 */
    ck_assert_uint_eq(grey[NX * NY - 1], 65535);
    read_png_grey16(tmp("view.png"), NX, NY, grey);
    for (int y = 0; y < NY; y++) {
        for (int x = 0; x < NX; x++) {
            unsigned g = grey[(NY - 1 - y) * NX + x]; /* FITS row y is PNG row NY - 1 - y */
            int i = y * NX + x;
            if (i == 7)
                ck_assert_uint_eq(g, 0);
            else if (i == 0)
                ck_assert_uint_eq(g, 1);
            else if (i == NX * NY - 1)
                ck_assert_uint_eq(g, 65535);
            else
                ck_assert_msg(g > 1 && g < 65535, "grey %u at %d", g, i);
        }
    }
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

START_TEST(gzip_output_by_name)
{
    const float img[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    write_float_fits(tmp("gz_in.fits"), img, 3, 3);
    ck_run_ok(run(tmp("gz_in.fits"), tmp("gz_out.fits.gz"), "-w", "3", "-q", NULL));
    unsigned char magic[2] = {0};
    FILE *f = fopen(tmp("gz_out.fits.gz"), "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fread(magic, 1, 2, f), 2);
    fclose(f);
    ck_assert_msg(magic[0] == 0x1f && magic[1] == 0x8b, "not gzip-compressed");
    ck_assert_int_eq(count_hdus(tmp("gz_out.fits.gz")), 1);
}
END_TEST

START_TEST(help_version_and_devices)
{
    struct result *r = run("--help", NULL);
    ck_assert_int_eq(r->code, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "Usage: madfilter"));
    ck_assert_ptr_nonnull(strstr(r->out, "Exit status"));
    ck_assert_ptr_nonnull(strstr(r->out, "--boundary"));
    r = run("--version", NULL);
    ck_assert_int_eq(r->code, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "madfilter " CLSTATS_VERSION));
    r = run("--list-devices", NULL);
    ck_assert_int_eq(r->code, 0);
    int p = -1, d = -1;
    ck_assert_msg(sscanf(r->out, "%d:%d", &p, &d) == 2, "--list-devices: \"%s\"", r->out);
    /* README's "-d pocl": Debian's PoCL says "PoCL" only in its version, which counts too. */
    if (!strstr(r->out, "PoCL")) {
        printf("-d pocl case skipped: no PoCL device here\n");
        return;
    }
    const float img[4] = {1, 2, 3, 4};
    write_float_fits(tmp("pocl.fits"), img, 2, 2);
    r = run(tmp("pocl.fits"), tmp("pocl_out.fits"), "-d", "pocl", NULL);
    ck_run_ok(r);
    ck_assert_msg(strstr(r->err, "Portable Computing Language"), "not on PoCL: %s", r->err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("madfilter");
    TCase *tc = tcase_create("end_to_end");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, fits_maps_match_the_library_bit_for_bit);
    tcase_add_test(tc, residual_map_is_pixel_minus_median);
    tcase_add_test(tc, tiny_image_by_hand);
    tcase_add_test(tc, header_is_kept_and_history_added);
    tcase_add_test(tc, maps_come_in_the_order_asked);
    tcase_add_test(tc, blank_pixels_of_scaled_integers_are_missing);
    tcase_add_test(tc, compressed_fz_input);
    tcase_add_test(tc, extension_is_chosen_with_cfitsio_syntax);
    tcase_add_test(tc, existing_output_is_refused_unless_asked);
    tcase_add_test(tc, failure_leaves_no_temporary_file);
    tcase_add_test(tc, bad_inputs_give_one_line_and_an_exit_code);
    tcase_add_test(tc, header_screen_reads_headers_not_pixels);
    tcase_add_test(tc, outputs_never_replace_an_input_however_spelled);
    tcase_add_test(tc, outputs_are_regular_files_only);
    tcase_add_test(tc, sections_keep_float_bits);
    tcase_add_test(tc, a_compressed_header_cfitsio_cannot_convert_is_copied);
    tcase_add_test(tc, piped_inputs_give_the_files_maps);
    tcase_add_test(tc, cval_is_cast_to_float32_as_scipy_does);
    tcase_add_test(tc, output_names_the_programs_cannot_write_are_refused_first);
    tcase_add_test(tc, every_bitpix_is_read_as_float);
    tcase_add_test(tc, png_in_and_out);
    tcase_add_test(tc, gzip_output_by_name);
    tcase_add_test(tc, help_version_and_devices);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
