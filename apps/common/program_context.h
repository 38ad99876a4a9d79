/* program_context.h - clstats_ctx_create for the programs, keeping the signal dispositions they
 * rely on (an OpenCL runtime may install its own handlers when a context is made), at once or on
 * a thread of its own while the program reads its input. */
#ifndef MADFILTER_PROGRAM_CONTEXT_H
#define MADFILTER_PROGRAM_CONTEXT_H

#include "clstats.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

/* As clstats_ctx_create, with SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGXFSZ as they were. */
int program_context_create(clstats_ctx **ctx, const char *device);

/* A context being made on a thread of its own: a GPU driver takes a quarter of a second to make
 * one, which the program spends reading its first input instead (bench/RESULTS.md). */
struct pending_context {
    pthread_t thread;
    bool started; /* false: program_context_finish makes the context itself */
    const char *device;
    clstats_ctx *ctx;
    int status;
    char message[4096]; /* the library's words when status is not CLSTATS_OK */
    struct sigaction before[5];
};

/* Starts making the context for device (NULL: the library's default) on a thread. */
void program_context_start(struct pending_context *p, const char *device);

/* Waits for the context, puts the signal dispositions back as they were at the start (the
 * handlers atomic_file installed meanwhile included), and returns the library's status; the
 * context goes to *ctx, or the library's words stay in p->message. */
int program_context_finish(struct pending_context *p, clstats_ctx **ctx);

#endif
