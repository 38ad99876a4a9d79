/* masks.c - an array with a mask (struct clstats_array of CLSTATS_UINT8, the data's shape) made
 * into one packed device copy whose masked elements are NaN (kernels/common/apply_mask.cl): the
 * one way modules take masks, so that every design leaves masked elements out exactly as NaNs. */
#include "internal.h"

int clstats__array_in_masked(clstats_ctx *ctx, const struct clstats_array *a,
                             const struct clstats_array *mask, cl_mem *out, bool *owned)
{
    *owned = false;
    if (!mask) return clstats__array_in(ctx, a, true, out, NULL, owned);
    int status = clstats__array_check(ctx, mask, "the mask", NULL);
    if (status != CLSTATS_OK) return status;
    if (mask->dtype != CLSTATS_UINT8 || mask->nx != a->nx || mask->ny != a->ny)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "the mask must be uint8 and %zu x %zu like the data, not %zu x %zu",
                             a->nx, a->ny, mask->nx, mask->ny);
    const bool f64 = a->dtype == CLSTATS_FLOAT64;
    cl_mem in = NULL, m = NULL, copy = NULL;
    bool in_owned = false, m_owned = false;
    size_t in_offset = 0, m_offset = 0;
    cl_program program;
    cl_kernel kernel;
    cl_int err;
    const size_t bytes = a->nx * a->ny * clstats__dtype_size(a->dtype); /* checked: the span */
    if ((status = clstats__array_in(ctx, a, false, &in, &in_offset, &in_owned)) ||
        (status = clstats__array_in(ctx, mask, false, &m, &m_offset, &m_owned)) ||
        (status = clstats__program(ctx, "apply_mask.cl", "", &program)) ||
        (status =
             clstats__kernel(ctx, program, f64 ? "masked_copy_f64" : "masked_copy_f32", &kernel)))
        goto fail;
    copy = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if ((status = clstats__cl_check(ctx, err, "clCreateBuffer(masked copy)"))) goto fail;
    /* A buffer's own offset applies; a host array's copy starts at its first element. */
    const cl_long io = (cl_long)in_offset, is = (cl_long)clstats__array_stride(a),
                  mo = (cl_long)m_offset, ms = (cl_long)clstats__array_stride(mask);
    const cl_long nx = (cl_long)a->nx;
    status = CLSTATS_SET_ARGS(ctx, kernel, "clSetKernelArg(masked_copy)", KERNEL_ARG(in),
                              KERNEL_ARG(io), KERNEL_ARG(is), KERNEL_ARG(m), KERNEL_ARG(mo),
                              KERNEL_ARG(ms), KERNEL_ARG(nx), KERNEL_ARG(copy));
    if (status != CLSTATS_OK) goto fail;
    const size_t global[2] = {(a->nx + 63) / 64 * 64, a->ny};
    status = clstats__launch(ctx, kernel, 2, NULL, global, NULL, "masked_copy");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish(masked copy)");
fail:
    if (in && in_owned) clReleaseMemObject(in);
    if (m && m_owned) clReleaseMemObject(m);
    if (status != CLSTATS_OK) {
        if (copy) clReleaseMemObject(copy);
        return status;
    }
    *out = copy;
    *owned = true;
    return CLSTATS_OK;
}
