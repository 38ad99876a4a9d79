/* bench_file_write.c - how fast a new file of MB megabytes can be written into DIR (the page
 * cache, then the disk behind it), by the ways madfilter's FITS writer could write its maps:
 * pwrite of 64 KiB chunks from T threads (what apps/common/fits_output.c does; a buffered write
 * takes the file's lock, so threads may not help), and a shared mapping of the file filled by T
 * threads (page faults, which take no file-wide lock), and pwrite over a file whose pages were
 * filled with zeros first (over:T; the zeros untimed, as if written while the GPU's context is
 * made). Each run makes a new file and closes it; removing it afterwards is not timed.
 *   bench_file_write DIR MB MODE... (MODE: pwrite:T, mmap:T or over:T), repeated REPS=3 times */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64u << 10)

struct part {
    int fd;
    char *map;
    const char *src;
    size_t from, to;
    int failed;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *write_part(void *arg)
{
    struct part *p = arg;
    for (size_t at = p->from; at < p->to;) {
        const size_t n = p->to - at < CHUNK ? p->to - at : CHUNK;
        const ssize_t done = pwrite(p->fd, p->src + at, n, (off_t)at);
        if (done <= 0 && errno != EINTR) {
            p->failed = 1;
            return NULL;
        }
        if (done > 0) at += (size_t)done;
    }
    return NULL;
}

static void *map_part(void *arg)
{
    struct part *p = arg;
    memcpy(p->map + p->from, p->src + p->from, p->to - p->from);
    return NULL;
}

/* One run: seconds, or a negative number on failure. */
static double run(const char *path, const char *src, size_t bytes, int mapped, int over,
                  int threads)
{
    int fd = -1;
    if (over) {
        static char zeros[1 << 20];
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        for (size_t at = 0; fd >= 0 && at < bytes; at += sizeof zeros)
            if (pwrite(fd, zeros, bytes - at < sizeof zeros ? bytes - at : sizeof zeros,
                       (off_t)at) <= 0)
                return -1;
    }
    const double t0 = now();
    if (!over) fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    char *map = NULL;
    if (mapped) {
        if (ftruncate(fd, (off_t)bytes) != 0) return -1;
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) return -1;
    }
    pthread_t tid[64];
    struct part parts[64];
    const size_t share = (bytes / (size_t)threads + 4095) / 4096 * 4096;
    for (int i = 0; i < threads; i++) {
        const size_t from = share * (size_t)i < bytes ? share * (size_t)i : bytes;
        parts[i] =
            (struct part){fd, map, src, from, from + share < bytes ? from + share : bytes, 0};
        pthread_create(&tid[i], NULL, mapped ? map_part : write_part, &parts[i]);
    }
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        failed |= parts[i].failed;
    }
    if (map) munmap(map, bytes);
    if (close(fd) != 0 || failed) return -1;
    return now() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_file_write DIR MB MODE... (pwrite:T, mmap:T or over:T)\n");
        return 2;
    }
    const size_t bytes = (size_t)atol(argv[2]) << 20;
    const int reps = getenv("REPS") ? atoi(getenv("REPS")) : 3;
    char *src = malloc(bytes);
    if (!src) return 1;
    for (size_t i = 0; i < bytes; i++)
        src[i] = (char)(i * 2654435761u >> 24);
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_file_write.%d", argv[1], (int)getpid());
    for (int r = 0; r < reps; r++) {
        for (int m = 3; m < argc; m++) {
            const int mapped = strncmp(argv[m], "mmap:", 5) == 0;
            const int over = strncmp(argv[m], "over:", 5) == 0;
            const char *colon = strchr(argv[m], ':');
            int threads = colon ? atoi(colon + 1) : 1;
            if (threads < 1) threads = 1;
            if (threads > 64) threads = 64;
            const double s = run(path, src, bytes, mapped, over, threads);
            unlink(path);
            if (s < 0)
                printf("%s: failed (%s)\n", argv[m], strerror(errno));
            else
                printf("%-10s %zu MB: %7.1f ms, %5.2f GB/s\n", argv[m], bytes >> 20, 1e3 * s,
                       (double)bytes / s / 1e9);
        }
    }
    free(src);
    return 0;
}
