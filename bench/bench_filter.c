/* bench_filter.c - speed of clstats_median_filter: Mpixel/s per device, image size, window
 * width and map set (median, MAD, both), kernel-only (profiling events) and end to end (host
 * array in, host array out). A benchmark program, not a test: see bench/README.md.
 *
 *   bench_filter [--device SPEC] [--sizes 256,1024,4096] [--widths 3,5,11] [--maps median,mad,both]
 *                [--repeat N] [--budget S] [--windows 16x4,4x16,circle:5,ring:3:6]
 * --windows replaces the squares of --widths by other windows: WxH rectangles, circle:R and
 * ring:RIN:ROUT footprints (clstats_footprint_circle, _ring); each is followed by the square of
 * the nearest area (side round(sqrt(cells))), so that a window's cost reads against a square's.
 * Prints a table, and one machine-readable "RESULT ..." line per measurement. */
#include "bench_context.h"
#include "clstats.h"

#include <math.h>
#include <stdbool.h>
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

/* A window to time: its parameters, a name and its cell count. */
struct bench_window {
    struct clstats_filter_params p;
    unsigned char cells[255 * 255];
    char name[32];
    int n_cells;
};

/* Parses "11" (a square), "WxH", "circle:R" or "ring:RIN:ROUT"; false if it is none. */
static bool parse_window(const char *text, struct bench_window *win)
{
    memset(&win->p, 0, sizeof win->p);
    win->p.boundary = CLSTATS_BOUNDARY_REFLECT;
    snprintf(win->name, sizeof win->name, "%s", text);
    double r_in, r_out;
    int w, h, side = 0;
    if (sscanf(text, "circle:%lf", &r_out) == 1) {
        side = clstats_footprint_circle(r_out, win->cells, sizeof win->cells);
    } else if (sscanf(text, "ring:%lf:%lf", &r_in, &r_out) == 2) {
        side = clstats_footprint_ring(r_in, r_out, win->cells, sizeof win->cells);
    } else if (sscanf(text, "%dx%d", &w, &h) == 2) {
        win->p.width = w, win->p.height = h;
        win->n_cells = w * h;
        return w > 0 && h > 0;
    } else if (sscanf(text, "%d", &w) == 1) {
        win->p.width = w;
        win->n_cells = w * w;
        return w > 0;
    }
    if (side <= 0) return false;
    win->p.footprint = win->cells;
    win->p.footprint_width = win->p.footprint_height = side;
    win->n_cells = 0;
    for (int i = 0; i < side * side; i++)
        win->n_cells += win->cells[i] != 0;
    return true;
}

/* Best of `repeat` runs, stopping early once `budget_ms` is spent. */
static int measure(clstats_ctx *ctx, const float *img, long n,
                   const struct clstats_filter_params *p, float *med, float *mad, int repeat,
                   double budget_ms, struct timing *t)
{
    t->kernel_ms = t->total_ms = INFINITY;
    t->runs = 0;
    double spent = 0;
    for (int r = 0; r < repeat && (r == 0 || spent < budget_ms); r++) {
        double t0 = now_ms();
        int status = clstats_median_filter(ctx, img, (size_t)n, (size_t)n, (size_t)n, p, med, mad);
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
    const char *maps_arg = "median,mad,both", *windows_arg = NULL;
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
        else if (strcmp(a, "--windows") == 0) windows_arg = v;
        else {
            fprintf(stderr, "bench_filter: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    long sizes[MAX_LIST];
    const int n_sizes = parse_list(sizes_arg, sizes);
    /* The windows: --widths' squares, or each of --windows and its square of the same area. */
    static struct bench_window windows[2 * MAX_LIST];
    int n_windows = 0;
    char *list = strdup(windows_arg ? windows_arg : widths_arg), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok && n_windows + 2 <= 2 * MAX_LIST;
         tok = strtok_r(NULL, ",", &save)) {
        struct bench_window *win = &windows[n_windows];
        if (!parse_window(tok, win)) {
            fprintf(stderr, "bench_filter: bad window %s\n", tok);
            return 2;
        }
        n_windows++;
        if (!windows_arg) continue;
        char square[16];
        snprintf(square, sizeof square, "%d", (int)lround(sqrt((double)win->n_cells)));
        parse_window(square, &windows[n_windows++]);
    }
    free(list);

    double t0 = now_ms();
    clstats_ctx *ctx = bench_context(device);
    if (!ctx) return 1;
    const char *dev = clstats_ctx_device_name(ctx);
    printf("# device: %s (context in %.1f ms)\n", dev, now_ms() - t0);
    printf("# %-6s %-12s %6s %-7s %12s %12s %12s %12s %5s\n", "size", "window", "cells", "maps",
           "kernel ms", "total ms", "kernel Mpx/s", "total Mpx/s", "runs");

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
        for (int wi = 0; wi < n_windows; wi++) {
            const struct bench_window *win = &windows[wi];
            const int w = win->p.footprint ? win->p.footprint_width : win->p.width;
            /* First call builds the program: that is start-up, not throughput. */
            double c0 = now_ms();
            clstats_median_filter(ctx, img, 1, 1, 1, &win->p, med, NULL);
            double build_ms = now_ms() - c0;
            printf("RESULT device=\"%s\" op=build w=%d window=%s ms=%.3f\n", dev, w, win->name,
                   build_ms);
            char *maps = strdup(maps_arg), *save = NULL;
            for (char *m = strtok_r(maps, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
                float *mo = strcmp(m, "mad") == 0 ? NULL : med;
                float *ao = strcmp(m, "median") == 0 ? NULL : mad;
                struct timing t;
                if (measure(ctx, img, n, &win->p, mo, ao, repeat, budget_s * 1e3, &t) !=
                    CLSTATS_OK)
                    return 1;
                double mpx = (double)(n * n) * 1e-6;
                printf("  %-6ld %-12s %6d %-7s %12.3f %12.3f %12.1f %12.1f %5d\n", n, win->name,
                       win->n_cells, m, t.kernel_ms, t.total_ms, mpx / (t.kernel_ms * 1e-3),
                       mpx / (t.total_ms * 1e-3), t.runs);
                printf("RESULT device=\"%s\" impl=clstats op=%s n=%ld w=%d window=%s cells=%d "
                       "kernel_ms=%.4f total_ms=%.4f kernel_mpix_s=%.2f total_mpix_s=%.2f\n",
                       dev, m, n, w, win->name, win->n_cells, t.kernel_ms, t.total_ms,
                       mpx / (t.kernel_ms * 1e-3), mpx / (t.total_ms * 1e-3));
                fflush(stdout);
            }
            free(maps);
        }
        free(img), free(med), free(mad);
    }
    clstats_ctx_destroy(ctx);
    return 0;
}
