/* bench_mpi.c - benchmark (not a test) of the distributed k-th value and median
 * (include/clstats/mpi.h), weak scaling: every rank holds 2^log2n float32 values in a buffer of
 * its own device and the ranks select among all of them. Times are wall clock from a barrier
 * to the slowest rank's return, the median of the repetitions; bytes and messages are what one
 * call moved (clstats_mpi_traffic). With one rank it also times the one-device calls on the same
 * buffer (the library's default method, and radix, the path the ranks take), the references
 * the distributed call is held to. Prints lines "RESULT ranks=... n_rank=... op=... ms=...
 * bytes=... messages=...".
 *
 * With --cols C the rank's values are also a matrix of 2^log2n / C rows and C columns, the
 * ranks' rows stacked, and the column medians and the batched selection (the k-th value of
 * every column, k half the rows, and the sums of the k smallest) are timed alike (with one
 * rank, against the one-device calls).
 *
 * Usage: mpirun -np N bench_mpi [--device SPEC] [--log2n 28] [--reps 10] [--cols C]
 *                               [--method auto|radix|sample|cutting_plane] (the distributed
 *                               k-th value's and median's)
 * SPEC may contain %local_rank%, this rank's index among the ranks of its machine (one GPU a
 * rank: "gpu:%local_rank%"); CLSTATS_TUNE applies to every rank (bench_context.h). */
#include "bench_context.h"
#include "clstats.h"
#include "clstats/mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* splitmix64 uniforms in [0, 1000) rounded to 1/64 (ties), a stream a rank. */
static void gen(float *x, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        x[i] = (float)((z >> 40) % 64000u) / 64.0f;
    }
}

/* The device spec with %local_rank% replaced. */
static void device_spec(const char *spec, int local_rank, char *out, size_t size)
{
    const char *at = strstr(spec, "%local_rank%");
    if (!at) {
        snprintf(out, size, "%s", spec);
        return;
    }
    snprintf(out, size, "%.*s%d%s", (int)(at - spec), spec, local_rank,
             at + strlen("%local_rank%"));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, local_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank);
    const char *device = getenv("CLSTATS_DEVICE") ? getenv("CLSTATS_DEVICE") : "auto";
    int log2n = 20, reps = 10, cols = 0;
    const char *method_name = "auto";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--device")) device = argv[i + 1];
        else if (!strcmp(argv[i], "--log2n")) log2n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--method")) method_name = argv[i + 1];
        else if (!strcmp(argv[i], "--cols")) cols = atoi(argv[i + 1]);
    }
    if (reps < 1) reps = 1;
    char spec[200];
    device_spec(device, local_rank, spec, sizeof spec);
    clstats_ctx *ctx = bench_context(spec);
    if (!ctx) MPI_Abort(MPI_COMM_WORLD, 1);
    const size_t n = (size_t)1 << log2n;
    float *x = malloc(n * sizeof *x);
    if (!x) MPI_Abort(MPI_COMM_WORLD, 1);
    gen(x, n, 1000003u * (uint64_t)(rank + 1));
    cl_int err;
    cl_mem buf = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                n * sizeof *x, x, &err);
    free(x);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "rank %d: cannot hold 2^%d values on %s (%d)\n", rank, log2n, spec, err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        printf("bench_mpi: %d ranks, 2^%d float32 a rank on %s (rank 0: %s)\n", size, log2n,
               device, clstats_ctx_device_name(ctx));
    const struct clstats_array part = {.buffer = buf, .dtype = CLSTATS_FLOAT32, .nx = n, .ny = 1};
    const struct clstats_select_options dist = {
        .method = !strcmp(method_name, "radix")           ? CLSTATS_SELECT_RADIX
                  : !strcmp(method_name, "sample")        ? CLSTATS_SELECT_SAMPLE
                  : !strcmp(method_name, "cutting_plane") ? CLSTATS_SELECT_CUTTING_PLANE
                                                          : CLSTATS_SELECT_AUTO};
    const char *ops[] = {"kth",           "median",           "one_device_auto_kth",
                         "one_device_radix_kth", "column_median", "column_smallest",
                         "one_device_column_median", "one_device_column_smallest"};
    const size_t mrows = cols > 0 ? n / (size_t)cols : 0;
    const struct clstats_array matrix = {.buffer = buf, .dtype = CLSTATS_FLOAT32,
                                         .nx = (size_t)(cols > 0 ? cols : 0), .ny = mrows};
    double *ms = malloc((size_t)reps * sizeof *ms), *kth = malloc((size_t)(cols + 1) * 8),
           *sums = malloc((size_t)(cols + 1) * 8);
    float *medians = malloc((size_t)(cols + 1) * 4);
    uint64_t *ks = malloc((size_t)(cols + 1) * 8);
    for (int c = 0; c < cols; c++) ks[c] = (uint64_t)size * mrows / 2 + 1;
    for (int op = 0; op < 8; op++) {
        if ((op == 2 || op == 3 || op >= 6) && size > 1) continue; /* one-device references */
        if (op >= 4 && cols <= 0) continue;
        struct clstats_mpi_traffic t = {0};
        double value = 0;
        int status = CLSTATS_OK;
        for (int r = -1; r < reps; r++) { /* r = -1: the warm-up (program builds) */
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            const uint64_t k = (uint64_t)size * n / 3;
            if (op == 0)
                status = clstats_mpi_select_kth(ctx, MPI_COMM_WORLD, &part, k, &dist, &value, &t);
            else if (op == 1)
                status = clstats_mpi_median(ctx, MPI_COMM_WORLD, &part, &dist, &value, &t);
            else if (op == 4)
                status = clstats_mpi_column_medians(ctx, MPI_COMM_WORLD, &matrix, NULL, kth, &t);
            else if (op == 5)
                status = clstats_mpi_column_smallest(ctx, MPI_COMM_WORLD, &matrix, ks, NULL, kth,
                                                     sums, &t);
            else if (op == 6)
                status = clstats_column_medians_buffer(ctx, buf, 0, mrows, (size_t)cols,
                                                       (size_t)cols, NULL, medians);
            else if (op == 7)
                status = clstats_column_smallest(ctx, &matrix, ks, NULL, kth, sums);
            else {
                struct clstats_select_options o = {
                    .method = op == 2 ? CLSTATS_SELECT_AUTO : CLSTATS_SELECT_RADIX};
                status = clstats_select_kth_buffer(ctx, buf, 0, n, CLSTATS_FLOAT32, k, &o, &value);
            }
            if (op >= 4) value = op == 6 ? medians[0] : kth[0];
            double dt = (MPI_Wtime() - t0) * 1e3, slowest;
            MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r >= 0) ms[r] = slowest;
            if (status != CLSTATS_OK) break;
        }
        if (status != CLSTATS_OK) {
            if (rank == 0) fprintf(stderr, "%s: %s\n", ops[op], clstats_ctx_message(ctx));
            continue;
        }
        qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
        if (rank == 0)
            printf("RESULT ranks=%d n_rank=%zu n_total=%zu op=%s method=%s ms=%.3f min_ms=%.3f "
                   "bytes=%llu messages=%llu value=%.9g\n",
                   size, n, (size_t)size * n, ops[op], op < 2 ? method_name : "-", ms[reps / 2],
                   ms[0],
                   (unsigned long long)t.bytes, (unsigned long long)t.messages, value);
    }
    free(ms), free(kth), free(sums), free(medians), free(ks);
    clReleaseMemObject(buf);
    clstats_ctx_destroy(ctx);
    MPI_Comm_free(&local);
    MPI_Finalize();
    return 0;
}
