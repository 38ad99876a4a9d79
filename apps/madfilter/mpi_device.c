/* mpi_device.c - the device spec of this rank (mpi_run.h): %local_rank% replaced. */
#include "mpi_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mpi_device(const char *spec)
{
    static char out[256];
    if (!spec) spec = getenv("CLSTATS_DEVICE");
    const char *at = spec ? strstr(spec, "%local_rank%") : NULL;
    if (!at) return spec;
    snprintf(out, sizeof out, "%.*s%d%s", (int)(at - spec), spec, mpi_local_rank(),
             at + strlen("%local_rank%"));
    return out;
}
