/* warm.h - the filter's first-call preparations made on the context's own thread while the first
 * input is read: the program for this window loaded (or compiled) for the device, its kernels
 * made and the device's scratch buffers allocated, by filtering a tiny image of zeros through the
 * same path as the real strips (clstats_filter_rows). A GPU driver spends tens of milliseconds on
 * these at the first call, which would otherwise follow the context's creation. */
#ifndef MADFILTER_WARM_H
#define MADFILTER_WARM_H

#include "clstats.h"

#include <stdbool.h>

struct warm_request {
    struct clstats_filter_params params; /* the window and boundary, no progress callback */
    unsigned maps;                       /* CLSTATS_MAP_MEDIAN and/or CLSTATS_MAP_MAD */
    bool f64;                            /* the input is filtered in float64 */
};

/* program_context_warm's callback: arg is a struct warm_request. Failures are ignored: the real
 * call meets them again and reports them. */
void warm_filter(clstats_ctx *ctx, void *arg);

#endif
