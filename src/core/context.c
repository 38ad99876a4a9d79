/* context.c - a context: one device, its OpenCL context and queue, what the device offers (read
 * once), its tuning, and the caller's view of it (name, limits, last timing, log, version). */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *clstats_version(void)
{
    return CLSTATS_VERSION;
}

/* What the device offers, into the context once, so that modules never ask OpenCL. */
static void read_device(clstats_ctx *ctx)
{
    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(ctx->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    ctx->has_fp64 = fp64 != 0;
    cl_device_fp_config fp32 = 0;
    clGetDeviceInfo(ctx->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp32, &fp32, NULL);
    ctx->exact_divide_option = (fp32 & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
                                   ? " -cl-fp32-correctly-rounded-divide-sqrt"
                                   : "";
    clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ctx->max_alloc,
                    &ctx->max_alloc, NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ctx->global_mem,
                    &ctx->global_mem, NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof ctx->max_work_group,
                    &ctx->max_work_group, NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ctx->local_mem, &ctx->local_mem,
                    NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof ctx->compute_units,
                    &ctx->compute_units, NULL);
    if (ctx->compute_units == 0) ctx->compute_units = 1;
}

int clstats_ctx_create(clstats_ctx **out, const char *device_spec)
{
    struct clstats__device found;
    int status;
    cl_int err;
    clstats_ctx *ctx = NULL;

    if (!out) return clstats__fail(NULL, CLSTATS_ERR_ARG, "ctx pointer is NULL");
    *out = NULL;
    if (!device_spec) device_spec = getenv("CLSTATS_DEVICE");
    if (!device_spec) device_spec = "auto";
    status = clstats__find_device(device_spec, &found);
    if (status != CLSTATS_OK) return status;

    ctx = calloc(1, sizeof *ctx);
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_NOMEM, "cannot allocate a context");
    ctx->platform = found.platform;
    ctx->device = found.device;
    ctx->device_class = found.device_class;
    ctx->is_cpu = found.device_class == CLASS_CPU;
    ctx->nv_compute_major = found.nv_compute_major;
    snprintf(ctx->device_name, sizeof ctx->device_name, "%s / %s", found.info.platform_name,
             found.info.device_name);

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
    ctx->context = clCreateContext(props, 1, &ctx->device, NULL, NULL, &err);
    CL_TRY(ctx, err, "clCreateContext");
    ctx->queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
    CL_TRY(ctx, err, "clCreateCommandQueue");
    read_device(ctx);
    clstats__tuning_init(ctx);
    *out = ctx;
    return CLSTATS_OK;

fail:
    /* Keep the detail where the caller can read it once ctx is gone. */
    clstats__fail(NULL, status, "%s: %s", ctx->device_name, ctx->message);
    clstats_ctx_destroy(ctx);
    return status;
}

void clstats_ctx_release_buffers(clstats_ctx *ctx)
{
    if (!ctx) return;
    clstats__end(ctx, CLSTATS_OK); /* a failed call's events, which may name the buffers */
    clstats__stage_free(ctx);
    clstats__scratch_free(ctx);
}

void clstats_ctx_release_device(clstats_ctx *ctx)
{
    if (!ctx) return;
    clstats__release_programs(ctx);
    clstats_ctx_release_buffers(ctx);
    if (ctx->queue) clReleaseCommandQueue(ctx->queue);
    if (ctx->context) clReleaseContext(ctx->context);
    ctx->queue = NULL;
    ctx->context = NULL;
}

void clstats_ctx_destroy(clstats_ctx *ctx)
{
    if (!ctx) return;
    clstats_ctx_release_device(ctx);
    free(ctx->events);
    free(ctx->event_what);
    free(ctx->build_options);
    free(ctx);
}

const char *clstats_ctx_device_name(const clstats_ctx *ctx)
{
    return ctx ? ctx->device_name : "";
}

int clstats_ctx_limits(const clstats_ctx *ctx, struct clstats_device_limits *out)
{
    if (!ctx || !out) return clstats__fail((clstats_ctx *)ctx, CLSTATS_ERR_ARG, "NULL argument");
    out->global_memory = ctx->global_mem;
    out->max_allocation = ctx->max_alloc;
    out->local_memory = ctx->local_mem;
    out->max_work_group = ctx->max_work_group;
    out->compute_units = ctx->compute_units;
    out->has_fp64 = ctx->has_fp64;
    out->is_cpu = ctx->is_cpu;
    return CLSTATS_OK;
}

double clstats_ctx_last_kernel_ms(const clstats_ctx *ctx)
{
    return ctx ? ctx->last_kernel_ms : 0.0;
}

void clstats_ctx_set_log(clstats_ctx *ctx, void (*log)(void *user, const char *line), void *user)
{
    if (!ctx) return;
    ctx->log = log;
    ctx->log_user = user;
}

void clstats__log(clstats_ctx *ctx, const char *fmt, ...)
{
    if (!ctx || !ctx->log) return;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ctx->log(ctx->log_user, line);
}

cl_context clstats_ctx_cl_context(const clstats_ctx *ctx)
{
    return ctx ? ctx->context : NULL;
}

cl_command_queue clstats_ctx_cl_queue(const clstats_ctx *ctx)
{
    return ctx ? ctx->queue : NULL;
}

cl_device_id clstats_ctx_cl_device(const clstats_ctx *ctx)
{
    return ctx ? ctx->device : NULL;
}
