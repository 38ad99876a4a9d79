/* reference_filter.c - the plain C judge of the median filter: for each pixel gather the
 * window's valid values, sort them by their bit-level total order, take the middle (by the
 * even-count rule). Any window (rectangles, origins, footprints), masks, float32 and float64.
 * Written independently of src/filter/'s boundary maps and cell lists (scipy.ndimage's
 * definitions, by folding). */
#include "reference_filter.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

long reference_extend(long i, long n, enum clstats_boundary mode)
{
    /* Fold step by step, as the pictures in scipy's documentation read. */
    while (i < 0 || i >= n) {
        switch (mode) {
        case CLSTATS_BOUNDARY_REFLECT: /* d c b a | a b c d | d c b a */
            i = i < 0 ? -i - 1 : 2 * n - 1 - i;
            break;
        case CLSTATS_BOUNDARY_MIRROR: /* d c b | a b c d | c b a */
            if (n == 1) return 0;
            i = i < 0 ? -i : 2 * n - 2 - i;
            break;
        case CLSTATS_BOUNDARY_NEAREST:
            return i < 0 ? 0 : n - 1;
        case CLSTATS_BOUNDARY_WRAP:
            i = i < 0 ? i + n : i - n;
            break;
        default:
            return -1;
        }
    }
    return i;
}

static uint32_t key_of(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static int by_key(const void *a, const void *b)
{
    uint32_t x = key_of(*(const float *)a), y = key_of(*(const float *)b);
    return (x > y) - (x < y);
}

/* A result as clstats.h promises it: one NaN, and +0 for either zero. */
static float canonical(float v)
{
    if (v == 0.0f) return 0.0f;
    if (!isnan(v)) return v;
    uint32_t u = 0x7fc00000u;
    memcpy(&v, &u, 4);
    return v;
}

/* Median of v[0..n-1] (sorted in place) by the even-count rule; NaN when n == 0. */
static float median_of(float *v, size_t n, enum clstats_even even)
{
    if (n == 0) return canonical(NAN);
    qsort(v, n, sizeof *v, by_key);
    if (n % 2) return v[n / 2];
    if (even == CLSTATS_EVEN_LOWER) return v[n / 2 - 1];
    if (even == CLSTATS_EVEN_UPPER) return v[n / 2];
    /* The float nearest the exact mean of the two middles, as clstats.h defines it for
     * clstats_median: through double, which holds their sum, so that it shares nothing with
     * the kernels' float rule (kernels/even_mean.h) and never overflows. */
    return (float)(((double)v[n / 2 - 1] + (double)v[n / 2]) * 0.5);
}

static uint64_t key_of_f64(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}

static int by_key_f64(const void *a, const void *b)
{
    uint64_t x = key_of_f64(*(const double *)a), y = key_of_f64(*(const double *)b);
    return (x > y) - (x < y);
}

static double canonical_f64(double v)
{
    if (v == 0.0) return 0.0;
    if (!isnan(v)) return v;
    uint64_t u = 0x7ff8000000000000ull;
    memcpy(&v, &u, 8);
    return v;
}

/* The float64 mean of two middles: their halves summed where a + b would overflow (then both
 * are above 2^1000 and halving is exact), else (a + b) / 2 as numpy takes it. */
static double mean_f64(double a, double b)
{
    const double s = a + b;
    if (isinf(s) && isfinite(a) && isfinite(b)) return a / 2 + b / 2;
    return s / 2;
}

static double median_of_f64(double *v, size_t n, enum clstats_even even)
{
    if (n == 0) return canonical_f64(NAN);
    qsort(v, n, sizeof *v, by_key_f64);
    if (n % 2) return v[n / 2];
    if (even == CLSTATS_EVEN_LOWER) return v[n / 2 - 1];
    if (even == CLSTATS_EVEN_UPPER) return v[n / 2];
    return mean_f64(v[n / 2 - 1], v[n / 2]);
}

/* The window's offsets from its pixel, read from the parameters as filter.h words them: every
 * cell of width x height (height 0: width) or the footprint's set cells, row (i) and column (j)
 * placed at i - (h/2 + origin_y), j - (w/2 + origin_x). Returns the count; dx, dy hold 255^2. */
static size_t window_offsets(const struct clstats_filter_params *p, long *dx, long *dy)
{
    const long w = p->footprint ? p->footprint_width : p->width;
    const long h = p->footprint ? p->footprint_height : p->height ? p->height : p->width;
    size_t n = 0;
    for (long i = 0; i < h; i++)
        for (long j = 0; j < w; j++)
            if (!p->footprint || p->footprint[i * w + j]) {
                dy[n] = i - (h / 2 + p->origin_y);
                dx[n] = j - (w / 2 + p->origin_x);
                n++;
            }
    return n;
}

/* Whether pixel (x, y) is masked (the mask is a host uint8 array). */
static bool masked(const struct clstats_filter_params *p, long x, long y)
{
    if (!p->mask) return false;
    const unsigned char *m = p->mask->host;
    const size_t stride = p->mask->stride ? p->mask->stride : p->mask->nx;
    return m[(size_t)y * stride + (size_t)x] != 0;
}

int reference_median_filter(const float *image, size_t nx, size_t ny, size_t stride,
                            const struct clstats_filter_params *p, float *median_out,
                            float *mad_out)
{
    long *dx = malloc(255 * 255 * sizeof *dx), *dy = malloc(255 * 255 * sizeof *dy);
    float *win = malloc(255 * 255 * sizeof *win);
    if (!win || !dx || !dy) {
        free(win), free(dx), free(dy);
        return -1;
    }
    const size_t cells = window_offsets(p, dx, dy);
    for (size_t y = 0; y < ny; y++) {
        for (size_t x = 0; x < nx; x++) {
            size_t n = 0;
            for (size_t c = 0; c < cells; c++) {
                long sy = reference_extend((long)y + dy[c], (long)ny, p->boundary);
                long sx = reference_extend((long)x + dx[c], (long)nx, p->boundary);
                float v = (sy < 0 || sx < 0) ? p->cval : image[(size_t)sy * stride + (size_t)sx];
                if (sy >= 0 && sx >= 0 && masked(p, sx, sy)) continue;
                if (!isnan(v)) win[n++] = v;
            }
            float m = canonical(median_of(win, n, p->even));
            /* numpy's nanmedian(|x - m|): a deviation inf - inf (or any from m NaN) is NaN,
             * and so missing like a NaN value. */
            size_t nd = 0;
            for (size_t i = 0; i < n; i++) {
                const float d = fabsf(win[i] - m);
                if (!isnan(d)) win[nd++] = d;
            }
            float mad = canonical(median_of(win, nd, p->even));
            if (median_out) median_out[y * nx + x] = m;
            if (mad_out) mad_out[y * nx + x] = mad;
        }
    }
    free(win), free(dx), free(dy);
    return 0;
}

int reference_median_filter_f64(const double *image, size_t nx, size_t ny, size_t stride,
                                const struct clstats_filter_params *p, double *median_out,
                                double *mad_out)
{
    long *dx = malloc(255 * 255 * sizeof *dx), *dy = malloc(255 * 255 * sizeof *dy);
    double *win = malloc(255 * 255 * sizeof *win);
    if (!win || !dx || !dy) {
        free(win), free(dx), free(dy);
        return -1;
    }
    const double cval = p->cval_f64 ? *p->cval_f64 : (double)p->cval;
    const size_t cells = window_offsets(p, dx, dy);
    for (size_t y = 0; y < ny; y++) {
        for (size_t x = 0; x < nx; x++) {
            size_t n = 0;
            for (size_t c = 0; c < cells; c++) {
                long sy = reference_extend((long)y + dy[c], (long)ny, p->boundary);
                long sx = reference_extend((long)x + dx[c], (long)nx, p->boundary);
                double v = (sy < 0 || sx < 0) ? cval : image[(size_t)sy * stride + (size_t)sx];
                if (sy >= 0 && sx >= 0 && masked(p, sx, sy)) continue;
                if (!isnan(v)) win[n++] = v;
            }
            double m = canonical_f64(median_of_f64(win, n, p->even));
            size_t nd = 0;
            for (size_t i = 0; i < n; i++) {
                const double d = fabs(win[i] - m);
                if (!isnan(d)) win[nd++] = d;
            }
            double mad = canonical_f64(median_of_f64(win, nd, p->even));
            if (median_out) median_out[y * nx + x] = m;
            if (mad_out) mad_out[y * nx + x] = mad;
        }
    }
    free(win), free(dx), free(dy);
    return 0;
}
