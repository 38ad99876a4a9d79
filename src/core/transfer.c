/* transfer.c - host arrays onto the device for one call, by the fastest way measured
 * (bench/bench_transfer.c, bench/RESULTS.md): on CPU devices the array is used in place
 * (CL_MEM_USE_HOST_PTR, no copy); on other devices a device buffer is filled by a copy from a
 * buffer over the caller's memory, several times the rate of CL_MEM_COPY_HOST_PTR or of a
 * pageable write on the GPUs measured. */
#include "internal.h"

int clstats__upload(clstats_ctx *ctx, const void *host, size_t bytes, const char *what, cl_mem *out)
{
    cl_int err;
    int status = CLSTATS_OK;
    cl_mem over_host = NULL;
    *out = NULL;
    if (ctx->is_cpu) {
        *out = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes,
                              (void *)host, &err);
        return clstats__cl_check(ctx, err, what);
    }
    over_host = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes,
                               (void *)host, &err);
    CL_TRY(ctx, err, what);
    *out = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY, bytes, NULL, &err);
    CL_TRY(ctx, err, what);
    /* Released below, kept alive by OpenCL until the copy is done; the caller's array lives
     * until the call that uploads it returns, after its last command. */
    CL_TRY(ctx, clEnqueueCopyBuffer(ctx->queue, over_host, *out, 0, 0, bytes, 0, NULL, NULL), what);
    clReleaseMemObject(over_host);
    return CLSTATS_OK;

fail:
    if (over_host) clReleaseMemObject(over_host);
    if (*out) clReleaseMemObject(*out);
    *out = NULL;
    return status;
}
