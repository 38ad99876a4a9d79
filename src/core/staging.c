/* staging.c - host arrays streamed to and from a GPU a piece at a time through pinned buffers, so
 * that the bus carries the upload, the kernels run and the results come back at once. A
 * pageable array crosses the bus at a fifth of the pinned rate (bench_transfer: pageable writes,
 * reads and the caller's array used in place, against mapped CL_MEM_ALLOC_HOST_PTR buffers), and
 * one core copies into pinned memory no faster, so a few threads copy each piece between the
 * caller's array and a pinned slot while the previous pieces travel. Uploads go on a queue of
 * their own, downloads on another; the kernels' queue waits for the uploads it needs, and each
 * download waits for the kernels before it. The context keeps the slots, queues and threads from
 * the first streamed call on (clstats__stage_free). */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS 32
#define MAX_COPIERS 16
#define AUTO_THREADS 16 /* the caller and its copiers, at most */

struct slot {
    cl_mem buffer;
    void *host;    /* the buffer mapped */
    cl_event busy; /* its last transfer, NULL when idle */
    void *out;     /* a download's destination, copied to once `busy` completes; NULL for none */
    size_t out_bytes;
};

struct clstats__staging;
struct copier_arg {
    struct clstats__staging *st;
    int index;
};

struct clstats__staging {
    cl_command_queue up, down;
    struct slot slots[MAX_SLOTS];
    int n_slots, next;
    size_t slot_bytes;
    long threads_asked;        /* the tuning it was made under */
    cl_event last_up, kernels; /* the latest upload; the kernels' marker downloads wait on */
    /* Copy threads: each job splits dst/src/bytes into n_copiers + 1 parts, the calling thread
     * taking part 0. A new job is a new generation; threads spin up to spin_ns for it before
     * they sleep on `go` (sleepers counts them), and the caller spins as long for `pending` to
     * reach 0 before it sleeps on `done`. */
    pthread_t threads[MAX_COPIERS];
    struct copier_arg args[MAX_COPIERS];
    int n_copiers;
    atomic_long spin_ns;
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    atomic_ulong generation;
    atomic_int pending;
    atomic_bool stop;
    int sleepers;
    char *dst;
    const char *src;
    size_t bytes;
};

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Spins up to ns nanoseconds while done(st, arg) is false; returns whether it became true. */
static bool spin_until(struct clstats__staging *st, long ns,
                       bool (*done)(struct clstats__staging *st, unsigned long arg),
                       unsigned long arg)
{
    if (ns <= 0) return done(st, arg);
    const long end = now_ns() + ns;
    for (unsigned k = 1;; k++) {
        if (done(st, arg)) return true;
        if (k % 64 == 0 && now_ns() > end) return false;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

static bool new_job(struct clstats__staging *st, unsigned long seen)
{
    return atomic_load_explicit(&st->stop, memory_order_acquire) ||
           atomic_load_explicit(&st->generation, memory_order_acquire) != seen;
}

static bool job_done(struct clstats__staging *st, unsigned long unused)
{
    (void)unused;
    return atomic_load_explicit(&st->pending, memory_order_acquire) == 0;
}

/* Part i of n of the current copy job, in whole cache lines. */
static void copy_part(struct clstats__staging *st, int i, int n)
{
    const size_t share = (st->bytes / (size_t)n + 63) / 64 * 64;
    const size_t from = share * (size_t)i < st->bytes ? share * (size_t)i : st->bytes;
    const size_t to = from + share < st->bytes ? from + share : st->bytes;
    if (to > from) memcpy(st->dst + from, st->src + from, to - from);
}

static void *copier(void *arg)
{
    const struct copier_arg *a = arg;
    struct clstats__staging *st = a->st;
    unsigned long seen = 0;
    for (;;) {
        spin_until(st, atomic_load(&st->spin_ns), new_job, seen);
        pthread_mutex_lock(&st->lock);
        while (!new_job(st, seen)) {
            st->sleepers++;
            pthread_cond_wait(&st->go, &st->lock);
            st->sleepers--;
        }
        const bool stop = atomic_load(&st->stop);
        seen = atomic_load(&st->generation);
        pthread_mutex_unlock(&st->lock);
        if (stop) break;
        copy_part(st, a->index, st->n_copiers + 1);
        if (atomic_fetch_sub_explicit(&st->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&st->lock);
            pthread_cond_signal(&st->done);
            pthread_mutex_unlock(&st->lock);
        }
    }
    return NULL;
}

/* memcpy by the copy threads and the calling one; small copies stay on the calling thread. */
static void parallel_copy(struct clstats__staging *st, void *dst, const void *src, size_t bytes)
{
    if (st->n_copiers == 0 || bytes < (256u << 10)) {
        memcpy(dst, src, bytes);
        return;
    }
    pthread_mutex_lock(&st->lock);
    st->dst = dst, st->src = src, st->bytes = bytes;
    atomic_store(&st->pending, st->n_copiers);
    atomic_fetch_add_explicit(&st->generation, 1, memory_order_release);
    if (st->sleepers) pthread_cond_broadcast(&st->go);
    pthread_mutex_unlock(&st->lock);
    copy_part(st, 0, st->n_copiers + 1);
    if (spin_until(st, atomic_load(&st->spin_ns), job_done, 0)) return;
    pthread_mutex_lock(&st->lock);
    while (!job_done(st, 0))
        pthread_cond_wait(&st->done, &st->lock);
    pthread_mutex_unlock(&st->lock);
}

void clstats__stage_free(clstats_ctx *ctx)
{
    struct clstats__staging *st = ctx->staging;
    if (!st) return;
    if (st->n_copiers) {
        pthread_mutex_lock(&st->lock);
        atomic_store(&st->stop, true);
        pthread_cond_broadcast(&st->go);
        pthread_mutex_unlock(&st->lock);
        for (int i = 0; i < st->n_copiers; i++)
            pthread_join(st->threads[i], NULL);
    }
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->go);
    pthread_cond_destroy(&st->done);
    for (int i = 0; i < st->n_slots; i++) {
        struct slot *s = &st->slots[i];
        if (s->busy) clWaitForEvents(1, &s->busy), clReleaseEvent(s->busy);
        if (s->host) clEnqueueUnmapMemObject(st->up, s->buffer, s->host, 0, NULL, NULL);
        if (st->up) clFinish(st->up);
        if (s->buffer) clReleaseMemObject(s->buffer);
    }
    if (st->last_up) clReleaseEvent(st->last_up);
    if (st->kernels) clReleaseEvent(st->kernels);
    if (st->up) clReleaseCommandQueue(st->up);
    if (st->down) clReleaseCommandQueue(st->down);
    free(st);
    ctx->staging = NULL;
}

bool clstats__stage_wanted(const clstats_ctx *ctx)
{
    const long want = clstats__tuned(ctx, P_TRANSFER_STREAM);
    return want == SWITCH_ON || (want == AUTO && !ctx->is_cpu);
}

/* The slots' size and count the tuning asks for, within bounds. */
static void slot_plan(const clstats_ctx *ctx, size_t *bytes, int *count)
{
    *bytes = (size_t)clstats__tuned(ctx, P_TRANSFER_SLOT_KB) << 10;
    if (*bytes < (64u << 10)) *bytes = 64u << 10;
    const long n = clstats__tuned(ctx, P_TRANSFER_SLOTS);
    *count = n < 2 ? 2 : n > MAX_SLOTS ? MAX_SLOTS : (int)n;
}

int clstats__stage_begin(clstats_ctx *ctx)
{
    size_t slot_bytes;
    int n_slots;
    slot_plan(ctx, &slot_bytes, &n_slots);
    const long threads = clstats__tuned(ctx, P_TRANSFER_THREADS);
    const long spin_ns = 1000 * clstats__tuned(ctx, P_TRANSFER_SPIN_US);
    if (ctx->staging && ctx->staging->slot_bytes == slot_bytes &&
        ctx->staging->n_slots == n_slots && ctx->staging->threads_asked == threads) {
        atomic_store(&ctx->staging->spin_ns, spin_ns); /* read by the copiers before each wait */
        return CLSTATS_OK;
    }
    clstats__stage_free(ctx); /* made under other tuning */
    struct clstats__staging *st = calloc(1, sizeof *st);
    if (!st) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate staging");
    ctx->staging = st;
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->go, NULL);
    pthread_cond_init(&st->done, NULL);
    atomic_store(&st->spin_ns, spin_ns);
    cl_int err;
    int status = CLSTATS_OK;
    st->up = clCreateCommandQueue(ctx->context, ctx->device, 0, &err);
    CL_TRY(ctx, err, "clCreateCommandQueue(uploads)");
    st->down = clCreateCommandQueue(ctx->context, ctx->device, 0, &err);
    CL_TRY(ctx, err, "clCreateCommandQueue(downloads)");
    st->slot_bytes = slot_bytes;
    for (int i = 0; i < n_slots; i++) {
        st->n_slots = i + 1; /* freed by clstats__stage_free, made or not */
        struct slot *s = &st->slots[i];
        s->buffer = clCreateBuffer(ctx->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
                                   st->slot_bytes, NULL, &err);
        CL_TRY(ctx, err, "clCreateBuffer(pinned slot)");
        s->host = clEnqueueMapBuffer(st->up, s->buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                     st->slot_bytes, 0, NULL, NULL, &err);
        CL_TRY(ctx, err, "clEnqueueMapBuffer(pinned slot)");
    }
    /* auto: a copier per core beside the caller's thread, up to 16 in all (on the H100's 16
     * cores slightly ahead of 8 over four runs each, both within the machine's scatter: RESULTS
     * "issue 20f: the bus and the files"). */
    st->threads_asked = threads;
    long copiers = threads - 1;
    if (copiers < 0) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        copiers = (cores > AUTO_THREADS ? AUTO_THREADS : cores) - 1;
    }
    if (copiers > MAX_COPIERS) copiers = MAX_COPIERS;
    for (int i = 0; i < copiers; i++) {
        st->args[i] = (struct copier_arg){st, i + 1};
        if (pthread_create(&st->threads[i], NULL, copier, &st->args[i]) != 0) break;
        st->n_copiers++;
    }
    return CLSTATS_OK;

fail:
    clstats__stage_free(ctx);
    return status;
}

/* Waits for a slot's transfer and finishes a download into it. */
static int settle(clstats_ctx *ctx, struct slot *s)
{
    if (!s->busy) return CLSTATS_OK;
    int status = clstats__cl_check(ctx, clWaitForEvents(1, &s->busy), "staging transfer");
    clReleaseEvent(s->busy);
    s->busy = NULL;
    if (status == CLSTATS_OK && s->out) parallel_copy(ctx->staging, s->out, s->host, s->out_bytes);
    s->out = NULL;
    return status;
}

static struct slot *next_slot(clstats_ctx *ctx, int *status)
{
    struct clstats__staging *st = ctx->staging;
    struct slot *s = &st->slots[st->next];
    st->next = (st->next + 1) % st->n_slots;
    *status = settle(ctx, s);
    return s;
}

/* Bytes between a host array and a buffer, a slot at a time: up, copied into the slot and
 * written on the upload queue; down, read into the slot on the download queue after the
 * kernels' marker, and copied out once it arrives (settle). */
static int stage(clstats_ctx *ctx, bool up, cl_mem buffer, size_t offset, char *host, size_t bytes)
{
    struct clstats__staging *st = ctx->staging;
    int status = CLSTATS_OK;
    for (size_t done = 0; done < bytes && status == CLSTATS_OK;) {
        const size_t n = bytes - done < st->slot_bytes ? bytes - done : st->slot_bytes;
        struct slot *s = next_slot(ctx, &status);
        if (status != CLSTATS_OK) break;
        if (up) parallel_copy(st, s->host, host + done, n);
        const cl_int err = up ? clEnqueueWriteBuffer(st->up, buffer, CL_FALSE, offset + done, n,
                                                     s->host, 0, NULL, &s->busy)
                              : clEnqueueReadBuffer(st->down, buffer, CL_FALSE, offset + done, n,
                                                    s->host, st->kernels ? 1 : 0,
                                                    st->kernels ? &st->kernels : NULL, &s->busy);
        status = clstats__cl_check(ctx, err, up ? "staging upload" : "staging download");
        if (status != CLSTATS_OK) break;
        clFlush(up ? st->up : st->down);
        if (up) {
            if (st->last_up) clReleaseEvent(st->last_up);
            clRetainEvent(s->busy);
            st->last_up = s->busy;
        } else {
            s->out = host + done;
            s->out_bytes = n;
        }
        done += n;
    }
    return status;
}

int clstats__stage_upload(clstats_ctx *ctx, cl_mem dst, size_t offset, const void *src,
                          size_t bytes)
{
    return stage(ctx, true, dst, offset, (char *)src, bytes);
}

int clstats__stage_uploaded(clstats_ctx *ctx)
{
    struct clstats__staging *st = ctx->staging;
    if (!st->last_up) return CLSTATS_OK;
    return clstats__cl_check(ctx, clEnqueueBarrierWithWaitList(ctx->queue, 1, &st->last_up, NULL),
                             "staging barrier");
}

int clstats__stage_kernels_done(clstats_ctx *ctx)
{
    struct clstats__staging *st = ctx->staging;
    if (st->kernels) clReleaseEvent(st->kernels);
    st->kernels = NULL;
    int status = clstats__cl_check(
        ctx, clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &st->kernels), "staging marker");
    clFlush(ctx->queue);
    return status;
}

int clstats__stage_download(clstats_ctx *ctx, cl_mem src, size_t offset, void *dst, size_t bytes)
{
    return stage(ctx, false, src, offset, dst, bytes);
}

int clstats__stage_poll(clstats_ctx *ctx)
{
    struct clstats__staging *st = ctx->staging;
    int status = CLSTATS_OK;
    for (int k = 0; k < st->n_slots && status == CLSTATS_OK; k++) {
        struct slot *s = &st->slots[(st->next + k) % st->n_slots];
        cl_int state = CL_QUEUED;
        if (!s->busy || !s->out ||
            clGetEventInfo(s->busy, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state,
                           NULL) != CL_SUCCESS ||
            state > CL_COMPLETE)
            continue;
        status = settle(ctx, s);
    }
    return status;
}

int clstats__stage_finish(clstats_ctx *ctx)
{
    struct clstats__staging *st = ctx->staging;
    int status = CLSTATS_OK;
    for (int k = 0; k < st->n_slots; k++) {
        const int r = settle(ctx, &st->slots[(st->next + k) % st->n_slots]);
        if (status == CLSTATS_OK) status = r;
    }
    if (st->last_up) clReleaseEvent(st->last_up);
    if (st->kernels) clReleaseEvent(st->kernels);
    st->last_up = st->kernels = NULL;
    return status;
}

int clstats_ctx_prepare_transfers(clstats_ctx *ctx)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    return clstats__stage_wanted(ctx) ? clstats__stage_begin(ctx) : CLSTATS_OK;
}
