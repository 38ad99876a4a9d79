/* parallel.c - a job split among a few threads (parallel.h). Threads are made per job: a job is
 * milliseconds of copying, against tens of microseconds to start a thread. */
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

#define MAX_PARTS PARALLEL_MAX_PARTS

int parallel_threads(size_t bytes)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long n = (long)(bytes >> 23);
    if (n > MAX_PARTS) n = MAX_PARTS;
    if (n > cores) n = cores;
    return n < 1 ? 1 : (int)n;
}

struct part_call {
    void (*part)(void *arg, int i, int n);
    void *arg;
    int i, n;
};

static void *run_part(void *p)
{
    const struct part_call *c = p;
    c->part(c->arg, c->i, c->n);
    return NULL;
}

void parallel_run(int n, void (*part)(void *arg, int i, int n), void *arg)
{
    if (n > MAX_PARTS) n = MAX_PARTS;
    if (n < 1) n = 1;
    pthread_t threads[MAX_PARTS];
    struct part_call calls[MAX_PARTS];
    int started[MAX_PARTS] = {0};
    for (int i = 1; i < n; i++) {
        calls[i] = (struct part_call){part, arg, i, n};
        started[i] = pthread_create(&threads[i], NULL, run_part, &calls[i]) == 0;
        if (!started[i]) part(arg, i, n);
    }
    part(arg, 0, n);
    for (int i = 1; i < n; i++)
        if (started[i]) pthread_join(threads[i], NULL);
}
