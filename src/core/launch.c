/* launch.c - every kernel launch of every module, and the one timing path: each launch keeps its
 * profiling event on the context, and the end of a public call sums them into
 * clstats_ctx_last_kernel_ms, so that the figure is true after every call, whatever the module. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clstats__begin(clstats_ctx *ctx)
{
    clstats__end(ctx, CLSTATS_OK); /* events a failed call left */
    ctx->last_kernel_ms = 0.0;
}

/* Room for one more event. */
static int reserve_event(clstats_ctx *ctx)
{
    if (ctx->n_events < ctx->events_cap) return CLSTATS_OK;
    const size_t cap = ctx->events_cap ? 2 * ctx->events_cap : 64;
    cl_event *grown = realloc(ctx->events, cap * sizeof *grown);
    if (!grown) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot keep the events");
    ctx->events = grown;
    char(*what)[32] = realloc(ctx->event_what, cap * sizeof *what);
    if (!what) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot keep the events");
    ctx->event_what = what;
    ctx->events_cap = cap;
    return CLSTATS_OK;
}

int clstats__launch(clstats_ctx *ctx, cl_kernel kernel, cl_uint dims, const size_t *offset,
                    const size_t *global, const size_t *local, const char *what)
{
    int status = reserve_event(ctx);
    if (status != CLSTATS_OK) return status;
    cl_event ev = NULL;
    status = clstats__cl_check(
        ctx, clEnqueueNDRangeKernel(ctx->queue, kernel, dims, offset, global, local, 0, NULL, &ev),
        what);
    if (status != CLSTATS_OK) return status;
    snprintf(ctx->event_what[ctx->n_events], sizeof *ctx->event_what, "%s", what ? what : "");
    ctx->events[ctx->n_events++] = ev;
    return status;
}

int clstats__launch_span(clstats_ctx *ctx, cl_kernel kernel, cl_uint dims, const size_t *offset,
                         const size_t *global, const size_t *local, const char *what, cl_event *ev)
{
    return clstats__cl_check(
        ctx, clEnqueueNDRangeKernel(ctx->queue, kernel, dims, offset, global, local, 0, NULL, ev),
        what);
}

void clstats__add_span(clstats_ctx *ctx, cl_event first, cl_event last)
{
    cl_ulong start = 0, end = 0;
    if (first && last &&
        clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
            CL_SUCCESS &&
        end > start)
        ctx->last_kernel_ms += (double)(end - start) * 1e-6;
    if (first) clReleaseEvent(first);
    if (last && last != first) clReleaseEvent(last);
}

int clstats__keep_event(clstats_ctx *ctx, cl_event ev)
{
    if (!ev) return CLSTATS_OK;
    int status = reserve_event(ctx);
    if (status != CLSTATS_OK) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
        return status;
    }
    snprintf(ctx->event_what[ctx->n_events], sizeof *ctx->event_what, "%s", "");
    ctx->events[ctx->n_events++] = ev;
    return CLSTATS_OK;
}

size_t clstats__event_mark(const clstats_ctx *ctx)
{
    return ctx->n_events;
}

double clstats__event_ms(cl_event event)
{
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
            CL_SUCCESS &&
        end > start)
        return (double)(end - start) * 1e-6;
    return 0.0;
}

double clstats__events_ms(const clstats_ctx *ctx, size_t first)
{
    double ms = 0.0;
    for (size_t i = first; i < ctx->n_events; i++)
        ms += clstats__event_ms(ctx->events[i]);
    return ms;
}

/* With a log set, the call's kernel time by kernel (launches of one name summed, in the order
 * first launched): where a call's time goes, without a profiler. */
static void log_kernels(clstats_ctx *ctx)
{
    enum { KINDS = 24 };
    size_t first[KINDS], count[KINDS], kinds = 0;
    double ms[KINDS];
    for (size_t i = 0; i < ctx->n_events; i++) {
        size_t k = 0;
        while (k < kinds && strcmp(ctx->event_what[first[k]], ctx->event_what[i]) != 0)
            k++;
        if (k == kinds) {
            if (kinds == KINDS) continue;
            first[k] = i;
            count[k] = 0;
            ms[k] = 0;
            kinds++;
        }
        count[k]++;
        ms[k] += clstats__event_ms(ctx->events[i]);
    }
    for (size_t k = 0; k < kinds; k++)
        clstats__log(ctx, "kernel %s: %zu launches, %.3f ms",
                     ctx->event_what[first[k]][0] ? ctx->event_what[first[k]] : "(other)", count[k],
                     ms[k]);
}

int clstats__set_args(clstats_ctx *ctx, cl_kernel k, const char *what,
                      const struct clstats__arg *args, size_t count)
{
    int status = CLSTATS_OK;
    for (cl_uint i = 0; i < count && status == CLSTATS_OK; i++)
        status = clstats__cl_check(ctx, clSetKernelArg(k, i, args[i].size, args[i].value), what);
    return status;
}

int clstats__end(clstats_ctx *ctx, int status)
{
    if (!ctx->n_events) return status;
    /* The events are those of finished commands only once the queue is done with them. */
    if (ctx->queue) clFinish(ctx->queue);
    ctx->last_kernel_ms += clstats__events_ms(ctx, 0);
    if (ctx->log) log_kernels(ctx);
    for (size_t i = 0; i < ctx->n_events; i++)
        clReleaseEvent(ctx->events[i]);
    ctx->n_events = 0;
    return status;
}
