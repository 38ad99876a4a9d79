/* reference_background.c - the mesh background the plain way: every box's statistics by loops
 * over its pixels in order, the histogram and its clipping as SExtractor describes them, the
 * mesh filled and filtered, and each map row interpolated by a natural spline along y then x. */
#include "reference_background.h"

#include "../src/background/idw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BAD (-1e30f)

static float div_f(float a, float b)
{
    return a / b; /* C11 on the host: an IEEE float division */
}

/* The sums of a box's pixels as kernels/background/box_stats.cl makes them with `group`
 * work-items a box: lane l adds pixels l, l + group, l + 2 group, ... of the box in row-major
 * order, then the lanes are added in a halving tree. One lane is plain sequential order (SEP's). */
struct lanes {
    size_t group;
    double *s, *s2;
    long *n;
};

static void lanes_clear(struct lanes *l)
{
    for (size_t i = 0; i < l->group; i++)
        l->s[i] = l->s2[i] = 0, l->n[i] = 0;
}

static void lanes_total(struct lanes *l, double *s, double *s2, long *n)
{
    for (size_t step = l->group / 2; step > 0; step /= 2)
        for (size_t i = 0; i < step; i++)
            l->s[i] += l->s[i + step], l->s2[i] += l->s2[i + step], l->n[i] += l->n[i + step];
    *s = l->s[0], *s2 = l->s2[0], *n = l->n[0];
}

static void box_stat(const float *img, size_t stride, const uint8_t *mask, size_t width, size_t x0,
                     size_t y0, size_t w, size_t h, double clip, int estimator, struct lanes *ln,
                     float *bk, float *sg)
{
    double s = 0, s2 = 0;
    long n = 0;
    lanes_clear(ln);
    for (size_t y = y0; y < y0 + h; y++)
        for (size_t x = x0; x < x0 + w; x++) {
            const size_t l = ((y - y0) * w + (x - x0)) % ln->group;
            const double p = img[y * stride + x];
            if ((!mask || !mask[y * width + x]) && p > -1e30) ln->s[l] += p, ln->s2[l] += p * p, ln->n[l]++;
        }
    lanes_total(ln, &s, &s2, &n);
    if ((float)n < (float)(w * h * 0.5)) {
        *bk = *sg = BAD;
        return;
    }
    double mean = s / n, var = s2 / n - mean * mean, sd = var > 0 ? sqrt(var) : 0;
    const float lo = (float)(mean - 2 * sd), hi = (float)(mean + 2 * sd);
    lanes_clear(ln);
    for (size_t y = y0; y < y0 + h; y++)
        for (size_t x = x0; x < x0 + w; x++) {
            const size_t l = ((y - y0) * w + (x - x0)) % ln->group;
            const float p = img[y * stride + x];
            if ((!mask || !mask[y * width + x]) && p >= lo && p <= hi)
                ln->s[l] += p, ln->s2[l] += (double)p * p, ln->n[l]++;
        }
    lanes_total(ln, &s, &s2, &n);
    mean = s / n;
    var = s2 / n - mean * mean;
    sd = var > 0 ? sqrt(var) : 0;
    int levels = (int)(sqrt(2 / 3.14159265358979323846) * 5 / 4 * n + 1);
    if (levels > 4096) levels = 4096;
    const float qscale = sd > 0 ? (float)(10 * sd / levels) : 1.0f, qzero = (float)(mean - 5 * sd);
    const float cste = (float)(0.499999 - div_f(qzero, qscale));
    long *hist = calloc((size_t)levels, sizeof *hist);
    for (size_t y = y0; y < y0 + h; y++)
        for (size_t x = x0; x < x0 + w; x++) {
            const float t = div_f(img[y * stride + x], qscale) + cste;
            if ((!mask || !mask[y * width + x]) && t > -1.0f && t < (float)levels) hist[(int)t]++;
        }
    /* the median where the counts from below and from above meet, the moments within the cut */
    int lc = 0, hc = levels - 1;
    double sig = 10.0 * (levels - 1), last = 1.0, mea = (float)mean, med = (float)mean;
    for (int it = 0; it < 100 && sig >= 0.1 && fabs(sig / last - 1.0) > 1e-4; it++) {
        last = sig;
        long total = 0, below = 0, above = 0;
        double m1 = 0, m2 = 0;
        int a = lc, b = hc;
        for (int i = lc; i <= hc; i++) {
            if (below < above)
                below += hist[a++];
            else
                above += hist[b--];
            total += hist[i];
            m1 += (double)hist[i] * i;
            m2 += (double)hist[i] * i * i;
        }
        if (b >= 0) {
            const long ca = a < levels ? hist[a] : 0, cb = hist[b];
            med = b + 0.5 + (double)(above - below) / (2.0 * (double)(ca > cb ? ca : cb));
        } else {
            med = 0;
        }
        mea = m1, sig = m2;
        if (total) mea = m1 / total, sig = m2 / total - mea * mea;
        sig = sig > 0 ? sqrt(sig) : 0;
        const double l = med - clip * sig, u = med + clip * sig;
        lc = l > 0 ? (int)(l + 0.5) : 0;
        hc = u < levels - 1 ? (int)(u > 0 ? u + 0.5 : u - 0.5) : levels - 1;
    }
    free(hist);
    const int skewed = !(fabs((mea - med) / sig) < 0.3);
    double v;
    if (estimator == 2 || sig == 0)
        v = mea;
    else if (estimator == 1 || skewed)
        v = med;
    else
        v = 2.5 * med - 1.5 * mea;
    *bk = (float)(qzero + v * qscale);
    *sg = (float)(sig * qscale);
}

static int cmp(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float med_of(float *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (float)((double)(v[n / 2 - 1] + v[n / 2]) / 2.0);
}

/* Natural-spline second derivatives of v[0..n) spaced 1 apart, step k, as SExtractor solves it. */
static void spline(const float *v, size_t n, size_t k, float *d)
{
    if (n < 2) {
        d[0] = 0;
        return;
    }
    float *u = calloc(n, sizeof *u);
    d[0] = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        d[i * k] = -1 / (d[(i - 1) * k] + 4);
        u[i] = d[i * k] * (u[i - 1] - 6 * (v[(i + 1) * k] + v[(i - 1) * k] - 2 * v[i * k]));
    }
    d[(n - 1) * k] = 0;
    for (size_t i = n - 2; i >= 1; i--)
        d[i * k] = (float)((double)(d[i * k] * d[(i + 1) * k] + u[i]) / 6.0);
    free(u);
}

static void fill_and_filter(float *bk, float *sg, size_t nx, size_t ny, size_t fw, size_t fh,
                            double fthresh, int photutils, float *gb, float *gr)
{
    const size_t n = nx * ny;
    float *b2 = malloc(n * 4), *s2 = malloc(n * 4), *wb = malloc(fw * fh * 4), *ws = malloc(fw * fh * 4);
    if (photutils) {
        /* photutils' inverse-distance fill: the library's (src/background/idw.c), since which of
         * the boxes tied at the tenth distance count is scipy's cKDTree's choice; the suite
         * checks it against a plain sum where no tie decides (idw_fill_without_ties), the Python
         * suite against photutils itself */
        unsigned char *good = malloc(n);
        size_t ngood = 0;
        for (size_t i = 0; i < n; i++)
            ngood += (good[i] = bk[i] > BAD);
        if (ngood) clstats__mesh_idw_fill(bk, sg, good, nx, ny);
        free(good);
    }
    for (size_t i = 0; i < n; i++) {
        b2[i] = bk[i];
        if (bk[i] > BAD) continue;
        float best = 1e30f, vb = 0, vs = 0;
        int k = 0;
        for (size_t j = 0; j < n; j++) {
            if (!(bk[j] > BAD)) continue;
            const float dx = (float)((long)(j % nx) - (long)(i % nx));
            const long dy = (long)(j / nx) - (long)(i / nx);
            const float d = dx * dx + (float)(dy * dy);
            if (d < best) best = d, vb = bk[j], vs = sg[j], k = 1;
            else if (d == best) vb += bk[j], vs += sg[j], k++;
        }
        b2[i] = k ? vb / k : 0.0f;
        sg[i] = k ? vs / k : 1.0f;
    }
    memcpy(bk, b2, n * 4);
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < nx; x++) {
            size_t m = 0;
            /* SEP: the window shrunk to stay symmetric; photutils: the window cut by the edge */
            for (size_t yy = 0; yy < ny; yy++)
                for (size_t xx = 0; xx < nx; xx++) {
                    const size_t ay = yy > y ? yy - y : y - yy, ax = xx > x ? xx - x : x - xx;
                    size_t ry = fh / 2, rx = fw / 2;
                    if (!photutils) {
                        if (ry > y) ry = y;
                        if (ry > ny - 1 - y) ry = ny - 1 - y;
                        if (rx > x) rx = x;
                        if (rx > nx - 1 - x) rx = nx - 1 - x;
                    }
                    if (ay <= ry && ax <= rx) wb[m] = bk[yy * nx + xx], ws[m++] = sg[yy * nx + xx];
                }
            const float md = med_of(wb, m);
            const int replace = photutils ? fthresh == 0 || bk[y * nx + x] > fthresh
                                          : fabs(md - bk[y * nx + x]) >= fthresh;
            b2[y * nx + x] = replace ? md : bk[y * nx + x];
            s2[y * nx + x] = replace ? med_of(ws, m) : sg[y * nx + x];
        }
    memcpy(bk, b2, n * 4);
    memcpy(sg, s2, n * 4);
    *gb = med_of(b2, n);
    *gr = med_of(s2, n);
    if (*gr <= 0) {
        size_t f = 0;
        while (f < n && !(s2[f] > 0)) f++;
        *gr = f < n ? med_of(s2 + f, n - f) : 1.0f;
    }
    free(b2), free(s2), free(wb), free(ws);
}

static void interpolate(const float *mesh, const float *dmesh, size_t nx, size_t ny, size_t bw,
                        size_t bh, size_t width, size_t height, float *out)
{
    float *node = malloc(nx * 4), *dnode = calloc(nx, 4);
    for (size_t y = 0; y < height; y++) {
        if (ny > 1) {
            float dy = (float)((float)y / (float)bh - 0.5);
            int yl = (int)dy;
            dy -= (float)yl;
            if (yl < 0) yl = 0, dy -= 1.0f;
            else if (yl >= (int)ny - 1) yl = (int)ny - 2, dy += 1.0f;
            const float c = 1 - dy, d3 = dy * dy * dy - dy, c3 = c * c * c - c;
            for (size_t i = 0; i < nx; i++)
                node[i] = c * mesh[yl * nx + i] + dy * mesh[(yl + 1) * nx + i] +
                          c3 * dmesh[yl * nx + i] + d3 * dmesh[(yl + 1) * nx + i];
            if (nx > 1) spline(node, nx, 1, dnode);
        } else {
            memcpy(node, mesh, nx * 4);
            memset(dnode, 0, nx * 4);
        }
        const float step = (float)(1.0 / bw);
        float dx = (step - 1) / 2;
        size_t i = 0, box = 0, k = 0;
        for (size_t x = 0; x < width; x++, i++, dx += step) {
            if (nx < 2) {
                out[y * width + x] = node[0];
                continue;
            }
            if (i == bw / 2 && box > 0 && box + 1 < nx) k++, dx = (float)((bw + 1) % 2) * step / 2;
            const float c = 1 - dx;
            out[y * width + x] = c * (node[k] + (c * c - 1) * dnode[k]) +
                                 dx * (node[k + 1] + (dx * dx - 1) * dnode[k + 1]);
            if (i == bw) box++, i = 0;
        }
    }
    free(node), free(dnode);
}

void reference_mesh_filter(float *bk, float *sg, size_t nx, size_t ny, size_t fw, size_t fh,
                           double fthresh, int photutils, float *global_back, float *global_rms)
{
    fill_and_filter(bk, sg, nx, ny, fw, fh, fthresh, photutils, global_back, global_rms);
}

void reference_mesh_maps(float *bk, float *sg, size_t nx, size_t ny, size_t bw, size_t bh,
                         size_t width, size_t height, size_t fw, size_t fh, double fthresh,
                         float *back, float *rms, float *global_back, float *global_rms)
{
    const size_t n = nx * ny;
    float *db = malloc(n * 4), *ds = malloc(n * 4);
    fill_and_filter(bk, sg, nx, ny, fw, fh, fthresh, 0, global_back, global_rms);
    for (size_t x = 0; x < nx; x++) {
        spline(bk + x, ny, nx, db + x);
        spline(sg + x, ny, nx, ds + x);
    }
    interpolate(bk, db, nx, ny, bw, bh, width, height, back);
    interpolate(sg, ds, nx, ny, bw, bh, width, height, rms);
    free(db), free(ds);
}

void reference_background(const float *img, size_t width, size_t height, size_t stride,
                          const uint8_t *mask, size_t bw, size_t bh, size_t fw, size_t fh,
                          double fthresh, double clip, int estimator, size_t group, float *back,
                          float *rms, float *global_back, float *global_rms)
{
    const size_t nx = (width - 1) / bw + 1, ny = (height - 1) / bh + 1, n = nx * ny;
    struct lanes ln = {group, calloc(group, sizeof(double)), calloc(group, sizeof(double)),
                       calloc(group, sizeof(long))};
    float *bk = malloc(n * 4), *sg = malloc(n * 4);
    for (size_t by = 0; by < ny; by++)
        for (size_t bx = 0; bx < nx; bx++) {
            const size_t w = bx + 1 < nx ? bw : width - bx * bw, h = by + 1 < ny ? bh : height - by * bh;
            box_stat(img, stride, mask, width, bx * bw, by * bh, w, h, clip, estimator, &ln,
                     &bk[by * nx + bx], &sg[by * nx + bx]);
        }
    reference_mesh_maps(bk, sg, nx, ny, bw, bh, width, height, fw, fh, fthresh, back, rms,
                        global_back, global_rms);
    free(bk), free(sg);
    free(ln.s), free(ln.s2), free(ln.n);
}
