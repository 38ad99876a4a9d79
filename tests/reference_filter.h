/* reference_filter.h - the judge for clstats_median_filter: the plainest possible C, gathering
 * and sorting each window. Same semantics as include/clstats.h documents. */
#ifndef REFERENCE_FILTER_H
#define REFERENCE_FILTER_H

#include "clstats.h"

/* Either output may be NULL; outputs are nx*ny, rows nx apart. Every window filter.h describes;
 * a mask, if any, must be on the host. Returns 0, or -1 on no memory. */
int reference_median_filter(const float *image, size_t nx, size_t ny, size_t stride,
                            const struct clstats_filter_params *p, float *median_out,
                            float *mad_out);

/* The same in float64 (its own sort, and the float64 even mean). */
int reference_median_filter_f64(const double *image, size_t nx, size_t ny, size_t stride,
                                const struct clstats_filter_params *p, double *median_out,
                                double *mad_out);

/* Source index of position i on an axis of n samples under a boundary mode (-1: constant). */
long reference_extend(long i, long n, enum clstats_boundary mode);

#endif
