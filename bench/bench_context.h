/* bench_context.h - the library's context as the benchmark programs make it: on the device
 * named, with the tuning run_gpu.sh asks for in CLSTATS_TUNE ("select.vpt=16,select.wg=512";
 * src/core/tuning.c lists the names) and, with CLSTATS_LOG=1, the library's log (build logs,
 * the paths taken and their times) on stderr. These are the programs' variables: the library
 * reads none of them. */
#ifndef BENCH_CONTEXT_H
#define BENCH_CONTEXT_H

#include "clstats.h"

/* A context, or NULL after one line on stderr. */
clstats_ctx *bench_context(const char *device);

#endif
