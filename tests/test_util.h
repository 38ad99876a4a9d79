/* test_util.h - what every Check suite here shares: one context per test process (kernel
 * builds on PoCL are slow, so suites run with CK_NOFORK and build each program once), a seeded
 * random generator whose seed is printed, and a runner that sets those up. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include "clstats.h"
#include <check.h>
#include <stdint.h>

/* The context on $CLSTATS_DEVICE (default "auto"), created on first use; aborts the test run
 * with the library's message if there is no device. */
clstats_ctx *test_ctx(void);

/* Forces a tuning parameter of test_ctx() (clstats_ctx_tune; value NULL restores the table's),
 * failing the test when the library refuses it. */
void test_tune(const char *name, const char *value);

/* splitmix64: small, fast, the same stream everywhere. */
struct test_rng {
    uint64_t state;
};
void test_rng_seed(struct test_rng *rng, uint64_t seed);
uint64_t test_rng_next(struct test_rng *rng);
double test_rng_uniform(struct test_rng *rng); /* [0, 1) */
double test_rng_normal(struct test_rng *rng);
/* The suite's base seed: $CLSTATS_TEST_SEED or a fixed default, printed once. */
uint64_t test_seed(void);

/* n pairs (a[i], b[i]) of floats where a mean of two can go wrong: any bits, near +-FLT_MAX
 * (sums overflow), subnormal (halving is inexact), +-0, +-inf and other landmarks, often of one
 * class and sign, so that huge sums overflow and tiny ones cancel; never NaN. */
void test_float_pairs(float *a, float *b, size_t n, uint64_t seed);

/* Runs the suite without forking (the context survives between tests); returns the exit code. */
int test_run_suite(Suite *s);

/* Bitwise equality of two float arrays; on a mismatch prints the first few differences with
 * their (x, y) for width nx, and returns the number of mismatches. */
size_t test_compare_bits(const float *got, const float *want, size_t n, size_t nx,
                         const char *what);

/* The same for float64 arrays. */
size_t test_compare_bits_f64(const double *got, const double *want, size_t n, size_t nx,
                             const char *what);

/* Writes a file into a FIFO from a child process, as a shell's pipe does; returns the child's
 * pid, for waitpid (or kill, when the reader stops early). */
int test_feed_fifo(const char *fifo, const char *file);

#endif
