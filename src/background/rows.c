/* rows.c - the SEP maps on CPU devices (kernels/background/interpolate.cl's interpolate_rows):
 * a work-item a row of a map, walking the columns node interval by node interval with weights
 * the host computes once per column, and writing into the caller's arrays in place where they
 * are packed host arrays (a buffer over them: no copy of the maps afterwards). The same float
 * operations as the per-pixel kernel, so the same bits. */
#include "rows.h"

#include "mesh.h"

#include <stdlib.h>

/* A buffer the kernel writes the map into: over the caller's array where it is a packed host
 * array (*direct true), else the scratch map, copied out after. */
static int map_target(clstats_ctx *ctx, const struct clstats_array *a, const char *scratch,
                      cl_mem *out, bool *direct)
{
    *direct = a->host && (a->stride == 0 || a->stride == a->nx);
    if (!*direct) return clstats__scratch(ctx, scratch, a->nx * a->ny * sizeof(float), out);
    cl_int err;
    *out = clCreateBuffer(ctx->context, CL_MEM_WRITE_ONLY | CL_MEM_USE_HOST_PTR,
                          a->nx * a->ny * sizeof(float), a->host, &err);
    return clstats__cl_check(ctx, err, "clCreateBuffer(the map over the caller's array)");
}

/* The kernel's writes made the caller's: a map of a CL_MEM_USE_HOST_PTR buffer is where OpenCL
 * promises its content in host memory (on CPU devices it is that memory: nothing copied). */
static int map_done(clstats_ctx *ctx, cl_mem buf, const struct clstats_array *a, bool direct)
{
    if (!direct) return clstats__array_out(ctx, buf, a);
    cl_int err;
    void *p = clEnqueueMapBuffer(ctx->queue, buf, CL_TRUE, CL_MAP_READ, 0,
                                 a->nx * a->ny * sizeof(float), 0, NULL, NULL, &err);
    int status = clstats__cl_check(ctx, err, "clEnqueueMapBuffer(map)");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clEnqueueUnmapMemObject(ctx->queue, buf, p, 0, NULL, NULL),
                                   "clEnqueueUnmapMemObject(map)");
    return status;
}

/* Node interval starts (first[k], k < nbx, first[nbx - 1] the width) and the columns' weights:
 * 1 - dx, (1 - dx)^2 - 1, dx, dx^2 - 1, each rounded to float as SEP's backline rounds them
 * (one operation a statement: no contraction into fused operations). */
static void column_weights(const int *col_node, const float *col_dx, size_t w, size_t nbx,
                           int *first, float *weights)
{
    for (size_t k = 0; k < nbx; k++)
        first[k] = (int)w;
    for (size_t x = w; x-- > 0;)
        first[col_node[x]] = (int)x;
    first[0] = 0;
    first[nbx - 1] = (int)w;
    for (size_t x = 0; x < w; x++) {
        const float dx = col_dx[x], cdx = 1 - dx;
        const float cdx2 = cdx * cdx, dx2 = dx * dx;
        weights[x] = cdx;
        weights[w + x] = cdx2 - 1;
        weights[2 * w + x] = dx;
        weights[3 * w + x] = dx2 - 1;
    }
}

int clstats__interpolate_rows(clstats_ctx *ctx, const struct clstats_background *b,
                              cl_mem values, cl_mem dvalues, const int *col_node,
                              const float *col_dx, const struct clstats_array *back,
                              const struct clstats_array *rms)
{
    const size_t nbx = b->nx, w = b->width, h = b->height, row_floats = 2 * h * nbx;
    cl_mem first_buf = NULL, weights_buf = NULL, out[2] = {NULL, NULL}, node, dnode, u;
    bool direct[2] = {false, false};
    const struct clstats_array *maps[2] = {back, rms};
    int *first = malloc(nbx * sizeof *first);
    float *weights = malloc(4 * w * sizeof *weights);
    int status = CLSTATS_OK;
    if (!first || !weights) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the map's columns");
        goto fail;
    }
    if (nbx > 1) column_weights(col_node, col_dx, w, nbx, first, weights);
    else first[0] = 0, weights[0] = 0.0f;
    const char *scratch[2] = {"background.back", "background.rms"};
    for (int m = 0; m < 2; m++)
        if (maps[m] && (status = map_target(ctx, maps[m], scratch[m], &out[m], &direct[m])))
            goto fail;
    if ((status = clstats__upload(ctx, first, nbx * sizeof *first, "uploading the columns",
                                  &first_buf)) ||
        (status = clstats__upload(ctx, weights, (nbx > 1 ? 4 * w : 1) * sizeof *weights,
                                  "uploading the columns", &weights_buf)) ||
        (status = clstats__scratch(ctx, "background.node", row_floats * sizeof(float), &node)) ||
        (status = clstats__scratch(ctx, "background.dnode", row_floats * sizeof(float), &dnode)) ||
        (status = clstats__scratch(ctx, "background.u", row_floats * sizeof(float), &u)))
        goto fail;
    cl_program program;
    cl_kernel k;
    if ((status = clstats__program(ctx, "interpolate.cl", ctx->exact_divide_option, &program)) ||
        (status = clstats__kernel(ctx, program, "interpolate_rows", &k)))
        goto fail;
    const cl_int inbx = (cl_int)nbx, inby = (cl_int)b->ny, ibh = (cl_int)b->box_h,
                 iw = (cl_int)w, ih = (cl_int)h, first_map = back ? 0 : 1;
    cl_mem out0 = back ? out[0] : out[1], out1 = rms ? out[1] : out0;
    status = CLSTATS_SET_ARGS(
        ctx, k, "clSetKernelArg(interpolate_rows)", KERNEL_ARG(values), KERNEL_ARG(dvalues),
        KERNEL_ARG(inbx), KERNEL_ARG(inby), KERNEL_ARG(ibh), KERNEL_ARG(iw), KERNEL_ARG(ih),
        KERNEL_ARG(first_map), KERNEL_ARG(node), KERNEL_ARG(dnode), KERNEL_ARG(u),
        KERNEL_ARG(first_buf), KERNEL_ARG(weights_buf), KERNEL_ARG(out0), KERNEL_ARG(out1));
    const size_t global[2] = {h, (size_t)(back != NULL) + (rms != NULL)};
    if (status || (status = clstats__launch(ctx, k, 2, NULL, global, NULL, "interpolate_rows")))
        goto fail;
    for (int i = 0; i < 2 && status == CLSTATS_OK; i++)
        if (maps[i]) status = map_done(ctx, out[i], maps[i], direct[i]);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish(background maps)");
fail:
    clFinish(ctx->queue); /* the uploads read host memory freed below */
    for (int i = 0; i < 2; i++)
        if (direct[i] && out[i]) clReleaseMemObject(out[i]);
    if (first_buf) clReleaseMemObject(first_buf);
    if (weights_buf) clReleaseMemObject(weights_buf);
    free(first), free(weights);
    return status;
}
