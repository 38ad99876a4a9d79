/* scratch.c - device buffers a context keeps between calls under the names modules give them
 * ("select.hist"), grown on demand, so that hot paths do not allocate device memory each time. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int clstats__scratch(clstats_ctx *ctx, const char *name, size_t bytes, cl_mem *out)
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
