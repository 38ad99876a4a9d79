/* test_madfilter_limits.c - madfilter where real pipelines push it: images filtered in strips (a
 * small --max-memory, a device with little memory), a device that runs out of memory or is lost
 * mid-run, data cubes, many inputs in one run, and progress on a terminal. Tiny memory caps and
 * the OpenCL shim make CI take every one of these paths on small images. */
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include "madfilter_harness.h"

#include <fcntl.h>
#include <fitsio.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { NX = 37, NY = 29 };

static const char *const mode_names[] = {"reflect", "mirror", "nearest", "constant", "wrap"};

/* Every HDU of two madfilter outputs holds the same bits. */
static void same_maps(const char *a, const char *b, int n_hdus, const char *what)
{
    ck_assert_int_eq(count_hdus(a), n_hdus);
    ck_assert_int_eq(count_hdus(b), n_hdus);
    for (int h = 1; h <= n_hdus; h++) {
        int na, nb;
        long ax, ay, az, bx, by, bz;
        float *da = read_cube(a, h, &na, &ax, &ay, &az), *db = read_cube(b, h, &nb, &bx, &by, &bz);
        ck_assert_msg(na == nb && ax == bx && ay == by && az == bz, "%s: shapes differ", what);
        ck_assert_msg(test_compare_bits(da, db, (size_t)(ax * ay * az), (size_t)ax, what) == 0,
                      "%s: HDU %d differs", what, h);
        free(da);
        free(db);
    }
}

/* The MAD map a run wrote against the library's, for a 2-D image. */
static void mad_matches_library(const char *path, const float *img, int w)
{
    float median[NX * NY], mad[NX * NY];
    library_maps(img, NX, NY, w, CLSTATS_BOUNDARY_REFLECT, median, mad);
    long nx, ny;
    float *got = read_hdu(path, 1, &nx, &ny);
    ck_assert_msg(test_compare_bits(got, mad, NX * NY, NX, path) == 0, "%s differs", path);
    free(got);
}

/* A float32 cube, planes after one another. */
static void write_cube(const char *path, const float *data, int naxis, const long *naxes)
{
    fitsfile *f;
    int status = 0;
    long n = 1;
    for (int i = 0; i < naxis; i++)
        n *= naxes[i];
    fits_create_file(&f, path, &status);
    fits_create_img(f, FLOAT_IMG, naxis, (long *)naxes, &status);
    fits_write_key_str(f, "OBJECT", "a cube", NULL, &status);
    fits_write_img(f, TFLOAT, 1, n, (float *)data, &status);
    fits_close_file(f, &status);
    fits_check(status, "writing a cube");
}

static void read_report(const char *path, int *contexts, int *builds, long *launches)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "the shim wrote no report");
    ck_assert_int_eq(fscanf(f, "contexts %d builds %d launches %ld", contexts, builds, launches),
                     3);
    fclose(f);
}

/* A random image of NX x NY written to a FITS file in the test's directory. */
static float *image_in(const char *name, uint64_t salt)
{
    float *img = random_image(NX, NY, salt);
    write_float_fits(tmp(name), img, NX, NY);
    return img;
}

/* A file standing for an earlier result that a failed run must leave as it was. */
static const char earlier_result[] = "an earlier result, not to be lost";

static void write_earlier_result(const char *path)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(earlier_result, f);
    fclose(f);
}

static bool earlier_result_intact(const char *path)
{
    char now[100];
    size_t n;
    file_bytes(path, now, sizeof now, &n);
    return n == strlen(earlier_result) && memcmp(now, earlier_result, n) == 0;
}

/* ---- Strips -------------------------------------------------------------------------------- */

/* A 4 KiB cap leaves room for strips of 2 to 4 rows of this 37-pixel-wide image: windows of 15
 * rows span several strips, and every boundary mode must still give the one-piece bits. */
START_TEST(strips_give_the_one_piece_maps_in_every_mode)
{
    float *img = image_in("s.fits", 11);
    static const char *widths[] = {"5", "15"};
    size_t n_nan = 0;
    for (int i = 0; i < NX * NY; i++)
        n_nan += isnan(img[i]) ? 1 : 0;
    char missing[40]; /* each strip counts only its own rows, never its halo */
    snprintf(missing, sizeof missing, "(%zu missing)", n_nan);
    for (int m = 0; m < 5; m++) {
        for (int wi = 0; wi < 2; wi++) {
            char what[64];
            snprintf(what, sizeof what, "%s w=%s", mode_names[m], widths[wi]);
            ck_run_ok(run(tmp("s.fits"), tmp("one.fits"), "-w", widths[wi], "-b", mode_names[m],
                          "--maps", "median,mad,sigma,snr", "-q", "--overwrite", NULL));
            struct result *r =
                run(tmp("s.fits"), tmp("strips.fits"), "-w", widths[wi], "-b", mode_names[m],
                    "--maps", "median,mad,sigma,snr", "--max-memory", "4K", "--overwrite", NULL);
            ck_run_ok(r);
            ck_assert_msg(strstr(r->err, "strips of up to"), "%s: no strips: %s", what, r->err);
            ck_assert_msg(strstr(r->err, missing), "%s: not %s: %s", what, missing, r->err);
            same_maps(tmp("one.fits"), tmp("strips.fits"), 4, what);
        }
    }
    /* And the one-piece run is the library's answer. */
    ck_run_ok(run(tmp("s.fits"), tmp("lib.fits"), "-w", "5", "-q", "--max-memory", "4K", NULL));
    mad_matches_library(tmp("lib.fits"), img, 5);
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
}
END_TEST

START_TEST(a_device_with_little_memory_gets_strips)
{
    float *img = image_in("small.fits", 12);
    shim_set("OPENCL_SHIM_DEVICE_MEMORY", "8192");
    struct result *r = run(tmp("small.fits"), tmp("small_out.fits"), "-w", "5", NULL);
    shim_clear();
    ck_run_ok(r);
    ck_assert_msg(strstr(r->err, "strips of up to"), "no strips: %s", r->err);
    mad_matches_library(tmp("small_out.fits"), img, 5);
    free(img);
}
END_TEST

/* The plan trusts the device's word; its allocations then fail above 2 KiB: strips halve until
 * they fit, the user is told, and the maps are unchanged. */
START_TEST(device_out_of_memory_retries_with_smaller_strips)
{
    float *img = image_in("full.fits", 13);
    shim_set("OPENCL_SHIM_MAX_BUFFER", "2048");
    struct result *r = run(tmp("full.fits"), tmp("full_out.fits"), "-w", "5", NULL);
    shim_clear();
    ck_run_ok(r);
    ck_assert_msg(strstr(r->err, "ran out of memory for strips of 29 rows; trying 14"), "%s",
                  r->err);
    ck_assert_msg(strstr(r->err, "trying 7"), "%s", r->err);
    mad_matches_library(tmp("full_out.fits"), img, 5);
    free(img);
}
END_TEST

/* Not even one row fits: one clear line, exit 1, and an existing output is left as it was. */
START_TEST(device_out_of_memory_for_one_row_is_a_clear_error)
{
    float *img = image_in("tiny.fits", 14);
    write_earlier_result(tmp("kept.fits"));
    shim_set("OPENCL_SHIM_MAX_BUFFER", "64");
    struct result *r =
        run(tmp("tiny.fits"), tmp("kept.fits"), "-w", "5", "-q", "--overwrite", NULL);
    shim_clear();
    check_one_line_error(r, 1, "out of device memory", "no room for a row");
    ck_assert(earlier_result_intact(tmp("kept.fits")));
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
}
END_TEST

/* The device is lost after two of three strips have been written to the temporary output. */
START_TEST(a_device_lost_mid_run_leaves_no_partial_output)
{
    float *img = image_in("lost.fits", 15);
    write_earlier_result(tmp("lost_out.fits"));
    shim_set("OPENCL_SHIM_LOSE_AFTER", "2");
    shim_set("OPENCL_SHIM_REPORT", tmp("lost_report.txt"));
    struct result *r = run(tmp("lost.fits"), tmp("lost_out.fits"), "-w", "5", "-q", "--max-memory",
                           "4K", "--overwrite", NULL);
    shim_clear();
    check_one_line_error(r, 1, "filtering failed", "lost device");
    int contexts, builds;
    long launches;
    read_report(tmp("lost_report.txt"), &contexts, &builds, &launches);
    ck_assert_int_eq(launches, 2); /* the loss came after strips were done */
    ck_assert(earlier_result_intact(tmp("lost_out.fits")));
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
}
END_TEST

/* ---- Time the context leaves: the output filled ahead, the device given back early ---------- */

/* Whether a run's timeline (CLSTATS_LOG) has a line holding words. */
static bool timeline_says(const struct result *r, const char *words)
{
    return strstr(r->err, words) != NULL;
}

START_TEST(an_output_filled_ahead_holds_the_maps_and_no_failure_leaves_it)
{
    /* While a slow context is made, the output's pages are filled with zeros; the maps written
     * over them must be the library's, every header in place, and a run that then fails (the
     * device lost at its first launch) must leave neither the file nor its temporary. */
    float *img = image_in("ahead.fits", 31);
    setenv("CLSTATS_LOG", "1", 1);
    shim_set("OPENCL_SHIM_CONTEXT_DELAY_MS", "300");
    struct result *r = run(tmp("ahead.fits"), tmp("ahead_out.fits"), "-w", "5", "--maps",
                           "mad,median,snr", "-q", NULL);
    ck_run_ok(r);
    ck_assert_msg(timeline_says(r, "filled with zeros ahead"), "no fill ahead: %s", r->err);
    mad_matches_library(tmp("ahead_out.fits"), img, 5);
    float median[NX * NY], mad[NX * NY];
    library_maps(img, NX, NY, 5, CLSTATS_BOUNDARY_REFLECT, median, mad);
    long nx, ny;
    float *got = read_hdu(tmp("ahead_out.fits"), 2, &nx, &ny);
    ck_assert(test_compare_bits(got, median, NX * NY, NX, "median") == 0);
    free(got);
    ck_assert_int_eq(count_hdus(tmp("ahead_out.fits")), 3);
    char sum[80];
    read_key_string(tmp("ahead_out.fits"), 3, "DATASUM", sum);
    ck_assert_msg(strcmp(sum, "0") != 0, "the last map's DATASUM is %s", sum);

    write_earlier_result(tmp("ahead_kept.fits"));
    shim_set("OPENCL_SHIM_LOSE_AFTER", "0");
    r = run(tmp("ahead.fits"), tmp("ahead_kept.fits"), "-w", "5", "-q", "--overwrite", NULL);
    shim_clear();
    unsetenv("CLSTATS_LOG");
    ck_assert_msg(timeline_says(r, "filled with zeros ahead"), "no fill ahead: %s", r->err);
    ck_assert_int_eq(r->code, 1);
    ck_assert(earlier_result_intact(tmp("ahead_kept.fits")));
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
}
END_TEST

START_TEST(a_device_given_back_early_leaves_every_output_whole)
{
    /* MADFILTER_EARLY_RELEASE=1 gives the device back on a thread once the last strip of the
     * last input is filtered (what a GPU does by default), while its maps are written: every
     * input's maps must be the library's, and a write that then fails must still end the run
     * with its one error line, no output and no temporaries (the thread joined, not lost). */
    float *a = image_in("early_a.fits", 32), *b = image_in("early_b.fits", 33);
    setenv("MADFILTER_EARLY_RELEASE", "1", 1);
    setenv("CLSTATS_LOG", "1", 1);
    ck_assert_int_eq(mkdir(tmp("early_out"), 0755), 0);
    struct result *r = run("-o", tmp("early_out"), "-w", "5", "-q", "--max-memory", "4K",
                           tmp("early_a.fits"), tmp("early_b.fits"), NULL);
    ck_run_ok(r);
    ck_assert_msg(timeline_says(r, "device released"), "not released early: %s", r->err);
    mad_matches_library(tmp("early_out/early_a_maps.fits"), a, 5);
    mad_matches_library(tmp("early_out/early_b_maps.fits"), b, 5);

    struct rlimit old, cap = {4096, 4096};
    getrlimit(RLIMIT_FSIZE, &old);
    cap.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &cap), 0);
    r = run(tmp("early_a.fits"), tmp("early_full.fits"), "-w", "5", NULL);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    unsetenv("MADFILTER_EARLY_RELEASE");
    unsetenv("CLSTATS_LOG");
    ck_assert_msg(timeline_says(r, "device released"), "not released early: %s", r->err);
    ck_assert_int_eq(r->code, 1);
    ck_assert_msg(strstr(r->err, "early_full.fits: cannot write the output: File too large"), "%s",
                  r->err);
    ck_assert(!exists(tmp("early_full.fits")));
    ck_assert_int_eq(count_temporaries(), 0);
    free(a);
    free(b);
}
END_TEST

/* ---- Cubes --------------------------------------------------------------------------------- */

START_TEST(cube_planes_are_filtered_on_their_own)
{
    enum { CX = 23, CY = 17, CZ = 3 };
    float *planes[CZ], cube[CX * CY * CZ];
    for (int z = 0; z < CZ; z++) {
        planes[z] = random_image(CX, CY, 20 + (uint64_t)z);
        for (int i = 0; i < CX * CY; i++)
            cube[z * CX * CY + i] = planes[z][i] + 100.0f * (float)z;
    }
    const long naxes[3] = {CX, CY, CZ};
    write_cube(tmp("cube.fits"), cube, 3, naxes);
    struct result *r =
        run(tmp("cube.fits"), tmp("cube_out.fits"), "-w", "5", "--maps", "median,mad", NULL);
    ck_run_ok(r);
    ck_assert_msg(strstr(r->err, "23 x 17 x 3 pixels"), "%s", r->err);
    ck_run_ok(run(tmp("cube.fits"), tmp("cube_strips.fits"), "-w", "5", "--maps", "median,mad",
                  "-q", "--max-memory", "2K", NULL));
    same_maps(tmp("cube_out.fits"), tmp("cube_strips.fits"), 2, "cube in strips");

    float median[CX * CY], mad[CX * CY];
    for (int h = 1; h <= 2; h++) {
        int naxis;
        long nx, ny, nz;
        float *got = read_cube(tmp("cube_out.fits"), h, &naxis, &nx, &ny, &nz);
        ck_assert_int_eq(naxis, 3);
        ck_assert_int_eq(nz, CZ);
        for (int z = 0; z < CZ; z++) {
            library_maps(cube + z * CX * CY, CX, CY, 5, CLSTATS_BOUNDARY_REFLECT, median, mad);
            ck_assert_msg(test_compare_bits(got + z * CX * CY, h == 1 ? median : mad, CX * CY, CX,
                                            "plane") == 0,
                          "HDU %d plane %d differs", h, z);
        }
        free(got);
    }
    char *hdr = read_header(tmp("cube_out.fits"), 1);
    ck_assert_msg(strstr(hdr, "each of the 3 planes filtered on its own"), "%s", hdr);
    free(hdr);

    r = run(tmp("cube.fits"), tmp("refused.fits"), "--cube", "refuse", NULL);
    check_one_line_error(r, 1, "cube of 3 planes", "--cube refuse");
    r = run(tmp("cube.fits"), tmp("cube.png"), NULL);
    check_one_line_error(r, 1, "a PNG holds one", "cube to PNG");
    const long hyper[4] = {CX, CY, 1, 2};
    float zeros[CX * CY * 2] = {0};
    write_cube(tmp("hyper.fits"), zeros, 4, hyper);
    r = run(tmp("hyper.fits"), tmp("hyper_out.fits"), NULL);
    check_one_line_error(r, 1, "4-D", "NAXIS 4");
    ck_assert(!exists(tmp("refused.fits")) && !exists(tmp("cube.png")));
    ck_assert(!exists(tmp("hyper_out.fits")));
    for (int z = 0; z < CZ; z++)
        free(planes[z]);
}
END_TEST

/* ---- Many inputs --------------------------------------------------------------------------- */

START_TEST(several_inputs_share_one_context_and_program)
{
    float *imgs[3];
    const char *names[3] = {"a.fits", "b.fits", "c.fits"};
    for (int i = 0; i < 3; i++)
        imgs[i] = image_in(names[i], 30 + (uint64_t)i);
    ck_assert_int_eq(mkdir(tmp("out"), 0755), 0);
    shim_set("OPENCL_SHIM_REPORT", tmp("report.txt"));
    struct result *r =
        run("-o", tmp("out"), tmp("a.fits"), tmp("b.fits"), tmp("c.fits"), "-w", "5", "-q", NULL);
    shim_clear();
    ck_run_ok(r);
    int contexts, builds;
    long launches;
    read_report(tmp("report.txt"), &contexts, &builds, &launches);
    ck_assert_int_eq(contexts, 1);
    ck_assert_int_eq(builds, 1);
    const char *outs[3] = {"out/a_maps.fits", "out/b_maps.fits", "out/c_maps.fits"};
    for (int i = 0; i < 3; i++)
        mad_matches_library(tmp(outs[i]), imgs[i], 5);

    /* A pattern: {} is the input's name without its extension. */
    ck_run_ok(
        run("-o", tmp("{}_mad.fits"), tmp("a.fits"), tmp("b.fits[0]"), "-w", "5", "-q", NULL));
    mad_matches_library(tmp("a_mad.fits"), imgs[0], 5);
    mad_matches_library(tmp("b_mad.fits"), imgs[1], 5);
    ck_assert_int_eq(count_temporaries(), 0);
    for (int i = 0; i < 3; i++)
        free(imgs[i]);
}
END_TEST

/* A FITS header declaring a w x h float32 image, and only `data` bytes of it. */
static void write_truncated(const char *path, long w, long h, size_t data)
{
    char header[2880];
    memset(header, ' ', sizeof header);
    const char *cards[] = {"SIMPLE  =                    T",
                           "BITPIX  =                  -32",
                           "NAXIS   =                    2",
                           NULL,
                           NULL,
                           "END"};
    char n1[81], n2[81];
    snprintf(n1, sizeof n1, "NAXIS1  = %20ld", w);
    snprintf(n2, sizeof n2, "NAXIS2  = %20ld", h);
    cards[3] = n1, cards[4] = n2;
    for (int i = 0; i < 6; i++)
        memcpy(header + 80 * i, cards[i], strlen(cards[i]));
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    fwrite(header, 1, sizeof header, fp);
    char *zeros = calloc(data, 1);
    fwrite(zeros, 1, data, fp);
    free(zeros);
    fclose(fp);
}

START_TEST(a_damaged_input_never_fills_the_disk)
{
    /* A 1 MB file whose header declares 20000 x 20000 pixels: the first strip cannot be read,
     * and the abandoned output must go as it is. cfitsio would pad it out to 1.6 GB per map on
     * closing; a file-size limit of 64 MiB makes that a SIGXFSZ here instead of a full disk. */
    write_truncated(tmp("claims.fits"), 20000, 20000, 1 << 20);
    struct rlimit old, cap = {64 << 20, 64 << 20};
    getrlimit(RLIMIT_FSIZE, &old);
    cap.rlim_max = old.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &cap), 0);
    struct result *r =
        run(tmp("claims.fits"), tmp("claims_out.fits"), "--max-memory", "256M", NULL);
    setrlimit(RLIMIT_FSIZE, &old);
    check_one_line_error(r, 1, "cannot read the pixels", "a truncated data unit");
    ck_assert(!exists(tmp("claims_out.fits")));
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

START_TEST(an_ignored_hangup_stays_ignored)
{
    /* nohup: the parent ignores SIGHUP, and the run must survive one mid-run (the shim raises it
     * at the first kernel launch, when the output is being written). Without nohup the same
     * signal ends the run, with no output and no temporaries left. */
    float *img = image_in("hup.fits", 21);
    signal(SIGHUP, SIG_IGN);
    shim_set("OPENCL_SHIM_RAISE", "1"); /* SIGHUP */
    struct result *r = run(tmp("hup.fits"), tmp("hup_out.fits"), "-w", "5", NULL);
    signal(SIGHUP, SIG_DFL);
    ck_run_ok(r);
    mad_matches_library(tmp("hup_out.fits"), img, 5);
    r = run(tmp("hup.fits"), tmp("hup_out2.fits"), "-w", "5", NULL);
    shim_clear();
    ck_assert_msg(r->code == -1, "a hangup did not end the run (exit %d)", r->code);
    ck_assert(!exists(tmp("hup_out2.fits")));
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
}
END_TEST

START_TEST(a_full_disk_names_the_output_and_the_reason)
{
    /* A file-size limit with SIGXFSZ ignored: writes fail with EFBIG, as on a full disk. The
     * error names the file asked for (not the temporary one) and the system's reason. */
    float *img = random_image(300, 200, 22); /* noise: its PNG is far beyond the limit */
    write_float_fits(tmp("full_disk.fits"), img, 300, 200);
    free(img);
    struct rlimit old, cap = {4096, 4096};
    getrlimit(RLIMIT_FSIZE, &old);
    cap.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &cap), 0);
    struct result *fits = run(tmp("full_disk.fits"), tmp("fd_out.fits"), NULL);
    struct result saved = *fits;
    struct result *png = run(tmp("full_disk.fits"), tmp("fd_out.png"), NULL);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    check_one_line_error(&saved, 1, "fd_out.fits: cannot write the output: File too large", "FITS");
    check_one_line_error(png, 1, "cannot write", "PNG");
    ck_assert_msg(strstr(png->err, "fd_out.png: File too large") && !strstr(png->err, "tmp-"), "%s",
                  png->err);
    ck_assert_int_eq(count_temporaries(), 0);
}
END_TEST

static int count_lines_with(const char *text, const char *words);

/* A tile-compressed (gzip, lossless) copy of img. */
static void write_compressed(const char *path, const float *img)
{
    fitsfile *f;
    int status = 0;
    long naxes[2] = {NX, NY};
    fits_create_file(&f, path, &status);
    fits_set_compression_type(f, GZIP_1, &status);
    fits_set_quantize_level(f, 0.0f, &status); /* lossless floats */
    fits_create_img(f, FLOAT_IMG, 2, naxes, &status);
    fits_write_img(f, TFLOAT, 1, NX * NY, (float *)img, &status);
    fits_close_file(f, &status);
    fits_check(status, path);
}

START_TEST(a_crash_unpacking_a_tile_fails_that_input_only)
{
    /* cfitsio 4.2 reads past a garbled Rice tile (ASan sees it; the fuzzer found it). Tile
     * pixels are unpacked in a child process, so such a crash costs one input, in one line, and
     * the batch goes on: played here by a shim that crashes cfitsio's pixel read of "damaged". */
    float *img = random_image(NX, NY, 23);
    write_compressed(tmp("damaged.fits.fz"), img);
    write_compressed(tmp("sound.fits.fz"), img);
    shim_set("OPENCL_SHIM_CRASH_UNPACKING", "damaged");
    struct result *r = run("-o", tmp("{}_out.fits"), "-w", "5", tmp("damaged.fits.fz"),
                           tmp("sound.fits.fz"), NULL);
    shim_clear();
    ck_assert_int_eq(r->code, 1);
    ck_assert_int_eq(count_lines_with(r->err, "cfitsio crashed unpacking the pixels of"), 1);
    ck_assert_msg(strstr(r->err, "damaged.fits.fz") && strstr(r->err, "1 of 2 inputs failed"), "%s",
                  r->err);
    ck_assert(!exists(tmp("damaged_out.fits")));
    mad_matches_library(tmp("sound_out.fits"), img, 5);
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
}
END_TEST

static int count_lines_with(const char *text, const char *words)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, words)) != NULL; p++)
        n++;
    return n;
}

START_TEST(a_failed_input_is_named_and_the_rest_go_on)
{
    float *img = image_in("good1.fits", 40);
    write_float_fits(tmp("good2.fits"), img, NX, NY);
    FILE *f = fopen(tmp("junk.fits"), "w");
    fputs("not a FITS file", f);
    fclose(f);
    ck_assert_int_eq(mkdir(tmp("maps"), 0755), 0);
    struct result *r = run("-o", tmp("maps"), tmp("good1.fits"), tmp("missing.fits"),
                           tmp("junk.fits"), tmp("good2.fits"), "-w", "5", "-q", NULL);
    ck_assert_msg(r->code == 1, "exit %d: %s", r->code, r->err);
    ck_assert_int_eq(r->err_lines, 3);
    char want[600];
    snprintf(want, sizeof want, "madfilter: %s: cannot open", tmp("missing.fits"));
    ck_assert_msg(strstr(r->err, want), "%s", r->err);
    snprintf(want, sizeof want, "madfilter: %s: ", tmp("junk.fits"));
    ck_assert_msg(strstr(r->err, want) && strstr(r->err, "not a FITS file"), "%s", r->err);
    ck_assert_msg(strstr(r->err, "madfilter: 2 of 4 inputs failed"), "%s", r->err);
    ck_assert_int_eq(count_lines_with(r->err, "good"), 0);
    mad_matches_library(tmp("maps/good1_maps.fits"), img, 5);
    mad_matches_library(tmp("maps/good2_maps.fits"), img, 5);
    ck_assert(!exists(tmp("maps/missing_maps.fits")) && !exists(tmp("maps/junk_maps.fits")));
    ck_assert_int_eq(count_temporaries(), 0);
    free(img);
}
END_TEST

/* Runs madfilter with stderr on a new pseudo-terminal; returns what the terminal showed. */
static char *run_on_terminal(const char *const *argv)
{
    static char shown[16384];
    size_t n = 0;
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    ck_assert_int_ge(master, 0);
    ck_assert(grantpt(master) == 0 && unlockpt(master) == 0);
    const char *slave = ptsname(master);
    /* Held open here too, so the terminal never hangs up before the program opens it. */
    int held = open(slave, O_RDWR | O_NOCTTY);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, slave, O_RDWR | O_NOCTTY, 0);
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int wstatus, done = 0;
    while (!done) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        done = waitpid(pid, &wstatus, WNOHANG) == pid;
        /* After the exit, whatever is still buffered: poll says so at once. */
        while (poll(&p, 1, done ? 0 : 50) > 0 && n < sizeof shown - 1) {
            ssize_t k = read(master, shown + n, sizeof shown - 1 - n);
            if (k <= 0) break;
            n += (size_t)k;
        }
    }
    shown[n] = '\0';
    close(held);
    close(master);
    ck_assert_msg(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "madfilter failed: %s", shown);
    return shown;
}

START_TEST(progress_is_shown_on_a_terminal_only)
{
    float *img = image_in("p1.fits", 50);
    write_float_fits(tmp("p2.fits"), img, NX, NY);
    const char *argv[] = {
        MADFILTER_PATH, "-o", tmp("{}.out.fits"), tmp("p1.fits"), tmp("p2.fits"), "-w", "3", NULL};
    const char *shown = run_on_terminal(argv);
    ck_assert_msg(strstr(shown, "[1/2]") && strstr(shown, "[2/2]") && strstr(shown, "100%"),
                  "terminal showed: %s", shown);

    /* Not a terminal: the summaries, and no progress line. */
    struct result *r =
        run("-o", tmp("{}.again.fits"), tmp("p1.fits"), tmp("p2.fits"), "-w", "3", NULL);
    ck_run_ok(r);
    ck_assert_msg(!strchr(r->err, '\r') && !strstr(r->err, "[1/2]"), "%s", r->err);
    ck_assert_int_eq(r->err_lines, 2);
    free(img);
}
END_TEST

/* A failed test may leave the shim's settings behind: none may reach the next test. */
static void teardown(void)
{
    shim_clear();
    unsetenv("CLSTATS_LOG");
    unsetenv("MADFILTER_EARLY_RELEASE");
    remove_tmpdir();
}

int main(void)
{
    Suite *s = suite_create("madfilter_limits");
    TCase *tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, make_tmpdir, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, strips_give_the_one_piece_maps_in_every_mode);
    tcase_add_test(tc, a_device_with_little_memory_gets_strips);
    tcase_add_test(tc, device_out_of_memory_retries_with_smaller_strips);
    tcase_add_test(tc, device_out_of_memory_for_one_row_is_a_clear_error);
    tcase_add_test(tc, a_device_lost_mid_run_leaves_no_partial_output);
    tcase_add_test(tc, an_output_filled_ahead_holds_the_maps_and_no_failure_leaves_it);
    tcase_add_test(tc, a_device_given_back_early_leaves_every_output_whole);
    tcase_add_test(tc, cube_planes_are_filtered_on_their_own);
    tcase_add_test(tc, a_damaged_input_never_fills_the_disk);
    tcase_add_test(tc, an_ignored_hangup_stays_ignored);
    tcase_add_test(tc, a_full_disk_names_the_output_and_the_reason);
    tcase_add_test(tc, a_crash_unpacking_a_tile_fails_that_input_only);
    tcase_add_test(tc, several_inputs_share_one_context_and_program);
    tcase_add_test(tc, a_failed_input_is_named_and_the_rest_go_on);
    tcase_add_test(tc, progress_is_shown_on_a_terminal_only);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
