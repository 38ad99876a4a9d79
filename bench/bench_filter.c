/* bench_filter.c - speed of clstats_median_filter: Mpixel/s per device, image size, window
 * width and map set (median, MAD, both), kernel-only (profiling events) and end to end (host
 * array in, host array out). A benchmark program, not a test: see bench/README.md.
 *
 *   bench_filter [--device SPEC] [--sizes 256,1024,4096] [--widths 3,5,11] [--maps median,mad,both]
 *                [--repeat N] [--budget S]
 * Prints a table, and one machine-readable "RESULT ..." line per measurement. */
#include "bench_context.h"
#include "clstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LIST 32

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int parse_list(const char *text, long *out)
{
    int n = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < MAX_LIST;
         tok = strtok_r(NULL, ",", &save))
        out[n++] = strtol(tok, NULL, 10);
    free(copy);
    return n;
}

/* A sky-like image: smooth background, noise, and a sprinkle of bright stars. */
static void make_image(float *img, long n)
{
    uint64_t s = 12345;
    for (long i = 0; i < n * n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double u1 = ((s >> 11) + 1) * 0x1.0p-53;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double u2 = (s >> 11) * 0x1.0p-53;
        double noise = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        double star = (s >> 60) == 0 && (s & 0xff) < 8 ? 500.0 * u2 : 0.0;
        img[i] = (float)(100.0 + 0.001 * (double)(i % n) + 5.0 * noise + star);
    }
}

struct timing {
    double kernel_ms, total_ms;
    int runs;
};

/* Best of `repeat` runs, stopping early once `budget_ms` is spent. */
static int measure(clstats_ctx *ctx, const float *img, long n, int w, float *med, float *mad,
                   int repeat, double budget_ms, struct timing *t)
{
    struct clstats_filter_params p = {.width = w, .boundary = CLSTATS_BOUNDARY_REFLECT};
    t->kernel_ms = t->total_ms = INFINITY;
    t->runs = 0;
    double spent = 0;
    for (int r = 0; r < repeat && (r == 0 || spent < budget_ms); r++) {
        double t0 = now_ms();
        int status = clstats_median_filter(ctx, img, (size_t)n, (size_t)n, (size_t)n, &p, med, mad);
        double dt = now_ms() - t0;
        if (status != CLSTATS_OK) {
            fprintf(stderr, "bench_filter: %s: %s\n", clstats_strerror(status),
                    clstats_ctx_message(ctx));
            return status;
        }
        spent += dt;
        t->runs++;
        if (dt < t->total_ms) t->total_ms = dt;
        double k = clstats_ctx_last_kernel_ms(ctx);
        if (k < t->kernel_ms) t->kernel_ms = k;
    }
    return CLSTATS_OK;
}

int main(int argc, char **argv)
{
    const char *device = NULL, *sizes_arg = "256,1024,4096", *widths_arg = "3,5,11,21";
    const char *maps_arg = "median,mad,both";
    int repeat = 5;
    double budget_s = 20.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: see the comment at the top of bench/bench_filter.c\n");
            return 2;
        }
        if (strcmp(a, "--device") == 0) device = v;
        else if (strcmp(a, "--sizes") == 0) sizes_arg = v;
        else if (strcmp(a, "--widths") == 0) widths_arg = v;
        else if (strcmp(a, "--maps") == 0) maps_arg = v;
        else if (strcmp(a, "--repeat") == 0) repeat = atoi(v);
        else if (strcmp(a, "--budget") == 0) budget_s = atof(v);
        else {
            fprintf(stderr, "bench_filter: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    long sizes[MAX_LIST], widths[MAX_LIST];
    int n_sizes = parse_list(sizes_arg, sizes), n_widths = parse_list(widths_arg, widths);

    double t0 = now_ms();
    clstats_ctx *ctx = bench_context(device);
    if (!ctx) return 1;
    const char *dev = clstats_ctx_device_name(ctx);
    printf("# device: %s (context in %.1f ms)\n", dev, now_ms() - t0);
    printf("# %-6s %-4s %-7s %12s %12s %12s %12s %5s\n", "size", "w", "maps", "kernel ms",
           "total ms", "kernel Mpx/s", "total Mpx/s", "runs");

    for (int si = 0; si < n_sizes; si++) {
        long n = sizes[si];
        float *img = malloc((size_t)(n * n) * sizeof *img);
        float *med = malloc((size_t)(n * n) * sizeof *med);
        float *mad = malloc((size_t)(n * n) * sizeof *mad);
        if (!img || !med || !mad) {
            fprintf(stderr, "bench_filter: no memory for %ld x %ld\n", n, n);
            return 1;
        }
        make_image(img, n);
        for (int wi = 0; wi < n_widths; wi++) {
            int w = (int)widths[wi];
            /* First call builds the program: that is start-up, not throughput. */
            struct clstats_filter_params p = {.width = w};
            double c0 = now_ms();
            clstats_median_filter(ctx, img, 1, 1, 1, &p, med, NULL);
            double build_ms = now_ms() - c0;
            printf("RESULT device=\"%s\" op=build w=%d ms=%.3f\n", dev, w, build_ms);
            char *maps = strdup(maps_arg), *save = NULL;
            for (char *m = strtok_r(maps, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
                float *mo = strcmp(m, "mad") == 0 ? NULL : med;
                float *ao = strcmp(m, "median") == 0 ? NULL : mad;
                struct timing t;
                if (measure(ctx, img, n, w, mo, ao, repeat, budget_s * 1e3, &t) != CLSTATS_OK)
                    return 1;
                double mpx = (double)(n * n) * 1e-6;
                printf("  %-6ld %-4d %-7s %12.3f %12.3f %12.1f %12.1f %5d\n", n, w, m,
                       t.kernel_ms, t.total_ms, mpx / (t.kernel_ms * 1e-3),
                       mpx / (t.total_ms * 1e-3), t.runs);
                printf("RESULT device=\"%s\" impl=clstats op=%s n=%ld w=%d kernel_ms=%.4f "
                       "total_ms=%.4f kernel_mpix_s=%.2f total_mpix_s=%.2f\n",
                       dev, m, n, w, t.kernel_ms, t.total_ms, mpx / (t.kernel_ms * 1e-3),
                       mpx / (t.total_ms * 1e-3));
                fflush(stdout);
            }
            free(maps);
        }
        free(img), free(med), free(mad);
    }
    clstats_ctx_destroy(ctx);
    return 0;
}
