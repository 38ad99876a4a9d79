/* interpolate.cl - the mesh back to every pixel by SEP's bicubic spline: for each image row the
 * mesh's columns interpolated along y (with the y second derivatives the host computed), a
 * natural spline through that row of nodes along x (spline_rows, one work-item per row, since a
 * tridiagonal solve is sequential), then each pixel between its two nodes (interpolate_pixels);
 * on CPU devices both steps in one work-item a row (interpolate_rows).
 * Float arithmetic in SEP's order, no contraction, float divisions through double (exact); the
 * one double division of SEP's spline (by 6.0) is kept. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

static float fdiv(float a, float b)
{
    return (float)((double)a / (double)b);
}

/* Row y's nodes (nbx values) and their second derivatives along x, of map m (0 the background,
 * 1 the RMS): node[(m * height + y) * nbx + i], likewise dnode; u is scratch of the same shape.
 * With one mesh row SEP interpolates nothing along y and keeps zero derivatives. */
static void row_nodes(__global const float *values, __global const float *dvalues, int nbx,
                      int nby, int bh, int height, int y, int m, __global float *node,
                      __global float *dnode, __global float *u)
{
    __global const float *val = values + m * nbx * nby, *dval = dvalues + m * nbx * nby;
    const long row = ((long)m * height + y) * nbx;
    __global float *nd = node + row, *dn = dnode + row, *uu = u + row;
    if (nby < 2) {
        for (int i = 0; i < nbx; i++) {
            nd[i] = val[i];
            dn[i] = dval[i];
        }
        return;
    }
    float dy = (float)((double)fdiv((float)y, (float)bh) - 0.5);
    int yl = (int)dy;
    dy -= (float)yl;
    if (yl < 0) {
        yl = 0;
        dy = (float)((double)dy - 1.0);
    } else if (yl >= nby - 1) {
        yl = nby < 2 ? 0 : nby - 2;
        dy = (float)((double)dy + 1.0);
    }
    const float cdy = 1 - dy, dy3 = dy * dy * dy - dy, cdy3 = cdy * cdy * cdy - cdy;
    __global const float *blo = val + nbx * yl, *bhi = blo + nbx;
    __global const float *dblo = dval + nbx * yl, *dbhi = dblo + nbx;
    for (int i = 0; i < nbx; i++)
        nd[i] = cdy * blo[i] + dy * bhi[i] + cdy3 * dblo[i] + dy3 * dbhi[i];
    if (nbx < 2) {
        dn[0] = 0.0f;
        return;
    }
    dn[0] = uu[0] = 0.0f;
    for (int i = 1; i < nbx - 1; i++) {
        float t = fdiv(-1.0f, dn[i - 1] + 4);
        dn[i] = t;
        t *= uu[i - 1] - 6 * (nd[i + 1] + nd[i - 1] - 2 * nd[i]);
        uu[i] = t;
    }
    dn[nbx - 1] = 0.0f;
    for (int i = nbx - 2; i >= 1; i--)
        dn[i] = (float)((double)(dn[i] * dn[i + 1] + uu[i]) / 6.0);
}

/* Every row's nodes of both maps (global size height x 2), for interpolate_pixels. */
__kernel void spline_rows(__global const float *values, __global const float *dvalues, int nbx,
                          int nby, int bh, int height, __global float *node,
                          __global float *dnode, __global float *u)
{
    const int y = get_global_id(0), m = get_global_id(1);
    if (y < height)
        row_nodes(values, dvalues, nbx, nby, bh, height, y, m, node, dnode, u);
}

/* Pixel (x, y) of both maps from its row's nodes: column x lies after node col_node[x] at
 * col_dx[x] (the host walks SEP's column steps once, as they accumulate in float). */
__kernel void interpolate_pixels(__global const float *node, __global const float *dnode,
                                 __global const int *col_node, __global const float *col_dx,
                                 int nbx, int width, int height, __global float *back,
                                 __global float *rms, int want_back, int want_rms)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    for (int m = 0; m < 2; m++) {
        if (m == 0 ? !want_back : !want_rms) continue;
        const long row = ((long)m * height + y) * nbx;
        float v;
        if (nbx < 2) {
            v = node[row];
        } else {
            const int k = col_node[x];
            const float dx = col_dx[x], cdx = 1 - dx;
            const float blo = node[row + k], bhi = node[row + k + 1];
            const float dblo = dnode[row + k], dbhi = dnode[row + k + 1];
            v = cdx * (blo + (cdx * cdx - 1) * dblo) + dx * (bhi + (dx * dx - 1) * dbhi);
        }
        (m == 0 ? back : rms)[(long)y * width + x] = v;
    }
}

/* CPU devices: a work-item a row of one map (global size height x 2; map 1 only where the RMS
 * is wanted, map 0 only where the background is), its nodes made then its pixels walked node
 * interval by node interval: columns first[k] to first[k + 1] - 1 lie after node k, and each
 * column's weights come from the host (cdx, cdx^2 - 1, dx, dx^2 - 1: the same float operations
 * as interpolate_pixels, so the same bits), so that the walk is one contiguous loop the compiler
 * vectorises, where interpolate_pixels gathers a pixel's nodes one by one. out0 and out1 are the
 * two maps' rows (out1 the RMS; for one map only, out0 is it). */
__kernel void interpolate_rows(__global const float *values, __global const float *dvalues,
                               int nbx, int nby, int bh, int width, int height, int first_map,
                               __global float *node, __global float *dnode, __global float *u,
                               __global const int *first, __global const float *weights,
                               __global float *out0, __global float *out1)
{
    const int y = get_global_id(0), m = first_map + (int)get_global_id(1);
    if (y >= height) return;
    row_nodes(values, dvalues, nbx, nby, bh, height, y, m, node, dnode, u);
    const long row = ((long)m * height + y) * nbx;
    __global const float *nd = node + row, *dn = dnode + row;
    __global float *out = (m == first_map ? out0 : out1) + (long)y * width;
    if (nbx < 2) {
        const float v = nd[0];
        for (int x = 0; x < width; x++)
            out[x] = v;
        return;
    }
    __global const float *cdx = weights, *wc = weights + width, *dx = weights + 2 * width,
                         *wd = weights + 3 * width;
    for (int k = 0; k < nbx - 1; k++) {
        const float blo = nd[k], bhi = nd[k + 1], dblo = dn[k], dbhi = dn[k + 1];
        for (int x = first[k]; x < first[k + 1]; x++)
            out[x] = cdx[x] * (blo + wc[x] * dblo) + dx[x] * (bhi + wd[x] * dbhi);
    }
}
