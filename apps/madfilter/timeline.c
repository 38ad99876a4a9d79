/* timeline.c - see timeline.h. */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double started;
static int on;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void timeline_start(void)
{
    const char *log = getenv("CLSTATS_LOG");
    on = log && *log && strcmp(log, "0") != 0;
    started = seconds();
}

void timeline_mark(const char *what)
{
    if (on) fprintf(stderr, "madfilter: %7.1f ms: %s\n", 1e3 * (seconds() - started), what);
}

int timeline_on(void)
{
    return on;
}
