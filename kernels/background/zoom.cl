/* zoom.cl - the mesh back to every pixel as photutils' BkgZoomInterpolator does it: scipy's
 * zoom(mesh, box, order=3, mode='reflect', grid_mode=True), the result clipped to the mesh's
 * range. The host has turned each mesh into cubic B-spline coefficients and worked out, for
 * every column and every row, its 4 coefficients (indices, with the mesh reflected beyond its
 * edges) and their B-spline weights (src/background/zoom.c); a pixel sums its 4 x 4 terms, in
 * double as photutils computes, row by row in scipy's order. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

/* The two maps (m = 0 background, 1 RMS) at pixel (x, y): coef holds both meshes'
 * coefficients, nbx x nby each; col_at/col_w the 4 taps of each column, row_at/row_w of each
 * row; range the meshes' [min, max]; a map not wanted is not written. */
__kernel void zoom_pixels(__global const double *coef, int nbx, int nby,
                          __global const int *col_at, __global const double *col_w,
                          __global const int *row_at, __global const double *row_w, int width,
                          int height, double back_min, double back_max, double rms_min,
                          double rms_max, __global float *back, __global float *rms,
                          int write_back, int write_rms)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    const long pixel = (long)y * width + x;
    for (int m = 0; m < 2; m++) {
        if (!(m ? write_rms : write_back)) continue;
        __global const double *c = coef + (long)m * nbx * nby;
        double v = 0.0;
        for (int j = 0; j < 4; j++) {
            __global const double *line = c + (long)row_at[4 * y + j] * nbx;
            double r = 0.0;
            for (int i = 0; i < 4; i++)
                r += line[col_at[4 * x + i]] * col_w[4 * x + i];
            v += r * row_w[4 * y + j];
        }
        const double lo = m ? rms_min : back_min, hi = m ? rms_max : back_max;
        v = v < lo ? lo : v > hi ? hi : v;
        (m ? rms : back)[pixel] = (float)v;
    }
}
