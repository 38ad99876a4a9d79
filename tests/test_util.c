/* test_util.c - shared test context, seeded random numbers and bitwise comparison. */
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static clstats_ctx *shared_ctx;

static void destroy_shared_ctx(void)
{
    clstats_ctx_destroy(shared_ctx);
    shared_ctx = NULL;
}

clstats_ctx *test_ctx(void)
{
    if (shared_ctx) return shared_ctx;
    int status = clstats_ctx_create(&shared_ctx, NULL);
    if (status != CLSTATS_OK) {
        fprintf(stderr, "no OpenCL context: %s: %s\n", clstats_strerror(status),
                clstats_ctx_message(NULL));
        exit(1);
    }
    fprintf(stderr, "device: %s\n", clstats_ctx_device_name(shared_ctx));
    atexit(destroy_shared_ctx);
    /* A suite run with other tuning (tests/meson.build: the GPU settings on a CPU device):
     * CLSTATS_TEST_TUNING="select.wg=256,select.vpt=8", read by the tests, not the library. */
    const char *tuning = getenv("CLSTATS_TEST_TUNING");
    char *list = tuning ? strdup(tuning) : NULL;
    for (char *item = list, *next; item && *item; item = next) {
        next = strchr(item, ',');
        if (next) *next++ = '\0';
        char *eq = strchr(item, '=');
        if (eq) *eq = '\0';
        if (!eq || clstats_ctx_tune(shared_ctx, item, eq + 1) != CLSTATS_OK) {
            fprintf(stderr, "CLSTATS_TEST_TUNING: cannot set \"%s\": %s\n", item,
                    clstats_ctx_message(shared_ctx));
            exit(1);
        }
        fprintf(stderr, "tuning: %s = %s\n", item, eq + 1);
    }
    free(list);
    return shared_ctx;
}

void test_tune(const char *name, const char *value)
{
    const int status = clstats_ctx_tune(test_ctx(), name, value);
    ck_assert_msg(status == CLSTATS_OK, "tuning %s = %s: %s", name, value ? value : "(table)",
                  clstats_ctx_message(test_ctx()));
}

void test_rng_seed(struct test_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t test_rng_next(struct test_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double test_rng_uniform(struct test_rng *rng)
{
    return (double)(test_rng_next(rng) >> 11) * 0x1.0p-53;
}

double test_rng_normal(struct test_rng *rng)
{
    double u = test_rng_uniform(rng), v = test_rng_uniform(rng);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

uint64_t test_seed(void)
{
    static uint64_t seed;
    static int printed;
    if (!printed) {
        const char *env = getenv("CLSTATS_TEST_SEED");
        seed = env ? strtoull(env, NULL, 0) : 20261122u;
        fprintf(stderr, "seed: %" PRIu64 " (set CLSTATS_TEST_SEED to change)\n", seed);
        printed = 1;
    }
    return seed;
}

int test_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* Now, not at exit: a runtime whose compiler keeps static state (Oclgrind's LLVM) may have
     * freed it by the time exit handlers run, and releasing programs then corrupts the heap. */
    destroy_shared_ctx();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A float of one of the classes where a mean can go wrong: any bits (NaN excepted), near
 * +-FLT_MAX (sums overflow), subnormal or barely normal (halving is inexact), and the
 * landmarks (+-0, +-inf, +-FLT_MAX, +-FLT_MIN, +-the smallest subnormal). */
static float float_of_class(struct test_rng *rng, int cls)
{
    static const uint32_t landmarks[] = {0u, 0x7f800000u, 0x7f7fffffu, 0x00800000u, 1u};
    const uint32_t sign = (uint32_t)(test_rng_next(rng) & 1) << 31;
    const uint32_t mantissa = (uint32_t)test_rng_next(rng) & 0x7fffffu;
    uint32_t u;
    switch (cls) {
    case 0:
        do
            u = (uint32_t)test_rng_next(rng);
        while ((u & 0x7fffffffu) > 0x7f800000u);
        break;
    case 1:
        u = sign | (uint32_t)(250 + test_rng_next(rng) % 5) << 23 | mantissa;
        break;
    case 2:
        u = sign | (uint32_t)(test_rng_next(rng) % 4) << 23 | mantissa;
        break;
    default:
        u = sign | landmarks[test_rng_next(rng) % 5];
        break;
    }
    float v;
    memcpy(&v, &u, 4);
    return v;
}

void test_float_pairs(float *a, float *b, size_t n, uint64_t seed)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++) {
        const int ca = (int)(test_rng_next(&rng) % 4);
        const int cb = test_rng_uniform(&rng) < 0.5 ? ca : (int)(test_rng_next(&rng) % 4);
        a[i] = float_of_class(&rng, ca);
        b[i] = float_of_class(&rng, cb);
        if (test_rng_uniform(&rng) < 0.3) b[i] = copysignf(b[i], a[i]);
        if (test_rng_uniform(&rng) < 0.1) b[i] = -a[i];
    }
}

size_t test_compare_bits(const float *got, const float *want, size_t n, size_t nx, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a, b;
        memcpy(&a, &got[i], 4);
        memcpy(&b, &want[i], 4);
        if (a == b) continue;
        if (bad < 5)
            fprintf(stderr, "%s mismatch at (%zu, %zu): got %.9g (0x%08x), want %.9g (0x%08x)\n",
                    what, i % nx, i / nx, got[i], a, want[i], b);
        bad++;
    }
    return bad;
}

size_t test_compare_bits_f64(const double *got, const double *want, size_t n, size_t nx,
                             const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a, b;
        memcpy(&a, &got[i], 8);
        memcpy(&b, &want[i], 8);
        if (a == b) continue;
        if (bad < 5)
            fprintf(stderr, "%s mismatch at (%zu, %zu): got %.17g (0x%016llx), want %.17g "
                            "(0x%016llx)\n",
                    what, i % nx, i / nx, got[i], (unsigned long long)a, want[i],
                    (unsigned long long)b);
        bad++;
    }
    return bad;
}

int test_feed_fifo(const char *fifo, const char *file)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char buf[4096];
        FILE *in = fopen(file, "rb"), *out = fopen(fifo, "wb");
        size_t n;
        while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, n, out) != n) break;
        if (out) fclose(out); /* _exit flushes nothing */
        _exit(0);
    }
    return (int)pid;
}
