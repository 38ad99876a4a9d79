/* filter_fills.h - the images the filter suites judge the designs on: random data with NaNs
 * (of odd signs and payloads), ties, constant regions, infinities, signed zeros and huge values. */
#ifndef FILTER_FILLS_H
#define FILTER_FILLS_H

#include <stddef.h>
#include <stdint.h>

enum fill {
    FILL_NORMAL,     /* smooth noise, few ties */
    FILL_INTEGERS,   /* 0..4: ties everywhere */
    FILL_CONSTANT,   /* constant blocks on noise */
    FILL_HEAVY_TAIL, /* noise with 10% of values at +-1e30 and some infinities */
    FILL_SPARSE,     /* 70% NaN: many empty and even-count windows */
    FILL_NAN_BLOCKS, /* noise with NaN rectangles: windows with no valid value, or a few */
    FILL_ZEROS,      /* -0, +0, +-1 and the smallest subnormals: ties of equal values, other bits */
    FILL_HUGE,       /* values near +-FLT_MAX and infinities: middles whose sum overflows */
    FILL_INFINITE,   /* blocks of +inf, of -inf, of both mixed with numbers: infinite medians */
    FILL_ZERO_BLOCKS, /* blocks of -0, of -0 and +0, of zeros and tiny subnormals */
    FILL_SCALE_STEPS, /* noise whose level and scale (x1000, x0.001) jump between blocks */
};

extern const char *const fill_name[];

/* nx x ny values rows `stride` apart (the padding past nx poisoned: it must never be read), of
 * the kind, with a further fraction of NaNs, from the seed. */
void fill_image(float *img, size_t nx, size_t ny, size_t stride, enum fill kind,
                double nan_fraction, uint64_t seed);

#endif
