/* lloyd.c - Lloyd's loop (Lloyd 1982; scikit-learn's _kmeans_single_lloyd): the host enqueues
 * iterations in batches, doubling up to 4, and reads back only the loop's state words after
 * each, with the next batch already enqueued behind it, so that the device never waits for the
 * host and at most a batch and a half runs idle past the end; the device decides when the run
 * ends (kernels/cluster/kmeans_lloyd.cl). The rare
 * iteration that leaves a cluster without weight stops the device, and the host relocates
 * (scikit-learn's _relocate_empty_clusters_dense) and carries on. */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_MAX 4

static size_t round_up(size_t v, size_t m)
{
    return (v + m - 1) / m * m;
}

/* Runs of blocks an item of scan_runs walks at most for the one-launch scan; clusters at most
 * for scan_runs (four runs a cluster or more). */
#define SCAN_RUN_MAX 64
#define SCAN_RUNS_MAX_K 64
/* (row, column) trees of the upper levels of the sums that finish makes itself at most: four
 * a work-item (tuning kmeans.finish_trees). */
#define FINISH_TREES_AUTO 1024
/* Rows of the level below at most that finish halves itself on GPUs (tuning
 * kmeans.finish_halve). */
#define FINISH_HALVE_AUTO 64

/* Rows of a level of the sums at most: those of the level below over 256, plus one a cluster. */
static size_t level_bound(const struct kmeans_job *job, int level)
{
    size_t bound = job->seg_rows;
    for (int l = 1; l <= level; l++)
        bound = bound / KMEANS_WG + 1 + (size_t)job->k;
    return bound;
}

/* How this job's iterations scan the counts and which levels of the sums finish makes. */
static void plan(struct kmeans_job *job)
{
    const long fuse = clstats__tuned(job->ctx, P_KMEANS_FUSE);
    job->scan = SCAN_CLUSTERS;
    job->finish_from = job->levels;
    job->finish_halve = 0;
    job->scan_in_assign = job->finish_in_sums = false;
    if (fuse == SWITCH_OFF) return;
    const int parts = (int)job->scan_wg / job->k;
    if (job->k <= SCAN_RUNS_MAX_K)
        job->scan =
            (job->groups + parts - 1) / parts <= SCAN_RUN_MAX ? SCAN_RUNS_WHOLE : SCAN_RUNS_CHUNKS;
    /* The tiled assignment's last group makes the one-group scan: a launch fewer, which the
     * host's enqueueing of a small case's iterations waits for on GPUs. */
    job->scan_in_assign = job->scan == SCAN_RUNS_WHOLE && job->path == ASSIGN_TILED &&
                          clstats__tuned(job->ctx, P_KMEANS_SCAN_IN_ASSIGN) != SWITCH_OFF;
    const long tuned = clstats__tuned(job->ctx, P_KMEANS_FINISH_TREES);
    const size_t trees = tuned ? (size_t)tuned : FINISH_TREES_AUTO;
    /* On GPUs finish takes the top level alone, a launch saved: its trees have few leaves (one
     * a cluster at 10^5 rows, which tree_sum returns at once), while a lower level's serial
     * walks of up to 256 leaves cost more than the row_sums launch they save (68 against 7 us
     * an iteration at 10^5 rows: RESULTS "k-means on the H100 (issue 22), twelfth session"). */
    const int lowest = job->ctx->is_cpu ? 1 : job->levels - 1;
    /* the bounds shrink with the level: the first level whose trees fit, and all above it */
    while (job->finish_from > 1 && job->finish_from > lowest &&
           level_bound(job, job->finish_from - 1) * (size_t)(job->d + 1) <= trees)
        job->finish_from--;
    /* The level below those, when its rows are few, halved in finish too (a launch fewer: the
     * host's enqueueing sets a small case's pace on GPUs); never on CPU devices, where a
     * group's halving is item 0's walk. */
    const long halve = clstats__tuned(job->ctx, P_KMEANS_FINISH_HALVE);
    const size_t halve_max = halve ? (size_t)halve : job->ctx->is_cpu ? 0 : FINISH_HALVE_AUTO;
    if (job->finish_from > 1 && level_bound(job, job->finish_from - 1) <= halve_max)
        job->finish_halve = job->finish_from - 1;
    /* With no row_sums level left between them, member_sums' last group finishes: another
     * launch fewer where the scan is in the assignment already (a small case). */
    const int first_in_finish = job->finish_halve ? job->finish_halve : job->finish_from;
    job->finish_in_sums = job->scan_in_assign && !job->serial_sums && first_in_finish == 1 &&
                          clstats__tuned(job->ctx, P_KMEANS_FINISH_IN_SUMS) != SWITCH_OFF;
}

/* The counts' offsets: within[b][j] (from the chunk's first block, or from the first block with
 * SCAN_RUNS_WHOLE, whose chunk_offset holds zeros), chunk_offset, start and the levels' layout. */
static int enqueue_scan(struct kmeans_job *job)
{
    int status = CLSTATS_OK;
    const cl_int blocks = job->groups, chunks = job->chunks, levels = job->levels, wg = KMEANS_WG;
    const size_t k = (size_t)job->k;
    if (job->scan == SCAN_CLUSTERS) {
        KM_ARGS(job->scan_chunks, 0, KERNEL_ARG(job->counts), KERNEL_ARG(blocks),
                KERNEL_ARG(job->within), KERNEL_ARG(job->chunk_total), KERNEL_ARG(job->state));
        if ((status = clstats__kmeans_launch(
                 job, job->scan_chunks, round_up((size_t)chunks * k, 64), 0, "kmeans scan chunks")))
            return status;
        KM_ARGS(job->scan_clusters, 0, KERNEL_ARG(job->chunk_total), KERNEL_ARG(chunks),
                KERNEL_ARG(job->chunk_offset), KERNEL_ARG(job->start));
        for (cl_uint level = 0; level < KMEANS_LEVELS; level++)
            KM_ARG(job->scan_clusters, 4 + level, job->segs[level]);
        KM_ARG(job->scan_clusters, 8, levels);
        KM_ARG(job->scan_clusters, 9, job->state);
        return clstats__kmeans_launch(job, job->scan_clusters, job->scan_wg, job->scan_wg,
                                      "kmeans scan clusters");
    }
    const bool whole = job->scan == SCAN_RUNS_WHOLE;
    for (int pass = whole ? 1 : 0; pass < 2; pass++) {
        /* pass 0: the blocks' counts, a group a chunk; pass 1: all rows, one group */
        const cl_int rows = pass ? (whole ? blocks : chunks) : blocks, per = pass ? rows : wg,
                     last = pass;
        const cl_mem in = pass && !whole ? job->chunk_total : job->counts,
                     prefix = pass && !whole ? job->chunk_offset : job->within;
        KM_ARGS(job->scan_runs, 0, KERNEL_ARG(in), KERNEL_ARG(rows), KERNEL_ARG(per),
                KERNEL_ARG(prefix), KERNEL_ARG(job->chunk_total), KERNEL_ARG(last),
                KERNEL_ARG(job->start));
        for (cl_uint level = 0; level < KMEANS_LEVELS; level++)
            KM_ARG(job->scan_runs, 7 + level, job->segs[level]);
        KM_ARG(job->scan_runs, 11, levels);
        KM_ARG(job->scan_runs, 12, job->state);
        const size_t groups = pass ? 1 : (size_t)chunks;
        if ((status = clstats__kmeans_launch(job, job->scan_runs, groups * job->scan_wg,
                                             job->scan_wg, "kmeans scan runs")))
            return status;
    }
fail:
    return status;
}

/* The weighted sums of each cluster's members in the fixed order: the counting sort by label
 * (its block counts unless the assignment `counted` them), then the levels of 256 below
 * job->finish_from (finish makes the others). */
static int enqueue_sums(struct kmeans_job *job, bool counted)
{
    clstats_ctx *ctx = job->ctx;
    int status = CLSTATS_OK;
    const cl_int n = job->n, blocks = job->groups, zero = 0;
    const size_t rows = (size_t)job->groups * KMEANS_WG, k = (size_t)job->k;
    if (!counted) {
        CL_TRY(ctx,
               clEnqueueFillBuffer(ctx->queue, job->counts, &zero, sizeof zero, 0,
                                   (size_t)blocks * k * sizeof(cl_int), 0, NULL, NULL),
               "clearing counts");
        KM_ARGS(job->block_counts, 0, KERNEL_ARG(job->labels), KERNEL_ARG(n),
                KERNEL_ARG(job->counts), KERNEL_ARG(job->state));
        if ((status =
                 clstats__kmeans_launch(job, job->block_counts, rows, KMEANS_WG, "kmeans counts")))
            goto fail;
    }
    if (!(counted && job->scan_in_assign) && (status = enqueue_scan(job))) goto fail;
    KM_ARGS(job->scatter, 0, KERNEL_ARG(job->labels), KERNEL_ARG(n), KERNEL_ARG(job->within),
            KERNEL_ARG(job->chunk_offset), KERNEL_ARG(job->start), KERNEL_ARG(job->order),
            KERNEL_ARG(job->state));
    const bool serial_scatter = job->serial_sums && job->k <= KMEANS_SERIAL_MAX_K;
    if ((status = clstats__kmeans_launch(job, job->scatter, serial_scatter ? (size_t)blocks : rows,
                                         serial_scatter ? 1 : KMEANS_WG, "kmeans scatter")))
        goto fail;
    /* A group of 256 items a segment, or one item (serial sums). */
    const size_t items = job->serial_sums ? 1 : KMEANS_WG;
    if (job->finish_in_sums) /* the iteration's last launch: enqueue_iteration's */
        return CLSTATS_OK;
    KM_ARGS(job->member_sums, 0, KERNEL_ARG(job->x), KERNEL_ARG(job->weight),
            KERNEL_ARG(job->order), KERNEL_ARG(job->start), KERNEL_ARG(job->segs[0]),
            KERNEL_ARG(job->sums[0]), KERNEL_ARG(job->state));
    if ((status = clstats__kmeans_launch(job, job->member_sums, job->seg_rows * items, items,
                                         "kmeans member sums")))
        goto fail;
    const int row_levels = job->finish_halve ? job->finish_halve : job->finish_from;
    for (int level = 1; level < row_levels; level++) {
        cl_mem below = job->segs[level - 1], next = job->segs[level];
        KM_ARGS(job->row_sums, 0, KERNEL_ARG(job->sums[(level - 1) % 2]), KERNEL_ARG(below),
                KERNEL_ARG(next), KERNEL_ARG(job->sums[level % 2]), KERNEL_ARG(job->state));
        if ((status = clstats__kmeans_launch(job, job->row_sums, level_bound(job, level) * items,
                                             items, "kmeans row sums")))
            goto fail;
    }
fail:
    return status;
}

/* Iteration t reads the centres in buffer t % 2 and writes the other; the last of its batch
 * ends the batch's span. */
static int enqueue_iteration(struct kmeans_job *job, int t, int max_iter, bool last)
{
    int status;
    const int cur = t % 2;
    const cl_int next = 1 - cur, max = max_iter, levels = job->levels, from = job->finish_from,
                 halved = job->finish_halve;
    bool counted;
    if ((status = clstats__kmeans_enqueue_assign(job, cur, 0, &counted)) ||
        (status = enqueue_sums(job, counted)))
        return status;
    /* finish's arguments, from argument 4 on in member_sums_finish (after member_sums' own) */
    const bool fused = job->finish_in_sums;
    cl_kernel kernel = fused ? job->sums_finish : job->finish;
    const cl_uint a = fused ? 4 : 0;
    if (fused) {
        KM_ARGS(kernel, 0, KERNEL_ARG(job->x), KERNEL_ARG(job->weight), KERNEL_ARG(job->order),
                KERNEL_ARG(job->start));
        KM_ARG(kernel, 21, job->done);
    }
    KM_ARG(kernel, a + 0, job->sums[0]);
    KM_ARG(kernel, a + 1, job->sums[1]);
    for (cl_uint level = 0; level < KMEANS_LEVELS; level++)
        KM_ARG(kernel, a + 2 + level, job->segs[level]);
    KM_ARG(kernel, a + 6, levels);
    KM_ARG(kernel, a + 7, from);
    KM_ARG(kernel, a + 8, halved);
    KM_ARG(kernel, a + 9, job->centres[cur]);
    KM_ARG(kernel, a + 10, job->centres[next]);
    KM_ARG(kernel, a + 11, job->kept);
    KM_ARG(kernel, a + 12, job->shift);
    if (job->as == 8) {
        const cl_double tol = job->tol;
        KM_ARG(kernel, a + 13, tol);
    } else {
        const cl_float tol = (cl_float)job->tol;
        KM_ARG(kernel, a + 13, tol);
    }
    KM_ARG(kernel, a + 14, max);
    KM_ARG(kernel, a + 15, next);
    KM_ARG(kernel, a + 16, job->state);
    job->last_next = last;
    status = fused
                 ? clstats__kmeans_launch(job, kernel, job->seg_rows * KMEANS_WG, KMEANS_WG,
                                          "kmeans member sums and finish")
                 : clstats__kmeans_launch(job, kernel, job->scan_wg, job->scan_wg, "kmeans finish");
fail:
    return status;
}

static double element(const void *base, size_t i, size_t size)
{
    return size == 8 ? ((const double *)base)[i] : (double)((const float *)base)[i];
}

/* Rows by distance from their centres, farthest first, ties to the lowest row (dist < 0: rows
 * without a label, left out): the first `want` into top[], their number returned. One walk over
 * the rows, each kept row inserted into the sorted list. */
static int farthest_rows(const double *dist, int n, int want, int *top)
{
    int held = 0;
    for (int p = 0; p < n; p++) {
        const double v = dist[p];
        if (v < 0 || (held == want && !(v > dist[top[want - 1]]))) continue;
        int lo = 0, hi = held; /* the first place whose row is nearer than p */
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (dist[top[mid]] >= v)
                lo = mid + 1;
            else
                hi = mid;
        }
        const int end = held < want ? held : want - 1;
        memmove(top + lo + 1, top + lo, (size_t)(end - lo) * sizeof *top);
        top[lo] = p;
        if (held < want) held++;
    }
    return held;
}

/* Iteration i left clusters without weight (state words in st): each takes, in cluster order,
 * the next of the rows farthest from their centres (ties to the lowest row), its weighted row
 * moving out of its old cluster's sums; then the centres, the shift and the end test as the
 * device's, the centres written into buffer (i + 1) % 2. Sets *stop. The rows' distances come
 * from the device (own_distances, the direct form as the kernels'), and only the taken rows
 * are read: the weights decide who takes which row, then their columns move in the same order
 * (each column's additions as one pass would make them). */
static int relocate(struct kmeans_job *job, const cl_int *st, int max_iter, int *stop)
{
    clstats_ctx *ctx = job->ctx;
    const int n = job->n, d = job->d, k = job->k, i = st[STATE_ITER], cur = i % 2;
    const size_t es = job->es, as = job->as;
    int status = CLSTATS_OK, want = 0, held = 0, moves = 0;
    double *sums = malloc((size_t)k * (d + 1) * sizeof *sums), *dist = malloc((size_t)n * 8);
    void *raw = malloc((size_t)k * (d + 1) * 8), *old = malloc((size_t)k * d * es),
         *w = malloc((size_t)n * es), *fresh = malloc((size_t)k * d * es),
         *rows = malloc((size_t)k * d * es);
    cl_int *labels = malloc((size_t)n * sizeof *labels);
    int *top = malloc((size_t)k * sizeof *top), *taker = malloc((size_t)k * sizeof *taker),
        *taken = malloc((size_t)k * sizeof *taken);
    if (!sums || !dist || !raw || !old || !w || !fresh || !rows || !labels || !top || !taker ||
        !taken) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "k-means: relocation");
        goto fail;
    }
    const cl_int n_arg = n;
    KM_ARGS(job->own_distances, 0, KERNEL_ARG(job->x), KERNEL_ARG(n_arg),
            KERNEL_ARG(job->centres[cur]), KERNEL_ARG(job->labels), KERNEL_ARG(job->closest));
    const size_t global = (size_t)job->groups * KMEANS_WG;
    if ((status = clstats__kmeans_launch(job, job->own_distances, global, KMEANS_WG,
                                         "kmeans own distances")))
        goto fail;
    /* dist holds n values of `as` bytes; widened in place below, from the last down */
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, job->closest, CL_FALSE, 0, (size_t)n * as, dist, 0, NULL,
                               NULL),
           "reading distances");
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, job->kept, CL_FALSE, 0, (size_t)k * (d + 1) * as, raw, 0,
                               NULL, NULL),
           "reading sums");
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, job->centres[cur], CL_FALSE, 0, (size_t)k * d * es, old,
                               0, NULL, NULL),
           "reading centres");
    CL_TRY(
        ctx,
        clEnqueueReadBuffer(ctx->queue, job->weight, CL_FALSE, 0, (size_t)n * es, w, 0, NULL, NULL),
        "reading weights");
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, job->labels, CL_TRUE, 0, (size_t)n * sizeof *labels,
                               labels, 0, NULL, NULL),
           "reading labels");
    if (as == 4)
        for (int p = n - 1; p >= 0; p--)
            dist[p] = (double)((const float *)dist)[p];
    for (size_t e = 0; e < (size_t)k * (d + 1); e++)
        sums[e] = element(raw, e, as);
    /* who takes which row: the weights alone decide it */
    for (int j = 0; j < k; j++) {
        if (sums[(size_t)j * (d + 1) + d] > 0) continue;
        if (moves == held && held == want) { /* the next rows in order, the list grown */
            want = want ? 2 * want : 8;
            if (want > k) want = k;
            held = farthest_rows(dist, n, want, top);
        }
        if (moves == held) break; /* no row left to take */
        const int far = top[moves];
        const double wf = element(w, (size_t)far, es);
        sums[(size_t)labels[far] * (d + 1) + d] -= wf;
        sums[(size_t)j * (d + 1) + d] = wf;
        taker[moves] = j;
        taken[moves++] = far;
    }
    for (int m = 0; m < moves; m++)
        CL_TRY(ctx,
               clEnqueueReadBuffer(ctx->queue, job->x, CL_FALSE, (size_t)taken[m] * d * es,
                                   (size_t)d * es, (char *)rows + (size_t)m * d * es, 0, NULL,
                                   NULL),
               "reading a row");
    CL_TRY(ctx, clFinish(ctx->queue), "reading rows");
    for (int m = 0; m < moves; m++) {
        const double wf = element(w, (size_t)taken[m], es);
        double *to = sums + (size_t)taker[m] * (d + 1),
               *from = sums + (size_t)labels[taken[m]] * (d + 1);
        for (int c = 0; c < d; c++) {
            const double v = wf * element(rows, (size_t)m * d + c, es);
            from[c] -= v;
            to[c] = v;
        }
    }
    double total = 0.0;
    for (int j = 0; j < k; j++) {
        const double *s = sums + (size_t)j * (d + 1);
        double sh = 0.0;
        for (int c = 0; c < d; c++) {
            /* A cluster still without weight keeps its sums, as scikit-learn's does. */
            const double m = s[d] > 0 ? s[c] / s[d] : s[c];
            const size_t e = (size_t)j * d + c;
            double t;
            if (job->f64) {
                ((double *)fresh)[e] = m;
                t = m - ((double *)old)[e];
            } else {
                ((float *)fresh)[e] = (float)m;
                t = (double)(float)m - (double)((float *)old)[e];
            }
            sh = sh + t * t;
        }
        total = total + sh;
    }
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, job->centres[1 - cur], CL_TRUE, 0, (size_t)k * d * es,
                                fresh, 0, NULL, NULL),
           "writing centres");
    const int it = i + 1;
    *stop = !st[STATE_CHANGED]  ? STOP_STRICT
            : total <= job->tol ? STOP_TOL
            : it >= max_iter    ? STOP_MAX_ITER
                                : STOP_NONE;
    const cl_int next[STATE_WORDS] = {
        [STATE_STOP] = *stop, [STATE_ITER] = it, [STATE_FINAL] = 1 - cur};
    CL_TRY(
        ctx,
        clEnqueueWriteBuffer(ctx->queue, job->state, CL_TRUE, 0, sizeof next, next, 0, NULL, NULL),
        "writing the state");
fail:
    free(sums);
    free(dist);
    free(raw);
    free(old);
    free(w);
    free(fresh);
    free(rows);
    free(labels);
    free(top);
    free(taker);
    free(taken);
    return status;
}

/* A batch in flight: the state words read after it, that read's event and the events that
 * span its launches. */
struct batch_slot {
    cl_int st[STATE_WORDS];
    cl_event read, first, last;
};

/* Iterations t .. upto - 1, then the state's read into b, not waited for. */
static int enqueue_batch(struct kmeans_job *job, int t, int upto, int max_iter,
                         struct batch_slot *b)
{
    clstats_ctx *ctx = job->ctx;
    int status = CLSTATS_OK;
    for (int it = t; it < upto && !status; it++)
        status = enqueue_iteration(job, it, max_iter, it == upto - 1);
    b->first = job->span_first;
    b->last = job->span_last;
    job->span_first = job->span_last = NULL;
    job->last_next = false;
    if (status) return status;
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, job->state, CL_FALSE, 0, sizeof b->st, b->st, 0, NULL,
                               &b->read),
           "reading the state");
    CL_TRY(ctx, clFlush(ctx->queue), "clFlush");
fail:
    return status;
}

/* Waits for a batch's state words and adds its span to the call's kernel time. */
static int settle(struct kmeans_job *job, struct batch_slot *b)
{
    int status = CLSTATS_OK;
    if (b->read) {
        status = clstats__cl_check(job->ctx, clWaitForEvents(1, &b->read), "reading the state");
        clReleaseEvent(b->read);
    }
    clstats__add_span(job->ctx, b->first, b->last);
    b->read = b->first = b->last = NULL;
    return status;
}

int clstats__kmeans_lloyd(struct kmeans_job *job, int max_iter, int *final_buffer, int *n_iter,
                          double *inertia)
{
    clstats_ctx *ctx = job->ctx;
    int status = CLSTATS_OK, head = 0, pending = 0;
    struct batch_slot slots[2];
    memset(slots, 0, sizeof slots);
    const cl_int minus_one = -1, st0[STATE_WORDS] = {0};
    if ((status = clstats__kmeans_keep_args(job))) return status;
    CL_TRY(ctx,
           clEnqueueFillBuffer(ctx->queue, job->labels, &minus_one, sizeof minus_one, 0,
                               (size_t)job->n * sizeof(cl_int), 0, NULL, NULL),
           "clearing labels");
    CL_TRY(
        ctx,
        clEnqueueWriteBuffer(ctx->queue, job->state, CL_FALSE, 0, sizeof st0, st0, 0, NULL, NULL),
        "writing the state");
    plan(job);
    if (job->scan == SCAN_RUNS_WHOLE)
        CL_TRY(ctx,
               clEnqueueFillBuffer(ctx->queue, job->chunk_offset, &st0[0], sizeof st0[0], 0,
                                   (size_t)job->chunks * job->k * sizeof(cl_int), 0, NULL, NULL),
               "clearing chunk offsets");
    if (job->scan_in_assign || job->finish_in_sums)
        CL_TRY(ctx,
               clEnqueueFillBuffer(ctx->queue, job->done, &st0[0], sizeof st0[0], 0, sizeof(cl_int),
                                   0, NULL, NULL),
               "clearing the groups' count");
    /* An iteration of the GEMM path is long and its GEMMs run even past the end: one batch in
     * flight, of at most 2 iterations. */
    const bool gemm = job->path == ASSIGN_GEMM;
    const long tuned_batch = clstats__tuned(ctx, P_KMEANS_BATCH);
    const int batch_max = tuned_batch ? (int)tuned_batch
                          : gemm      ? 2
                                      : BATCH_MAX,
              ahead = gemm ? 1 : 2;
    int t = 0, batch = 1, stop = STOP_NONE;
    cl_int st[STATE_WORDS] = {0};
    /* A batch is timed by its first and last launch, not an event a launch (CLBlast's GEMMs keep
     * theirs, so the GEMM path keeps them all). */
    job->spans = !gemm;
    while (stop == STOP_NONE) {
        for (; pending < ahead && t < max_iter; pending++) {
            const int upto = t + batch < max_iter ? t + batch : max_iter;
            if ((status = enqueue_batch(job, t, upto, max_iter, &slots[(head + pending) % 2])))
                goto fail;
            t = upto;
            if (batch < batch_max) batch *= 2;
        }
        if (!pending) break; /* not reached: the device stops at max_iter */
        status = settle(job, &slots[head]);
        memcpy(st, slots[head].st, sizeof st);
        head = (head + 1) % 2;
        pending--;
        if (status) goto fail;
        stop = st[STATE_STOP];
        if (stop == STOP_EMPTY) {
            /* the batch behind it ran idle past the stop word; then the host's step */
            for (; pending; pending--, head = (head + 1) % 2)
                if ((status = settle(job, &slots[head]))) goto fail;
            if ((status = relocate(job, st, max_iter, &stop))) goto fail;
            t = st[STATE_ITER] + 1;
            st[STATE_ITER] = t;
            st[STATE_FINAL] = t % 2;
        }
    }
    /* batches enqueued past the end, idle */
    for (; pending; pending--, head = (head + 1) % 2)
        if ((status = settle(job, &slots[head]))) goto fail;
    job->spans = false;
    *final_buffer = st[STATE_FINAL];
    *n_iter = st[STATE_ITER];
    /* Labels unchanged mean they belong to the final centres already; otherwise the last
     * assignment step, as scikit-learn's. */
    bool counted;
    if (stop != STOP_STRICT &&
        (status = clstats__kmeans_enqueue_assign(job, *final_buffer, 1, &counted)))
        goto fail;
    status = clstats__kmeans_inertia(job, *final_buffer, inertia);
fail:
    for (; pending; pending--, head = (head + 1) % 2)
        settle(job, &slots[head]);
    job->spans = false;
    job->scan_in_assign = job->finish_in_sums = false;
    clstats__kmeans_forget_args(job);
    return status;
}

int clstats__kmeans_inertia(struct kmeans_job *job, int buffer, double *inertia)
{
    int status = CLSTATS_OK;
    const cl_int n = job->n;
    KM_ARGS(job->inertia, 0, KERNEL_ARG(job->x), KERNEL_ARG(job->weight), KERNEL_ARG(n),
            KERNEL_ARG(job->centres[buffer]), KERNEL_ARG(job->labels), KERNEL_ARG(job->part));
    if ((status = clstats__kmeans_launch(job, job->inertia, (size_t)job->groups * KMEANS_WG,
                                         KMEANS_WG, "kmeans inertia")))
        goto fail;
    status = clstats__kmeans_group_sums(job, job->part, (size_t)job->groups, 1, inertia);
fail:
    return status;
}

int clstats__kmeans_assign(struct kmeans_job *job, int buffer, double *inertia)
{
    bool counted;
    int status = clstats__kmeans_enqueue_assign(job, buffer, 1, &counted);
    return status ? status : clstats__kmeans_inertia(job, buffer, inertia);
}
