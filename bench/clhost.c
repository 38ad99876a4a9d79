/* clhost.c - where a program's host time goes in OpenCL calls, without touching it: an
 * LD_PRELOAD shim over the enqueueing, waiting and argument calls that counts each one and sums
 * the host's time inside it, printed to stderr at exit. Unlike clprof.c it asks for no event, so
 * it adds only two clock reads a call (bench/RESULTS.md, issue 22's seed case). Not built by
 * meson:
 *   gcc -O2 -shared -fPIC -o clhost.so bench/clhost.c -ldl
 *   LD_PRELOAD=$PWD/clhost.so ./build/bench/bench_kmeans seed 5 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

enum { NDRANGE, READ, WRITE, FILL, COPY, WAIT, FINISH, FLUSH, SETARG, CALLS };
static const char *const names[CALLS] = {"clEnqueueNDRangeKernel",
                                         "clEnqueueReadBuffer",
                                         "clEnqueueWriteBuffer",
                                         "clEnqueueFillBuffer",
                                         "clEnqueueCopyBuffer",
                                         "clWaitForEvents",
                                         "clFinish",
                                         "clFlush",
                                         "clSetKernelArg"};
static long count[CALLS];
static double seconds[CALLS];
static double first_call, last_return;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void *real_of(int which)
{
    static void *real[CALLS];
    if (!real[which]) real[which] = dlsym(RTLD_NEXT, names[which]);
    return real[which];
}

/* Times the real call `expr` (its result in st) under entry `which`. */
#define TIMED(which, expr)                                                                         \
    const double t0 = now();                                                                       \
    if (!first_call) first_call = t0;                                                              \
    cl_int st = expr;                                                                              \
    last_return = now();                                                                           \
    seconds[which] += last_return - t0;                                                            \
    count[which]++;                                                                                \
    return st

__attribute__((destructor)) static void report(void)
{
    double total = 0;
    for (int i = 0; i < CALLS; i++) {
        if (!count[i]) continue;
        fprintf(stderr, "clhost: %-24s %8ld calls %10.3f ms %8.2f us a call\n", names[i], count[i],
                1e3 * seconds[i], 1e6 * seconds[i] / count[i]);
        total += seconds[i];
    }
    fprintf(stderr, "clhost: in these calls %.3f ms of %.3f ms from the first to the last\n",
            1e3 * total, 1e3 * (last_return - first_call));
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                                       cl_uint dims, const size_t *off,
                                                       const size_t *g, const size_t *l, cl_uint nw,
                                                       const cl_event *w, cl_event *ev)
{
    cl_int (*real)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                   const size_t *, cl_uint, const cl_event *, cl_event *) = real_of(NDRANGE);
    TIMED(NDRANGE, real(q, k, dims, off, g, l, nw, w, ev));
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool block,
                                                    size_t off, size_t size, void *p, cl_uint nw,
                                                    const cl_event *w, cl_event *ev)
{
    cl_int (*real)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                   const cl_event *, cl_event *) = real_of(READ);
    TIMED(READ, real(q, b, block, off, size, p, nw, w, ev));
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool block,
                                                     size_t off, size_t size, const void *p,
                                                     cl_uint nw, const cl_event *w, cl_event *ev)
{
    cl_int (*real)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                   const cl_event *, cl_event *) = real_of(WRITE);
    TIMED(WRITE, real(q, b, block, off, size, p, nw, w, ev));
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *pat,
                                                    size_t psize, size_t off, size_t size,
                                                    cl_uint nw, const cl_event *w, cl_event *ev)
{
    cl_int (*real)(cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,
                   const cl_event *, cl_event *) = real_of(FILL);
    TIMED(FILL, real(q, b, pat, psize, off, size, nw, w, ev));
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem a, cl_mem b,
                                                    size_t oa, size_t ob, size_t size, cl_uint nw,
                                                    const cl_event *w, cl_event *ev)
{
    cl_int (*real)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                   const cl_event *, cl_event *) = real_of(COPY);
    TIMED(COPY, real(q, a, b, oa, ob, size, nw, w, ev));
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *list)
{
    cl_int (*real)(cl_uint, const cl_event *) = real_of(WAIT);
    TIMED(WAIT, real(n, list));
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue q)
{
    cl_int (*real)(cl_command_queue) = real_of(FINISH);
    TIMED(FINISH, real(q));
}

CL_API_ENTRY cl_int CL_API_CALL clFlush(cl_command_queue q)
{
    cl_int (*real)(cl_command_queue) = real_of(FLUSH);
    TIMED(FLUSH, real(q));
}

CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel k, cl_uint i, size_t size, const void *v)
{
    cl_int (*real)(cl_kernel, cl_uint, size_t, const void *) = real_of(SETARG);
    TIMED(SETARG, real(k, i, size, v));
}
