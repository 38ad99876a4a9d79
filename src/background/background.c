/* background.c - the mesh background and RMS (include/clstats/background.h): the boxes measured
 * on the device (kernels/background/box_stats.cl, a work-group a box), the mesh filtered and
 * its splines prepared on the host (mesh.c), the maps interpolated on the device
 * (kernels/background/interpolate.cl). */
#include "clipped.h"
#include "internal.h"
#include "mesh.h"
#include "rows.h"
#include "zoom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kernels/background/box_stats.cl's MAX_LEVELS, SExtractor's QUANTIF_NMAXLEVELS */
#define BOX_LEVELS 4096

static const struct clstats_background_options default_options = {
    .box_w = 64, .box_h = 64, .filter_w = 3, .filter_h = 3, .clip_sigma = 3.0};

static int check_image(clstats_ctx *ctx, const struct clstats_array *image,
                       const struct clstats_background_options *o)
{
    int status = clstats__array_check(ctx, image, "the image", NULL);
    if (status != CLSTATS_OK) return status;
    if (image->nx > INT32_MAX || image->ny > INT32_MAX || image->nx * image->ny > INT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "%zu x %zu pixels: SEP's arithmetic counts pixels in int", image->nx,
                             image->ny);
    if (o->box_w > (size_t)INT32_MAX || o->box_h > (size_t)INT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "box larger than any image");
    if (o->filter_w % 2 == 0 || o->filter_h % 2 == 0)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "filter %zu x %zu: sizes must be odd",
                             o->filter_w, o->filter_h);
    if (!(o->clip_sigma > 0.0) || !(o->filter_threshold >= 0.0) ||
        (unsigned)o->estimator > CLSTATS_BKG_BIWEIGHT ||
        (unsigned)o->rms_estimator > CLSTATS_RMS_BIWEIGHT ||
        (unsigned)o->clipping > CLSTATS_CLIP_SIGMA || !(o->exclude_percentile <= 100.0))
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "clip_sigma must be > 0, filter_threshold >= 0, exclude_percentile "
                             "<= 100, the estimators and the clipping known");
    if (o->clipping == CLSTATS_CLIP_HISTOGRAM &&
        (o->estimator > CLSTATS_BKG_MEAN || o->rms_estimator != CLSTATS_RMS_STD))
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "the MMM and biweight backgrounds and the MAD-std and biweight RMS "
                             "are photutils' and need its sigma clipping (CLSTATS_CLIP_SIGMA)");
    if (!ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "%s has no fp64: SExtractor's statistics are in double",
                             ctx->device_name);
    return CLSTATS_OK;
}

/* The options with 0 replaced by the defaults. */
static struct clstats_background_options resolved(const struct clstats_background_options *opts)
{
    struct clstats_background_options o = opts ? *opts : default_options;
    if (!o.box_w) o.box_w = 64;
    if (!o.box_h) o.box_h = 64;
    if (!o.filter_w) o.filter_w = 3;
    if (!o.filter_h) o.filter_h = 3;
    if (o.clip_sigma == 0.0) o.clip_sigma = 3.0;
    if (o.clip_iters == 0) o.clip_iters = 10;
    if (o.exclude_percentile == 0.0) o.exclude_percentile = 10.0;
    return o;
}

/* SExtractor's boxes: box_stats.cl, a work-group a box, over the image in `in` (at `offset`),
 * its mask in `mask` (or NULL), into out (every box's background, then every box's RMS). */
static int launch_box_stats(clstats_ctx *ctx, const struct clstats_array *image, cl_mem in,
                            size_t offset, cl_mem mask,
                            const struct clstats_background_options *o, size_t nx, size_t ny,
                            cl_mem out)
{
    const size_t wg = (size_t)clstats__tuned(ctx, P_BACKGROUND_WG);
    if (wg < 1 || (wg & (wg - 1)) || wg > ctx->max_work_group)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "background.wg %zu: a power of two up to %zu",
                             wg, ctx->max_work_group);
    char options[200];
    snprintf(options, sizeof options, "-D WG=%zu -D IN_DOUBLE=%d -D HAS_MASK=%d%s", wg,
             image->dtype == CLSTATS_FLOAT64, mask != NULL, ctx->exact_divide_option);
    cl_program program;
    cl_kernel kernel;
    int status;
    if ((status = clstats__program(ctx, "box_stats.cl", options, &program)) ||
        (status = clstats__kernel(ctx, program, "box_stats", &kernel)))
        return status;
    const cl_ulong off = offset, stride = clstats__array_stride(image);
    const cl_int w = (cl_int)image->nx, h = (cl_int)image->ny, bw = (cl_int)o->box_w,
                 bh = (cl_int)o->box_h, est = (cl_int)o->estimator;
    /* SExtractor's histogram levels per clipped pixel: sqrt(2/pi) 5 sd over 4 "mode pixels". */
    const cl_double step = sqrt(2 / 3.14159265358979323846) * 5 / 4, clip = o->clip_sigma;
    cl_mem mask_arg = mask ? mask : in;
    const void *args[] = {&in, &off, &stride, &w, &h, &bw, &bh, &mask_arg, &step, &clip, &est,
                          &out};
    const size_t sizes[] = {sizeof in, sizeof off, sizeof stride, sizeof w, sizeof h, sizeof bw,
                            sizeof bh, sizeof mask_arg, sizeof step, sizeof clip, sizeof est,
                            sizeof out};
    for (cl_uint i = 0; i < sizeof args / sizeof *args; i++)
        CL_TRY(ctx, clSetKernelArg(kernel, i, sizes[i], args[i]), "clSetKernelArg(box_stats)");
    /* the kernel's local arrays: two sums and a count a work-item, the histogram's levels */
    const size_t local_bytes[] = {wg * sizeof(cl_double), wg * sizeof(cl_double),
                                  wg * sizeof(cl_long), BOX_LEVELS * sizeof(cl_int)};
    for (cl_uint i = 0; i < 4; i++)
        CL_TRY(ctx, clSetKernelArg(kernel, 12 + i, local_bytes[i], NULL),
               "clSetKernelArg(box_stats)");
    const size_t global[2] = {nx * wg, ny}, local[2] = {wg, 1};
    return clstats__launch(ctx, kernel, 2, NULL, global, local, "box_stats");
fail:
    return status;
}

/* Every box's background and RMS (bad boxes -1e30) into back and rms, nx * ny each, by
 * SExtractor's or photutils' statistics (o->clipping). */
static int measure_boxes(clstats_ctx *ctx, const struct clstats_array *image, const uint8_t *mask,
                         const struct clstats_background_options *o, size_t nx, size_t ny,
                         float *back, float *rms)
{
    cl_mem in = NULL, mbuf = NULL, out = NULL;
    bool owned = false;
    size_t offset = 0;
    const size_t nb = nx * ny;
    int status = clstats__array_in(ctx, image, false, &in, &offset, &owned);
    if (status != CLSTATS_OK) return status;
    if (mask && (status = clstats__upload(ctx, mask, image->nx * image->ny, "uploading the mask",
                                          &mbuf)))
        goto fail;
    if ((status = clstats__scratch(ctx, "background.boxes", 2 * nb * sizeof(float), &out)))
        goto fail;
    status = o->clipping == CLSTATS_CLIP_SIGMA
                 ? clstats__launch_clipped(ctx, image, in, offset, mbuf, o, nx, ny, out)
                 : launch_box_stats(ctx, image, in, offset, mbuf, o, nx, ny, out);
    if (status != CLSTATS_OK) goto fail;
    CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0, nb * sizeof(float), back, 0, NULL,
                                    NULL),
           "reading the boxes");
    CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, nb * sizeof(float),
                                    nb * sizeof(float), rms, 0, NULL, NULL),
           "reading the boxes");
fail:
    if (mbuf) clReleaseMemObject(mbuf);
    if (owned) clReleaseMemObject(in);
    return status;
}

int clstats_background(clstats_ctx *ctx, const struct clstats_array *image, const uint8_t *mask,
                       const struct clstats_background_options *opts,
                       struct clstats_background **out)
{
    if (!ctx || !out) return clstats__fail(ctx, CLSTATS_ERR_ARG, "ctx and out are needed");
    *out = NULL;
    const struct clstats_background_options o = resolved(opts);
    int status = check_image(ctx, image, &o);
    if (status != CLSTATS_OK) return status;
    const size_t nx = (image->nx - 1) / o.box_w + 1, ny = (image->ny - 1) / o.box_h + 1;
    struct clstats_background *b = calloc(1, sizeof *b);
    if (!b) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the mesh");
    b->width = image->nx, b->height = image->ny, b->box_w = o.box_w, b->box_h = o.box_h;
    b->nx = nx, b->ny = ny, b->clipping = o.clipping;
    b->back = malloc(4 * nx * ny * sizeof(float));
    if (!b->back) {
        free(b);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the mesh");
    }
    b->rms = b->back + nx * ny;
    b->dback = b->rms + nx * ny;
    b->drms = b->dback + nx * ny;
    clstats__begin(ctx);
    const bool photutils = o.clipping == CLSTATS_CLIP_SIGMA;
    status = measure_boxes(ctx, image, mask, &o, nx, ny, b->back, b->rms);
    status = clstats__end(ctx, status);
    if (status == CLSTATS_OK &&
        (!clstats__mesh_filter(b->back, b->rms, nx, ny, o.filter_w, o.filter_h,
                               o.filter_threshold, photutils, &b->global_back,
                               &b->global_rms) ||
         !clstats__mesh_spline_y(b->back, nx, ny, b->dback) ||
         !clstats__mesh_spline_y(b->rms, nx, ny, b->drms)))
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the mesh filter");
    if (status != CLSTATS_OK) {
        clstats_background_free(b);
        return status;
    }
    *out = b;
    return CLSTATS_OK;
}

void clstats_background_free(struct clstats_background *bkg)
{
    if (!bkg) return;
    free(bkg->back);
    free(bkg);
}

static int check_map(clstats_ctx *ctx, const struct clstats_background *b,
                     const struct clstats_array *a, const char *what)
{
    if (!a) return CLSTATS_OK;
    int status = clstats__array_check(ctx, a, what, NULL);
    if (status != CLSTATS_OK) return status;
    if (a->dtype != CLSTATS_FLOAT32 || a->nx != b->width || a->ny != b->height)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s must be float32, %zu x %zu", what,
                             b->width, b->height);
    return CLSTATS_OK;
}

/* The mesh's values and y derivatives on the device: both maps' values, then both maps'
 * derivatives. */
static int upload_mesh(clstats_ctx *ctx, const struct clstats_background *b, float *host,
                       cl_mem *values, cl_mem *dvalues)
{
    const size_t nb = b->nx * b->ny;
    memcpy(host, b->back, nb * sizeof(float));
    memcpy(host + nb, b->rms, nb * sizeof(float));
    memcpy(host + 2 * nb, b->dback, nb * sizeof(float));
    memcpy(host + 3 * nb, b->drms, nb * sizeof(float));
    int status = clstats__upload(ctx, host, 2 * nb * sizeof(float), "uploading the mesh", values);
    if (status == CLSTATS_OK)
        status = clstats__upload(ctx, host + 2 * nb, 2 * nb * sizeof(float), "uploading the mesh",
                                 dvalues);
    return status;
}

/* GPUs: the rows' nodes (spline_rows), then a work-item a pixel (interpolate_pixels). */
static int interpolate_pixels(clstats_ctx *ctx, const struct clstats_background *b,
                              cl_mem values, cl_mem dvalues, const int *col_node,
                              const float *col_dx, const struct clstats_array *back,
                              const struct clstats_array *rms)
{
    const size_t nbx = b->nx, w = b->width, h = b->height;
    cl_mem cnode = NULL, cdx = NULL;
    cl_mem node, dnode, u, map_back, map_rms;
    const size_t row_floats = 2 * h * nbx;
    int status;
    if ((status = clstats__upload(ctx, col_node, w * sizeof(int), "uploading the columns",
                                  &cnode)) ||
        (status = clstats__upload(ctx, col_dx, w * sizeof(float), "uploading the columns", &cdx)) ||
        (status = clstats__scratch(ctx, "background.node", row_floats * sizeof(float), &node)) ||
        (status = clstats__scratch(ctx, "background.dnode", row_floats * sizeof(float), &dnode)) ||
        (status = clstats__scratch(ctx, "background.u", row_floats * sizeof(float), &u)) ||
        (status = clstats__scratch(ctx, "background.back", w * h * sizeof(float), &map_back)) ||
        (status = clstats__scratch(ctx, "background.rms", w * h * sizeof(float), &map_rms)))
        goto fail;
    cl_program program;
    cl_kernel spline, pixels;
    if ((status = clstats__program(ctx, "interpolate.cl", ctx->exact_divide_option, &program)) ||
        (status = clstats__kernel(ctx, program, "spline_rows", &spline)) ||
        (status = clstats__kernel(ctx, program, "interpolate_pixels", &pixels)))
        goto fail;
    const cl_int inbx = (cl_int)nbx, inby = (cl_int)b->ny, ibh = (cl_int)b->box_h, ih = (cl_int)h,
                 iw = (cl_int)w, wb = back != NULL, wr = rms != NULL;
    const size_t g1[2] = {h, 2}, g2[2] = {w, h};
    if ((status = CLSTATS_SET_ARGS(ctx, spline, "clSetKernelArg(spline_rows)", KERNEL_ARG(values),
                                   KERNEL_ARG(dvalues), KERNEL_ARG(inbx), KERNEL_ARG(inby),
                                   KERNEL_ARG(ibh), KERNEL_ARG(ih), KERNEL_ARG(node),
                                   KERNEL_ARG(dnode), KERNEL_ARG(u))) ||
        (status = CLSTATS_SET_ARGS(ctx, pixels, "clSetKernelArg(interpolate_pixels)",
                                   KERNEL_ARG(node), KERNEL_ARG(dnode), KERNEL_ARG(cnode),
                                   KERNEL_ARG(cdx), KERNEL_ARG(inbx), KERNEL_ARG(iw),
                                   KERNEL_ARG(ih), KERNEL_ARG(map_back), KERNEL_ARG(map_rms),
                                   KERNEL_ARG(wb), KERNEL_ARG(wr))) ||
        (status = clstats__launch(ctx, spline, 2, NULL, g1, NULL, "spline_rows")) ||
        (status = clstats__launch(ctx, pixels, 2, NULL, g2, NULL, "interpolate_pixels")))
        goto fail;
    if (back && (status = clstats__array_out(ctx, map_back, back))) goto fail;
    if (rms && (status = clstats__array_out(ctx, map_rms, rms))) goto fail;
    status = clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish(background maps)");
fail:
    clFinish(ctx->queue); /* the uploads read host memory freed by the caller */
    if (cnode) clReleaseMemObject(cnode);
    if (cdx) clReleaseMemObject(cdx);
    return status;
}

static int interpolate(clstats_ctx *ctx, const struct clstats_background *b,
                       const struct clstats_array *back, const struct clstats_array *rms)
{
    const size_t nb = b->nx * b->ny, w = b->width;
    cl_mem values = NULL, dvalues = NULL;
    int *col_node = calloc(w, sizeof *col_node);
    float *col_dx = calloc(w, sizeof *col_dx), *host = malloc(4 * nb * sizeof(float));
    int status = CLSTATS_OK;
    if (!col_node || !col_dx || !host) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the map's columns");
        goto fail;
    }
    if (b->nx > 1) clstats__mesh_columns(w, b->box_w, b->nx, col_node, col_dx);
    if ((status = upload_mesh(ctx, b, host, &values, &dvalues))) goto fail;
    status = clstats__tuned(ctx, P_BACKGROUND_ROWS) == 2
                 ? clstats__interpolate_rows(ctx, b, values, dvalues, col_node, col_dx, back, rms)
                 : interpolate_pixels(ctx, b, values, dvalues, col_node, col_dx, back, rms);
fail:
    clFinish(ctx->queue); /* the uploads read host memory freed below */
    if (values) clReleaseMemObject(values);
    if (dvalues) clReleaseMemObject(dvalues);
    free(col_node), free(col_dx), free(host);
    return status;
}

int clstats_background_maps(clstats_ctx *ctx, const struct clstats_background *bkg,
                            const struct clstats_array *back, const struct clstats_array *rms)
{
    if (!ctx || !bkg) return clstats__fail(ctx, CLSTATS_ERR_ARG, "ctx and the mesh are needed");
    int status = check_map(ctx, bkg, back, "the background map");
    if (status == CLSTATS_OK) status = check_map(ctx, bkg, rms, "the RMS map");
    if (status != CLSTATS_OK) return status;
    if (!back && !rms) return CLSTATS_OK;
    clstats__begin(ctx);
    return clstats__end(ctx, bkg->clipping == CLSTATS_CLIP_SIGMA
                                 ? clstats__zoom_maps(ctx, bkg, back, rms)
                                 : interpolate(ctx, bkg, back, rms));
}
