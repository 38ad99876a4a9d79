/* test_mpi.c - the MPI module (include/clstats/mpi.h) on every rank of MPI_COMM_WORLD (meson
 * runs it under mpirun with 1 to 4 ranks): distributed k-th values, medians and percentiles of
 * arrays with NaNs, ties, +-0 and +-inf, split unevenly over the ranks (some ranks empty, parts
 * in host memory or in device buffers), each the same bits as the one-device call on the whole
 * array; the traffic not growing with n; every rank returning the same error when one rank
 * fails; and the band filter equal to the one-device filter of the whole image. Exits non-zero
 * on any rank's failure (mpirun then fails). */
#include "clstats.h"
#include "clstats/mpi.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;
static clstats_ctx *ctx;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* The same array on every rank: values drawn from few distinct ones (ties), NaNs, +-0, +-inf. */
static void fill(double *x, size_t n, uint64_t seed, bool f64, double nan_share)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed);
    const double specials[] = {INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e-30};
    for (size_t i = 0; i < n; i++) {
        const double u = test_rng_uniform(&rng);
        double v;
        if (u < nan_share) v = NAN;
        else if (u < nan_share + 0.05) v = specials[test_rng_next(&rng) % 6];
        else if (u < 0.5) v = (double)(test_rng_next(&rng) % 17) - 8.0; /* ties */
        else v = test_rng_normal(&rng) * 100.0;
        x[i] = f64 ? v : (double)(float)v;
    }
}

/* Where rank q's part starts: uneven cuts, with ranks 1 and 3 empty when there are three or more
 * (a first rank that is empty when the seed says so). */
static void cuts(size_t n, uint64_t seed, size_t *cut)
{
    struct test_rng rng;
    test_rng_seed(&rng, seed ^ 0x5bd1e995u);
    cut[0] = 0;
    for (int q = 1; q < size; q++) {
        size_t c = cut[q - 1] + (size_t)(test_rng_uniform(&rng) * (double)(n - cut[q - 1]));
        if (size >= 3 && (q == 2 || q == 4)) c = cut[q - 1]; /* rank q - 1 empty */
        cut[q] = c;
    }
    cut[size] = n;
}

/* This rank's part of x (n values) as an array: host memory on even ranks, a buffer of the
 * context on odd ones (*buf to release). */
static struct clstats_array part_of(const double *x, size_t n, uint64_t seed, bool f64,
                                    void **host, cl_mem *buf)
{
    size_t cut[8];
    cuts(n, seed, cut);
    const size_t m = cut[rank + 1] - cut[rank], es = f64 ? 8 : 4;
    char *h = malloc(m * es + 8);
    for (size_t i = 0; i < m; i++) {
        if (f64) ((double *)h)[i] = x[cut[rank] + i];
        else ((float *)h)[i] = (float)x[cut[rank] + i];
    }
    struct clstats_array a = {.dtype = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32, .nx = m, .ny = 1};
    *buf = NULL;
    *host = h;
    if (rank % 2 == 1 && m) {
        cl_int err;
        *buf = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              m * es, h, &err);
        a.buffer = *buf;
    } else {
        a.host = h;
    }
    return a;
}

static struct clstats_array whole(const double *x, size_t n, bool f64, void **host)
{
    char *h = malloc(n * (f64 ? 8 : 4) + 8);
    for (size_t i = 0; i < n; i++) {
        if (f64) ((double *)h)[i] = x[i];
        else ((float *)h)[i] = (float)x[i];
    }
    *host = h;
    return (struct clstats_array){.host = h, .dtype = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32,
                                  .nx = n, .ny = 1};
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* One array: k-th values, medians (each even rule), percentiles, quantiles, both NaN policies,
 * against the one-device calls. */
static void check_array(size_t n, uint64_t seed, bool f64, double nan_share,
                        enum clstats_select_method method)
{
    double *x = malloc((n ? n : 1) * sizeof *x);
    fill(x, n, seed, f64, nan_share);
    void *hp, *hw;
    cl_mem buf;
    const struct clstats_array part = part_of(x, n, seed, f64, &hp, &buf);
    const struct clstats_array all = whole(x, n, f64, &hw);
    char what[120];
    snprintf(what, sizeof what, "n=%zu seed=%llu %s method %d", n, (unsigned long long)seed,
             f64 ? "f64" : "f32", (int)method);
    uint64_t nan_want = 0, nan_got = 0;
    struct clstats_select_options o = {.nan_count = &nan_want},
                                  od = {.nan_count = &nan_got, .method = method};
    const uint64_t ks[] = {0, n / 3, n / 2, n ? n - 1 : 0, n + 5};
    for (int i = 0; i < 5; i++) {
        double want = NAN, got = NAN;
        int sw = clstats_select_kth_array(ctx, &all, ks[i], &o, &want);
        int sg = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &part, ks[i], &od, &got, NULL);
        if (n == 0) sw = CLSTATS_ERR_EMPTY; /* one device refuses an empty array outright */
        CHECK(sw == sg && same_bits(want, got), "%s k=%llu: %d %.17g, one device %d %.17g", what,
              (unsigned long long)ks[i], sg, got, sw, want);
        if (sw == CLSTATS_OK) CHECK(nan_got == nan_want, "%s NaN count", what);
    }
    for (int even = CLSTATS_EVEN_MEAN; even <= CLSTATS_EVEN_UPPER; even++) {
        o.even = od.even = (enum clstats_even)even;
        double want = NAN, got = NAN;
        int sw = clstats_median_array(ctx, &all, &o, &want);
        int sg = clstats_mpi_median(ctx, MPI_COMM_WORLD, &part, &od, &got, NULL);
        if (n == 0) sw = CLSTATS_ERR_EMPTY;
        CHECK(sw == sg && same_bits(want, got), "%s median (even %d): %d %.17g, one device %d %.17g",
              what, even, sg, got, sw, want);
    }
    o.even = od.even = CLSTATS_EVEN_MEAN;
    const double q[] = {0, 12.5, 50, 73.3, 99.9, 100};
    double want[6], got[6];
    int sw = clstats_percentiles_array(ctx, &all, q, 6, &o, want);
    int sg = clstats_mpi_percentiles(ctx, MPI_COMM_WORLD, &part, q, 6, &od, got, NULL);
    if (n == 0) sw = CLSTATS_ERR_EMPTY;
    CHECK(sw == sg, "%s percentiles: %d, one device %d", what, sg, sw);
    for (int i = 0; i < 6 && sw == CLSTATS_OK; i++)
        CHECK(same_bits(want[i], got[i]), "%s percentile %g: %.17g, one device %.17g", what, q[i],
              got[i], want[i]);
    const double qq[] = {0.25, 0.5};
    sw = clstats_quantiles_array(ctx, &all, qq, 2, &o, want);
    sg = clstats_mpi_quantiles(ctx, MPI_COMM_WORLD, &part, qq, 2, &od, got, NULL);
    if (n == 0) sw = CLSTATS_ERR_EMPTY;
    CHECK(sw == sg && (sw != CLSTATS_OK || (same_bits(want[0], got[0]) && same_bits(want[1], got[1]))),
          "%s quantiles", what);
    o.nan_policy = od.nan_policy = CLSTATS_NAN_ERROR;
    double w1, g1;
    sw = clstats_median_array(ctx, &all, &o, &w1);
    sg = clstats_mpi_median(ctx, MPI_COMM_WORLD, &part, &od, &g1, NULL);
    if (n == 0) sw = CLSTATS_ERR_EMPTY;
    CHECK(sw == sg, "%s median, NaN an error: %d, one device %d", what, sg, sw);
    if (buf) clReleaseMemObject(buf);
    free(hp);
    free(hw);
    free(x);
}

/* The bytes a k-th value moves do not grow with n: the same for 1000 and 100000 values. */
static void check_traffic(void)
{
    struct clstats_mpi_traffic t[2];
    const size_t ns[2] = {1000, 100000};
    for (int i = 0; i < 2; i++) {
        double *x = malloc(ns[i] * sizeof *x);
        fill(x, ns[i], 7, false, 0.01);
        void *hp;
        cl_mem buf;
        const struct clstats_array part = part_of(x, ns[i], 7, false, &hp, &buf);
        double got;
        int s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &part, ns[i] / 2, NULL, &got, &t[i]);
        CHECK(s == CLSTATS_OK, "traffic run: %d %s", s, clstats_ctx_message(ctx));
        if (buf) clReleaseMemObject(buf);
        free(hp);
        free(x);
    }
    /* ceil(32 / bits) radix passes, each a message of 2^bits 32-bit counts and five words (the
     * failures, the NaNs, a sample bracket's three counts), a last message alike, and the
     * opening's five 64-bit words; on one rank, which runs the one-device call, only the
     * opening and the last message */
    const char *tuning = getenv("CLSTATS_TEST_TUNING"), *b = tuning ? strstr(tuning, "select.bits=") : NULL;
    const int bits = b ? atoi(b + strlen("select.bits=")) : 11,
              passes = size == 1 ? 0 : (32 + bits - 1) / bits;
    const uint64_t expect = (uint64_t)(passes + 1) * (5 + ((uint64_t)1 << bits)) * 4 + 40;
    CHECK(t[0].bytes == t[1].bytes && t[0].bytes == expect &&
              t[0].messages == (uint64_t)passes + 2,
          "traffic: %llu bytes in %llu messages for n = 1000, %llu for n = 100000, expected %llu",
          (unsigned long long)t[0].bytes, (unsigned long long)t[0].messages,
          (unsigned long long)t[1].bytes, (unsigned long long)expect);
}

/* The sample's bracket over ranks: its counts and the first radix pass's histogram in one
 * message. Values 2^(40 u - 20) (u uniform), so that the middle one's bracket spans a few binades
 * and its keys take every radix pass: the opening, the ranks' sizes, the sample, the bracket
 * with pass 0, the other npass - 1 passes and the last message (on one rank, which runs the
 * one-device call, the opening and the last message); the value the one-device call's. */
static void check_sample_traffic(void)
{
    const size_t n = 200000;
    const char *tuning = getenv("CLSTATS_TEST_TUNING"),
               *b = tuning ? strstr(tuning, "select.bits=") : NULL;
    const int bits = b ? atoi(b + strlen("select.bits=")) : 11, npass = (32 + bits - 1) / bits;
    double *x = malloc(n * sizeof *x);
    struct test_rng rng;
    test_rng_seed(&rng, 4242);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(float)exp2(40.0 * test_rng_uniform(&rng) - 20.0);
    void *hp, *hw;
    cl_mem buf;
    const struct clstats_array part = part_of(x, n, 4242, false, &hp, &buf);
    const struct clstats_array all = whole(x, n, false, &hw);
    const struct clstats_select_options o = {.method = CLSTATS_SELECT_SAMPLE};
    struct clstats_mpi_traffic t;
    double got = NAN, want = NAN;
    int s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &part, n / 2, &o, &got, &t);
    int sw = clstats_select_kth_array(ctx, &all, n / 2, &o, &want);
    CHECK(s == CLSTATS_OK && sw == CLSTATS_OK && same_bits(got, want),
          "sample bracket: %d %.17g, one device %d %.17g", s, got, sw, want);
    const uint64_t messages = size == 1 ? 2 : (uint64_t)npass + 4;
    const uint64_t count_msg = (5 + ((uint64_t)1 << bits)) * 4;
    CHECK(t.messages == messages && t.bytes == 40 + (messages - 1) * count_msg,
          "sample bracket traffic: %llu bytes in %llu messages, expected %llu messages",
          (unsigned long long)t.bytes, (unsigned long long)t.messages,
          (unsigned long long)messages);
    if (buf) clReleaseMemObject(buf);
    free(hp), free(hw), free(x);
    if (size == 1) return;
    /* Rank 0 holds 2^20 + 2^17 copies of 5 (its key buffer 2^20 keys), the others 10^5 values
     * each around them: the bracket holds the 5s, rank 0's gathered keys overflow, and every
     * rank starts the radix passes again on the data (all npass of them). */
    const size_t fives = ((size_t)1 << 20) + ((size_t)1 << 17), others = 100000;
    const size_t total = fives + others * (size_t)(size - 1);
    float *w = malloc(total * sizeof *w);
    for (size_t i = 0; i < total; i++)
        w[i] = i < fives ? 5.0f : (float)(5.0 + test_rng_normal(&rng));
    const size_t from = rank == 0 ? 0 : fives + others * (size_t)(rank - 1);
    const struct clstats_array mine = {.host = w + from, .dtype = CLSTATS_FLOAT32,
                                       .nx = rank == 0 ? fives : others, .ny = 1},
                               every = {.host = w, .dtype = CLSTATS_FLOAT32, .nx = total, .ny = 1};
    s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &mine, total / 2, &o, &got, &t);
    sw = clstats_select_kth_array(ctx, &every, total / 2, &o, &want);
    CHECK(s == CLSTATS_OK && sw == CLSTATS_OK && same_bits(got, want) && got == 5.0 &&
              t.messages == (uint64_t)npass + 5,
          "sample bracket overflowing rank 0's keys: %d %.17g in %llu messages, one device %d "
          "%.17g", s, got, (unsigned long long)t.messages, sw, want);
    free(w);
}

/* The cutting plane's messages: the opening's five 64-bit words, a gather of 11 words a pass
 * (the failure word, the record), the radix passes' count messages once the bracket is gathered
 * (at most ceil(32 / bits)) and the last count message; the passes do not grow with n. */
static void check_plane_traffic(void)
{
    const size_t ns[3] = {1000, 100000, 400000};
    const char *tuning = getenv("CLSTATS_TEST_TUNING"),
               *b = tuning ? strstr(tuning, "select.bits=") : NULL;
    const int bits = b ? atoi(b + strlen("select.bits=")) : 11, npass = (32 + bits - 1) / bits;
    const uint64_t count_msg = (5 + ((uint64_t)1 << bits)) * 4, gather_msg = 11 * 8;
    for (int i = 0; i < 3; i++) {
        double *x = malloc(ns[i] * sizeof *x);
        fill(x, ns[i], 11 + (uint64_t)i, false, 0.01);
        void *hp;
        cl_mem buf;
        const struct clstats_array part = part_of(x, ns[i], 11 + (uint64_t)i, false, &hp, &buf);
        const struct clstats_select_options o = {.method = CLSTATS_SELECT_CUTTING_PLANE};
        struct clstats_mpi_traffic t;
        double got;
        int s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &part, ns[i] / 3, &o, &got, &t);
        CHECK(s == CLSTATS_OK, "cutting-plane traffic run: %d %s", s, clstats_ctx_message(ctx));
        /* bytes = 40 + gathers * gather_msg + (radix passes + 1) * count_msg, and messages =
         * 1 + gathers + radix passes + 1: solve for the gathers */
        const int64_t rest = (int64_t)t.bytes - 40 - (int64_t)count_msg * ((int64_t)t.messages - 1);
        const int64_t gathers = rest / ((int64_t)gather_msg - (int64_t)count_msg);
        const int64_t radix = (int64_t)t.messages - 2 - gathers;
        /* one rank runs the one-device call: the opening and the last message alone */
        const int64_t least = size == 1 ? 0 : 2, most = size == 1 ? 0 : 64;
        CHECK(rest % ((int64_t)gather_msg - (int64_t)count_msg) == 0 && gathers >= least &&
                  gathers <= most && radix >= 0 && radix <= (size == 1 ? 0 : npass),
              "cutting-plane traffic n = %zu: %llu bytes in %llu messages (%lld gathers, %lld "
              "radix passes)",
              ns[i], (unsigned long long)t.bytes, (unsigned long long)t.messages,
              (long long)gathers, (long long)radix);
        if (rank == 0 && getenv("TEST_MPI_VERBOSE"))
            printf("cutting plane n=%zu: %llu bytes, %lld gathers, %lld radix passes\n", ns[i],
                   (unsigned long long)t.bytes, (long long)gathers, (long long)radix);
        if (buf) clReleaseMemObject(buf);
        free(hp);
        free(x);
    }
}

/* A rank that fails makes every rank return its status: a bad argument before any message, and
 * a part that cannot be read once the passes have begun (a region past its buffer's end). */
static void check_faults(void)
{
    float x[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    struct clstats_array part = {.host = x, .dtype = CLSTATS_FLOAT32, .nx = 10, .ny = 1};
    double out;
    int s = clstats_mpi_median(ctx, MPI_COMM_WORLD, &part, NULL, rank == size - 1 ? NULL : &out,
                               NULL);
    CHECK(s == CLSTATS_ERR_ARG, "a rank's NULL out: status %d", s);
    if (rank != size - 1)
        CHECK(strstr(clstats_ctx_message(ctx), "rank ") != NULL, "message: %s",
              clstats_ctx_message(ctx));
    cl_int err;
    cl_mem small = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_WRITE, 16, NULL, &err);
    struct clstats_array bad = {.buffer = small, .offset = 2, .dtype = CLSTATS_FLOAT32, .nx = 10,
                                .ny = 1};
    const struct clstats_array *mine = rank == size - 1 ? &bad : &part;
    s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, mine, 3, NULL, &out, NULL);
    CHECK(s == CLSTATS_ERR_ARG && isnan(out), "a rank's bad buffer: status %d", s);
    const double q[2] = {10, 90};
    double qo[2];
    s = clstats_mpi_percentiles(ctx, MPI_COMM_WORLD, mine, q, 2, NULL, qo, NULL);
    CHECK(s == CLSTATS_ERR_ARG, "a rank's bad buffer, percentiles: status %d", s);
    const struct clstats_select_options plane = {.method = CLSTATS_SELECT_CUTTING_PLANE};
    s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, mine, 3, &plane, &out, NULL);
    CHECK(s == CLSTATS_ERR_ARG && isnan(out), "a rank's bad buffer, cutting plane: status %d", s);
    s = clstats_mpi_percentiles(ctx, MPI_COMM_WORLD, mine, q, 2, &plane, qo, NULL);
    CHECK(s == CLSTATS_ERR_ARG, "a rank's bad buffer, cutting-plane percentiles: status %d", s);
    clReleaseMemObject(small);
    /* ranks that ask for different methods: every rank refuses, none waits */
    if (size > 1) {
        s = clstats_mpi_median(ctx, MPI_COMM_WORLD, &part, rank == 1 ? &plane : NULL, &out, NULL);
        CHECK(s == CLSTATS_ERR_ARG, "ranks of two methods: status %d", s);
    }
    /* ranks that disagree on the dtype: every rank refuses, none waits */
    double xd[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    struct clstats_array pd = {.host = xd, .dtype = CLSTATS_FLOAT64, .nx = 10, .ny = 1};
    if (size > 1) {
        s = clstats_mpi_median(ctx, MPI_COMM_WORLD, rank == 1 ? &pd : &part, NULL, &out, NULL);
        CHECK(s == CLSTATS_ERR_ARG, "ranks of two dtypes: status %d", s);
    }
    /* the columns: a rank's NULL out, a rank's k beyond the rows, ranks of two widths */
    struct clstats_array m = {.host = x, .dtype = CLSTATS_FLOAT32, .nx = 2, .ny = 5};
    double cm[2], cs[2];
    s = clstats_mpi_column_medians(ctx, MPI_COMM_WORLD, &m, NULL, rank == size - 1 ? NULL : cm,
                                   NULL);
    CHECK(s == CLSTATS_ERR_ARG, "columns, a rank's NULL out: status %d", s);
    const uint64_t kk[2] = {1, rank == 0 ? 5 * (uint64_t)size + 1 : 2};
    s = clstats_mpi_column_smallest(ctx, MPI_COMM_WORLD, &m, kk, NULL, cm, cs, NULL);
    CHECK(s == CLSTATS_ERR_ARG, "columns, k beyond the rows on rank 0: status %d", s);
    if (size > 1) {
        struct clstats_array wide = {.host = x, .dtype = CLSTATS_FLOAT32, .nx = 1, .ny = 10};
        s = clstats_mpi_column_medians(ctx, MPI_COMM_WORLD, rank == 1 ? &wide : &m, NULL, cm,
                                       NULL);
        CHECK(s == CLSTATS_ERR_ARG, "columns, ranks of two widths: status %d", s);
    }
    /* and every rank is still in step: a good call after the failures */
    s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &part, 0, NULL, &out, NULL);
    CHECK(s == CLSTATS_OK && out == 1.0, "after the faults: %d %g", s, out);
}

/* A rows x cols matrix (element (r, c) at x[r * cols + c]) as this rank's rows of it: host
 * memory with a stride wider than a row on even ranks, a buffer on odd ones; *row0 its first. */
static struct clstats_array rows_of(const double *x, size_t rows, size_t cols, uint64_t seed,
                                    bool f64, void **host, cl_mem *buf, size_t *row0)
{
    size_t cut[8];
    cuts(rows, seed, cut);
    const size_t m = cut[rank + 1] - cut[rank], es = f64 ? 8 : 4, ld = cols + 3;
    char *h = malloc(m * ld * es + 8);
    for (size_t r = 0; r < m; r++)
        for (size_t c = 0; c < ld; c++) {
            const double v = c < cols ? x[(cut[rank] + r) * cols + c] : 12345.0;
            if (f64) ((double *)h)[r * ld + c] = v;
            else ((float *)h)[r * ld + c] = (float)v;
        }
    struct clstats_array a = {.dtype = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32, .nx = cols,
                              .ny = m, .stride = ld};
    *buf = NULL;
    *host = h;
    *row0 = cut[rank];
    if (rank % 2 == 1 && m) {
        cl_int err;
        *buf = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              m * ld * es, h, &err);
        a.buffer = *buf;
        a.offset = 0;
    } else {
        a.host = h;
    }
    return a;
}

/* Column medians and the batched selection of a matrix whose rows the ranks share, against the
 * one-device calls on the whole matrix: column 0 all NaN, column 1 without NaN, the others with
 * NaNs, ties, +-0 and +-inf; k from 1 to the rows, some beyond a column's valid values. */
static void check_columns(size_t rows, size_t cols, uint64_t seed, bool f64)
{
    const size_t n = rows * cols;
    double *x = malloc((n ? n : 1) * sizeof *x);
    fill(x, n, seed, f64, 0.15);
    for (size_t r = 0; r < rows; r++) {
        x[r * cols] = NAN;
        if (cols > 1 && isnan(x[r * cols + 1])) x[r * cols + 1] = (double)(r % 5);
    }
    void *hp;
    cl_mem buf;
    size_t row0;
    const struct clstats_array part = rows_of(x, rows, cols, seed, f64, &hp, &buf, &row0);
    void *hw;
    struct clstats_array all = whole(x, n, f64, &hw);
    all.nx = cols, all.ny = rows;
    char what[100];
    snprintf(what, sizeof what, "columns %zux%zu seed %llu %s", rows, cols,
             (unsigned long long)seed, f64 ? "f64" : "f32");
    double *got = malloc(cols * sizeof *got), *want = malloc(cols * sizeof *want);
    double *gs = malloc(cols * sizeof *gs), *ws = malloc(cols * sizeof *ws);
    float *wf = malloc(cols * sizeof *wf);
    uint64_t nan_want = 0, nan_got = 0;
    for (int even = CLSTATS_EVEN_MEAN; even <= CLSTATS_EVEN_UPPER; even++) {
        struct clstats_select_options o = {.even = (enum clstats_even)even,
                                           .nan_count = &nan_want},
                                      od = {.even = (enum clstats_even)even,
                                            .nan_count = &nan_got};
        int sw = CLSTATS_OK;
        if (!f64) {
            sw = clstats_column_medians(ctx, hw, rows, cols, cols, &o, wf);
            for (size_t c = 0; c < cols; c++) want[c] = wf[c];
        } else {
            double *col = malloc((rows + 1) * sizeof *col);
            nan_want = 0;
            for (size_t c = 0; c < cols; c++) {
                uint64_t cn = 0;
                struct clstats_select_options oc = {.even = (enum clstats_even)even,
                                                    .nan_count = &cn};
                for (size_t r = 0; r < rows; r++) col[r] = x[r * cols + c];
                if (clstats_median_f64(ctx, col, rows, &oc, &want[c]) != CLSTATS_OK) want[c] = NAN;
                nan_want += cn;
            }
            free(col);
        }
        int sg = clstats_mpi_column_medians(ctx, MPI_COMM_WORLD, &part, &od, got, NULL);
        CHECK(sw == sg, "%s medians: status %d, one device %d (%s)", what, sg, sw,
              clstats_ctx_message(ctx));
        for (size_t c = 0; sg == CLSTATS_OK && c < cols; c++)
            CHECK(same_bits(want[c], got[c]), "%s median (even %d) of column %zu: %.17g, one "
                  "device %.17g", what, even, c, got[c], want[c]);
        CHECK(nan_got == nan_want, "%s NaN count %llu, one device %llu", what,
              (unsigned long long)nan_got, (unsigned long long)nan_want);
    }
    struct clstats_select_options err = {.nan_policy = CLSTATS_NAN_ERROR};
    CHECK(clstats_mpi_column_medians(ctx, MPI_COMM_WORLD, &part, &err, got, NULL) ==
              CLSTATS_ERR_NAN, "%s medians, NaN an error", what);
    /* the batched selection: k from 1 to the rows, the sums of the k smallest */
    uint64_t *k = malloc(cols * sizeof *k);
    struct test_rng rng;
    test_rng_seed(&rng, seed ^ 77);
    for (size_t c = 0; c < cols; c++)
        k[c] = c == 1 ? rows : (c == 2 ? 1 : 1 + test_rng_next(&rng) % rows);
    struct clstats_array p2 = part;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 1: the column of NaNs made valid, so that every k is in reach, and the
         * infinities and 1e30s finite, so that the sums' order shows in their bits */
        if (pass == 1) {
            for (size_t r = 0; r < rows; r++) x[r * cols] = (double)((r * 7) % 3) - 1.0;
            for (size_t i = 0; i < n; i++)
                if (isinf(x[i]) || fabs(x[i]) == 1e30)
                    x[i] = (double)(float)(0.37 * (double)(i % 13) - 2.1);
            free(hp), free(hw);
            if (buf) clReleaseMemObject(buf);
            all = whole(x, n, f64, &hw);
            all.nx = cols, all.ny = rows;
            p2 = rows_of(x, rows, cols, seed, f64, &hp, &buf, &row0);
        }
        int sw = clstats_column_smallest(ctx, &all, k, NULL, want, ws);
        int sg = clstats_mpi_column_smallest(ctx, MPI_COMM_WORLD, &p2, k, NULL, got, gs, NULL);
        CHECK(sw == sg, "%s smallest (pass %d): status %d, one device %d (%s)", what, pass, sg,
              sw, clstats_ctx_message(ctx));
        for (size_t c = 0; c < cols; c++)
            CHECK(same_bits(want[c], got[c]) && same_bits(ws[c], gs[c]),
                  "%s column %zu k=%llu: %.17g sum %.17g, one device %.17g sum %.17g", what, c,
                  (unsigned long long)k[c], got[c], gs[c], want[c], ws[c]);
    }
    k[0] = rows + 1;
    CHECK(clstats_mpi_column_smallest(ctx, MPI_COMM_WORLD, &p2, k, NULL, got, NULL, NULL) ==
              CLSTATS_ERR_ARG, "%s k beyond the rows", what);
    if (buf) clReleaseMemObject(buf);
    free(hp), free(hw), free(x), free(got), free(want), free(gs), free(ws), free(wf), free(k);
}

/* The sums' order across blocks: the blocks of 4096 rows of a column sum to H, 1, 1, -H, H,
 * 1, 1, -H (H = 2^53 for float64, 2^24 for float32; every block's sum exact), rotated by the
 * column's index, where H + 1 rounds back to H: any other order of the blocks' sums (on a
 * rank's device, at its seams, along the ranks) gives another total. The largest value once,
 * in the last row, and k the rows: the sum below it is every other value's. */
static void check_sum_order(bool f64, uint64_t seed)
{
    const size_t rows = 8 * 4096 + 1000, cols = 8;
    const double h = f64 ? 0x1p41 : 0x1p12, one = 0x1p-12; /* 4096 of them: H and 1 */
    const double pattern[8] = {h, one, one, -h, h, one, one, -h};
    double *x = malloc(rows * cols * sizeof *x);
    for (size_t c = 0; c < cols; c++) {
        for (size_t r = 0; r < rows; r++)
            x[r * cols + c] = r < 8 * 4096 ? pattern[(r / 4096 + c) % 8] : one;
        x[(rows - 1) * cols + c] = 2 * h;
    }
    void *hp, *hw;
    cl_mem buf;
    size_t row0;
    const struct clstats_array part = rows_of(x, rows, cols, seed, f64, &hp, &buf, &row0);
    struct clstats_array all = whole(x, rows * cols, f64, &hw);
    all.nx = cols, all.ny = rows;
    uint64_t k[8];
    for (size_t c = 0; c < cols; c++) k[c] = rows;
    double want[8], ws[8], got[8], gs[8];
    int sw = clstats_column_smallest(ctx, &all, k, NULL, want, ws);
    int sg = clstats_mpi_column_smallest(ctx, MPI_COMM_WORLD, &part, k, NULL, got, gs, NULL);
    CHECK(sw == CLSTATS_OK && sg == CLSTATS_OK, "sums' order: status %d, one device %d", sg, sw);
    for (size_t c = 0; c < cols && sw == CLSTATS_OK; c++) {
        CHECK(same_bits(want[c], got[c]) && same_bits(ws[c], gs[c]),
              "sums' order %s column %zu: sum %.17g, one device %.17g", f64 ? "f64" : "f32", c,
              gs[c], ws[c]);
    }
    if (buf) clReleaseMemObject(buf);
    free(hp), free(hw), free(x);
}

/* The columns' traffic: the same for 300 and 9000 rows (a radix pass a column). */
static void check_column_traffic(void)
{
    struct clstats_mpi_traffic t[2];
    const size_t rows[2] = {300, 9000}, cols = 3;
    for (int i = 0; i < 2; i++) {
        double *x = malloc(rows[i] * cols * sizeof *x);
        fill(x, rows[i] * cols, 5, false, 0.0);
        void *hp;
        cl_mem buf;
        size_t row0;
        const struct clstats_array part = rows_of(x, rows[i], cols, 5, false, &hp, &buf, &row0);
        double got[3], sums[3];
        const uint64_t k[3] = {1, rows[i] / 2, rows[i]};
        int s = clstats_mpi_column_smallest(ctx, MPI_COMM_WORLD, &part, k, NULL, got, sums, &t[i]);
        CHECK(s == CLSTATS_OK, "column traffic run: %d %s", s, clstats_ctx_message(ctx));
        if (buf) clReleaseMemObject(buf);
        free(hp), free(x);
    }
    CHECK(t[0].bytes == t[1].bytes && t[0].messages == t[1].messages,
          "column traffic: %llu bytes for 300 rows, %llu for 9000", (unsigned long long)t[0].bytes,
          (unsigned long long)t[1].bytes);
    if (rank == 0 && getenv("TEST_MPI_VERBOSE"))
        printf("columns 3 wide: %llu bytes in %llu messages\n", (unsigned long long)t[0].bytes,
               (unsigned long long)t[0].messages);
}

/* The band filter against the one-device filter of the whole image, bands of uneven heights
 * (some empty, some of one row, so that halos come from several ranks). */
static void check_filter(size_t nx, size_t ny, struct clstats_filter_params p, uint64_t seed)
{
    const size_t n = nx * ny;
    double *xd = malloc(n * sizeof *xd);
    fill(xd, n, seed, false, 0.05);
    float *img = malloc(n * sizeof *img), *med = malloc(n * sizeof *med),
          *mad = malloc(n * sizeof *mad);
    for (size_t i = 0; i < n; i++)
        img[i] = (float)xd[i];
    int s = clstats_median_filter(ctx, img, nx, ny, nx, &p, med, mad);
    CHECK(s == CLSTATS_OK, "one-device filter: %s", clstats_ctx_message(ctx));
    size_t cut[8];
    cuts(ny, seed, cut);
    const size_t row0 = cut[rank], rows = cut[rank + 1] - cut[rank];
    float *bm = malloc((rows * nx + 1) * sizeof *bm), *bd = malloc((rows * nx + 1) * sizeof *bd);
    struct clstats_mpi_traffic t;
    s = clstats_mpi_median_filter_rows(ctx, MPI_COMM_WORLD, img + row0 * nx, nx, ny, row0, rows,
                                       &p, bm, bd, &t);
    CHECK(s == CLSTATS_OK, "band filter: %d %s", s, clstats_ctx_message(ctx));
    char what[100];
    snprintf(what, sizeof what, "band filter %zux%zu w %d h %d boundary %d", nx, ny, p.width,
             p.height, (int)p.boundary);
    if (s == CLSTATS_OK) {
        CHECK(test_compare_bits(bm, med + row0 * nx, rows * nx, nx, what) == 0, "%s median", what);
        CHECK(test_compare_bits(bd, mad + row0 * nx, rows * nx, nx, what) == 0, "%s MAD", what);
    }
    free(xd), free(img), free(med), free(mad), free(bm), free(bd);
}

/* One rank's device lost mid-run: under mpirun's "-np 1 env LD_PRELOAD=opencl_shim
 * OPENCL_SHIM_LOSE_AFTER=N test_mpi --lost : -np 2 test_mpi --lost" that rank's kernel launches
 * fail after the Nth, wherever in a call that falls (a cutting plane's passes, a column's
 * selection, the sums' turn), and every call must return the same status on every rank, none
 * left waiting; some call must fail. */
static void check_lost(void)
{
    const size_t n = 40000, rows = 9000, cols = 4; /* rows: a whole block of the sums on some rank */
    double *x = malloc(n * sizeof *x);
    fill(x, n, 9, false, 0.05);
    void *hp, *hm;
    cl_mem buf, mbuf;
    size_t row0;
    const struct clstats_array part = part_of(x, n, 9, false, &hp, &buf);
    const struct clstats_array m = rows_of(x, rows, cols, 9, false, &hm, &mbuf, &row0);
    const struct clstats_select_options plane = {.method = CLSTATS_SELECT_CUTTING_PLANE};
    const uint64_t k[4] = {1, 100, 4500, 9000};
    double v, kth[4], sums[4];
    int failed = 0, shimmed = getenv("OPENCL_SHIM_LOSE_AFTER") != NULL, any_shimmed = 0;
    MPI_Allreduce(&shimmed, &any_shimmed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < 16; i++) {
        int s;
        if (i % 4 == 0)
            s = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &part, n / 3, &plane, &v, NULL);
        else if (i % 4 == 1)
            s = clstats_mpi_column_smallest(ctx, MPI_COMM_WORLD, &m, k, NULL, kth, sums, NULL);
        else if (i % 4 == 2) s = clstats_mpi_median(ctx, MPI_COMM_WORLD, &part, &plane, &v, NULL);
        else s = clstats_mpi_column_medians(ctx, MPI_COMM_WORLD, &m, NULL, kth, NULL);
        int all[8] = {0};
        MPI_Allgather(&s, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int q = 0; q < size; q++)
            CHECK(all[q] == s, "lost device, call %d: status %d here, %d on rank %d", i, s,
                  all[q], q);
        failed += s != CLSTATS_OK && s != CLSTATS_ERR_EMPTY;
    }
    CHECK(!any_shimmed || failed > 0, "the lost device failed no call");
    if (rank == 0) printf("lost device: %d of 16 calls failed alike on every rank\n", failed);
    if (buf) clReleaseMemObject(buf);
    if (mbuf) clReleaseMemObject(mbuf);
    free(hp), free(hm), free(x);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 7) {
        if (rank == 0) fprintf(stderr, "test_mpi: at most 7 ranks\n");
        MPI_Finalize();
        return 1;
    }
    ctx = test_ctx(); /* $CLSTATS_DEVICE, and $CLSTATS_TEST_TUNING's settings */
    const uint64_t seed = test_seed();
    if (argc > 1 && strcmp(argv[1], "--lost") == 0) {
        check_lost();
        int total = 0;
        MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Finalize();
        return total ? 1 : 0;
    }
    /* radix alone (the default below 2^21 values), and the sample's bracket first: its
     * sample is small here, so its bracket often misses and the radix passes take over */
    const size_t ns[] = {0, 1, 2, 7, 64, 1001, 4096, 30000};
    const enum clstats_select_method methods[] = {CLSTATS_SELECT_AUTO, CLSTATS_SELECT_SAMPLE,
                                                  CLSTATS_SELECT_CUTTING_PLANE};
    for (int m = 0; m < 3; m++) {
        const enum clstats_select_method method = methods[m];
        for (int i = 0; i < 8; i++) {
            check_array(ns[i], seed + (uint64_t)i, false, 0.1, method);
            check_array(ns[i], seed + 100 + (uint64_t)i, true, 0.1, method);
        }
        if (method == CLSTATS_SELECT_SAMPLE) { /* a sample large enough for its bracket to hold */
            check_array(200000, seed + 210, false, 0.1, method);
            check_array(200000, seed + 211, true, 0.1, method);
        }
        check_array(300, seed + 200, false, 1.0, method); /* all NaN: empty everywhere */
        check_array(300, seed + 201, false, 0.0, method);
    }
    check_traffic();
    check_sample_traffic();
    check_plane_traffic();
    /* 21000 rows: whole blocks of the sums' 4096 rows on some ranks, partial ones at seams */
    const size_t shapes[][2] = {{1, 4}, {2, 5}, {37, 6}, {300, 4}, {9000, 3}, {21000, 3}};
    for (int i = 0; i < 6; i++) {
        check_columns(shapes[i][0], shapes[i][1], seed + 400 + (uint64_t)i, false);
        check_columns(shapes[i][0], shapes[i][1], seed + 500 + (uint64_t)i, true);
    }
    check_sum_order(false, seed + 600);
    check_sum_order(true, seed + 601);
    check_column_traffic();
    check_faults();
    check_filter(23, 17, (struct clstats_filter_params){.width = 5}, seed + 300);
    check_filter(19, 11, (struct clstats_filter_params){.width = 4, .height = 3, .origin_y = 1,
                                                      .boundary = CLSTATS_BOUNDARY_WRAP},
                 seed + 301);
    check_filter(9, 6, (struct clstats_filter_params){.width = 7,
                                                    .boundary = CLSTATS_BOUNDARY_CONSTANT,
                                                    .cval = 2.5f},
                 seed + 302);
    check_filter(8, 5, (struct clstats_filter_params){.width = 3, .height = 9,
                                                    .boundary = CLSTATS_BOUNDARY_MIRROR},
                 seed + 303);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("test_mpi: %d ranks, %d failures\n", size, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
