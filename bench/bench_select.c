/* bench_select.c - benchmark (not a test) of whole-array medians and of batched medians
 * (columns of a matrix, tiles of an image): for each
 * size and method, the kernels' device time (OpenCL profiling events summed over the call),
 * the end-to-end time on data already in a cl_mem, and from a host array. Prints a table and
 * lines "RESULT device=... op=... method=... n=... what=... ms=..." that peers_select.py
 * matches (same data: splitmix64 uniforms, see gen()).
 *
 * Usage: bench_select [--device SPEC] [--log2n 20,25,28] [--reps N] [--dist uniform|normal]
 *                     [--columns ROWSxCOLS|none] [--tiles NXxNY/TWxTH,...|none]
 *                     [--methods radix,cutting-plane,sample,auto]
 */
#include "bench_context.h"
#include "clstats.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* splitmix64 uniforms in [0, 1) as float32 (normal: Box-Muller of two), element i from seed;
 * bench/peers_select.py generates the same values with numpy. */
static void gen(float *x, size_t n, int normal, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t z[2];
        for (int j = 0; j < 2; j++) {
            uint64_t s = seed + (2 * (uint64_t)i + (uint64_t)j + 1) * 0x9e3779b97f4a7c15ULL;
            s = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9ULL;
            s = (s ^ (s >> 27)) * 0x94d049bb133111ebULL;
            z[j] = s ^ (s >> 31);
        }
        double u = (double)(z[0] >> 11) * 0x1.0p-53, v = (double)(z[1] >> 11) * 0x1.0p-53;
        x[i] = normal ? (float)(sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v)) : (float)u;
    }
}

static void sanitize(char *s)
{
    for (; *s; s++)
        if (*s == ' ' || *s == '/' || *s == '=') *s = '_';
}

static const char *method_name(enum clstats_select_method m)
{
    return m == CLSTATS_SELECT_RADIX           ? "radix"
           : m == CLSTATS_SELECT_CUTTING_PLANE ? "cutting-plane"
           : m == CLSTATS_SELECT_SAMPLE        ? "sample"
                                               : "auto";
}

/* A batched median: the columns of a rows x cols matrix are its tiles of 1 x rows pixels. */
struct batch {
    const char *op, *label;
    size_t nx, ny, tw, th;
};

static int run_batch(clstats_ctx *ctx, const struct batch *b, cl_mem buf, const float *host,
                     struct clstats_select_options *o, float *out)
{
    const bool columns = strcmp(b->op, "column_medians") == 0;
    if (buf && columns)
        return clstats_column_medians_buffer(ctx, buf, 0, b->ny, b->nx, b->nx, o, out);
    if (columns) return clstats_column_medians(ctx, host, b->ny, b->nx, b->nx, o, out);
    if (buf) return clstats_tile_medians_buffer(ctx, buf, 0, b->nx, b->ny, b->nx, b->tw, b->th, o, out);
    return clstats_tile_medians(ctx, host, b->nx, b->ny, b->nx, b->tw, b->th, o, out);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Column medians (both middle values, no NaN in gen()'s data) against a host sort, so that a
 * tuning run also says whether its answers are right; skipped beyond 5e7 values (slow). */
static void check_columns(clstats_ctx *ctx, const struct batch *b, cl_mem buf, const float *m)
{
    const size_t rows = b->ny, cols = b->nx;
    if (rows * cols > 50000000) {
        printf("# check skipped: %zu values\n", rows * cols);
        return;
    }
    float *col = malloc(rows * sizeof *col),
          *got[2] = {malloc(cols * sizeof(float)), malloc(cols * sizeof(float))};
    size_t bad = 0;
    for (int e = 0; e < 2; e++) {
        struct clstats_select_options o = {.even = e ? CLSTATS_EVEN_UPPER : CLSTATS_EVEN_LOWER};
        if (clstats_column_medians_buffer(ctx, buf, 0, rows, cols, cols, &o, got[e]) != CLSTATS_OK)
            bad = cols;
    }
    for (size_t c = 0; c < cols && bad < cols; c++) {
        for (size_t r = 0; r < rows; r++)
            col[r] = m[r * cols + c];
        qsort(col, rows, sizeof *col, cmp_float);
        bad += memcmp(&got[0][c], &col[(rows - 1) / 2], sizeof(float)) != 0 ||
               memcmp(&got[1][c], &col[rows / 2], sizeof(float)) != 0;
    }
    if (bad)
        printf("# CHECK FAILED: %zu of %zu column medians differ from a host sort\n", bad, cols);
    else
        printf("# check: all %zu column medians match a host sort\n", cols);
    free(col);
    free(got[0]);
    free(got[1]);
}

static void bench_batch(clstats_ctx *ctx, const char *dev, const struct batch *b, int normal,
                        int reps, double *t_k, double *t_d, double *t_h)
{
    const size_t n = b->nx * b->ny;
    const size_t nout = ((b->nx + b->tw - 1) / b->tw) * ((b->ny + b->th - 1) / b->th);
    float *m = malloc(n * sizeof *m), *out = malloc(nout * sizeof *out);
    gen(m, n, normal, 777);
    cl_int err;
    cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                n * sizeof *m, m, &err);
    double kms = 0;
    struct clstats_select_options o = {0};
    if (err != CL_SUCCESS || run_batch(ctx, b, buf, m, &o, out) != CLSTATS_OK) { /* warm-up */
        printf("# %s %s failed: %s\n", b->op, b->label, clstats_ctx_message(ctx));
        goto done;
    }
    if (strcmp(b->op, "column_medians") == 0) check_columns(ctx, b, buf, m);
    for (int r = 0; r < reps; r++) {
        o.kernel_ms = &kms;
        run_batch(ctx, b, buf, m, &o, out);
        t_k[r] = kms;
        o.kernel_ms = NULL;
        double t0 = now_ms();
        run_batch(ctx, b, buf, m, &o, out);
        t_d[r] = now_ms() - t0;
        t0 = now_ms();
        run_batch(ctx, b, NULL, m, &o, out);
        t_h[r] = now_ms() - t0;
    }
    const double mk = median_of(t_k, reps), md = median_of(t_d, reps), mh = median_of(t_h, reps);
    printf("  %s %s: kernel %.4f ms, device e2e %.4f ms, host e2e %.4f ms (first %.9g)\n", b->op,
           b->label, mk, md, mh, (double)out[0]);
    const char *what[3] = {"kernel", "device_e2e", "host_e2e"};
    const double ms[3] = {mk, md, mh};
    for (int i = 0; i < 3; i++)
        printf("RESULT device=%s op=%s method=radix n=%s what=%s ms=%.5f\n", dev, b->op, b->label,
               what[i], ms[i]);
done:
    if (buf) clReleaseMemObject(buf);
    free(m);
    free(out);
}

int main(int argc, char **argv)
{
    const char *spec = NULL, *log2s = "20,25,28", *dist = "uniform", *cols_arg = "10000x1000";
    const char *tiles_arg = "none";
    const char *methods_arg = "radix,cutting-plane,sample,auto";
    int reps = 10;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--device") == 0) spec = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--log2n") == 0) log2s = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--reps") == 0) reps = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--dist") == 0) dist = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--columns") == 0) cols_arg = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--methods") == 0) methods_arg = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--tiles") == 0) tiles_arg = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--device SPEC] [--log2n 20,25,28] [--reps N] "
                            "[--dist uniform|normal] [--columns ROWSxCOLS|none] "
                            "[--tiles NXxNY/TWxTH,...|none] "
                            "[--methods radix,cutting-plane,sample,auto]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    clstats_ctx *ctx = bench_context(spec);
    if (!ctx) return 1;
    char dev[320];
    snprintf(dev, sizeof dev, "%s", clstats_ctx_device_name(ctx));
    sanitize(dev);
    printf("# device: %s, dist %s, %d reps (median of reps)\n", clstats_ctx_device_name(ctx),
           dist, reps);
    printf("# %-8s %-14s %12s %12s %12s %8s  %s\n", "n", "method", "kernel_ms", "device_ms",
           "host_ms", "passes", "median");
    struct clstats_device_limits limits;
    clstats_ctx_limits(ctx, &limits);
    const cl_ulong max_alloc = limits.max_allocation;
    double *t_k = malloc(reps * sizeof *t_k), *t_d = malloc(reps * sizeof *t_d);
    double *t_h = malloc(reps * sizeof *t_h);

    char list[256];
    snprintf(list, sizeof list, "%s", log2s);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        const int lg = atoi(tok);
        const size_t n = (size_t)1 << lg;
        if (n * sizeof(float) > max_alloc) {
            printf("# n = 2^%d skipped: larger than the device's largest buffer\n", lg);
            continue;
        }
        float *x = malloc(n * sizeof *x);
        if (!x) {
            printf("# n = 2^%d skipped: no host memory\n", lg);
            continue;
        }
        gen(x, n, strcmp(dist, "normal") == 0, 12345);
        cl_int err;
        cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(ctx),
                                    CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *x, x,
                                    &err);
        if (err != CL_SUCCESS) {
            printf("# n = 2^%d skipped: clCreateBuffer failed (%d)\n", lg, err);
            free(x);
            continue;
        }
        char mlist[128];
        snprintf(mlist, sizeof mlist, "%s", methods_arg);
        char *save = NULL;
        for (char *m = strtok_r(mlist, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
            enum clstats_select_method method =
                strcmp(m, "radix") == 0           ? CLSTATS_SELECT_RADIX
                : strcmp(m, "cutting-plane") == 0 ? CLSTATS_SELECT_CUTTING_PLANE
                : strcmp(m, "sample") == 0        ? CLSTATS_SELECT_SAMPLE
                                                  : CLSTATS_SELECT_AUTO;
            double kms = 0, med = 0;
            struct clstats_select_options o = {.method = method};
            float medf = 0;
            /* warm-up: builds the program */
            if (clstats_median_buffer(ctx, buf, 0, n, CLSTATS_FLOAT32, &o, &med) != CLSTATS_OK) {
                fprintf(stderr, "median failed: %s\n", clstats_ctx_message(ctx));
                return 1;
            }
            for (int r = 0; r < reps; r++) {
                o.kernel_ms = &kms;
                clstats_median_buffer(ctx, buf, 0, n, CLSTATS_FLOAT32, &o, &med);
                t_k[r] = kms;
                o.kernel_ms = NULL;
                double t0 = now_ms();
                clstats_median_buffer(ctx, buf, 0, n, CLSTATS_FLOAT32, &o, &med);
                t_d[r] = now_ms() - t0;
                t0 = now_ms();
                clstats_median(ctx, x, n, &o, &medf);
                t_h[r] = now_ms() - t0;
            }
            const double mk = median_of(t_k, reps), md = median_of(t_d, reps),
                         mh = median_of(t_h, reps);
            printf("  2^%-6d %-14s %12.4f %12.4f %12.4f %8s  %.9g\n", lg, method_name(method), mk,
                   md, mh, "", (double)medf);
            printf("RESULT device=%s op=median method=%s n=%zu what=kernel ms=%.5f\n", dev,
                   method_name(method), n, mk);
            printf("RESULT device=%s op=median method=%s n=%zu what=device_e2e ms=%.5f\n", dev,
                   method_name(method), n, md);
            printf("RESULT device=%s op=median method=%s n=%zu what=host_e2e ms=%.5f\n", dev,
                   method_name(method), n, mh);
            printf("VALUE n=%zu method=%s median=%.9g\n", n, method_name(method), (double)medf);
            fflush(stdout);
        }
        clReleaseMemObject(buf);
        free(x);
    }

    const int normal = strcmp(dist, "normal") == 0;
    size_t rows = 0, cols = 0;
    if (sscanf(cols_arg, "%zux%zu", &rows, &cols) == 2 && rows && cols) {
        struct batch b = {"column_medians", cols_arg, cols, rows, 1, rows};
        bench_batch(ctx, dev, &b, normal, reps, t_k, t_d, t_h);
    }
    char tlist[256];
    snprintf(tlist, sizeof tlist, "%s", tiles_arg);
    for (char *tok = strtok(tlist, ","); tok; tok = strtok(NULL, ",")) {
        struct batch b = {"tile_medians", tok, 0, 0, 0, 0};
        if (sscanf(tok, "%zux%zu/%zux%zu", &b.nx, &b.ny, &b.tw, &b.th) == 4 && b.nx && b.ny &&
            b.tw && b.th)
            bench_batch(ctx, dev, &b, normal, reps, t_k, t_d, t_h);
    }
    free(t_k);
    free(t_d);
    free(t_h);
    clstats_ctx_destroy(ctx);
    return 0;
}
