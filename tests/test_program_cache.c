/* test_program_cache.c - the on-disk cache of compiled programs (src/core/program_cache.c): a build
 * leaves a file, a new context uses it and gives the same bits, and damaged or foreign files
 * are never trusted (the program is compiled again). */
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

/* The one cache file's path in dir, or "" (and the count of files in *count). */
static void cache_file(char *path, size_t size, int *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    path[0] = '\0';
    *count = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        (*count)++;
        snprintf(path, size, "%s/%s", dir, e->d_name);
    }
    if (d) closedir(d);
}

/* A filter run in a fresh context (so no in-memory program). */
static void filter_fresh_w(int width, float *med, float *mad)
{
    float img[20 * 13];
    struct test_rng rng;
    test_rng_seed(&rng, test_seed());
    for (int i = 0; i < 20 * 13; i++)
        img[i] = (float)test_rng_normal(&rng);
    clstats_ctx *ctx;
    ck_assert_int_eq(clstats_ctx_create(&ctx, NULL), CLSTATS_OK);
    struct clstats_filter_params p = {.width = width};
    int status = clstats_median_filter(ctx, img, 20, 13, 20, &p, med, mad);
    ck_assert_msg(status == CLSTATS_OK, "%s", clstats_ctx_message(ctx));
    clstats_ctx_destroy(ctx);
}

static void filter_fresh(float *med, float *mad)
{
    filter_fresh_w(7, med, mad);
}

/* A fresh filter at w = 7 whose build must leave exactly one cache file, named in path. */
static void filter_fresh_one_file(float *med, float *mad, char *path, size_t size)
{
    int count;
    filter_fresh(med, mad);
    cache_file(path, size, &count);
    ck_assert_int_eq(count, 1);
}

static void copy_file(const char *from, const char *to)
{
    static char buf[1 << 20];
    FILE *f = fopen(from, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    f = fopen(to, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/clstats-cache-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv("CLSTATS_CACHE_DIR", dir, 1);
}

static void teardown(void)
{
    char path[512];
    int count;
    for (cache_file(path, sizeof path, &count); count > 0; cache_file(path, sizeof path, &count))
        unlink(path);
    rmdir(dir);
    unsetenv("CLSTATS_CACHE_DIR");
}

START_TEST(a_build_is_stored_and_reused_with_the_same_results)
{
    float med1[260], mad1[260], med2[260], mad2[260];
    char path[512];
    filter_fresh_one_file(med1, mad1, path, sizeof path);
    filter_fresh_one_file(med2, mad2, path, sizeof path); /* from the file this time */
    ck_assert_uint_eq(test_compare_bits(med2, med1, 260, 20, "cached median"), 0);
    ck_assert_uint_eq(test_compare_bits(mad2, mad1, 260, 20, "cached MAD"), 0);
}
END_TEST

START_TEST(damaged_or_foreign_files_are_not_trusted)
{
    float med1[260], mad1[260], med2[260], mad2[260];
    char path[512];
    int count;
    filter_fresh_one_file(med1, mad1, path, sizeof path);

    /* Truncated to half. */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    ck_assert_int_eq(truncate(path, size / 2), 0);
    filter_fresh(med2, mad2);
    ck_assert_uint_eq(test_compare_bits(med2, med1, 260, 20, "after truncation"), 0);

    /* Another program (w = 3) under this one's name: its description differs, so it must not
     * be used, or the maps would be those of 3 x 3 windows. */
    char w7[512], other[512];
    snprintf(w7, sizeof w7, "%s", path);
    unlink(w7);
    filter_fresh_w(3, med2, mad2);
    cache_file(other, sizeof other, &count);
    ck_assert_int_eq(count, 1);
    copy_file(other, w7);
    filter_fresh(med2, mad2);
    ck_assert_uint_eq(test_compare_bits(med2, med1, 260, 20, "after a foreign file"), 0);
    ck_assert_uint_eq(test_compare_bits(mad2, mad1, 260, 20, "after a foreign file"), 0);
    unlink(other);

    /* Garbage where the binary is: the driver refuses it, or the build from source follows. */
    f = fopen(path, "r+b");
    fseek(f, -64, SEEK_END);
    for (int i = 0; i < 64; i++)
        fputc(0xA5, f);
    fclose(f);
    filter_fresh(med2, mad2);
    ck_assert_uint_eq(test_compare_bits(med2, med1, 260, 20, "after a damaged binary"), 0);
}
END_TEST

START_TEST(off_means_no_files)
{
    float med[260], mad[260];
    char path[512];
    int count;
    setenv("CLSTATS_CACHE_DIR", "off", 1);
    filter_fresh(med, mad);
    setenv("CLSTATS_CACHE_DIR", dir, 1);
    cache_file(path, sizeof path, &count);
    ck_assert_int_eq(count, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("program_cache");
    TCase *tc = tcase_create("disk");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_build_is_stored_and_reused_with_the_same_results);
    tcase_add_test(tc, damaged_or_foreign_files_are_not_trusted);
    tcase_add_test(tc, off_means_no_files);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
