/* mesh.c - the background mesh's steps on the host, after the device has measured every box:
 * bad boxes filled from their nearest good ones (SEP's rule; photutils' inverse-distance
 * weighting, idw.c, with its clipping), the median filter, the global values (SEP's
 * filterback), the splines' y second derivatives (makebackspline), and the column steps of the
 * interpolation (backline). Each follows SEP's arithmetic: float where SEP has float, double
 * where its expressions promote, so that the maps come out with SEP's bits. */
#include "mesh.h"

#include "idw.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int float_order(const void *a, const void *b)
{
    const double x = *(const float *)a, y = *(const float *)b;
    return x > y ? 1 : (x < y ? -1 : 0);
}

/* SExtractor's median of floats: the mean of the middle two as a float sum halved in double. */
static float median_sorting(float *v, size_t n)
{
    qsort(v, n, sizeof *v, float_order);
    if (n < 2) return v[0];
    return n & 1 ? v[n / 2] : (float)((double)(v[n / 2 - 1] + v[n / 2]) / 2.0);
}

/* A bad box takes the mean of the good boxes nearest to it (squared distance in float). */
static void fill_bad(const float *back, float *back2, float *rms, size_t nx, size_t ny)
{
    for (size_t py = 0, i = 0; py < ny; py++)
        for (size_t px = 0; px < nx; px++, i++) {
            back2[i] = back[i];
            if (back[i] > CLSTATS__BAD_BOX) continue;
            float d2min = 1e30f, val = 0.0f, sval = 0.0f;
            int nmin = 0;
            for (size_t y = 0, j = 0; y < ny; y++)
                for (size_t x = 0; x < nx; x++, j++) {
                    if (!(back[j] > CLSTATS__BAD_BOX)) continue;
                    const long ddx = (long)x - (long)px, ddy = (long)y - (long)py;
                    const float d2 = (float)ddx * (float)ddx + (float)(ddy * ddy);
                    if (d2 < d2min) {
                        val = back[j];
                        sval = rms[j];
                        nmin = 1;
                        d2min = d2;
                    } else if (d2 == d2min) {
                        val += back[j];
                        sval += rms[j];
                        nmin++;
                    }
                }
            back2[i] = nmin ? val / (float)nmin : 0.0f;
            rms[i] = nmin ? sval / (float)nmin : 1.0f;
        }
}

static size_t min3(size_t a, size_t b, size_t c)
{
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

int clstats__mesh_filter(float *back, float *rms, size_t nx, size_t ny, size_t fw, size_t fh,
                         double threshold, int photutils, float *global_back, float *global_rms)
{
    const size_t n = nx * ny, hx = fw / 2, hy = fh / 2;
    float *back2 = malloc(n * sizeof *back2), *rms2 = malloc(n * sizeof *rms2);
    float *bwin = malloc((2 * hx + 1) * (2 * hy + 1) * sizeof *bwin);
    float *swin = malloc((2 * hx + 1) * (2 * hy + 1) * sizeof *swin);
    if (!back2 || !rms2 || !bwin || !swin) {
        free(back2), free(rms2), free(bwin), free(swin);
        return 0;
    }
    if (photutils) {
        /* photutils' inverse-distance fill; with no good box (photutils refuses the image) the
         * nearest-box rule below leaves 0 and 1 */
        unsigned char *good = (unsigned char *)back2; /* n bytes, free until the filter */
        size_t ngood = 0;
        for (size_t i = 0; i < n; i++)
            ngood += (good[i] = back[i] > CLSTATS__BAD_BOX);
        if (ngood && !clstats__mesh_idw_fill(back, rms, good, nx, ny)) {
            free(back2), free(rms2), free(bwin), free(swin);
            return 0;
        }
    }
    fill_bad(back, back2, rms, nx, ny);
    memcpy(back, back2, n * sizeof *back);
    /* SEP's window shrinks symmetrically at the mesh's edges, so an edge box is never pulled
     * towards its inner neighbours alone; photutils' is cut by the edge (scipy's generic_filter
     * with NaN beyond it, ignored by nanmedian). */
    for (size_t py = 0; py < ny; py++)
        for (size_t px = 0; px < nx; px++) {
            size_t y0 = py - min3(hy, ny - 1 - py, py), y1 = py + min3(hy, ny - 1 - py, py);
            size_t x0 = px - min3(hx, nx - 1 - px, px), x1 = px + min3(hx, nx - 1 - px, px);
            if (photutils) {
                y0 = py > hy ? py - hy : 0, y1 = py + hy < ny ? py + hy : ny - 1;
                x0 = px > hx ? px - hx : 0, x1 = px + hx < nx ? px + hx : nx - 1;
            }
            size_t k = 0;
            for (size_t y = y0; y <= y1; y++)
                for (size_t x = x0; x <= x1; x++, k++) {
                    bwin[k] = back[y * nx + x];
                    swin[k] = rms[y * nx + x];
                }
            const size_t i = py * nx + px;
            const float med = median_sorting(bwin, k);
            const bool filter = photutils ? threshold == 0.0 || back[i] > threshold
                                          : fabs(med - back[i]) >= threshold;
            if (filter) {
                back2[i] = med;
                rms2[i] = median_sorting(swin, k);
            } else {
                back2[i] = back[i];
                rms2[i] = rms[i];
            }
        }
    memcpy(back, back2, n * sizeof *back);
    memcpy(rms, rms2, n * sizeof *rms);
    *global_back = median_sorting(back2, n);
    *global_rms = median_sorting(rms2, n);
    /* A zero global RMS (flat boxes) would make every threshold zero: the median of the boxes
     * with some noise stands in, else 1. */
    if (*global_rms <= 0.0f) {
        size_t first = 0; /* rms2 is sorted now */
        while (first < n && !(rms2[first] > 0.0f))
            first++;
        *global_rms = first < n ? median_sorting(rms2 + first, n - first) : 1.0f;
    }
    free(back2), free(rms2), free(bwin), free(swin);
    return 1;
}

int clstats__mesh_spline_y(const float *map, size_t nx, size_t ny, float *dmap)
{
    if (ny < 2) {
        for (size_t x = 0; x < nx; x++)
            dmap[x] = 0.0f;
        return 1;
    }
    float *u = malloc(ny * sizeof *u);
    if (!u) return 0;
    for (size_t x = 0; x < nx; x++) {
        const float *m = map + x;
        float *d = dmap + x;
        d[0] = u[0] = 0.0f;
        for (size_t y = 1; y + 1 < ny; y++) {
            float t = -1 / (d[(y - 1) * nx] + 4);
            d[y * nx] = t;
            t *= u[y - 1] - 6 * (m[(y + 1) * nx] + m[(y - 1) * nx] - 2 * m[y * nx]);
            u[y] = t;
        }
        d[(ny - 1) * nx] = 0.0f;
        for (size_t y = ny - 2; y >= 1; y--)
            d[y * nx] = (float)((double)(d[y * nx] * d[(y + 1) * nx] + u[y]) / 6.0);
    }
    free(u);
    return 1;
}

void clstats__mesh_columns(size_t width, size_t box_w, size_t nx, int *node, float *dx)
{
    const float step = (float)(1.0 / (double)box_w);
    const size_t change = box_w / 2;
    const float first_after = (float)((box_w + 1) % 2) * step / 2;
    float d = (step - 1) / 2;
    size_t box = 0, i = 0;
    int k = 0;
    /* SEP moves to the next pair of nodes half a box in, except before the first and after the
     * last node, where the spline extrapolates; the box count advances one pixel late. */
    for (size_t col = 0; col < width; col++, i++, d += step) {
        if (i == change && box > 0 && box + 1 < nx) {
            k++;
            d = first_after;
        }
        node[col] = k;
        dx[col] = d;
        if (i == box_w) {
            box++;
            i = 0;
        }
    }
}
