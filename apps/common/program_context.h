/* program_context.h - clstats_ctx_create for the programs, keeping the signal dispositions they
 * rely on (an OpenCL runtime may install its own handlers when a context is made), at once or on
 * a thread of its own while the program reads its input. */
#ifndef MADFILTER_PROGRAM_CONTEXT_H
#define MADFILTER_PROGRAM_CONTEXT_H

#include "clstats.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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
    /* What the thread does with the context once made, before handing it over: set by
     * program_context_warm, or nothing once program_context_finish is called. */
    pthread_mutex_t lock;
    pthread_cond_t decided_cond;
    bool decided;
    void (*warm)(clstats_ctx *ctx, void *arg);
    void *warm_arg;
    atomic_bool ready; /* the thread is done: program_context_finish will not wait */
};

/* Starts making the context for device (NULL: the library's default) on a thread. */
void program_context_start(struct pending_context *p, const char *device);

/* Asks the thread to run warm(ctx, arg) once the context is made and before it is handed over:
 * the first call's preparations (a program loaded and compiled for this device, buffers made),
 * done while the program is still reading. Only the first request counts, and only if it comes
 * before program_context_finish; arg must stay valid until then. A failure inside warm is the
 * later call's to meet and report. */
void program_context_warm(struct pending_context *p, void (*warm)(clstats_ctx *ctx, void *arg),
                          void *arg);

/* Whether program_context_finish would return at once (the thread is done, or none was
 * started). For filling waiting time with work that can stop at any point. */
bool program_context_ready(struct pending_context *p);

/* Waits for the context, puts the signal dispositions back as they were at the start (the
 * handlers atomic_file installed meanwhile included), and returns the library's status; the
 * context goes to *ctx, or the library's words stay in p->message. */
int program_context_finish(struct pending_context *p, clstats_ctx **ctx);

#endif
