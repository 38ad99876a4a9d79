/* bench_background.c - the mesh background and RMS maps of one float32 sky, host to host
 * (clstats_background then clstats_background_maps), beside the device time of their kernels
 * and a plain host-to-device-to-host copy of the image for scale. A benchmark, not a test.
 *
 *     bench_background [--size 4096] [--mesh 64] [--filter 3] [--device gpu] [--repeat 5]
 *                      [--clipping histogram|sigma]
 * Prints "RESULT background ..." lines (best of --repeat, ms; cpu_ms the least CPU time of the
 * process, all threads, over the repeats). */
#include "bench_context.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of the whole process, every thread (PoCL's workers too), in ms: on a machine other
 * work loads, the figure that wall time hides. */
static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return 1e3 * ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) +
           1e-3 * ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec);
}

static double now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    size_t n = 4096, mesh = 64, filter = 3;
    int repeat = 5, sigma = 0;
    const char *device = "auto";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--size")) n = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--mesh")) mesh = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--filter")) filter = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--device")) device = argv[i + 1];
        else if (!strcmp(argv[i], "--repeat")) repeat = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--clipping")) sigma = !strcmp(argv[i + 1], "sigma");
    }
    clstats_ctx *ctx = bench_context(device);
    if (!ctx) return 1;
    float *img = malloc(n * n * sizeof *img), *back = malloc(n * n * sizeof *back),
          *rms = malloc(n * n * sizeof *rms);
    if (!img || !back || !rms) return 1;
    unsigned long long s = 12345;
    for (size_t i = 0; i < n * n; i++) { /* sky, gradient, roughly Gaussian noise, stars */
        double u = 0;
        for (int k = 0; k < 4; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            u += (double)(s >> 11) / 9007199254740992.0;
        }
        img[i] = (float)(100 + 0.01 * (double)(i % n) + 5 * 1.7320508 * (u - 2));
        if ((s >> 20) % 2000 == 0) img[i] += 500.0f;
    }
    printf("device: %s\n", clstats_ctx_device_name(ctx));
    struct clstats_array im = {.host = img, .dtype = CLSTATS_FLOAT32, .nx = n, .ny = n};
    struct clstats_array ob = im, orr = im;
    ob.host = back;
    orr.host = rms;
    struct clstats_background_options o = {.box_w = mesh, .box_h = mesh, .filter_w = filter,
                                           .filter_h = filter, .clip_sigma = 3.0,
                                           .clipping = sigma ? CLSTATS_CLIP_SIGMA
                                                             : CLSTATS_CLIP_HISTOGRAM};
    double best = INFINITY, best_mesh_k = 0, best_maps_k = 0, best_cpu = INFINITY;
    for (int r = 0; r <= repeat; r++) { /* the first run builds the kernels */
        struct clstats_background *b = NULL;
        const double t0 = now_ms(), c0 = cpu_ms();
        int st = clstats_background(ctx, &im, NULL, &o, &b);
        const double mk = clstats_ctx_last_kernel_ms(ctx);
        if (st == CLSTATS_OK) st = clstats_background_maps(ctx, b, &ob, &orr);
        const double t1 = now_ms(), c1 = cpu_ms(), pk = clstats_ctx_last_kernel_ms(ctx);
        if (st != CLSTATS_OK) {
            fprintf(stderr, "bench_background: %s\n", clstats_ctx_message(ctx));
            return 1;
        }
        clstats_background_free(b);
        if (r > 0 && t1 - t0 < best) best = t1 - t0, best_mesh_k = mk, best_maps_k = pk;
        if (r > 0 && c1 - c0 < best_cpu) best_cpu = c1 - c0;
    }
    /* the copies alone: the image up, two maps down */
    cl_int err;
    cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_WRITE,
                                n * n * sizeof(float), NULL, &err);
    double copies = INFINITY;
    for (int r = 0; err == CL_SUCCESS && r < repeat; r++) {
        cl_command_queue q = clstats_ctx_cl_queue(ctx);
        const double t0 = now_ms();
        clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, n * n * 4, img, 0, NULL, NULL);
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * n * 4, back, 0, NULL, NULL);
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * n * 4, rms, 0, NULL, NULL);
        const double t1 = now_ms();
        if (t1 - t0 < copies) copies = t1 - t0;
    }
    if (err == CL_SUCCESS) clReleaseMemObject(buf);
    printf("RESULT background clipping=%s size=%zu mesh=%zu filter=%zu total_ms=%.2f cpu_ms=%.1f "
           "box_kernels_ms=%.3f map_kernels_ms=%.3f copies_ms=%.2f\n",
           sigma ? "sigma" : "histogram", n, mesh, filter, best, best_cpu, best_mesh_k,
           best_maps_k, copies);
    clstats_ctx_destroy(ctx);
    free(img), free(back), free(rms);
    return 0;
}
