/* zoom.c - the maps of a photutils mesh (zoom.h): each mesh turned into the coefficients of the
 * cubic B-spline through it (scipy's spline_filter with mode 'reflect', the mesh extended by
 * half-sample reflection), along y then along x as scipy filters axis 0 then axis 1, and each
 * column's and row's 4 taps, on the host in double; the pixels summed on the device. */
#include "zoom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The coefficients of a line of n values `step` apart, in place: Unser's recursive filter with
 * the cubic B-spline's pole sqrt(3) - 2 and the initial values for a line extended by
 * half-sample reflection, in scipy's order of operations (ni_splines.c's apply_filter with
 * NI_EXTEND_REFLECT), since its initial value for the backward pass is its own. */
static void prefilter_line(double *v, size_t n, size_t step)
{
    if (n < 2) return;
    const double z = 1.7320508075688772 - 2.0, gain = (1.0 - z) * (1.0 - 1.0 / z);
    for (size_t i = 0; i < n; i++)
        v[i * step] *= gain;
    const double zn = pow(z, (double)n), c0 = v[0];
    double zi = z;
    v[0] = v[0] + zn * v[(n - 1) * step];
    for (size_t i = 1; i < n; i++) {
        v[0] += zi * (v[i * step] + zn * v[(n - 1 - i) * step]);
        zi *= z;
    }
    v[0] *= z / (1 - zn * zn);
    v[0] += c0;
    for (size_t i = 1; i < n; i++)
        v[i * step] += z * v[(i - 1) * step];
    v[(n - 1) * step] *= z / (z - 1);
    for (size_t i = n - 1; i-- > 0;)
        v[i * step] = z * (v[(i + 1) * step] - v[i * step]);
}

/* the cubic B-spline at t */
static double bspline3(double t)
{
    t = fabs(t);
    if (t < 1.0) return 2.0 / 3.0 - t * t + t * t * t / 2.0;
    if (t < 2.0) return (2.0 - t) * (2.0 - t) * (2.0 - t) / 6.0;
    return 0.0;
}

/* index k of a line of n reflected at its edges (half-sample symmetric, period 2n) */
static int reflect(long k, long n)
{
    const long p = 2 * n;
    k %= p;
    if (k < 0) k += p;
    return (int)(k < n ? k : p - 1 - k);
}

/* The 4 taps of each of `pixels` pixels along an axis of n mesh nodes, `box` pixels a node:
 * scipy's grid_mode puts pixel centres on pixel centres (zoom = in / out). */
static void taps(size_t pixels, size_t n, size_t box, int *at, double *w)
{
    const double zoom = (double)n / (double)(n * box);
    for (size_t p = 0; p < pixels; p++) {
        const double c = ((double)p + 0.5) * zoom - 0.5;
        const long f = (long)floor(c);
        for (int i = 0; i < 4; i++) {
            at[4 * p + i] = reflect(f - 1 + i, (long)n);
            w[4 * p + i] = bspline3(c - (double)(f - 1 + i));
        }
    }
}

/* The coefficients of one mesh (nx x ny floats) into c, and the mesh's range. */
static bool coefficients(const float *mesh, size_t nx, size_t ny, double *c, double *lo,
                         double *hi)
{
    *lo = *hi = mesh[0];
    for (size_t i = 0; i < nx * ny; i++) {
        c[i] = mesh[i];
        if (c[i] < *lo) *lo = c[i];
        if (c[i] > *hi) *hi = c[i];
    }
    for (size_t x = 0; x < nx; x++)
        prefilter_line(c + x, ny, nx);
    for (size_t y = 0; y < ny; y++)
        prefilter_line(c + y * nx, nx, 1);
    return true;
}

int clstats__zoom_maps(clstats_ctx *ctx, const struct clstats_background *b,
                       const struct clstats_array *back, const struct clstats_array *rms)
{
    const size_t nb = b->nx * b->ny, w = b->width, h = b->height;
    double *coef = malloc(2 * nb * sizeof *coef), *col_w = malloc(4 * w * sizeof *col_w),
           *row_w = malloc(4 * h * sizeof *row_w);
    int *col_at = malloc(4 * w * sizeof *col_at), *row_at = malloc(4 * h * sizeof *row_at);
    cl_mem bufs[5] = {NULL}, map_back, map_rms;
    cl_double range[4];
    int status = CLSTATS_OK;
    if (!coef || !col_w || !row_w || !col_at || !row_at ||
        !coefficients(b->back, b->nx, b->ny, coef, &range[0], &range[1]) ||
        !coefficients(b->rms, b->nx, b->ny, coef + nb, &range[2], &range[3])) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the zoom's coefficients");
        goto fail;
    }
    taps(w, b->nx, b->box_w, col_at, col_w);
    taps(h, b->ny, b->box_h, row_at, row_w);
    /* photutils: a flat mesh is its value everywhere; the clipping to the range gives that */
    if ((status = clstats__upload(ctx, coef, 2 * nb * sizeof *coef, "uploading the mesh",
                                  &bufs[0])) ||
        (status = clstats__upload(ctx, col_at, 4 * w * sizeof *col_at, "uploading the taps",
                                  &bufs[1])) ||
        (status = clstats__upload(ctx, col_w, 4 * w * sizeof *col_w, "uploading the taps",
                                  &bufs[2])) ||
        (status = clstats__upload(ctx, row_at, 4 * h * sizeof *row_at, "uploading the taps",
                                  &bufs[3])) ||
        (status = clstats__upload(ctx, row_w, 4 * h * sizeof *row_w, "uploading the taps",
                                  &bufs[4])) ||
        (status = clstats__scratch(ctx, "background.back", w * h * sizeof(float), &map_back)) ||
        (status = clstats__scratch(ctx, "background.rms", w * h * sizeof(float), &map_rms)))
        goto fail;
    cl_program program;
    cl_kernel kernel;
    if ((status = clstats__program(ctx, "zoom.cl", "", &program)) ||
        (status = clstats__kernel(ctx, program, "zoom_pixels", &kernel)))
        goto fail;
    const cl_int inx = (cl_int)b->nx, iny = (cl_int)b->ny, iw = (cl_int)w, ih = (cl_int)h,
                 wb = back != NULL, wr = rms != NULL;
    const void *args[] = {&bufs[0], &inx,     &iny,     &bufs[1], &bufs[2],  &bufs[3],
                          &bufs[4], &iw,      &ih,      &range[0], &range[1], &range[2],
                          &range[3], &map_back, &map_rms, &wb,      &wr};
    const size_t m = sizeof(cl_mem), d = sizeof(cl_double), i4 = sizeof(cl_int);
    const size_t sizes[] = {m, i4, i4, m, m, m, m, i4, i4, d, d, d, d, m, m, i4, i4};
    for (cl_uint i = 0; i < sizeof args / sizeof *args; i++)
        CL_TRY(ctx, clSetKernelArg(kernel, i, sizes[i], args[i]), "clSetKernelArg(zoom_pixels)");
    const size_t global[2] = {w, h};
    if ((status = clstats__launch(ctx, kernel, 2, NULL, global, NULL, "zoom_pixels"))) goto fail;
    if (back && (status = clstats__array_out(ctx, map_back, back))) goto fail;
    if (rms && (status = clstats__array_out(ctx, map_rms, rms))) goto fail;
    status = clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish(background zoom)");
fail:
    clFinish(ctx->queue); /* the uploads read host memory freed below */
    for (int i = 0; i < 5; i++)
        if (bufs[i]) clReleaseMemObject(bufs[i]);
    free(coef), free(col_w), free(row_w), free(col_at), free(row_at);
    return status;
}
