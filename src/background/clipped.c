/* clipped.c - the boxes measured as photutils' Background2D measures them (clipped.h): a
 * work-item a box, each sorting its valid pixels in its own stretch of a scratch buffer, a band
 * of box rows a launch. */
#include "clipped.h"

#include <stdio.h>

/* photutils' defaults for BiweightLocationBackground and BiweightScaleBackgroundRMS */
#define BIWEIGHT_LOCATION_C 6.0
#define BIWEIGHT_SCALE_C 9.0

int clstats__launch_clipped(clstats_ctx *ctx, const struct clstats_array *image, cl_mem in,
                            size_t offset, cl_mem mask,
                            const struct clstats_background_options *o, size_t nx, size_t ny,
                            cl_mem out)
{
    cl_mem sorted;
    const size_t box = o->box_w * o->box_h;
    /* the sorted pixels of a band of box rows at a time: at most 256 MiB, or half the
     * device's largest buffer (background.band_kib) */
    cl_ulong limit = ctx->max_alloc / 2 < (256u << 20) ? ctx->max_alloc / 2 : (256u << 20);
    const long band_kib = clstats__tuned(ctx, P_BACKGROUND_BAND_KIB);
    if (band_kib > 0) limit = (cl_ulong)band_kib << 10;
    const size_t row_bytes = nx * box * sizeof(cl_double);
    size_t band = limit / row_bytes;
    if (band < 1) band = 1;
    if (band > ny) band = ny;
    int status = clstats__scratch(ctx, "background.sorted", band * row_bytes, &sorted);
    if (status != CLSTATS_OK) return status;
    char options[200];
    snprintf(options, sizeof options, "-D IN_DOUBLE=%d -D HAS_MASK=%d%s",
             image->dtype == CLSTATS_FLOAT64, mask != NULL, ctx->exact_divide_option);
    cl_program program;
    cl_kernel kernel;
    if ((status = clstats__program(ctx, "clipped_stats.cl", options, &program)) ||
        (status = clstats__kernel(ctx, program, "clipped_stats", &kernel)))
        return status;
    /* photutils: excluded where more than exclude_percentile percent of the box is missing;
     * at 100 every box but an empty one is kept */
    const double pct = o->exclude_percentile < 0 ? 0.0 : o->exclude_percentile;
    const cl_double max_missing = pct / 100.0 * (double)box - (pct == 100.0 ? 1.0 : 0.0);
    const cl_ulong off = offset, stride = clstats__array_stride(image);
    const cl_int w = (cl_int)image->nx, h = (cl_int)image->ny, bw = (cl_int)o->box_w,
                 bh = (cl_int)o->box_h, iters = o->clip_iters < 0 ? -1 : o->clip_iters,
                 est = (cl_int)o->estimator, rest = (cl_int)o->rms_estimator;
    const cl_double sigma = o->clip_sigma, cl = BIWEIGHT_LOCATION_C, cs = BIWEIGHT_SCALE_C;
    const cl_int nby = (cl_int)ny;
    cl_int row0 = 0;
    cl_mem mask_arg = mask ? mask : in;
    const void *args[] = {&in,   &off,  &stride, &w,    &h,   &bw, &bh,  &mask_arg, &sigma,
                          &iters, &max_missing, &est, &rest, &cl, &cs, &row0, &nby, &sorted,
                          &out};
    const size_t sizes[] = {sizeof in,    sizeof off,  sizeof stride,      sizeof w,
                            sizeof h,     sizeof bw,   sizeof bh,          sizeof mask_arg,
                            sizeof sigma, sizeof iters, sizeof max_missing, sizeof est,
                            sizeof rest,  sizeof cl,   sizeof cs,          sizeof row0,
                            sizeof nby,   sizeof sorted, sizeof out};
    for (cl_uint i = 0; i < sizeof args / sizeof *args; i++)
        CL_TRY(ctx, clSetKernelArg(kernel, i, sizes[i], args[i]), "clSetKernelArg(clipped_stats)");
    for (size_t r = 0; r < ny; r += band) {
        row0 = (cl_int)r;
        CL_TRY(ctx, clSetKernelArg(kernel, 15, sizeof row0, &row0), "clSetKernelArg(clipped_stats)");
        const size_t global[2] = {nx, r + band <= ny ? band : ny - r};
        if ((status = clstats__launch(ctx, kernel, 2, NULL, global, NULL, "clipped_stats")))
            return status;
    }
fail:
    return status;
}
