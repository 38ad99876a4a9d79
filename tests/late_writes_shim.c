/* late_writes_shim.c - an LD_PRELOAD layer that runs every host-to-device write as late as
 * OpenCL 1.2 allows, so that a suite on PoCL (whose writes run at once) meets the order of a
 * runtime that defers them, as Intel's CPU runtime does: a write that is not waited for reads
 * its host memory only when the queue next waits (a blocking read or map, clFinish,
 * clWaitForEvents), and a blocking write copies its data and returns without running (the
 * standard promises no more: its own data may be reused, nothing about the writes before it).
 * A library that frees or changes a host copy before such a wait then writes what is there by
 * then, and its results show it. Every write waits on a user event the shim holds; the wait
 * points set them all first. Only what tests/test_mpi reaches is covered: clEnqueueWriteBuffer
 * and non-blocking clEnqueueWriteBufferRect. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cl_event *held;       /* user events writes wait on, set at the next wait point */
static void **copies;        /* blocking writes' data, freed once their writes ran */
static size_t n_held, n_copies, cap_held, cap_copies;

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "late_writes_shim: no %s below the shim\n", name);
        abort();
    }
    return f;
}

static void push(void ***list, size_t *n, size_t *cap, void *item)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *list = realloc(*list, *cap * sizeof **list);
        if (!*list) abort();
    }
    (*list)[(*n)++] = item;
}

/* A wait point: every held write may run now (its host memory read as it is now). */
static void release_all(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_held; i++) {
        clSetUserEventStatus(held[i], CL_COMPLETE);
        clReleaseEvent(held[i]);
    }
    n_held = 0;
    pthread_mutex_unlock(&lock);
}

/* The copies of blocking writes, once the queue has run them (clFinish: the library's one
 * queue; a blocking read on one queue would not say that another's writes ran). */
static void free_copies(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_copies; i++) free(copies[i]);
    n_copies = 0;
    pthread_mutex_unlock(&lock);
}

/* The wait list of a held write: the caller's and one new user event. */
static cl_event *hold(cl_command_queue queue, cl_uint n_wait, const cl_event *wait)
{
    cl_context context;
    clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, NULL);
    cl_event *list = malloc((n_wait + 1) * sizeof *list);
    if (!list) abort();
    if (n_wait) memcpy(list, wait, n_wait * sizeof *list);
    cl_int err;
    list[n_wait] = clCreateUserEvent(context, &err);
    if (err != CL_SUCCESS) abort();
    pthread_mutex_lock(&lock);
    push((void ***)&held, &n_held, &cap_held, list[n_wait]);
    clRetainEvent(list[n_wait]);
    pthread_mutex_unlock(&lock);
    return list;
}

cl_int clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                            size_t size, const void *ptr, cl_uint n_wait, const cl_event *wait,
                            cl_event *event)
{
    static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                          const cl_event *, cl_event *);
    if (!next) next = real("clEnqueueWriteBuffer");
    const void *from = ptr;
    if (blocking) { /* the data copied now; the write itself runs later */
        void *copy = malloc(size ? size : 1);
        if (!copy) abort();
        memcpy(copy, ptr, size);
        pthread_mutex_lock(&lock);
        push(&copies, &n_copies, &cap_copies, copy);
        pthread_mutex_unlock(&lock);
        from = copy;
    }
    cl_event *list = hold(queue, n_wait, wait);
    const cl_int err = next(queue, buffer, CL_FALSE, offset, size, from, n_wait + 1, list, event);
    cl_event mine = list[n_wait];
    free(list);
    clReleaseEvent(mine);
    return err;
}

cl_int clEnqueueWriteBufferRect(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                const size_t *buffer_origin, const size_t *host_origin,
                                const size_t *region, size_t buffer_row, size_t buffer_slice,
                                size_t host_row, size_t host_slice, const void *ptr,
                                cl_uint n_wait, const cl_event *wait, cl_event *event)
{
    static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                          const size_t *, size_t, size_t, size_t, size_t, const void *, cl_uint,
                          const cl_event *, cl_event *);
    if (!next) next = real("clEnqueueWriteBufferRect");
    if (blocking) { /* runs now, after what is held */
        release_all();
        return next(queue, buffer, blocking, buffer_origin, host_origin, region, buffer_row,
                    buffer_slice, host_row, host_slice, ptr, n_wait, wait, event);
    }
    cl_event *list = hold(queue, n_wait, wait);
    const cl_int err = next(queue, buffer, CL_FALSE, buffer_origin, host_origin, region,
                            buffer_row, buffer_slice, host_row, host_slice, ptr, n_wait + 1, list,
                            event);
    cl_event mine = list[n_wait];
    free(list);
    clReleaseEvent(mine);
    return err;
}

/* ---- The wait points ---------------------------------------------------------------------- */

cl_int clFinish(cl_command_queue queue)
{
    static cl_int (*next)(cl_command_queue);
    if (!next) next = real("clFinish");
    release_all();
    const cl_int err = next(queue);
    free_copies();
    return err;
}

cl_int clWaitForEvents(cl_uint n, const cl_event *events)
{
    static cl_int (*next)(cl_uint, const cl_event *);
    if (!next) next = real("clWaitForEvents");
    release_all();
    return next(n, events);
}

cl_int clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                           size_t size, void *ptr, cl_uint n_wait, const cl_event *wait,
                           cl_event *event)
{
    static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                          const cl_event *, cl_event *);
    if (!next) next = real("clEnqueueReadBuffer");
    if (blocking) release_all();
    return next(queue, buffer, blocking, offset, size, ptr, n_wait, wait, event);
}

cl_int clEnqueueReadBufferRect(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                               const size_t *buffer_origin, const size_t *host_origin,
                               const size_t *region, size_t buffer_row, size_t buffer_slice,
                               size_t host_row, size_t host_slice, void *ptr, cl_uint n_wait,
                               const cl_event *wait, cl_event *event)
{
    static cl_int (*next)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                          const size_t *, size_t, size_t, size_t, size_t, void *, cl_uint,
                          const cl_event *, cl_event *);
    if (!next) next = real("clEnqueueReadBufferRect");
    if (blocking) release_all();
    return next(queue, buffer, blocking, buffer_origin, host_origin, region, buffer_row,
                buffer_slice, host_row, host_slice, ptr, n_wait, wait, event);
}

void *clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                         cl_map_flags flags, size_t offset, size_t size, cl_uint n_wait,
                         const cl_event *wait, cl_event *event, cl_int *err)
{
    static void *(*next)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,
                         const cl_event *, cl_event *, cl_int *);
    if (!next) next = real("clEnqueueMapBuffer");
    if (blocking) release_all();
    return next(queue, buffer, blocking, flags, offset, size, n_wait, wait, event, err);
}

cl_int clReleaseCommandQueue(cl_command_queue queue)
{
    static cl_int (*next)(cl_command_queue);
    if (!next) next = real("clReleaseCommandQueue");
    release_all();
    const cl_int err = next(queue);
    free_copies();
    return err;
}
