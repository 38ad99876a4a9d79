/* program_context.c - the library's context as madfilter and imstats need it: made with the
 * signal dispositions the programs rely on kept as they were. Intel's OpenCL CPU runtime installs
 * handlers of its own when a context is made (a crash reporter that also takes SIGXFSZ), which
 * replaced an inherited SIG_IGN: a file-size limit then printed Intel's bug-report banner before
 * madfilter's own error line. */
#include "program_context.h"

#include "atomic_file.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Interrupts and hangups: madfilter's clean-up of temporaries, or an inherited SIG_IGN (nohup).
 * SIGPIPE and SIGXFSZ: a write that fails must fail as a write, with its reason. */
static const int kept[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
enum { KEPT = sizeof kept / sizeof kept[0] };

int program_context_create(clstats_ctx **ctx, const char *device)
{
    struct sigaction before[KEPT];
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], NULL, &before[i]);
    const int status = clstats_ctx_create(ctx, device);
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], &before[i], NULL);
    return status;
}

static void make_and_warm(struct pending_context *p)
{
    p->status = clstats_ctx_create(&p->ctx, p->device);
    if (p->status != CLSTATS_OK) {
        snprintf(p->message, sizeof p->message, "%s", clstats_ctx_message(NULL));
        return;
    }
    clstats_ctx_prepare_transfers(p->ctx); /* a failure here is the first call's to report */
    pthread_mutex_lock(&p->lock);
    while (!p->decided)
        pthread_cond_wait(&p->decided_cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
    if (p->warm) p->warm(p->ctx, p->warm_arg);
}

static void *make_context(void *arg)
{
    struct pending_context *p = arg;
    make_and_warm(p);
    atomic_store(&p->ready, true);
    return NULL;
}

void program_context_start(struct pending_context *p, const char *device)
{
    memset(p, 0, sizeof *p);
    p->device = device;
    atomic_init(&p->ready, false);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->decided_cond, NULL);
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], NULL, &p->before[i]);
    p->started = pthread_create(&p->thread, NULL, make_context, p) == 0;
}

/* The thread's next step, once: warm (or NULL for none). */
static void decide(struct pending_context *p, void (*warm)(clstats_ctx *, void *), void *arg)
{
    pthread_mutex_lock(&p->lock);
    if (!p->decided) {
        p->warm = warm;
        p->warm_arg = arg;
        p->decided = true;
        pthread_cond_signal(&p->decided_cond);
    }
    pthread_mutex_unlock(&p->lock);
}

void program_context_warm(struct pending_context *p, void (*warm)(clstats_ctx *ctx, void *arg),
                          void *arg)
{
    if (p->started) decide(p, warm, arg);
}

bool program_context_ready(struct pending_context *p)
{
    return !p->started || atomic_load(&p->ready);
}

int program_context_finish(struct pending_context *p, clstats_ctx **ctx)
{
    if (!p->started) {
        const int status = program_context_create(ctx, p->device);
        if (status != CLSTATS_OK)
            snprintf(p->message, sizeof p->message, "%s", clstats_ctx_message(NULL));
        return status;
    }
    decide(p, NULL, NULL);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->decided_cond);
    p->started = false;
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], &p->before[i], NULL);
    atomic_signals_reset();
    *ctx = p->ctx;
    return p->status;
}
