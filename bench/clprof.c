/* clprof.c - device time per kernel name of any OpenCL program, without touching it: an
 * LD_PRELOAD shim over clEnqueueNDRangeKernel that gives every launch an event and, when a queue
 * is released (or at exit), prints to stderr each kernel's launches, total, mean and least time,
 * and the time the device was busy against the span from the first start to the last end.
 * Each launch's event costs the host some microseconds, so wall times under it are not the
 * program's own (bench/RESULTS.md, issue 22's H100 profile). Not built by meson:
 *   gcc -O2 -shared -fPIC -o clprof.so bench/clprof.c -ldl
 *   LD_PRELOAD=$PWD/clprof.so ./build/bench/bench_kmeans seed 1 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 128
#define MAXEV 200000
static struct { char name[64]; long count; double us, min_us; } stats[MAXN];
static int nstats;
static struct { cl_event ev; int idx; } pend[MAXEV];
static int npend;
static cl_ulong first_start, last_end;

static void drain(void)
{
    if (!npend) return;
    for (int i = 0; i < npend; i++) {
        cl_ulong s = 0, e = 0;
        clWaitForEvents(1, &pend[i].ev);
        clGetEventProfilingInfo(pend[i].ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
        clGetEventProfilingInfo(pend[i].ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
        double us = e > s ? (e - s) * 1e-3 : 0;
        stats[pend[i].idx].count++;
        stats[pend[i].idx].us += us;
        if (stats[pend[i].idx].min_us == 0 || us < stats[pend[i].idx].min_us) stats[pend[i].idx].min_us = us;
        if (!first_start || s < first_start) first_start = s;
        if (e > last_end) last_end = e;
        clReleaseEvent(pend[i].ev);
    }
    npend = 0;
}

static void report(void)
{
    drain();
    if (!nstats) return;
    fprintf(stderr, "clprof: %-28s %8s %12s %10s %10s\n", "kernel", "count", "total_ms", "mean_us", "min_us");
    double tot = 0;
    for (int i = 0; i < nstats; i++) {
        fprintf(stderr, "clprof: %-28s %8ld %12.3f %10.2f %10.2f\n", stats[i].name, stats[i].count,
                stats[i].us * 1e-3, stats[i].us / (stats[i].count ? stats[i].count : 1), stats[i].min_us);
        tot += stats[i].us;
    }
    fprintf(stderr, "clprof: busy %.3f ms, span %.3f ms\n", tot * 1e-3, (last_end - first_start) * 1e-9 * 1e3);
    memset(stats, 0, sizeof stats);
    nstats = 0;
    first_start = last_end = 0;
}

__attribute__((destructor)) static void at_exit(void) { report(); }

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims,
    const size_t *off, const size_t *g, const size_t *l, cl_uint nw, const cl_event *w, cl_event *ev)
{
    static cl_int (*real)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                          const size_t *, cl_uint, const cl_event *, cl_event *);
    if (!real) real = dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
    cl_event mine = NULL;
    cl_int st = real(q, k, dims, off, g, l, nw, w, &mine);
    if (st != CL_SUCCESS) return st;
    char name[64] = "";
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    int idx = 0;
    while (idx < nstats && strcmp(stats[idx].name, name)) idx++;
    if (idx == nstats && nstats < MAXN) { strcpy(stats[nstats].name, name); nstats++; }
    if (idx >= MAXN) idx = MAXN - 1;
    if (ev) { *ev = mine; clRetainEvent(mine); }
    if (npend == MAXEV) drain();
    pend[npend].ev = mine;
    pend[npend].idx = idx;
    npend++;
    return st;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q)
{
    static cl_int (*real)(cl_command_queue);
    if (!real) real = dlsym(RTLD_NEXT, "clReleaseCommandQueue");
    clFinish(q);
    report();
    return real(q);
}
