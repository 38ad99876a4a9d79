/* reference_select.h - the judge for whole-array order statistics: plain C, sorting a copy of
 * the valid values by IEEE total order (-0 below +0), so it shares nothing with the kernels. */
#ifndef REFERENCE_SELECT_H
#define REFERENCE_SELECT_H

#include "clstats.h"
#include <stddef.h>
#include <stdint.h>

/* Sorted copies of the non-NaN values; *nv gets their count. NULL when none (or no memory). */
float *ref_sorted_f32(const float *x, size_t n, size_t *nv);
double *ref_sorted_f64(const double *x, size_t n, size_t *nv);

/* A result as clstats.h promises it: +0 for a zero of either sign (the sorted copies keep
 * -0 below +0, as the library's keys do). */
float ref_plus_zero_f32(float v);
double ref_plus_zero_f64(double v);

/* Median of the valid values, even counts by `even` (the formulas documented in clstats.h),
 * a zero as +0; NaN when there is none. */
float ref_median_f32(const float *x, size_t n, enum clstats_even even);
double ref_median_f64(const double *x, size_t n, enum clstats_even even);

/* numpy 'linear' percentile of sorted valid values s[0..nv), a zero as +0. */
double ref_percentile_sorted(const double *s, size_t nv, double q);

/* Column medians of a rows x cols matrix (element (r, c) at m[r ld + c]). */
void ref_column_medians(const float *m, size_t rows, size_t cols, size_t ld,
                        enum clstats_even even, float *out);

/* Tile medians of an nx x ny image (pixel (x, y) at m[y stride + x]) in tw x th tiles from
 * (0, 0), edge tiles cut short: out[j ntx + i], ntx = ceil(nx / tw). */
void ref_tile_medians(const float *m, size_t nx, size_t ny, size_t stride, size_t tw, size_t th,
                      enum clstats_even even, float *out);

#endif
