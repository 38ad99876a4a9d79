/* cluster_internal.h - what the files of src/cluster/ share: one k-means job (the data on the
 * device, its programs and buffers, the rows that take part), the seeding and Lloyd's loop
 * that run on it, and the host's random numbers. */
#ifndef CLSTATS_CLUSTER_INTERNAL_H
#define CLSTATS_CLUSTER_INTERNAL_H

#include "internal.h"

/* Groups of this many rows form every fixed-order sum (kernels/cluster/kmeans_common.cl). */
#define KMEANS_WG 256
/* The sums finish halves together (kernels/cluster/kmeans_lloyd.cl: halve_level). */
#define FINISH_SLOTS 16
/* Levels of 256 that sum the members of a cluster: 256^4 passes the largest n, INT_MAX. */
#define KMEANS_LEVELS 4

/* The loop's state words on the device (kernels/cluster/kmeans_common.cl: S_*). */
enum { STATE_STOP, STATE_ITER, STATE_CHANGED, STATE_EMPTY, STATE_FINAL, STATE_WORDS };
enum { STOP_NONE, STOP_STRICT, STOP_TOL, STOP_MAX_ITER, STOP_EMPTY };
/* How rows find their nearest centre (src/cluster/assign.c; tuning "kmeans.assign"). */
enum { ASSIGN_DIRECT = 1, ASSIGN_TILED, ASSIGN_GEMM, ASSIGN_SERIAL, ASSIGN_FUSED };
/* The counts' scan: scan_chunks and scan_clusters (an item a cluster), or scan_runs over the
 * whole (one group) or over chunks and then their totals (two launches). */
enum { SCAN_CLUSTERS = 1, SCAN_RUNS_WHOLE, SCAN_RUNS_CHUNKS };
/* Clusters at most for the one-item kernels' private counts (assign_serial, scatter_serial). */
#define KMEANS_SERIAL_MAX_K 1024

struct kmeans_job {
    clstats_ctx *ctx;
    bool f64;
    size_t es, as; /* bytes of a data element and of a sum (double, or float without fp64) */
    int n, d, k;
    int groups, chunks, levels; /* row groups of 256; chunks of 256 groups; sum levels */
    size_t seg_rows;            /* rows of the first level's sums at most */
    cl_mem x, x_own;            /* the rows, packed (x_own: a copy the job made) */
    cl_mem valid, weight, labels, state, centres[2], closest, part;
    cl_mem counts, within, chunk_total, chunk_offset, start, segs[KMEANS_LEVELS], sums[2], kept,
        shift, order;
    cl_kernel prepare, deviations, trials, closest_update;
    cl_kernel assign, block_counts, scan_chunks, scan_clusters, scan_runs, scatter, member_sums,
        row_sums, finish, inertia, own_distances, centre_norms, screened, row_norms, sums_finish;
    bool serial_sums;    /* member_sums and row_sums are the one-item kernels (tuning kmeans.sums),
                            and so is scatter up to KMEANS_SERIAL_MAX_K clusters */
    int scan;            /* SCAN_*: how the label counts become offsets (src/cluster/lloyd.c) */
    int finish_from;     /* the first level of the sums that finish makes (levels: none) */
    int finish_halve;    /* and the level below, halved there too (0: none; row_sums makes it) */
    bool scan_in_assign; /* the tiled assignment's last group scans the counts (SCAN_RUNS_WHOLE) */
    bool finish_in_sums; /* member_sums' last group finishes (member_sums_finish) */
    cl_mem done;         /* their count of groups done */
    int path;            /* ASSIGN_* */
    cl_mem dots, norms;  /* the GEMM path's x.c of a chunk of rows, |c|^2, |c| */
    cl_mem xnorms;       /* and |x|^2, |x| of every row (row_norms), once the rows' own: */
    bool xnorms_ready;   /* made for the rows job->x holds now */
    cl_kernel fused, decide; /* the fused path's screen and its direct form (kmeans_fused.cl) */
    cl_mem undecided;        /* its rows left to the direct form, their count first */
    int chunk_rows;      /* rows of a GEMM */
    size_t scan_wg;
    int n_valid;
    double tol; /* absolute: tol x the mean of the columns' variances */
    /* Lloyd's batches are timed as spans (clstats__launch_span): while `spans`, launches keep
     * no event but the batch's first and its last finish (`last_next`). */
    bool spans, last_next;
    cl_event span_first, span_last;
    bool keep_args; /* KM_ARG skips values a kernel holds (a Lloyd run) */
    struct kmeans_arg_slot *args;
};

/* Sets up a job on x (nx = d, ny = n) with k clusters and optional weights: builds the
 * programs, holds the buffers, finds the valid rows (refusing NaN rows unless skip_nan) and,
 * when tol > 0, scikit-learn's absolute tolerance. Fitting refuses fewer valid rows than k;
 * predicting does not. */
int clstats__kmeans_job_open(clstats_ctx *ctx, struct kmeans_job *job,
                             const struct clstats_array *x, int k,
                             const struct clstats_array *weight, int skip_nan, double tol,
                             bool fitting);
void clstats__kmeans_job_close(struct kmeans_job *job);

/* The job on new rows of the same shape (mini-batch's next batch): its programs and buffers
 * kept, the rows uploaded and surveyed as a predicting job_open's. */
int clstats__kmeans_job_reload(struct kmeans_job *job, const struct clstats_array *x,
                               const struct clstats_array *weight, int skip_nan);

/* The k x d centres c (host array or buffer, the data's dtype) into job->centres[0]. */
int clstats__kmeans_job_centres(struct kmeans_job *job, const struct clstats_array *c);

/* Every launch of the module's loops: its event kept for the call's timing, or while
 * job->spans only the batch's first and last (src/cluster/job.c). */
int clstats__kmeans_launch(struct kmeans_job *job, cl_kernel kernel, size_t global, size_t local,
                           const char *what);

/* KM_ARG's memory of the values set, for one Lloyd run (src/cluster/job.c). */
int clstats__kmeans_keep_args(struct kmeans_job *job);
void clstats__kmeans_forget_args(struct kmeans_job *job);

/* Reads the sums the groups of a kernel wrote (count values, `stride` apart from `first`) and
 * adds them in group order into out[0..width). */
int clstats__kmeans_group_sums(struct kmeans_job *job, cl_mem part, size_t groups, int width,
                               double *out);

/* Writes the k initial centres into job->centres[0]. */
int clstats__kmeans_plusplus(struct kmeans_job *job, struct clstats__rng *rng);
int clstats__kmeans_random(struct kmeans_job *job, struct clstats__rng *rng);

/* One Lloyd run from job->centres[0]: writes which buffer holds the final centres, the
 * iterations, the inertia; labels are in job->labels. */
int clstats__kmeans_lloyd(struct kmeans_job *job, int max_iter, int *final_buffer, int *n_iter,
                          double *inertia);

/* Chooses the assignment's path and builds its kernel and buffers (src/cluster/assign.c). */
int clstats__kmeans_assign_setup(struct kmeans_job *job, const char *options);

/* Enqueues the labels of every row by the centres in job->centres[buffer] (doing nothing once
 * the state says stop, unless ignore_stop); *counted tells whether the block counts of the
 * counting sort came with them. */
int clstats__kmeans_enqueue_assign(struct kmeans_job *job, int buffer, cl_int ignore_stop,
                                   bool *counted);

/* Labels of every row by the centres in job->centres[buffer], and the inertia; the inertia of
 * the labels the device holds. */
int clstats__kmeans_assign(struct kmeans_job *job, int buffer, double *inertia);
int clstats__kmeans_inertia(struct kmeans_job *job, int buffer, double *inertia);

/* Every argument of the module's kernels. During a Lloyd run (job->keep_args), a value a kernel
 * already holds is not set again: an iteration's arguments are mostly the last one's, and each
 * clSetKernelArg is host time that a small case's iterations wait for. Only within the run,
 * since other jobs of the context share the kernels. */
#define KMEANS_ARG_KERNELS 24
#define KMEANS_ARGS 24
struct kmeans_arg_slot {
    cl_kernel kernel;
    uint32_t known; /* bit i: value[i] is what the kernel holds */
    uint64_t value[KMEANS_ARGS];
};
cl_int clstats__kmeans_arg(struct kmeans_job *job, cl_kernel kernel, cl_uint index, size_t size,
                           const void *value);
#define KM_ARG(kernel, index, value)                                                               \
    CL_TRY(job->ctx, clstats__kmeans_arg(job, (kernel), (index), sizeof(value), &(value)),         \
           "clSetKernelArg")

#endif
