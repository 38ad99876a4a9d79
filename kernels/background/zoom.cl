/* zoom.cl - the mesh back to every pixel as photutils' BkgZoomInterpolator does it: scipy's
 * zoom(mesh, box, order=3, mode='reflect', grid_mode=True), the result clipped to the mesh's
 * range. The host has turned each mesh into cubic B-spline coefficients (src/background/zoom.c);
 * here each pixel sums its 4 x 4 coefficients, the mesh extended beyond its edges by
 * half-sample reflection. In double, as photutils computes. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

/* the cubic B-spline at t */
static double bspline3(double t)
{
    t = fabs(t);
    if (t < 1.0) return 2.0 / 3.0 - t * t + t * t * t / 2.0;
    if (t < 2.0) return (2.0 - t) * (2.0 - t) * (2.0 - t) / 6.0;
    return 0.0;
}

/* index k of a line of n reflected at its edges (half-sample symmetric, period 2n) */
static int reflect(int k, int n)
{
    const int p = 2 * n;
    k %= p;
    if (k < 0) k += p;
    return k < n ? k : p - 1 - k;
}

/* The two maps (m = 0 background, 1 RMS) at pixel (x, y): coef holds both meshes' coefficients,
 * nbx x nby each; range their [min, max]; a map not wanted is not written. */
__kernel void zoom_pixels(__global const double *coef, int nbx, int nby, int bw, int bh,
                          int width, int height, double back_min, double back_max,
                          double rms_min, double rms_max, __global float *back,
                          __global float *rms, int write_back, int write_rms)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    /* scipy's grid_mode: pixel centres map to pixel centres, zoom = in / out */
    const double zx = (double)nbx / (double)(nbx * bw), zy = (double)nby / (double)(nby * bh);
    const double cx = (x + 0.5) * zx - 0.5, cy = (y + 0.5) * zy - 0.5;
    const int fx = (int)floor(cx), fy = (int)floor(cy);
    double wx[4], wy[4];
    for (int i = 0; i < 4; i++) {
        wx[i] = bspline3(cx - (fx - 1 + i));
        wy[i] = bspline3(cy - (fy - 1 + i));
    }
    const long y_pix = (long)y * width + x;
    for (int m = 0; m < 2; m++) {
        if (!(m ? write_rms : write_back)) continue;
        __global const double *c = coef + (long)m * nbx * nby;
        double v = 0.0;
        for (int j = 0; j < 4; j++) {
            const int row = reflect(fy - 1 + j, nby);
            double r = 0.0;
            for (int i = 0; i < 4; i++)
                r += c[(long)row * nbx + reflect(fx - 1 + i, nbx)] * wx[i];
            v += r * wy[j];
        }
        const double lo = m ? rms_min : back_min, hi = m ? rms_max : back_max;
        v = v < lo ? lo : v > hi ? hi : v;
        (m ? rms : back)[y_pix] = (float)v;
    }
}
