/* parallel.h - a job split among a few threads, for the programs' file I/O: converting pixels to
 * and from big-endian FITS, checksumming and copying them through the page cache are each bound by
 * one core's memory bandwidth, which several cores multiply (bench/RESULTS.md). */
#ifndef TOOLS_PARALLEL_H
#define TOOLS_PARALLEL_H

#include <stddef.h>

/* The most threads a job is split among. */
#define PARALLEL_MAX_PARTS 16

/* Threads worth using for `bytes` of work: one per 8 MiB, at most the cores online and
 * PARALLEL_MAX_PARTS. */
int parallel_threads(size_t bytes);

/* Runs part(arg, i, n) for i = 0 .. n - 1, part 0 on the calling thread and the others on threads
 * of their own, and returns when every part has; a part that cannot get a thread runs on the
 * calling thread. */
void parallel_run(int n, void (*part)(void *arg, int i, int n), void *arg);

#endif
