/* mpi_run.c - madfilter under mpirun (mpi_run.h). Every rank runs madfilter.c's steps; this
 * file decides what each rank takes and moves the strips: ranks other than 0 keep their band's
 * strips in memory, and once every rank has said it finished well, rank 0 receives them in rank
 * order and writes them as its own. A rank that failed makes every rank fail before rank 0
 * writes anything it would have to take back. */
#include "mpi_run.h"

#include "cli.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool active;
static int rank, size = 1, local_rank;
static int *owner; /* the rank of each input, several inputs shared */

void mpi_start(int *argc, char ***argv)
{
    /* Launched by an MPI launcher: Open MPI's, PMIx's or a PMI one's variables. */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_SIZE")) return;
    MPI_Init(argc, argv);
    active = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_free(&local);
}

int mpi_finish(int rc)
{
    if (!active) return rc;
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(owner);
    MPI_Finalize();
    return worst;
}

int mpi_ranks(void)
{
    return size;
}

bool mpi_leads(void)
{
    return rank == 0;
}

int mpi_local_rank(void)
{
    return local_rank;
}

/* ---- Several inputs ---------------------------------------------------------------------- */

struct sized {
    int index;
    long long bytes;
};

static int larger_first(const void *a, const void *b)
{
    const struct sized *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return x->index - y->index;
}

void mpi_share_inputs(const char *const *inputs, int n)
{
    if (!active || size < 2) return;
    struct sized *order = malloc((size_t)n * sizeof *order);
    long long *load = calloc((size_t)size, sizeof *load);
    owner = malloc((size_t)n * sizeof *owner);
    if (!order || !load || !owner) MPI_Abort(MPI_COMM_WORLD, EXIT_RUNTIME);
    /* Rank 0 measures the files (cfitsio's suffixes such as [SCI] cut off), every rank gets
     * the same list: the assignment is one answer. */
    for (int i = 0; i < n; i++) {
        order[i].index = i;
        order[i].bytes = 0;
        if (rank != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s", inputs[i]);
        char *bracket = strchr(path, '[');
        if (bracket && bracket != path) *bracket = '\0';
        struct stat st;
        if (stat(path, &st) == 0) order[i].bytes = (long long)st.st_size;
    }
    MPI_Bcast(order, (int)(n * sizeof *order), MPI_BYTE, 0, MPI_COMM_WORLD);
    qsort(order, (size_t)n, sizeof *order, larger_first);
    for (int i = 0; i < n; i++) {
        int least = 0;
        for (int q = 1; q < size; q++)
            if (load[q] < load[least]) least = q;
        owner[order[i].index] = least;
        load[least] += order[i].bytes + 1;
    }
    free(order);
    free(load);
}

bool mpi_takes(int i)
{
    return !owner || owner[i] == rank;
}

int mpi_batch_end(int failed, bool *fatal, int n_inputs, double seconds)
{
    if (!active || size < 2) return failed;
    int mine[2] = {failed, *fatal}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double slowest;
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    *fatal = all[1] > 0;
    if (rank == 0)
        fprintf(stderr, "madfilter: %d inputs on %d ranks: %d written, %d failed, %.2f s\n",
                n_inputs, size, n_inputs - all[0], all[0], slowest);
    return all[0];
}

/* ---- One input in bands ------------------------------------------------------------------ */

void mpi_band(size_t ny, size_t *row_begin, size_t *row_end)
{
    *row_begin = ny * (size_t)rank / (size_t)size;
    *row_end = ny * (size_t)(rank + 1) / (size_t)size;
}

/* A kept strip: its place and its maps (NULL where not asked), nx * rows values each. */
struct kept {
    size_t plane, row0, rows;
    void *map[5]; /* median, MAD, SIGMA, SNR, RESIDUAL */
};

static struct kept *kept;
static size_t n_kept, cap_kept, strip_nx, strip_planes;
static bool strip_f64;

void mpi_strips_begin(size_t nx, size_t planes, bool f64)
{
    strip_nx = nx;
    strip_planes = planes;
    strip_f64 = f64;
}

bool mpi_keeps_strips(void)
{
    return active && size > 1 && (rank != 0 || strip_planes > 1);
}

static const void *map_of(const struct clstats_strip *s, int m)
{
    if (strip_f64) {
        const double *p[5] = {s->median_f64, s->mad_f64, s->sigma_f64, s->snr_f64, s->residual_f64};
        return p[m];
    }
    const float *p[5] = {s->median, s->mad, s->sigma, s->snr, s->residual};
    return p[m];
}

int mpi_keep_strip(void *user, const struct clstats_strip *strip)
{
    (void)user;
    if (n_kept == cap_kept) {
        size_t cap = cap_kept ? 2 * cap_kept : 16;
        struct kept *k = realloc(kept, cap * sizeof *k);
        if (!k) return -1;
        kept = k;
        cap_kept = cap;
    }
    struct kept *k = &kept[n_kept];
    memset(k, 0, sizeof *k);
    k->plane = strip->plane, k->row0 = strip->row0, k->rows = strip->rows;
    const size_t bytes = strip->rows * strip_nx * (strip_f64 ? 8 : 4);
    for (int m = 0; m < 5; m++) {
        const void *src = map_of(strip, m);
        if (!src) continue;
        if (!(k->map[m] = malloc(bytes ? bytes : 1))) {
            for (int i = 0; i < m; i++)
                free(k->map[i]);
            return -1;
        }
        memcpy(k->map[m], src, bytes);
    }
    n_kept++;
    return 0;
}

static void free_kept(void)
{
    for (size_t i = 0; i < n_kept; i++)
        for (int m = 0; m < 5; m++)
            free(kept[i].map[m]);
    free(kept);
    kept = NULL;
    n_kept = cap_kept = 0;
}

/* Messages of any size, in pieces of at most 1 GiB (MPI counts are ints). */
static void send_bytes(const void *p, size_t bytes, int to)
{
    for (size_t at = 0; at < bytes; at += (size_t)1 << 30) {
        const size_t piece = bytes - at < ((size_t)1 << 30) ? bytes - at : (size_t)1 << 30;
        MPI_Send((const char *)p + at, (int)piece, MPI_BYTE, to, 25, MPI_COMM_WORLD);
    }
}

static void recv_bytes(void *p, size_t bytes, int from)
{
    for (size_t at = 0; at < bytes; at += (size_t)1 << 30) {
        const size_t piece = bytes - at < ((size_t)1 << 30) ? bytes - at : (size_t)1 << 30;
        MPI_Recv((char *)p + at, (int)piece, MPI_BYTE, from, 25, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* A kept strip as the library gave it. */
static struct clstats_strip strip_of(size_t plane, size_t row0, size_t rows, void *const *map)
{
    struct clstats_strip s = {.plane = plane, .row0 = row0, .rows = rows};
    if (strip_f64) {
        s.median_f64 = map[0], s.mad_f64 = map[1], s.sigma_f64 = map[2];
        s.snr_f64 = map[3], s.residual_f64 = map[4];
    } else {
        s.median = map[0], s.mad = map[1], s.sigma = map[2], s.snr = map[3];
        s.residual = map[4];
    }
    return s;
}

/* Rank 0's side: rank q's strips of one plane, each handed to take; false once take refused
 * one (the rest are still received, so that rank q is not left sending). */
static bool receive_from(int q, int (*take)(void *, const struct clstats_strip *), void *user,
                         bool ok)
{
    uint64_t count;
    recv_bytes(&count, sizeof count, q);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t head[4]; /* plane, row0, rows, the maps present as bits */
        recv_bytes(head, sizeof head, q);
        const size_t bytes = (size_t)head[2] * strip_nx * (strip_f64 ? 8 : 4);
        void *map[5] = {NULL};
        for (int m = 0; m < 5; m++) {
            if (!(head[3] & (1u << m))) continue;
            /* No memory for a strip on rank 0: nothing sensible can be written. */
            if (!(map[m] = malloc(bytes ? bytes : 1))) MPI_Abort(MPI_COMM_WORLD, EXIT_RUNTIME);
            recv_bytes(map[m], bytes, q);
        }
        const struct clstats_strip s = strip_of(head[0], head[1], head[2], map);
        if (ok && take(user, &s) != 0) ok = false;
        for (int m = 0; m < 5; m++)
            free(map[m]);
    }
    return ok;
}

/* This rank's strips of one plane to rank 0. */
static void send_kept(size_t plane)
{
    uint64_t count = 0;
    for (size_t i = 0; i < n_kept; i++)
        count += kept[i].plane == plane;
    send_bytes(&count, sizeof count, 0);
    for (size_t i = 0; i < n_kept; i++) {
        const struct kept *k = &kept[i];
        if (k->plane != plane) continue;
        uint64_t head[4] = {k->plane, k->row0, k->rows, 0};
        for (int m = 0; m < 5; m++)
            if (k->map[m]) head[3] |= 1u << m;
        send_bytes(head, sizeof head, 0);
        const size_t bytes = k->rows * strip_nx * (strip_f64 ? 8 : 4);
        for (int m = 0; m < 5; m++)
            if (k->map[m]) send_bytes(k->map[m], bytes, 0);
    }
}

int mpi_gather_strips(int rc, int (*take)(void *user, const struct clstats_strip *strip),
                      void *user, size_t *n_nan, size_t *n_strips)
{
    if (!active || size < 2) return rc;
    int failed_here = rc != EXIT_OK, failed = 0;
    MPI_Allreduce(&failed_here, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failed) {
        if (rank == 0 && !failed_here)
            fprintf(stderr, "madfilter: %d of %d ranks failed: no output written\n", failed, size);
        free_kept();
        return EXIT_RUNTIME;
    }
    /* The output takes its rows in order: plane by plane, each in rank order. */
    bool ok = true;
    for (size_t p = 0; p < strip_planes; p++) {
        if (rank != 0) {
            send_kept(p);
            continue;
        }
        for (size_t i = 0; i < n_kept; i++) {
            if (kept[i].plane != p) continue;
            const struct clstats_strip s = strip_of(p, kept[i].row0, kept[i].rows, kept[i].map);
            if (ok && take(user, &s) != 0) ok = false;
        }
        for (int q = 1; q < size; q++)
            ok = receive_from(q, take, user, ok);
    }
    free_kept();
    uint64_t mine[2] = {*n_nan, *n_strips}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    *n_nan = (size_t)all[0];
    *n_strips = (size_t)all[1];
    int bad = !ok, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any ? EXIT_RUNTIME : EXIT_OK;
}
