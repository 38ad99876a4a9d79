/* scratch.c - device buffers a context keeps between calls under the names modules give them
 * ("select.hist"), grown on demand, so that hot paths do not allocate device memory each time;
 * and pinned host memory kept alike, mapped for as long as the context keeps it. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The entry kept under `name`, made empty where there is none. */
static int entry(clstats_ctx *ctx, const char *name, struct scratch_buffer **out)
{
    struct scratch_buffer *b = NULL;
    for (size_t i = 0; i < ctx->n_scratch && !b; i++)
        if (ctx->scratch[i].name == name || strcmp(ctx->scratch[i].name, name) == 0)
            b = &ctx->scratch[i];
    if (!b) {
        struct scratch_buffer *grown =
            realloc(ctx->scratch, (ctx->n_scratch + 1) * sizeof *ctx->scratch);
        if (!grown) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot keep scratch %s", name);
        ctx->scratch = grown;
        b = &ctx->scratch[ctx->n_scratch++];
        *b = (struct scratch_buffer){.name = name};
    }
    *out = b;
    return CLSTATS_OK;
}

int clstats__scratch(clstats_ctx *ctx, const char *name, size_t bytes, cl_mem *out)
{
    struct scratch_buffer *b;
    const int found = entry(ctx, name, &b);
    if (found != CLSTATS_OK) return found;
    if (bytes == 0) bytes = 1;
    if (b->mem && b->bytes >= bytes) {
        *out = b->mem;
        return CLSTATS_OK;
    }
    if (b->mem) clReleaseMemObject(b->mem);
    b->mem = NULL;
    b->bytes = 0;
    cl_int err;
    cl_mem mem = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    int status = clstats__cl_check(ctx, err, name);
    if (status != CLSTATS_OK) return status;
    b->mem = mem;
    b->bytes = bytes;
    *out = mem;
    return CLSTATS_OK;
}

int clstats__scratch_pinned(clstats_ctx *ctx, const char *name, size_t bytes, void **host)
{
    struct scratch_buffer *b;
    int status = entry(ctx, name, &b);
    if (status != CLSTATS_OK) return status;
    if (bytes == 0) bytes = 1;
    if (b->host && b->bytes >= bytes) {
        *host = b->host;
        return CLSTATS_OK;
    }
    if (b->host) clEnqueueUnmapMemObject(ctx->queue, b->mem, b->host, 0, NULL, NULL);
    if (b->mem) clReleaseMemObject(b->mem);
    *b = (struct scratch_buffer){.name = b->name};
    cl_int err;
    cl_mem mem =
        clCreateBuffer(ctx->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &err);
    if ((status = clstats__cl_check(ctx, err, name)) != CLSTATS_OK) return status;
    void *mapped = clEnqueueMapBuffer(ctx->queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                      bytes, 0, NULL, NULL, &err);
    if ((status = clstats__cl_check(ctx, err, name)) != CLSTATS_OK) {
        clReleaseMemObject(mem);
        return status;
    }
    b->mem = mem;
    b->bytes = bytes;
    b->host = mapped;
    *host = mapped;
    return CLSTATS_OK;
}

void clstats__scratch_free(clstats_ctx *ctx)
{
    /* Pinned scratch unmapped, and the unmaps done, before the buffers go. */
    for (size_t i = 0; i < ctx->n_scratch; i++)
        if (ctx->scratch[i].host)
            clEnqueueUnmapMemObject(ctx->queue, ctx->scratch[i].mem, ctx->scratch[i].host, 0, NULL,
                                    NULL);
    if (ctx->n_scratch) clFinish(ctx->queue);
    for (size_t i = 0; i < ctx->n_scratch; i++)
        if (ctx->scratch[i].mem) clReleaseMemObject(ctx->scratch[i].mem);
    free(ctx->scratch);
    ctx->scratch = NULL;
    ctx->n_scratch = 0;
}
