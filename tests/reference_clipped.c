/* reference_clipped.c - photutils' box statistics the plain way: a box's valid pixels, a flag a
 * pixel for "kept", astropy's clipping rounds recomputed over the flagged pixels, and each
 * estimator straight from its formula (medians by sorting). The values are put in ascending
 * order first only so that every sum adds the same numbers in the same order as the kernel,
 * which makes the comparison exact. */
#include "reference_clipped.h"

#include "reference_background.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's median of the n values (sorted here) */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

struct kept {
    const double *v; /* ascending */
    const char *keep;
    size_t n;
};

static size_t count(struct kept k)
{
    size_t c = 0;
    for (size_t i = 0; i < k.n; i++)
        c += k.keep[i] != 0;
    return c;
}

static double mean_of(struct kept k)
{
    double s = 0;
    for (size_t i = 0; i < k.n; i++)
        if (k.keep[i]) s += k.v[i];
    return s / (double)count(k);
}

static double std_of(struct kept k, double mean)
{
    double s = 0;
    for (size_t i = 0; i < k.n; i++)
        if (k.keep[i]) s += (k.v[i] - mean) * (k.v[i] - mean);
    return sqrt(s / (double)count(k));
}

static double median_of(struct kept k, double *tmp)
{
    size_t m = 0;
    for (size_t i = 0; i < k.n; i++)
        if (k.keep[i]) tmp[m++] = k.v[i];
    return median(tmp, m);
}

static double mad_of(struct kept k, double centre, double *tmp)
{
    size_t m = 0;
    for (size_t i = 0; i < k.n; i++)
        if (k.keep[i]) tmp[m++] = fabs(k.v[i] - centre);
    return median(tmp, m);
}

static double estimate_back(struct kept k, int estimator, double *tmp)
{
    const double mean = mean_of(k), med = median_of(k, tmp);
    if (estimator == 1) return med;
    if (estimator == 2) return mean;
    if (estimator == 3) return 3.0 * med - 2.0 * mean;
    if (estimator == 4) {
        const double mad = mad_of(k, med, tmp);
        if (mad == 0) return med;
        double num = 0, den = 0;
        for (size_t i = 0; i < k.n; i++) {
            if (!k.keep[i]) continue;
            const double d = k.v[i] - med, u = d / (6.0 * mad);
            const double w = fabs(u) < 1 ? (1 - u * u) * (1 - u * u) : 0.0;
            num += d * w, den += w;
        }
        return med + num / den;
    }
    const double sd = std_of(k, mean);
    if (sd == 0) return mean;
    return fabs(mean - med) / sd < 0.3 ? 2.5 * med - 1.5 * mean : med;
}

static double estimate_rms(struct kept k, int rms_estimator, double *tmp)
{
    if (rms_estimator == 0) return std_of(k, mean_of(k));
    const double med = median_of(k, tmp), mad = mad_of(k, med, tmp);
    if (rms_estimator == 1) return 1.482602218505602 * mad;
    if (mad == 0) return 0.0;
    double f1 = 0, f2 = 0;
    for (size_t i = 0; i < k.n; i++) {
        if (!k.keep[i]) continue;
        const double d = k.v[i] - med, u = d / (9.0 * mad), u2 = u * u;
        if (!(fabs(u) < 1)) continue;
        f1 += d * d * ((1 - u2) * (1 - u2) * ((1 - u2) * (1 - u2)));
        f2 += (1 - u2) * (1 - 5 * u2);
    }
    return sqrt((double)count(k) * f1 / (fabs(f2) * fabs(f2)));
}

static void clipped_box(double *v, size_t n, size_t box_pixels, double sigma, int maxiters,
                        double max_missing, int estimator, int rms_estimator, float *bk,
                        float *sg)
{
    qsort(v, n, sizeof *v, by_value);
    char *keep = malloc(n + 1);
    double *tmp = malloc((n + 1) * sizeof *tmp);
    memset(keep, 1, n);
    struct kept k = {v, keep, n};
    double lo = 0, hi = 0;
    for (int iter = 0; count(k) > 0;) {
        const size_t before = count(k);
        const double mean = mean_of(k), sd = std_of(k, mean), med = median_of(k, tmp);
        lo = med - sigma * sd, hi = med + sigma * sd;
        for (size_t i = 0; i < n; i++)
            if (keep[i] && !(v[i] >= lo && v[i] <= hi)) keep[i] = 0;
        if (count(k) == before) break;
        if (maxiters >= 0 && ++iter >= maxiters) break;
    }
    /* astropy's mask in the end: every valid value outside the last bounds */
    const size_t clipped_all = count(k) == 0;
    for (size_t i = 0; i < n; i++)
        keep[i] = !clipped_all && v[i] >= lo && v[i] <= hi;
    const size_t kept = count(k);
    if (kept == 0 || (double)(box_pixels - kept) > max_missing) {
        *bk = *sg = -1e30f;
    } else {
        *bk = (float)estimate_back(k, estimator, tmp);
        *sg = (float)estimate_rms(k, rms_estimator, tmp);
    }
    free(keep), free(tmp);
}

/* scipy's cubic B-spline coefficients of a line extended by half-sample reflection: the
 * recursive filter of ndimage's ni_splines.c (pole sqrt(3) - 2), on a copy of the line. */
static void spline_coefficients(double *line, size_t n)
{
    if (n < 2) return;
    const double z = sqrt(3.0) - 2.0, zn = pow(z, (double)n);
    for (size_t i = 0; i < n; i++)
        line[i] *= (1.0 - z) * (1.0 - 1.0 / z);
    const double c0 = line[0];
    double zi = z;
    line[0] = line[0] + zn * line[n - 1];
    for (size_t i = 1; i < n; i++, zi *= z)
        line[0] += zi * (line[i] + zn * line[n - 1 - i]);
    line[0] *= z / (1 - zn * zn);
    line[0] += c0;
    for (size_t i = 1; i < n; i++)
        line[i] += z * line[i - 1];
    line[n - 1] *= z / (z - 1);
    for (size_t i = n - 1; i-- > 0;)
        line[i] = z * (line[i + 1] - line[i]);
}

static double cubic_bspline(double t)
{
    t = fabs(t);
    return t < 1 ? 2.0 / 3.0 - t * t + t * t * t / 2.0 : t < 2 ? (2 - t) * (2 - t) * (2 - t) / 6.0 : 0;
}

static size_t reflected(long k, size_t n)
{
    const long p = 2 * (long)n;
    k = ((k % p) + p) % p;
    return k < (long)n ? (size_t)k : (size_t)(p - 1 - k);
}

/* photutils' BkgZoomInterpolator: scipy's zoom(mesh, box, order=3, mode='reflect',
 * grid_mode=True), clipped to the mesh's range. */
static void zoom_map(const float *mesh, size_t nx, size_t ny, size_t bw, size_t bh, size_t width,
                     size_t height, float *out)
{
    double *c = malloc(nx * ny * sizeof *c), *line = malloc((nx + ny) * sizeof *line);
    double lo = mesh[0], hi = mesh[0];
    for (size_t i = 0; i < nx * ny; i++) {
        c[i] = mesh[i];
        lo = c[i] < lo ? c[i] : lo, hi = c[i] > hi ? c[i] : hi;
    }
    for (size_t x = 0; x < nx; x++) { /* axis 0 first, as scipy */
        for (size_t y = 0; y < ny; y++) line[y] = c[y * nx + x];
        spline_coefficients(line, ny);
        for (size_t y = 0; y < ny; y++) c[y * nx + x] = line[y];
    }
    for (size_t y = 0; y < ny; y++)
        spline_coefficients(c + y * nx, nx);
    for (size_t y = 0; y < height; y++)
        for (size_t x = 0; x < width; x++) {
            const double cx = (x + 0.5) * ((double)nx / (double)(nx * bw)) - 0.5;
            const double cy = (y + 0.5) * ((double)ny / (double)(ny * bh)) - 0.5;
            const long fx = (long)floor(cx), fy = (long)floor(cy);
            double v = 0;
            for (long j = fy - 1; j <= fy + 2; j++) {
                double r = 0;
                for (long i = fx - 1; i <= fx + 2; i++)
                    r += c[reflected(j, ny) * nx + reflected(i, nx)] * cubic_bspline(cx - i);
                v += r * cubic_bspline(cy - j);
            }
            out[y * width + x] = (float)(v < lo ? lo : v > hi ? hi : v);
        }
    free(c), free(line);
}

void reference_clipped(const float *img, size_t width, size_t height, size_t stride,
                       const uint8_t *mask, size_t bw, size_t bh, size_t fw, size_t fh,
                       double fthresh, double sigma, int maxiters, double exclude_percentile,
                       int estimator, int rms_estimator, float *back, float *rms,
                       float *mesh_back, float *mesh_rms, float *global_back, float *global_rms)
{
    const size_t nx = (width - 1) / bw + 1, ny = (height - 1) / bh + 1, n = nx * ny;
    const double max_missing = exclude_percentile / 100.0 * (double)(bw * bh) -
                               (exclude_percentile == 100.0 ? 1.0 : 0.0);
    float *bk = malloc(n * 4), *sg = malloc(n * 4);
    double *v = malloc(bw * bh * sizeof *v);
    for (size_t by = 0; by < ny; by++)
        for (size_t bx = 0; bx < nx; bx++) {
            size_t m = 0;
            for (size_t y = by * bh; y < (by + 1) * bh && y < height; y++)
                for (size_t x = bx * bw; x < (bx + 1) * bw && x < width; x++) {
                    const float p = img[y * stride + x];
                    if ((!mask || !mask[y * width + x]) && isfinite(p)) v[m++] = p;
                }
            clipped_box(v, m, bw * bh, sigma, maxiters, max_missing, estimator, rms_estimator,
                        &bk[by * nx + bx], &sg[by * nx + bx]);
        }
    reference_mesh_filter(bk, sg, nx, ny, fw, fh, fthresh, 1, global_back, global_rms);
    zoom_map(bk, nx, ny, bw, bh, width, height, back);
    zoom_map(sg, nx, ny, bw, bh, width, height, rms);
    if (mesh_back) memcpy(mesh_back, bk, n * 4);
    if (mesh_rms) memcpy(mesh_rms, sg, n * 4);
    free(bk), free(sg), free(v);
}
