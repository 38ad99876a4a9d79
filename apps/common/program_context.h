/* program_context.h - clstats_ctx_create for the programs, keeping the signal dispositions they
 * rely on (an OpenCL runtime may install its own handlers when a context is made). */
#ifndef MADFILTER_PROGRAM_CONTEXT_H
#define MADFILTER_PROGRAM_CONTEXT_H

#include "clstats.h"

/* As clstats_ctx_create, with SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGXFSZ as they were. */
int program_context_create(clstats_ctx **ctx, const char *device);

#endif
