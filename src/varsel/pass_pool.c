/* pass_pool.c - threads that share the swarm's work over its particles between the engine's
 * steps (each particle's fit updated, its coefficients, its cheapest variable): the work of one
 * particle never touches another's, so the results are the same bits whoever does it. The
 * workers spin between jobs (a pause a turn) rather than sleep: a job lasts tens of
 * microseconds, about what waking a sleeping thread costs, and the pool lives only for one fit.
 * The caller's thread takes its share of each job. */
#include "varsel_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Particles a claim: a cache line's worth of a job's small outputs. */
#define CLAIM 8

struct pass_pool {
    pthread_t *threads;
    size_t n_workers;
    atomic_uint round; /* bumped to start a job */
    atomic_size_t next, finished;
    atomic_bool quit;
    void (*job)(void *arg, size_t j, size_t worker);
    void *arg;
    size_t count;
};

static void pause_a_turn(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void share(struct pass_pool *pool, size_t worker)
{
    for (;;) {
        const size_t j0 = atomic_fetch_add(&pool->next, CLAIM);
        if (j0 >= pool->count) return;
        const size_t j1 = j0 + CLAIM < pool->count ? j0 + CLAIM : pool->count;
        for (size_t j = j0; j < j1; j++)
            pool->job(pool->arg, j, worker);
    }
}

struct worker_arg {
    struct pass_pool *pool;
    size_t worker;
};

static void *work(void *p)
{
    struct worker_arg *w = p;
    struct pass_pool *pool = w->pool;
    const size_t me = w->worker;
    free(w);
    unsigned seen = 0;
    for (;;) {
        unsigned now;
        while ((now = atomic_load(&pool->round)) == seen && !atomic_load(&pool->quit))
            pause_a_turn();
        if (atomic_load(&pool->quit)) return NULL;
        seen = now;
        share(pool, me);
        atomic_fetch_add(&pool->finished, 1);
    }
}

struct pass_pool *clstats__pool_make(size_t threads)
{
    if (threads < 2) return NULL;
    struct pass_pool *pool = calloc(1, sizeof *pool);
    if (!pool || !(pool->threads = calloc(threads - 1, sizeof *pool->threads))) {
        free(pool);
        return NULL;
    }
    for (size_t i = 0; i + 1 < threads; i++) {
        struct worker_arg *w = malloc(sizeof *w);
        if (!w) break;
        *w = (struct worker_arg){pool, i + 1};
        if (pthread_create(&pool->threads[i], NULL, work, w) != 0) {
            free(w);
            break;
        }
        pool->n_workers++;
    }
    if (!pool->n_workers) {
        clstats__pool_free(pool);
        return NULL;
    }
    return pool;
}

size_t clstats__pool_threads(const struct pass_pool *pool)
{
    return pool ? pool->n_workers + 1 : 1;
}

void clstats__pool_run(struct pass_pool *pool, size_t count,
                       void (*job)(void *arg, size_t j, size_t worker), void *arg)
{
    if (!pool) {
        for (size_t j = 0; j < count; j++)
            job(arg, j, 0);
        return;
    }
    pool->job = job, pool->arg = arg, pool->count = count;
    atomic_store(&pool->next, 0);
    atomic_store(&pool->finished, 0);
    atomic_fetch_add(&pool->round, 1);
    share(pool, 0);
    while (atomic_load(&pool->finished) < pool->n_workers)
        pause_a_turn();
}

void clstats__pool_free(struct pass_pool *pool)
{
    if (!pool) return;
    atomic_store(&pool->quit, true);
    for (size_t i = 0; i < pool->n_workers; i++)
        pthread_join(pool->threads[i], NULL);
    free(pool->threads);
    free(pool);
}
