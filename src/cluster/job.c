/* job.c - a k-means job: the rows on the device, the programs built for their shape, the buffers
 * the loop keeps (named scratch, so that repeated calls reuse them), and the one pass over the
 * data that finds the rows taking part and scikit-learn's tolerance (kernels/cluster/
 * kmeans_prepare.cl). */
#include "cluster_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int buffers(struct kmeans_job *job);
static int kernels(struct kmeans_job *job);
static int survey(struct kmeans_job *job, const struct clstats_array *weight, int skip_nan,
                  double tol, bool fitting);

int clstats__kmeans_job_open(clstats_ctx *ctx, struct kmeans_job *job,
                             const struct clstats_array *x, int k,
                             const struct clstats_array *weight, int skip_nan, double tol,
                             bool fitting)
{
    memset(job, 0, sizeof *job);
    job->ctx = ctx;
    job->f64 = x->dtype == CLSTATS_FLOAT64;
    job->es = clstats__dtype_size(x->dtype);
    job->as = ctx->has_fp64 ? 8 : 4;
    job->n = (int)x->ny;
    job->d = (int)x->nx;
    job->k = k;
    job->groups = (job->n + KMEANS_WG - 1) / KMEANS_WG;
    job->chunks = (job->groups + KMEANS_WG - 1) / KMEANS_WG;
    job->levels = 1;
    for (uint64_t cap = KMEANS_WG; cap < (uint64_t)job->n; cap *= KMEANS_WG)
        job->levels++;
    job->seg_rows = (size_t)job->groups + (size_t)k;
    if (job->f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "%s has no fp64: float64 data cannot be clustered there",
                             ctx->device_name);
    if (ctx->max_work_group < KMEANS_WG)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "k-means needs work-groups of %d items; %s takes %zu", KMEANS_WG,
                             ctx->device_name, ctx->max_work_group);
    bool owned = false;
    int status = clstats__array_in(ctx, x, true, &job->x, NULL, &owned);
    if (status != CLSTATS_OK) return status;
    if (owned) job->x_own = job->x;
    if ((status = kernels(job)) || (status = buffers(job))) return status;
    return survey(job, weight, skip_nan, tol, fitting);
}

int clstats__kmeans_job_reload(struct kmeans_job *job, const struct clstats_array *x,
                               const struct clstats_array *weight, int skip_nan)
{
    if (x->ny != (size_t)job->n || x->nx != (size_t)job->d ||
        (x->dtype == CLSTATS_FLOAT64) != job->f64)
        return clstats__fail(job->ctx, CLSTATS_ERR_ARG, "k-means: new rows of another shape");
    if (job->x_own) clReleaseMemObject(job->x_own); /* freed once its commands are done */
    job->x = job->x_own = NULL;
    bool owned = false;
    int status = clstats__array_in(job->ctx, x, true, &job->x, NULL, &owned);
    if (status != CLSTATS_OK) return status;
    if (owned) job->x_own = job->x;
    job->xnorms_ready = false;
    return survey(job, weight, skip_nan, 0.0, false);
}

int clstats__kmeans_job_centres(struct kmeans_job *job, const struct clstats_array *c)
{
    clstats_ctx *ctx = job->ctx;
    cl_mem buf;
    bool owned = false;
    int status = clstats__array_in(ctx, c, true, &buf, NULL, &owned);
    if (status != CLSTATS_OK) return status;
    status =
        clstats__cl_check(ctx,
                          clEnqueueCopyBuffer(ctx->queue, buf, job->centres[0], 0, 0,
                                              (size_t)job->k * job->d * job->es, 0, NULL, NULL),
                          "copying the centres");
    if (owned) {
        clFinish(ctx->queue);
        clReleaseMemObject(buf);
    }
    return status;
}

int clstats__kmeans_launch(struct kmeans_job *job, cl_kernel kernel, size_t global, size_t local,
                           const char *what)
{
    clstats_ctx *ctx = job->ctx;
    const size_t *l = local ? &local : NULL;
    if (!job->spans) return clstats__launch(ctx, kernel, 1, NULL, &global, l, what);
    cl_event *ev = !job->span_first ? &job->span_first : job->last_next ? &job->span_last : NULL;
    return clstats__launch_span(ctx, kernel, 1, NULL, &global, l, what, ev);
}

cl_int clstats__kmeans_arg(struct kmeans_job *job, cl_kernel kernel, cl_uint index, size_t size,
                           const void *value)
{
    struct kmeans_arg_slot *slot = NULL;
    uint64_t v = 0;
    if (job->keep_args && job->args && size <= sizeof v && index < KMEANS_ARGS) {
        memcpy(&v, value, size);
        for (int s = 0; s < KMEANS_ARG_KERNELS && !slot; s++)
            if (job->args[s].kernel == kernel || !job->args[s].kernel) slot = &job->args[s];
        if (slot && slot->kernel == kernel && (slot->known >> index & 1u) &&
            slot->value[index] == v)
            return CL_SUCCESS;
    }
    const cl_int err = clSetKernelArg(kernel, index, size, value);
    if (slot) {
        slot->kernel = kernel;
        slot->known = err == CL_SUCCESS ? slot->known | 1u << index : slot->known & ~(1u << index);
        slot->value[index] = v;
    }
    return err;
}

cl_int clstats__kmeans_args(struct kmeans_job *job, cl_kernel kernel, cl_uint first,
                            const struct clstats__arg *args, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const cl_int err =
            clstats__kmeans_arg(job, kernel, first + (cl_uint)i, args[i].size, args[i].value);
        if (err != CL_SUCCESS) return err;
    }
    return CL_SUCCESS;
}

/* From here until clstats__kmeans_forget_args, KM_ARG sets only what changed. */
int clstats__kmeans_keep_args(struct kmeans_job *job)
{
    if (!job->args) job->args = malloc(KMEANS_ARG_KERNELS * sizeof *job->args);
    if (!job->args) return clstats__fail(job->ctx, CLSTATS_ERR_NOMEM, "k-means: arguments");
    memset(job->args, 0, KMEANS_ARG_KERNELS * sizeof *job->args);
    job->keep_args = true;
    return CLSTATS_OK;
}

void clstats__kmeans_forget_args(struct kmeans_job *job)
{
    job->keep_args = false;
}

void clstats__kmeans_job_close(struct kmeans_job *job)
{
    free(job->args);
    if (job->span_first) clReleaseEvent(job->span_first);
    if (job->span_last) clReleaseEvent(job->span_last);
    if (job->x_own) clReleaseMemObject(job->x_own);
    memset(job, 0, sizeof *job);
}

static int kernels(struct kmeans_job *job)
{
    clstats_ctx *ctx = job->ctx;
    char options[200];
    /* Without fp64 the sums are float, and the centres' divisions must round as the host's. */
    /* auto: one item on CPU devices, a group elsewhere */
    const long sums = clstats__tuned(ctx, P_KMEANS_SUMS);
    job->serial_sums = sums == 2 || (sums == AUTO && ctx->device_class == CLASS_CPU);
    snprintf(options, sizeof options, "-D REAL=%s -D ACC=%s%s -D DIM=%d -D K=%d%s",
             job->f64 ? "double" : "float", ctx->has_fp64 ? "double" : "float",
             ctx->has_fp64 ? " -D FP64" : " -cl-fp32-correctly-rounded-divide-sqrt", job->d,
             job->k, job->serial_sums ? " -D SERIAL_HALVE" : "");
    cl_program prep, lloyd;
    int status;
    if ((status = clstats__program(ctx, "kmeans_prepare.cl", options, &prep)) ||
        (status = clstats__program(ctx, "kmeans_lloyd.cl", options, &lloyd)))
        return status;
    const struct {
        cl_program program;
        const char *name;
        cl_kernel *out;
    } list[] = {
        {prep, "prepare", &job->prepare},
        {prep, "deviations", &job->deviations},
        {prep, "trial_potentials", &job->trials},
        {prep, "closest_update", &job->closest_update},
        {lloyd, "block_counts", &job->block_counts},
        {lloyd, "scan_chunks", &job->scan_chunks},
        {lloyd, "scan_clusters", &job->scan_clusters},
        {lloyd, "scan_runs", &job->scan_runs},
        {lloyd, job->serial_sums && job->k <= KMEANS_SERIAL_MAX_K ? "scatter_serial" : "scatter",
         &job->scatter},
        {lloyd, job->serial_sums ? "member_sums_serial" : "member_sums", &job->member_sums},
        {lloyd, job->serial_sums ? "row_sums_serial" : "row_sums", &job->row_sums},
        {lloyd, "finish", &job->finish},
        {lloyd, "member_sums_finish", &job->sums_finish},
        {lloyd, "inertia", &job->inertia},
        {lloyd, "own_distances", &job->own_distances},
    };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if ((status = clstats__kernel(ctx, list[i].program, list[i].name, list[i].out)))
            return status;
    /* The group's local arrays, each kernel's last argument (a group's halving sums, the
     * scans' runs and layout), are set here, not declared in the kernels: PoCL 3.1's pthread
     * device has let work-groups run at once share kernel-scope local arrays that a helper with
     * barriers works on (kernels/background/box_stats.cl met it), and these kernels run 256
     * items a group there too; local memory set by clSetKernelArg is each work-group's own.
     * (scatter's arrays are used by the kernel alone, the pattern that stayed right.) */
    const size_t acc_bytes = ctx->has_fp64 ? sizeof(cl_double) : sizeof(cl_float);
    /* kmeans_lloyd.cl's PASS_COLUMNS: the columns member_sums and row_sums halve together */
    const size_t pass_columns = job->d + 1 < 8 ? (size_t)job->d + 1 : 8;
    const struct {
        cl_kernel kernel;
        size_t bytes;
    } locals[] = {
        {job->prepare, acc_bytes},       {job->deviations, acc_bytes}, {job->trials, acc_bytes},
        {job->closest_update, acc_bytes}, {job->inertia, acc_bytes},
        {job->scan_clusters, 5 * sizeof(cl_int)}, {job->scan_runs, 6 * sizeof(cl_int)},
        {job->serial_sums ? NULL : job->member_sums, pass_columns * acc_bytes},
        {job->serial_sums ? NULL : job->row_sums, pass_columns * acc_bytes},
        /* finish's sums and its flag after them; member_sums_finish's member sums share them */
        {job->finish, (FINISH_SLOTS + 1) * acc_bytes},
        {job->sums_finish, (FINISH_SLOTS + 1) * acc_bytes},
    };
    for (size_t i = 0; i < sizeof locals / sizeof locals[0] && !status; i++) {
        cl_uint nargs = 0;
        if (!locals[i].kernel) continue;
        status = clstats__cl_check(ctx, clGetKernelInfo(locals[i].kernel, CL_KERNEL_NUM_ARGS,
                                                        sizeof nargs, &nargs, NULL),
                                   "clGetKernelInfo(k-means)");
        if (!status)
            status = clstats__cl_check(ctx, clSetKernelArg(locals[i].kernel, nargs - 1,
                                                           KMEANS_WG * locals[i].bytes, NULL),
                                       "clSetKernelArg(k-means local array)");
    }
    if (status) return status;
    job->scan_wg = ctx->max_work_group < 256 ? ctx->max_work_group : 256;
    return clstats__kmeans_assign_setup(job, options);
}

/* Products of sizes the caller's numbers make, checked before any buffer is asked for. */
static bool bytes_of(size_t a, size_t b, size_t size, size_t *out)
{
    return (b == 0 || a <= SIZE_MAX / b) && clstats__array_bytes(a * b, size, out);
}

static int buffers(struct kmeans_job *job)
{
    clstats_ctx *ctx = job->ctx;
    const size_t n = (size_t)job->n, k = (size_t)job->k, d = (size_t)job->d;
    const size_t groups = (size_t)job->groups, chunks = (size_t)job->chunks;
    const size_t trials = 2 + (size_t)log((double)k);
    const size_t width = d + 3 > trials ? d + 3 : trials;
    const struct {
        const char *name;
        size_t a, b, size;
        cl_mem *out;
    } list[] = {
        {"cluster.valid", n, 1, 1, &job->valid},
        {"cluster.weight", n, 1, job->es, &job->weight},
        {"cluster.labels", n, 1, 4, &job->labels},
        {"cluster.state", STATE_WORDS, 1, 4, &job->state},
        {"cluster.centres0", k, d, job->es, &job->centres[0]},
        {"cluster.centres1", k, d, job->es, &job->centres[1]},
        {"cluster.closest", n, 1, job->as, &job->closest},
        {"cluster.part", groups, width, job->as, &job->part},
        {"cluster.counts", groups, k, 4, &job->counts},
        {"cluster.within", groups, k, 4, &job->within},
        {"cluster.chunk_total", chunks, k, 4, &job->chunk_total},
        {"cluster.chunk_offset", chunks, k, 4, &job->chunk_offset},
        {"cluster.start", k + 1, 1, 4, &job->start},
        {"cluster.segs0", k + 1, 1, 4, &job->segs[0]},
        {"cluster.segs1", k + 1, 1, 4, &job->segs[1]},
        {"cluster.segs2", k + 1, 1, 4, &job->segs[2]},
        {"cluster.segs3", k + 1, 1, 4, &job->segs[3]},
        {"cluster.sums0", job->seg_rows, d + 1, job->as, &job->sums[0]},
        {"cluster.sums1", job->seg_rows, d + 1, job->as, &job->sums[1]},
        {"cluster.kept", k, d + 1, job->as, &job->kept},
        {"cluster.shift", k, 1, job->as, &job->shift},
        {"cluster.order", n, 1, 4, &job->order},
        {"cluster.done", 1, 1, 4, &job->done},
    };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
        size_t bytes;
        if (!bytes_of(list[i].a, list[i].b, list[i].size, &bytes) || bytes > ctx->max_alloc)
            return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                                 "k-means of %zu rows, %zu features, %zu clusters needs more "
                                 "than the device's largest buffer (%s)",
                                 n, d, k, list[i].name);
        int status = clstats__scratch(ctx, list[i].name, bytes, list[i].out);
        if (status != CLSTATS_OK) return status;
    }
    return CLSTATS_OK;
}

int clstats__kmeans_group_sums(struct kmeans_job *job, cl_mem part, size_t groups, int width,
                               double *out)
{
    const size_t count = groups * (size_t)width;
    void *host = malloc(count * job->as);
    if (!host) return clstats__fail(job->ctx, CLSTATS_ERR_NOMEM, "k-means: group sums");
    int status = clstats__cl_check(job->ctx,
                                   clEnqueueReadBuffer(job->ctx->queue, part, CL_TRUE, 0,
                                                       count * job->as, host, 0, NULL, NULL),
                                   "reading group sums");
    for (int c = 0; c < width; c++)
        out[c] = 0.0;
    for (size_t g = 0; status == CLSTATS_OK && g < groups; g++)
        for (int c = 0; c < width; c++)
            out[c] += job->as == 8 ? ((const double *)host)[g * width + c]
                                   : (double)((const float *)host)[g * width + c];
    free(host);
    return status;
}

/* The valid rows (finite, weight finite and >= 0) and their weights on the device; the
 * tolerance as scikit-learn's _tolerance: tol x the mean over columns of the (biased) variance
 * of the valid rows. */
static int survey(struct kmeans_job *job, const struct clstats_array *weight, int skip_nan,
                  double tol, bool fitting)
{
    clstats_ctx *ctx = job->ctx;
    int status = CLSTATS_OK;
    cl_mem w = job->weight, w_own = NULL, mean_buf = NULL;
    void *mean = NULL;
    cl_int has_w = weight != NULL, n = job->n;
    double *sums = malloc(((size_t)job->d + 3) * sizeof *sums);
    if (!sums) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "k-means: sums");
    if (weight) {
        bool owned = false;
        if ((status = clstats__array_in(ctx, weight, true, &w, NULL, &owned))) goto fail;
        if (owned) w_own = w;
    }
    const size_t global = (size_t)job->groups * KMEANS_WG, local = KMEANS_WG;
    KM_ARGS(job->prepare, 0, KERNEL_ARG(job->x), KERNEL_ARG(w), KERNEL_ARG(has_w), KERNEL_ARG(n),
            KERNEL_ARG(job->valid), KERNEL_ARG(job->weight), KERNEL_ARG(job->part));
    if ((status = clstats__launch(ctx, job->prepare, 1, NULL, &global, &local, "kmeans prepare")) ||
        (status = clstats__kmeans_group_sums(job, job->part, job->groups, job->d + 3, sums)))
        goto fail;
    const double valid = sums[job->d], nan_rows = sums[job->d + 1], bad_w = sums[job->d + 2];
    if (nan_rows > 0 && !skip_nan) {
        status = clstats__fail(ctx, CLSTATS_ERR_NAN,
                               "%.0f of the %d rows hold a NaN or an infinity", nan_rows, job->n);
        goto fail;
    }
    if (bad_w > 0) {
        status = clstats__fail(ctx, CLSTATS_ERR_ARG,
                               "%.0f sample weights are negative, NaN or infinite", bad_w);
        goto fail;
    }
    job->n_valid = (int)valid;
    if (!fitting) goto fail;
    if (job->n_valid == 0) {
        status = clstats__fail(ctx, CLSTATS_ERR_EMPTY, "no row without NaN to cluster");
        goto fail;
    }
    if (job->k > job->n_valid) {
        status = clstats__fail(ctx, CLSTATS_ERR_ARG, "%d clusters need as many valid rows; %d %s",
                               job->k, job->n_valid, job->n_valid == 1 ? "is" : "are");
        goto fail;
    }
    job->tol = 0.0;
    if (tol > 0) {
        /* The means, then the squared deviations from them (two passes, as numpy's var). */
        mean = malloc((size_t)job->d * job->as);
        if (!mean) {
            status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "k-means: means");
            goto fail;
        }
        for (int c = 0; c < job->d; c++) {
            const double m = sums[c] / valid;
            if (job->as == 8)
                ((double *)mean)[c] = m;
            else
                ((float *)mean)[c] = (float)m;
        }
        if ((status = clstats__upload(ctx, mean, (size_t)job->d * job->as, "the means", &mean_buf)))
            goto fail;
        KM_ARGS(job->deviations, 0, KERNEL_ARG(job->x), KERNEL_ARG(job->valid), KERNEL_ARG(n),
                KERNEL_ARG(mean_buf), KERNEL_ARG(job->part));
        if ((status = clstats__launch(ctx, job->deviations, 1, NULL, &global, &local,
                                      "kmeans deviations")) ||
            (status = clstats__kmeans_group_sums(job, job->part, job->groups, job->d, sums)))
            goto fail;
        double mean_var = 0.0;
        for (int c = 0; c < job->d; c++)
            mean_var += sums[c] / valid;
        job->tol = tol * (mean_var / job->d);
    }
fail:
    /* One release path: a failed clSetKernelArg leaves by `fail` with the means held. */
    if (mean_buf) clReleaseMemObject(mean_buf);
    free(mean);
    if (w_own) clReleaseMemObject(w_own);
    free(sums);
    return status;
}
