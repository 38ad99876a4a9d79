/* assign.c - the nearest centre of every row, by one of the paths that give the same labels
 * (kernels/cluster/kmeans_assign.cl): the direct form; the same tiled through local memory for
 * few features; and for many features and clusters |x|^2 - 2 x.c + |c|^2 through the linalg
 * layer's GEMM, a chunk of rows at a time, screening the centres that the direct form then
 * decides; or that screen fused into our own tiled products, which are never written
 * (kernels/cluster/kmeans_fused.cl, float32). */
#include "cluster_internal.h"

#include "../linalg/linalg_internal.h"

#include <stdio.h>

/* The GEMM's products of a chunk of rows with every centre take at most this many bytes: 64 MiB
 * on CPU devices; on GPUs up to 2 GiB (an eighth of the device's memory at most), so that an
 * iteration makes few GEMM calls (2, not 62, at 10^6 rows and 1024 clusters), each with CLBlast's
 * own setup and padding copies, and the screen of a chunk has enough rows to fill the device. */
#define DOTS_BYTES_CPU ((size_t)64 << 20)
#define DOTS_BYTES_GPU ((size_t)2048 << 20)
/* The tiled kernel holds its rows in registers, so only for so many features; an item takes
 * TILE_ROWS rows of its group's block of KMEANS_WG. */
#define TILED_MAX_DIM 32
#define TILE_ROWS 4
/* The fused kernels' groups: FUSED_ROWS rows, FUSED_ITEMS items, whose local memory holds the
 * rows' and the centres' stage of 8 features in rows of FUSED_ROWS + 4 floats, and four planes
 * of the rows' stats, 17 items wide (kernels/cluster/kmeans_fused.cl: FR, FK, FLD, FSLOT). */
#define FUSED_ROWS 128
#define FUSED_ITEMS 256
#define FUSED_TILE_BYTES (2 * 8 * (FUSED_ROWS + 4) * sizeof(cl_float))
#define FUSED_STATS_BYTES (4 * FUSED_ROWS * 17 * sizeof(cl_float))
/* Clusters from which NVIDIA's GPUs take the fused path (below, its blocks of 128 centres are
 * mostly empty). */
#define FUSED_MIN_K 64

static size_t round_up(size_t v, size_t m)
{
    return (v + m - 1) / m * m;
}

static int choose(const struct kmeans_job *job)
{
    const clstats_ctx *ctx = job->ctx;
    const size_t local = (size_t)job->k * ((size_t)job->d * job->es + 4) + 64;
    const bool tiled_fits = job->d <= TILED_MAX_DIM && local <= ctx->local_mem / 2;
    const long forced = clstats__tuned(ctx, P_KMEANS_ASSIGN);
    const bool serial_fits = job->k <= KMEANS_SERIAL_MAX_K;
    const bool fused_fits = !job->f64 && ctx->local_mem >= FUSED_TILE_BYTES + FUSED_STATS_BYTES &&
                            ctx->max_work_group >= FUSED_ITEMS;
    if (forced == ASSIGN_GEMM || forced == ASSIGN_DIRECT) return (int)forced;
    if (forced == ASSIGN_FUSED) return fused_fits ? ASSIGN_FUSED : ASSIGN_GEMM;
    if (forced == ASSIGN_TILED) return tiled_fits ? ASSIGN_TILED : ASSIGN_DIRECT;
    if (forced == ASSIGN_SERIAL) return serial_fits ? ASSIGN_SERIAL : ASSIGN_DIRECT;
    /* NVIDIA's GPUs from 64 clusters: the fused path, which took 19.5-20.0 ms an iteration at
     * 10^6 x 256, k 1024 on the H100 against the GEMM path's 26.2-27.0, and less at k 64-256,
     * but 1.56 against 1.50 ms at 10^6 x 32, k 32 (RESULTS "k-means on the H100 (issue 22r)");
     * elsewhere, unmeasured, the GEMM path. */
    if (job->d >= 32 && job->k >= 32)
        return fused_fits && ctx->device_class == CLASS_NVIDIA && job->k >= FUSED_MIN_K
                   ? ASSIGN_FUSED
                   : ASSIGN_GEMM;
    /* Where the sums are serial (CPU devices), so is the assignment. */
    if (job->serial_sums && serial_fits) return ASSIGN_SERIAL;
    return tiled_fits ? ASSIGN_TILED : ASSIGN_DIRECT;
}

/* The fused path's two kernels, one file built twice, their local memory, and its list. */
static int fused_setup(struct kmeans_job *job, const char *options)
{
    clstats_ctx *ctx = job->ctx;
    char direct[240];
    cl_program screen, decide;
    int status;
    snprintf(direct, sizeof direct, "%s -D DIRECT", options);
    if ((status = clstats__program(ctx, "kmeans_fused.cl", options, &screen)) ||
        (status = clstats__program(ctx, "kmeans_fused.cl", direct, &decide)) ||
        (status = clstats__kernel(ctx, screen, "assign_fused", &job->fused)) ||
        (status = clstats__kernel(ctx, decide, "assign_decide", &job->decide)) ||
        (status = clstats__scratch(ctx, "cluster.undecided", ((size_t)job->n + 1) * sizeof(cl_int),
                                   &job->undecided)))
        return status;
    /* the stages and the stats, the last two arguments */
    const cl_kernel both[2] = {job->fused, job->decide};
    for (int i = 0; i < 4 && !status; i++)
        status = clstats__cl_check(
            ctx,
            clSetKernelArg(both[i / 2], 10 + i % 2, i % 2 ? FUSED_STATS_BYTES : FUSED_TILE_BYTES,
                           NULL),
            "clSetKernelArg(assign_fused)");
    return status;
}

int clstats__kmeans_assign_setup(struct kmeans_job *job, const char *options)
{
    clstats_ctx *ctx = job->ctx;
    int status;
    cl_program program;
    job->path = choose(job);
    if ((status = clstats__program(ctx, "kmeans_assign.cl", options, &program)) ||
        (status = clstats__kernel(ctx, program, "assign", &job->assign)))
        return status;
    if (job->path == ASSIGN_SERIAL)
        return clstats__kernel(ctx, program, "assign_serial", &job->assign);
    if (job->path == ASSIGN_TILED) {
        /* Its local arrays are sized by K and DIM, so it is built only where they fit. */
        char tiled[240];
        snprintf(tiled, sizeof tiled, "%s -D TILED -D TILE_ROWS=%d", options, TILE_ROWS);
        if ((status = clstats__program(ctx, "kmeans_assign.cl", tiled, &program)) ||
            (status = clstats__kernel(ctx, program, "assign_tiled", &job->assign)))
            return status;
        /* the fused scan's runs and layout (kmeans_scan.cl: scan_runs_group), its last argument */
        return clstats__cl_check(
            ctx, clSetKernelArg(job->assign, 17, 6 * KMEANS_WG * sizeof(cl_int), NULL),
            "clSetKernelArg(assign_tiled)");
    }
    if (job->path != ASSIGN_GEMM && job->path != ASSIGN_FUSED) return CLSTATS_OK;
    if ((status = clstats__kernel(ctx, program, "centre_norms", &job->centre_norms)) ||
        (status = clstats__kernel(ctx, program, "assign_screened", &job->screened)) ||
        (status = clstats__kernel(ctx, program, "row_norms", &job->row_norms)) ||
        (status = clstats__scratch(ctx, "cluster.xnorms", 2 * (size_t)job->n * job->es,
                                   &job->xnorms)) ||
        (status = clstats__scratch(ctx, "cluster.norms", 2 * (size_t)job->k * job->es,
                                   &job->norms)))
        return status;
    if (job->path == ASSIGN_FUSED) return fused_setup(job, options);
    if ((status = clstats__scratch(ctx, "cluster.undecided", sizeof(cl_int), &job->undecided)))
        return status;
    const size_t row_bytes = (size_t)job->k * job->es;
    const long dots_mib = clstats__tuned(ctx, P_KMEANS_DOTS_MIB);
    size_t dots_bytes = dots_mib      ? (size_t)dots_mib << 20
                        : ctx->is_cpu ? DOTS_BYTES_CPU
                                      : DOTS_BYTES_GPU;
    if (!ctx->is_cpu && dots_bytes > ctx->global_mem / 8) dots_bytes = ctx->global_mem / 8;
    if (dots_bytes > ctx->max_alloc) dots_bytes = ctx->max_alloc;
    size_t rows = dots_bytes / row_bytes / KMEANS_WG * KMEANS_WG;
    if (rows < KMEANS_WG) rows = KMEANS_WG;
    if (rows > round_up((size_t)job->n, KMEANS_WG)) rows = round_up((size_t)job->n, KMEANS_WG);
    if (rows * row_bytes > ctx->max_alloc)
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "k-means: %d clusters' products of %d rows pass the device's "
                             "largest buffer",
                             job->k, KMEANS_WG);
    job->chunk_rows = (int)rows;
    return clstats__scratch(ctx, "cluster.dots", rows * row_bytes, &job->dots);
}

/* |x|^2 and |x| of every row, once for the job's rows. */
static int enqueue_row_norms(struct kmeans_job *job)
{
    int status = CLSTATS_OK;
    const cl_int n = job->n;
    KM_ARG(job->row_norms, 0, job->x);
    KM_ARG(job->row_norms, 1, n);
    KM_ARG(job->row_norms, 2, job->xnorms);
    if ((status = clstats__kmeans_launch(job, job->row_norms, round_up((size_t)n, 64), 0,
                                         "kmeans row norms")))
        return status;
    job->xnorms_ready = true;
fail:
    return status;
}

/* The norms the screen takes: the rows' once, the centres' each time (emptying the fused
 * path's list). */
static int enqueue_norms(struct kmeans_job *job, int buffer, cl_int ignore_stop)
{
    int status = CLSTATS_OK;
    if (!job->xnorms_ready && (status = enqueue_row_norms(job))) return status;
    KM_ARG(job->centre_norms, 0, job->centres[buffer]);
    KM_ARG(job->centre_norms, 1, job->norms);
    KM_ARG(job->centre_norms, 2, job->state);
    KM_ARG(job->centre_norms, 3, ignore_stop);
    KM_ARG(job->centre_norms, 4, job->undecided);
    status = clstats__kmeans_launch(job, job->centre_norms, round_up((size_t)job->k, 64), 0,
                                    "kmeans centre norms");
fail:
    return status;
}

/* The fused screen over every row, then the direct form over those it left (a group of
 * FUSED_ROWS listed rows each; the groups past the list's count return at once). Arguments
 * 0-6 are set by the caller, for the screen. */
static int enqueue_fused(struct kmeans_job *job, int buffer, cl_int ignore_stop)
{
    int status = CLSTATS_OK;
    const cl_int n = job->n;
    const size_t global = round_up((size_t)n, FUSED_ROWS) / FUSED_ROWS * FUSED_ITEMS;
    if ((status = enqueue_norms(job, buffer, ignore_stop))) return status;
    const cl_kernel both[2] = {job->fused, job->decide};
    for (int i = 0; i < 2; i++) {
        KM_ARG(both[i], 0, job->x);
        KM_ARG(both[i], 1, job->valid);
        KM_ARG(both[i], 2, n);
        KM_ARG(both[i], 3, job->centres[buffer]);
        KM_ARG(both[i], 4, job->labels);
        KM_ARG(both[i], 5, job->state);
        KM_ARG(both[i], 6, ignore_stop);
        KM_ARG(both[i], 7, job->norms);
        KM_ARG(both[i], 8, job->xnorms);
        KM_ARG(both[i], 9, job->undecided);
        if ((status = clstats__kmeans_launch(job, both[i], global, FUSED_ITEMS,
                                             i ? "kmeans decide" : "kmeans fused assign")))
            return status;
    }
fail:
    return status;
}

/* The GEMM's dots[j][r] = c_j . x_(first + r), a chunk at a time, each screened at once. */
static int enqueue_screened(struct kmeans_job *job, int buffer, cl_int ignore_stop)
{
    int status = CLSTATS_OK;
    const size_t k = (size_t)job->k, d = (size_t)job->d;
    if ((status = enqueue_norms(job, buffer, ignore_stop))) return status;
    for (cl_int first = 0; first < job->n; first += job->chunk_rows) {
        const cl_int rows = job->n - first < job->chunk_rows ? job->n - first : job->chunk_rows;
        /* dots column-major, rows x k: op(A) the rows (d x rows column-major, transposed), B
         * the centres (d x k column-major); no transpose of the products after the GEMM */
        const struct clstats__mat a = {job->x, (size_t)first * d, d},
                                  b = {job->centres[buffer], 0, d}, c = {job->dots, 0, rows};
        if ((status = clstats__gemm_colmajor(job->ctx, job->f64, true, false, (size_t)rows, k, d,
                                             1.0, a, b, 0.0, c)))
            return status;
        KM_ARG(job->screened, 7, job->dots);
        KM_ARG(job->screened, 8, job->norms);
        KM_ARG(job->screened, 9, first);
        KM_ARG(job->screened, 10, rows);
        KM_ARG(job->screened, 11, job->xnorms);
        if ((status = clstats__kmeans_launch(job, job->screened, round_up((size_t)rows, 64), 0,
                                             "kmeans screened assign")))
            return status;
    }
fail:
    return status;
}

int clstats__kmeans_enqueue_assign(struct kmeans_job *job, int buffer, cl_int ignore_stop,
                                   bool *counted)
{
    int status = CLSTATS_OK;
    const cl_int n = job->n;
    if (job->path == ASSIGN_FUSED) {
        *counted = false;
        return enqueue_fused(job, buffer, ignore_stop);
    }
    cl_kernel kernel = job->path == ASSIGN_GEMM ? job->screened : job->assign;
    *counted = job->path == ASSIGN_TILED || job->path == ASSIGN_SERIAL;
    KM_ARG(kernel, 0, job->x);
    KM_ARG(kernel, 1, job->valid);
    KM_ARG(kernel, 2, n);
    KM_ARG(kernel, 3, job->centres[buffer]);
    KM_ARG(kernel, 4, job->labels);
    KM_ARG(kernel, 5, job->state);
    KM_ARG(kernel, 6, ignore_stop);
    if (job->path == ASSIGN_GEMM) return enqueue_screened(job, buffer, ignore_stop);
    if (job->path == ASSIGN_DIRECT)
        return clstats__kmeans_launch(job, kernel, round_up((size_t)n, 64), 0, "kmeans assign");
    KM_ARG(kernel, 7, job->counts);
    if (job->path == ASSIGN_SERIAL)
        return clstats__kmeans_launch(job, kernel, (size_t)job->groups, 1, "kmeans serial assign");
    /* Lloyd's iterations only: the final and predicting assignments need no scan. */
    const cl_int fuse = job->scan_in_assign && !ignore_stop, levels = job->levels;
    KM_ARG(kernel, 8, fuse);
    KM_ARG(kernel, 9, job->done);
    KM_ARG(kernel, 10, job->within);
    KM_ARG(kernel, 11, job->start);
    for (cl_uint level = 0; level < KMEANS_LEVELS; level++)
        KM_ARG(kernel, 12 + level, job->segs[level]);
    KM_ARG(kernel, 16, levels);
    status = clstats__kmeans_launch(job, kernel, (size_t)job->groups * KMEANS_WG / TILE_ROWS,
                                    KMEANS_WG / TILE_ROWS, "kmeans tiled assign");
fail:
    return status;
}
