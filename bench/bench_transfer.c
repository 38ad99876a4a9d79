/* bench_transfer.c - how fast host arrays reach the device and come back, by method, to choose
 * how clstats_median_filter moves images (a benchmark, not a test).
 *
 *   bench_transfer [--device SPEC] [--mb 64] [--repeat 5]
 * Methods: pageable clEnqueueWrite/ReadBuffer into a kept buffer; a buffer created with
 * CL_MEM_COPY_HOST_PTR (allocation included); pinned (CL_MEM_ALLOC_HOST_PTR, mapped) staging
 * without and with the memcpy into it; CL_MEM_USE_HOST_PTR on the caller's array; and a plain
 * host memcpy for scale. Prints GB/s per method and direction. */
#define CL_TARGET_OPENCL_VERSION 120
#include "bench_context.h"
#include "clstats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void report(const char *dev, const char *method, const char *dir, size_t bytes, double ms)
{
    printf("  %-28s %-5s %9.3f ms %8.2f GB/s\n", method, dir, ms, (double)bytes / ms * 1e-6);
    printf("RESULT device=\"%s\" op=transfer method=%s dir=%s bytes=%zu ms=%.4f\n", dev, method,
           dir, bytes, ms);
}

/* One thread's share of a memcpy split among several. */
struct slice {
    char *dst;
    const char *src;
    size_t bytes;
};

static void *copy_slice(void *arg)
{
    struct slice *s = arg;
    memcpy(s->dst, s->src, s->bytes);
    return NULL;
}

/* memcpy by n threads (this one included), each a contiguous share. */
static void threaded_memcpy(char *dst, const char *src, size_t bytes, int n)
{
    pthread_t tid[64];
    struct slice s[64] = {{0}};
    const size_t share = (bytes / (size_t)n + 63) / 64 * 64;
    for (int i = 0; i < n; i++) {
        const size_t at = (size_t)i * share < bytes ? (size_t)i * share : bytes;
        s[i] = (struct slice){dst + at, src + at, bytes - at < share ? bytes - at : share};
        if (i > 0) pthread_create(&tid[i], NULL, copy_slice, &s[i]);
    }
    copy_slice(&s[0]);
    for (int i = 1; i < n; i++)
        pthread_join(tid[i], NULL);
}

int main(int argc, char **argv)
{
    const char *spec = NULL;
    size_t mb = 64;
    int repeat = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--device") == 0)
            spec = argv[i + 1];
        else if (strcmp(argv[i], "--mb") == 0)
            mb = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--repeat") == 0)
            repeat = atoi(argv[i + 1]);
    }
    clstats_ctx *ctx = bench_context(spec);
    if (!ctx) return 1;
    const char *dev = clstats_ctx_device_name(ctx);
    cl_context cx = clstats_ctx_cl_context(ctx);
    cl_command_queue q = clstats_ctx_cl_queue(ctx);
    const size_t bytes = mb << 20;
    char *host = malloc(bytes), *back = malloc(bytes);
    memset(host, 1, bytes);
    memset(back, 2, bytes);
    printf("# device: %s, %zu MiB, best of %d\n", dev, mb, repeat);
    cl_int err;
    double best[2];

    /* Host memcpy, for scale. */
    best[0] = 1e30;
    for (int r = 0; r < repeat; r++) {
        double t0 = now_ms();
        memcpy(back, host, bytes);
        double dt = now_ms() - t0;
        if (dt < best[0]) best[0] = dt;
    }
    report(dev, "host_memcpy", "-", bytes, best[0]);
    /* The same split among threads (thread start-up included, as a pool would not pay it). */
    for (int n = 2; n <= 16; n *= 2) {
        best[0] = 1e30;
        for (int r = 0; r < repeat; r++) {
            double t0 = now_ms();
            threaded_memcpy(back, host, bytes, n);
            double dt = now_ms() - t0;
            if (dt < best[0]) best[0] = dt;
        }
        char name[32];
        snprintf(name, sizeof name, "host_memcpy_%d_threads", n);
        report(dev, name, "-", bytes, best[0]);
    }

    /* Pageable to and from a kept buffer. */
    cl_mem buf = clCreateBuffer(cx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    best[0] = best[1] = 1e30;
    for (int r = 0; r < repeat; r++) {
        double t0 = now_ms();
        clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
        double t1 = now_ms();
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, back, 0, NULL, NULL);
        double t2 = now_ms();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
    }
    report(dev, "pageable", "up", bytes, best[0]);
    report(dev, "pageable", "down", bytes, best[1]);

    /* A new buffer copying the host array, as the filter does today. */
    best[0] = 1e30;
    for (int r = 0; r < repeat; r++) {
        double t0 = now_ms();
        cl_mem b = clCreateBuffer(cx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host, &err);
        clFinish(q);
        /* Touch it so lazy implementations really copy. */
        char c;
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, 1, &c, 0, NULL, NULL);
        double dt = now_ms() - t0;
        clReleaseMemObject(b);
        if (dt < best[0]) best[0] = dt;
    }
    report(dev, "create_copy_host_ptr", "up", bytes, best[0]);

    /* Pinned staging: a mapped CL_MEM_ALLOC_HOST_PTR buffer. */
    cl_mem pin = clCreateBuffer(cx, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    void *pinned = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                      NULL, NULL, &err);
    memset(pinned, 3, bytes);
    best[0] = best[1] = 1e30;
    double best_m[2] = {1e30, 1e30};
    for (int r = 0; r < repeat; r++) {
        double t0 = now_ms();
        clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, bytes, pinned, 0, NULL, NULL);
        double t1 = now_ms();
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, pinned, 0, NULL, NULL);
        double t2 = now_ms();
        memcpy(pinned, host, bytes);
        clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, bytes, pinned, 0, NULL, NULL);
        double t3 = now_ms();
        clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, pinned, 0, NULL, NULL);
        memcpy(back, pinned, bytes);
        double t4 = now_ms();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
        if (t3 - t2 < best_m[0]) best_m[0] = t3 - t2;
        if (t4 - t3 < best_m[1]) best_m[1] = t4 - t3;
    }
    report(dev, "pinned", "up", bytes, best[0]);
    report(dev, "pinned", "down", bytes, best[1]);
    report(dev, "pinned_with_memcpy", "up", bytes, best_m[0]);
    report(dev, "pinned_with_memcpy", "down", bytes, best_m[1]);
    /* Both directions at once, on two queues: is the bus full duplex? */
    {
        cl_command_queue q2 = clCreateCommandQueue(cx, clstats_ctx_cl_device(ctx), 0, &err);
        cl_mem buf2 = clCreateBuffer(cx, CL_MEM_READ_WRITE, bytes, NULL, &err);
        cl_mem pin2 = clCreateBuffer(cx, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
        void *pinned2 = clEnqueueMapBuffer(q, pin2, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                           0, NULL, NULL, &err);
        best[0] = 1e30;
        for (int r = 0; r < repeat; r++) {
            double t0 = now_ms();
            clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, bytes, pinned, 0, NULL, NULL);
            clEnqueueReadBuffer(q2, buf2, CL_FALSE, 0, bytes, pinned2, 0, NULL, NULL);
            clFlush(q);
            clFlush(q2);
            clFinish(q);
            clFinish(q2);
            double dt = now_ms() - t0;
            if (dt < best[0]) best[0] = dt;
        }
        report(dev, "pinned_duplex", "both", bytes, best[0]);
        clEnqueueUnmapMemObject(q, pin2, pinned2, 0, NULL, NULL);
        clFinish(q);
        clReleaseMemObject(pin2);
        clReleaseMemObject(buf2);
        clReleaseCommandQueue(q2);
    }
    clEnqueueUnmapMemObject(q, pin, pinned, 0, NULL, NULL);
    clFinish(q);
    clReleaseMemObject(pin);

    /* The caller's array used in place. */
    best[0] = 1e30;
    for (int r = 0; r < repeat; r++) {
        double t0 = now_ms();
        cl_mem b = clCreateBuffer(cx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes, host, &err);
        clEnqueueCopyBuffer(q, b, buf, 0, 0, bytes, 0, NULL, NULL);
        clFinish(q);
        double dt = now_ms() - t0;
        clReleaseMemObject(b);
        if (dt < best[0]) best[0] = dt;
    }
    report(dev, "use_host_ptr_copy", "up", bytes, best[0]);

    clReleaseMemObject(buf);
    free(host);
    free(back);
    clstats_ctx_destroy(ctx);
    return 0;
}
