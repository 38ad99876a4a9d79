/* reference_select.c - sorting reference for tests/test_select.c (see reference_select.h). */
#include "reference_select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Total-order comparison through the bits, so -0.0 < +0.0 as the library documents. */
static int cmp_f32(const void *pa, const void *pb)
{
    uint32_t a, b;
    memcpy(&a, pa, 4);
    memcpy(&b, pb, 4);
    a = (a & 0x80000000u) ? ~a : (a | 0x80000000u);
    b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return (a > b) - (a < b);
}

static int cmp_f64(const void *pa, const void *pb)
{
    uint64_t a, b;
    memcpy(&a, pa, 8);
    memcpy(&b, pb, 8);
    a = (a & 0x8000000000000000ull) ? ~a : (a | 0x8000000000000000ull);
    b = (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
    return (a > b) - (a < b);
}

float *ref_sorted_f32(const float *x, size_t n, size_t *nv)
{
    float *s = malloc((n ? n : 1) * sizeof *s);
    *nv = 0;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) s[(*nv)++] = x[i];
    if (*nv == 0) {
        free(s);
        return NULL;
    }
    qsort(s, *nv, sizeof *s, cmp_f32);
    return s;
}

double *ref_sorted_f64(const double *x, size_t n, size_t *nv)
{
    double *s = malloc((n ? n : 1) * sizeof *s);
    *nv = 0;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) s[(*nv)++] = x[i];
    if (*nv == 0) {
        free(s);
        return NULL;
    }
    qsort(s, *nv, sizeof *s, cmp_f64);
    return s;
}

static float mean_f32(float a, float b)
{
    float m = (float)(((double)a + (double)b) * 0.5);
    return isnan(m) ? NAN : m;
}

static double mean_f64(double a, double b)
{
    if (a == b) return a;
    double s = a + b;
    if (isinf(s) && isfinite(a) && isfinite(b)) return a * 0.5 + b * 0.5;
    return isnan(s) ? NAN : s * 0.5;
}

float ref_plus_zero_f32(float v)
{
    return v == 0.0f ? 0.0f : v;
}

double ref_plus_zero_f64(double v)
{
    return v == 0.0 ? 0.0 : v;
}

float ref_median_f32(const float *x, size_t n, enum clstats_even even)
{
    size_t nv;
    float *s = ref_sorted_f32(x, n, &nv);
    if (!s) return NAN;
    float a = s[(nv - 1) / 2], b = s[nv / 2], m;
    if (nv % 2 || even == CLSTATS_EVEN_LOWER) m = a;
    else if (even == CLSTATS_EVEN_UPPER) m = b;
    else m = memcmp(&a, &b, 4) == 0 ? a : mean_f32(a, b);
    free(s);
    return ref_plus_zero_f32(m);
}

double ref_median_f64(const double *x, size_t n, enum clstats_even even)
{
    size_t nv;
    double *s = ref_sorted_f64(x, n, &nv);
    if (!s) return NAN;
    double a = s[(nv - 1) / 2], b = s[nv / 2], m;
    if (nv % 2 || even == CLSTATS_EVEN_LOWER) m = a;
    else if (even == CLSTATS_EVEN_UPPER) m = b;
    else m = memcmp(&a, &b, 8) == 0 ? a : mean_f64(a, b);
    free(s);
    return ref_plus_zero_f64(m);
}

double ref_percentile_sorted(const double *s, size_t nv, double q)
{
    double h = (double)(nv - 1) * (q / 100.0), lo = floor(h);
    size_t i = (size_t)lo, j = i + 1 < nv ? i + 1 : i;
    double a = s[i], b = s[j], g = h - lo;
    double d = b - a; /* numpy's arithmetic, no shortcut: inf - inf and inf * 0 are NaN */
    double v = g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
    return isnan(v) ? (double)NAN : ref_plus_zero_f64(v);
}


void ref_tile_medians(const float *m, size_t nx, size_t ny, size_t stride, size_t tw, size_t th,
                      enum clstats_even even, float *out)
{
    float *tile = malloc(tw * th * sizeof *tile);
    const size_t ntx = (nx + tw - 1) / tw;
    for (size_t y0 = 0, j = 0; y0 < ny; y0 += th, j++) {
        for (size_t x0 = 0, i = 0; x0 < nx; x0 += tw, i++) {
            size_t n = 0;
            for (size_t y = y0; y < y0 + th && y < ny; y++)
                for (size_t x = x0; x < x0 + tw && x < nx; x++) tile[n++] = m[y * stride + x];
            out[j * ntx + i] = ref_median_f32(tile, n, even);
        }
    }
    free(tile);
}

/* A matrix's columns are its tiles of one pixel by all the rows. */
void ref_column_medians(const float *m, size_t rows, size_t cols, size_t ld,
                        enum clstats_even even, float *out)
{
    ref_tile_medians(m, cols, rows, ld, 1, rows, even, out);
}
