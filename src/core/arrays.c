/* arrays.c - the array descriptor (struct clstats_array) for every module: checking one, bringing
 * its elements to the device, and writing a result into one, wherever it lives (host memory or a
 * buffer of the context, at an offset, rows a stride apart). One path, so that every operation
 * has one implementation whatever its data's home. */
#include "internal.h"

#include <stdlib.h>

size_t clstats__dtype_size(enum clstats_dtype dtype)
{
    return dtype == CLSTATS_FLOAT64 ? 8 : dtype == CLSTATS_UINT8 ? 1 : 4;
}

int clstats__array_check(clstats_ctx *ctx, const struct clstats_array *a, const char *what,
                         size_t *bytes)
{
    if (!a) return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s is NULL", what);
    if ((unsigned)a->dtype > CLSTATS_UINT8)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s: unknown dtype %d", what, (int)a->dtype);
    if (!a->host == !a->buffer)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s needs host memory or a buffer, one of them",
                             what);
    if (a->nx == 0 || a->ny == 0)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s has no element (%zu x %zu)", what, a->nx,
                             a->ny);
    const size_t stride = clstats__array_stride(a), es = clstats__dtype_size(a->dtype);
    if (stride < a->nx)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s: row stride %zu is less than the width %zu",
                             what, stride, a->nx);
    size_t span;
    if (!clstats__span_bytes(a->ny, stride, a->nx, es, &span))
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "%s: %zu rows %zu elements apart are larger than any array can be",
                             what, a->ny, stride);
    if (a->buffer) {
        size_t size = 0;
        if (clGetMemObjectInfo(a->buffer, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS)
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s: not a valid cl_mem", what);
        if (a->offset > size / es || span > size - a->offset * es)
            return clstats__fail(ctx, CLSTATS_ERR_ARG,
                                 "%s: offset %zu and %zu x %zu elements run past the buffer's "
                                 "%zu bytes",
                                 what, a->offset, a->nx, a->ny, size);
    } else if (a->offset) {
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s: an offset is for buffers only", what);
    }
    if (bytes) *bytes = span;
    return CLSTATS_OK;
}

int clstats__array_in(clstats_ctx *ctx, const struct clstats_array *a, bool packed, cl_mem *out,
                      size_t *offset, bool *owned)
{
    const size_t es = clstats__dtype_size(a->dtype), stride = clstats__array_stride(a);
    const bool strided = a->ny > 1 && stride != a->nx && packed;
    size_t span = 0;
    int status = clstats__array_check(ctx, a, "the input", &span);
    if (status != CLSTATS_OK) return status;
    *owned = false;
    if (offset) *offset = 0;
    if (a->buffer && !strided && (a->offset == 0 || offset)) {
        *out = a->buffer;
        if (offset) *offset = a->offset;
        return CLSTATS_OK;
    }
    if (a->host && span > ctx->max_alloc)
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "%zu bytes of data exceed the device's largest buffer (%llu MiB)",
                             span, (unsigned long long)(ctx->max_alloc >> 20));
    if (a->host && !strided) {
        *owned = true;
        return clstats__upload(ctx, a->host, span, "uploading the input", out);
    }
    /* A copy on the device: rows packed, or the region from the offset. */
    const size_t row = a->nx * es, bytes = strided ? row * a->ny : span;
    if (bytes > ctx->max_alloc)
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "a copy of %zu bytes is larger than the device's largest buffer",
                             bytes);
    cl_int err;
    cl_mem copy = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if ((status = clstats__cl_check(ctx, err, "clCreateBuffer(input copy)"))) return status;
    const size_t from[3] = {a->offset * es, 0, 0}, to[3] = {0, 0, 0}, region[3] = {row, a->ny, 1};
    if (a->host)
        err = clEnqueueWriteBufferRect(ctx->queue, copy, CL_FALSE, to, from, region, row, 0,
                                       stride * es, 0, a->host, 0, NULL, NULL);
    else if (strided)
        err = clEnqueueCopyBufferRect(ctx->queue, a->buffer, copy, from, to, region, stride * es, 0,
                                      row, 0, 0, NULL, NULL);
    else
        err = clEnqueueCopyBuffer(ctx->queue, a->buffer, copy, a->offset * es, 0, bytes, 0, NULL,
                                  NULL);
    if ((status = clstats__cl_check(ctx, err, "copying the input"))) {
        clReleaseMemObject(copy);
        return status;
    }
    /* A host array must be read before the call returns: the caller may change it then. */
    if (a->host && (status = clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish(input)"))) {
        clReleaseMemObject(copy);
        return status;
    }
    *out = copy;
    *owned = true;
    return CLSTATS_OK;
}

int clstats__array_out(clstats_ctx *ctx, cl_mem src, const struct clstats_array *a)
{
    const size_t es = clstats__dtype_size(a->dtype), stride = clstats__array_stride(a);
    const size_t row = a->nx * es;
    const size_t from[3] = {0, 0, 0}, to[3] = {a->offset * es, 0, 0}, region[3] = {row, a->ny, 1};
    cl_int err;
    if (a->host && stride == a->nx)
        err =
            clEnqueueReadBuffer(ctx->queue, src, CL_FALSE, 0, row * a->ny, a->host, 0, NULL, NULL);
    else if (a->host)
        err = clEnqueueReadBufferRect(ctx->queue, src, CL_FALSE, from, to, region, row, 0,
                                      stride * es, 0, a->host, 0, NULL, NULL);
    else
        err = clEnqueueCopyBufferRect(ctx->queue, src, a->buffer, from, to, region, row, 0,
                                      stride * es, 0, 0, NULL, NULL);
    return clstats__cl_check(ctx, err, "writing the output");
}

int clstats__array_rows_on_host(clstats_ctx *ctx, const struct clstats_array *a, size_t first,
                                size_t count, const char *what, const void **rows, size_t *ld,
                                void **copy)
{
    const size_t es = clstats__dtype_size(a->dtype);
    *copy = NULL;
    *rows = NULL;
    *ld = clstats__array_stride(a);
    if (!count || !a->nx) return CLSTATS_OK;
    if (a->host) {
        *rows = (const char *)a->host + first * *ld * es;
        return CLSTATS_OK;
    }
    /* The span from the first row's start to the last row's end, gaps included, in one read:
     * the callers walk rows at the array's stride either way. */
    const size_t bytes = ((count - 1) * *ld + a->nx) * es;
    if (!(*copy = malloc(bytes)))
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for %s", what);
    *rows = *copy;
    return clstats__cl_check(ctx,
                             clEnqueueReadBuffer(ctx->queue, a->buffer, CL_TRUE,
                                                 (a->offset + first * *ld) * es, bytes, *copy, 0,
                                                 NULL, NULL),
                             what);
}
