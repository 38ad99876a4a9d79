/* select_internal.h - what src/select.c shares with src/select_columns.c and the benchmark:
 * one selection run on device data, and the key/value helpers that define the results. */
#ifndef CLSTATS_SELECT_INTERNAL_H
#define CLSTATS_SELECT_INTERNAL_H

#include "internal.h"

struct select_request {
    enum clstats_select_method method;
    int mode;          /* 0: rank k; 1: the median pair; 2: ranks r0, r1 as given */
    uint64_t k, r0, r1; /* ranks among the valid values, 0-based */
    double *kernel_ms; /* optional: profiling time of the run's kernels is added here */
};

struct select_result {
    uint64_t nan, nv;   /* NaNs and valid values */
    uint64_t key0, key1; /* keys of ranks r0 and r1 (r1 = r0 + 1 for an even median) */
    unsigned passes;    /* reduction passes over the data (sample: 1 when its bracket held) */
    uint64_t gathered;  /* sample and cutting plane: values inside the final bracket */
    bool empty, out_of_range;
};

/* Runs kernels/select.cl over n values (float32, or float64 when f64) from element `offset`
 * of data. */
int clstats__select_run(clstats_ctx *ctx, cl_mem data, size_t offset, uint64_t n, bool f64,
                        const struct select_request *req, struct select_result *res);

/* Value of an order-preserving key (the inverse of the kernels' key_of_bits). */
double clstats__value_of_key(uint64_t key, bool f64);

/* The documented means of two middle values (clstats.h: clstats_median). */
float clstats__mean_f32(float a, float b);
double clstats__mean_f64(double a, double b);


#endif
