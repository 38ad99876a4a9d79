/* errors.c - status words, the per-context error detail and the OpenCL error names. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

/* Detail of the last failure that had no context to hold it (clstats_ctx_create). */
static _Thread_local char orphan_message[4096];

const char *clstats_strerror(int status)
{
    switch (status) {
    case CLSTATS_OK:
        return "success";
    case CLSTATS_ERR_ARG:
        return "invalid argument";
    case CLSTATS_ERR_NOMEM:
        return "out of host memory";
    case CLSTATS_ERR_NO_DEVICE:
        return "no OpenCL device found";
    case CLSTATS_ERR_DEVICE_SPEC:
        return "no OpenCL device matches the device spec";
    case CLSTATS_ERR_BUILD:
        return "OpenCL kernel build failed";
    case CLSTATS_ERR_OPENCL:
        return "OpenCL call failed";
    case CLSTATS_ERR_DEVICE_MEMORY:
        return "out of device memory or resources";
    case CLSTATS_ERR_UNSUPPORTED:
        return "the device does not support this";
    case CLSTATS_ERR_NAN:
        return "NaN in the data";
    case CLSTATS_ERR_EMPTY:
        return "no valid value";
    case CLSTATS_ERR_CALLBACK:
        return "stopped by the caller";
    case CLSTATS_ERR_SINGULAR:
        return "singular matrix";
    default:
        return "unknown status";
    }
}

const char *clstats_ctx_message(const clstats_ctx *ctx)
{
    return ctx ? ctx->message : orphan_message;
}

int clstats__fail(clstats_ctx *ctx, int status, const char *fmt, ...)
{
    char *buf = ctx ? ctx->message : orphan_message;
    size_t size = ctx ? sizeof ctx->message : sizeof orphan_message;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return status;
}

const char *clstats__cl_error_name(cl_int err)
{
    switch (err) {
#define NAME(e)                                                                                    \
    case e:                                                                                        \
        return #e;
        NAME(CL_SUCCESS)
        NAME(CL_DEVICE_NOT_FOUND) NAME(CL_DEVICE_NOT_AVAILABLE) NAME(CL_COMPILER_NOT_AVAILABLE) NAME(
            CL_MEM_OBJECT_ALLOCATION_FAILURE) NAME(CL_OUT_OF_RESOURCES) NAME(CL_OUT_OF_HOST_MEMORY)
            NAME(CL_PROFILING_INFO_NOT_AVAILABLE) NAME(CL_MEM_COPY_OVERLAP) NAME(
                CL_IMAGE_FORMAT_MISMATCH) NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED) NAME(CL_BUILD_PROGRAM_FAILURE)
                NAME(CL_MAP_FAILURE) NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET) NAME(
                    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) NAME(CL_COMPILE_PROGRAM_FAILURE)
                    NAME(CL_LINKER_NOT_AVAILABLE) NAME(CL_LINK_PROGRAM_FAILURE) NAME(
                        CL_DEVICE_PARTITION_FAILED) NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
                        NAME(CL_INVALID_VALUE) NAME(CL_INVALID_DEVICE_TYPE) NAME(
                            CL_INVALID_PLATFORM) NAME(CL_INVALID_DEVICE) NAME(CL_INVALID_CONTEXT)
                            NAME(CL_INVALID_QUEUE_PROPERTIES) NAME(CL_INVALID_COMMAND_QUEUE) NAME(
                                CL_INVALID_HOST_PTR) NAME(CL_INVALID_MEM_OBJECT)
                                NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) NAME(
                                    CL_INVALID_IMAGE_SIZE) NAME(CL_INVALID_SAMPLER)
                                    NAME(CL_INVALID_BINARY) NAME(CL_INVALID_BUILD_OPTIONS) NAME(
                                        CL_INVALID_PROGRAM) NAME(CL_INVALID_PROGRAM_EXECUTABLE)
                                        NAME(CL_INVALID_KERNEL_NAME) NAME(
                                            CL_INVALID_KERNEL_DEFINITION) NAME(CL_INVALID_KERNEL)
                                            NAME(CL_INVALID_ARG_INDEX) NAME(CL_INVALID_ARG_VALUE) NAME(
                                                CL_INVALID_ARG_SIZE) NAME(CL_INVALID_KERNEL_ARGS)
                                                NAME(CL_INVALID_WORK_DIMENSION) NAME(
                                                    CL_INVALID_WORK_GROUP_SIZE)
                                                    NAME(CL_INVALID_WORK_ITEM_SIZE) NAME(
                                                        CL_INVALID_GLOBAL_OFFSET)
                                                        NAME(CL_INVALID_EVENT_WAIT_LIST) NAME(
                                                            CL_INVALID_EVENT) NAME(CL_INVALID_OPERATION)
                                                            NAME(CL_INVALID_GL_OBJECT) NAME(
                                                                CL_INVALID_BUFFER_SIZE)
                                                                NAME(CL_INVALID_MIP_LEVEL) NAME(
                                                                    CL_INVALID_GLOBAL_WORK_SIZE)
                                                                    NAME(CL_INVALID_PROPERTY) NAME(
                                                                        CL_INVALID_IMAGE_DESCRIPTOR)
                                                                        NAME(
                                                                            CL_INVALID_COMPILER_OPTIONS)
                                                                            NAME(
                                                                                CL_INVALID_LINKER_OPTIONS)
                                                                                NAME(
                                                                                    CL_INVALID_DEVICE_PARTITION_COUNT)
#undef NAME
                                                                                    case -1001
            : return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        return "unknown OpenCL error";
    }
}

int clstats__cl_check(clstats_ctx *ctx, cl_int err, const char *what)
{
    if (err == CL_SUCCESS) return CLSTATS_OK;
    int status = (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
                  err == CL_OUT_OF_HOST_MEMORY)
                     ? CLSTATS_ERR_DEVICE_MEMORY
                     : CLSTATS_ERR_OPENCL;
    return clstats__fail(ctx, status, "%s: %s (%d)", what, clstats__cl_error_name(err), (int)err);
}
