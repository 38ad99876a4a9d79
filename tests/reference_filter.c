/* reference_filter.c - the plain C judge of the median filter: for each pixel gather the
 * window's valid values, sort them by their bit-level total order, take the middle. Written
 * independently of src/filter/filter.c's boundary maps (scipy.ndimage's definitions, by folding). */
#include "reference_filter.h"

#include <math.h>
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

/* Median of v[0..n-1] (sorted in place); NaN when n == 0. */
static float median_of(float *v, size_t n)
{
    if (n == 0) return canonical(NAN);
    qsort(v, n, sizeof *v, by_key);
    if (n % 2) return v[n / 2];
    /* The float nearest the exact mean of the two middles, as clstats.h defines it for
     * clstats_median: through double, which holds their sum, so that it shares nothing with
     * the kernels' float rule (kernels/even_mean.h) and never overflows. */
    return (float)(((double)v[n / 2 - 1] + (double)v[n / 2]) * 0.5);
}

int reference_median_filter(const float *image, size_t nx, size_t ny, size_t stride,
                            const struct clstats_filter_params *p, float *median_out,
                            float *mad_out)
{
    const long w = p->width, h = w / 2;
    float *win = malloc((size_t)(w * w) * sizeof *win);
    if (!win) return -1;
    for (size_t y = 0; y < ny; y++) {
        for (size_t x = 0; x < nx; x++) {
            size_t n = 0;
            for (long dy = -h; dy <= h; dy++) {
                long sy = reference_extend((long)y + dy, (long)ny, p->boundary);
                for (long dx = -h; dx <= h; dx++) {
                    long sx = reference_extend((long)x + dx, (long)nx, p->boundary);
                    float v = (sy < 0 || sx < 0) ? p->cval : image[(size_t)sy * stride + (size_t)sx];
                    if (!isnan(v)) win[n++] = v;
                }
            }
            float m = canonical(median_of(win, n));
            /* numpy's nanmedian(|x - m|): a deviation inf - inf (or any from m NaN) is NaN,
             * and so missing like a NaN value. */
            size_t nd = 0;
            for (size_t i = 0; i < n; i++) {
                const float d = fabsf(win[i] - m);
                if (!isnan(d)) win[nd++] = d;
            }
            float mad = canonical(median_of(win, nd));
            if (median_out) median_out[y * nx + x] = m;
            if (mad_out) mad_out[y * nx + x] = mad;
        }
    }
    free(win);
    return 0;
}
