/* runs.c - launches the large-window GPU design (kernels/filter/median_filter_runs.cl): bands of
 * output rows, each a pass building every column's sorted runs into a global buffer and a pass
 * selecting each pixel's median and MAD from them. The buffer holds WY keys for every input
 * column and band row, so the band is as tall as a memory budget allows. */
#include "filter_internal.h"

/* The runs buffer's budget: large bands give the building pass enough columns x chunks to fill
 * a GPU, and the device keeps room for the image and the maps. */
#define RUNS_BUDGET (512UL << 20)

/* Output rows a column_runs work-item walks: its first run costs about WY²/4 moves, a step
 * down at most WY, so a chunk of 16 rows spends no more on the first than on the steps while
 * leaving work-items enough for the GPU (columns x band rows / 16). */
#define RUN_CHUNK 16

int clstats__runs_plan(const clstats_ctx *ctx, int wy, int *run_group)
{
    /* The building pass keeps WY keys per work-item in local memory. */
    for (int g = 64; g >= 16; g /= 2) {
        if ((size_t)wy * 4 * (size_t)g + 1024 <= ctx->local_mem &&
            (size_t)g <= ctx->max_work_group) {
            *run_group = g;
            return 1;
        }
    }
    return 0;
}

int clstats__filter_runs(clstats_ctx *ctx, cl_program program, const struct runs_job *job)
{
    cl_kernel build, select;
    int status = clstats__kernel(ctx, program, "column_runs", &build);
    if (status == CLSTATS_OK) status = clstats__kernel(ctx, program, "median_mad", &select);
    if (status != CLSTATS_OK) return status;

    /* Input columns the windows of one padded row of outputs read. */
    const size_t cw = job->gx + (size_t)job->wx - 1;
    const size_t row_bytes = cw * ((size_t)job->wy * sizeof(cl_uint) + sizeof(cl_ushort));
    size_t budget = RUNS_BUDGET;
    if (budget > ctx->max_alloc) budget = ctx->max_alloc;
    if (budget > ctx->global_mem / 8) budget = ctx->global_mem / 8;
    size_t band = budget / row_bytes / job->step_y * job->step_y;
    if (band < job->step_y) band = job->step_y;
    if (band > job->gy) band = job->gy;
    if ((size_t)job->wy * band * cw > INT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "the filter's runs for a %zu-wide band exceed 2^31 keys", cw);

    cl_int err;
    cl_mem runs = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE,
                                 (size_t)job->wy * band * cw * sizeof(cl_uint), NULL, &err);
    if (err != CL_SUCCESS)
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "cannot allocate the filter's runs (%zu MiB): OpenCL error %d",
                             ((size_t)job->wy * band * cw * sizeof(cl_uint)) >> 20, (int)err);
    cl_mem counts =
        clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, band * cw * sizeof(cl_ushort), NULL, &err);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(runs);
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "cannot allocate the filter's run counts: OpenCL error %d", (int)err);
    }

    const cl_int cw_arg = (cl_int)cw, chunk = RUN_CHUNK, nx = (cl_int)job->nx;
    const cl_int run_stride = (cl_int)(band * cw);
    const cl_long stride = (cl_long)job->stride;
    int a = 0;
    err = clSetKernelArg(build, a++, sizeof job->img, &job->img);
    err |= clSetKernelArg(build, a++, sizeof stride, &stride);
    err |= clSetKernelArg(build, a++, sizeof job->colmap, &job->colmap);
    err |= clSetKernelArg(build, a++, sizeof job->rowmap, &job->rowmap);
    err |= clSetKernelArg(build, a++, sizeof job->cval, &job->cval);
    const int build_row0 = a++, build_rows = a++;
    err |= clSetKernelArg(build, a++, sizeof chunk, &chunk);
    err |= clSetKernelArg(build, a++, sizeof cw_arg, &cw_arg);
    err |= clSetKernelArg(build, a++, sizeof run_stride, &run_stride);
    err |= clSetKernelArg(build, a++, sizeof runs, &runs);
    err |= clSetKernelArg(build, a++, sizeof counts, &counts);
    a = 0;
    err |= clSetKernelArg(select, a++, sizeof runs, &runs);
    err |= clSetKernelArg(select, a++, sizeof counts, &counts);
    err |= clSetKernelArg(select, a++, sizeof cw_arg, &cw_arg);
    err |= clSetKernelArg(select, a++, sizeof run_stride, &run_stride);
    err |= clSetKernelArg(select, a++, sizeof nx, &nx);
    const int select_rows = a++, select_out0 = a++;
    err |= clSetKernelArg(select, a++, sizeof job->median, &job->median);
    err |= clSetKernelArg(select, a++, sizeof job->mad, &job->mad);
    err |= clSetKernelArg(select, a++, sizeof job->want_median, &job->want_median);
    err |= clSetKernelArg(select, a++, sizeof job->want_mad, &job->want_mad);
    if (err != CL_SUCCESS) status = clstats__fail(ctx, CLSTATS_ERR_OPENCL, "clSetKernelArg(runs)");

    for (size_t y0 = 0; status == CLSTATS_OK && y0 < job->ny; y0 += band) {
        const size_t rows = job->ny - y0 < band ? job->ny - y0 : band;
        const cl_int row0_arg = (cl_int)y0, rows_arg = (cl_int)rows;
        const cl_long out0 = (cl_long)(y0 * job->nx);
        err = clSetKernelArg(build, build_row0, sizeof row0_arg, &row0_arg);
        err |= clSetKernelArg(build, build_rows, sizeof rows_arg, &rows_arg);
        err |= clSetKernelArg(select, select_rows, sizeof rows_arg, &rows_arg);
        err |= clSetKernelArg(select, select_out0, sizeof out0, &out0);
        if (err != CL_SUCCESS) {
            status = clstats__fail(ctx, CLSTATS_ERR_OPENCL, "clSetKernelArg(runs band)");
            break;
        }
        const size_t bg = (size_t)job->run_group;
        const size_t build_global[2] = {(cw + bg - 1) / bg * bg,
                                        (rows + RUN_CHUNK - 1) / RUN_CHUNK};
        const size_t build_local[2] = {bg, 1};
        status = clstats__launch(ctx, build, 2, NULL, build_global, build_local, "column_runs");
        if (status != CLSTATS_OK) break;
        const size_t py = (size_t)job->py;
        const size_t select_global[2] = {job->gx, (rows + job->step_y - 1) / job->step_y *
                                                      (job->step_y / py)};
        status = clstats__launch(ctx, select, 2, NULL, select_global, job->local, "median_mad");
        if (status != CLSTATS_OK) break;
        if (job->progress) {
            err = clFinish(ctx->queue);
            if (err != CL_SUCCESS) {
                status = clstats__fail(ctx, CLSTATS_ERR_OPENCL, "clFinish(runs band)");
                break;
            }
            job->progress(job->progress_user, (double)(y0 + rows) / (double)job->ny);
        }
    }
    /* OpenCL frees them once the commands using them have finished. */
    clReleaseMemObject(runs);
    clReleaseMemObject(counts);
    return status;
}
