/* programs.c - the context's kernel programs: built once from the embedded sources (or taken
 * from the disk cache, src/core/program_cache.c) and kept by source, options and generated
 * prefix, with each program's kernels created once by name. Build logs go to the caller's log,
 * never to stderr. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void release_cached(struct cached_program *c)
{
    for (int k = 0; k < PROGRAM_KERNELS; k++) {
        if (c->kernels[k]) clReleaseKernel(c->kernels[k]);
        free(c->kernel_names[k]);
    }
    clReleaseProgram(c->program);
    free(c->key);
    memset(c, 0, sizeof *c);
}

void clstats__release_programs(clstats_ctx *ctx)
{
    for (size_t i = 0; i < ctx->n_programs; i++)
        release_cached(&ctx->programs[i]);
    free(ctx->programs);
    ctx->programs = NULL;
    ctx->n_programs = ctx->programs_cap = 0;
}

/* Records the build log of a failed build as the context's message. */
static int build_failure(clstats_ctx *ctx, cl_program program, const char *name, cl_int err)
{
    size_t size = 0;
    clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = malloc(size + 1);
    if (log) {
        log[0] = '\0';
        clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
        log[size] = '\0';
    }
    int status = clstats__fail(ctx, CLSTATS_ERR_BUILD, "building %s for %s failed (%s):\n%s", name,
                               ctx->device_name, clstats__cl_error_name(err), log ? log : "");
    free(log);
    return status;
}

/* A successful build's log, for a caller that keeps a log (clstats_ctx_set_log). */
static void log_build(clstats_ctx *ctx, cl_program program, const char *name, const char *options)
{
    size_t size = 0;
    clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = malloc(size + 1);
    if (!log) return;
    log[0] = '\0';
    clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    log[size] = '\0';
    clstats__log(ctx, "built %s (%s) for %s:\n%s", name, options, ctx->device_name, log);
    free(log);
}

/* Compiles sources with options (and `extra` options, for tuning, when not NULL). */
static int build_from_source(clstats_ctx *ctx, const char *name, const char *const sources[2],
                             const char *options, const char *extra, cl_program *out)
{
    cl_int err;
    int status = CLSTATS_OK;
    char *all_options = NULL;
    cl_program program =
        clCreateProgramWithSource(ctx->context, 2, (const char **)sources, NULL, &err);
    CL_TRY(ctx, err, "clCreateProgramWithSource");
    if (extra) {
        size_t len = strlen(options) + strlen(extra) + 2;
        all_options = malloc(len);
        if (!all_options) {
            status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate build options");
            goto fail;
        }
        snprintf(all_options, len, "%s %s", options, extra);
    }
    /* Exactness: no fast-math options, ever; FP_CONTRACT is switched off in the sources.
     * For tuning, clstats_ctx_tune(ctx, "build.options", ...) adds options (e.g.
     * -cl-nv-verbose), and a caller's log receives every build log. */
    err = clBuildProgram(program, 1, &ctx->device, all_options ? all_options : options, NULL, NULL);
    if (err != CL_SUCCESS) {
        status = build_failure(ctx, program, name, err);
        goto fail;
    }
    if (ctx->log) log_build(ctx, program, name, options);
    free(all_options);
    *out = program;
    return CLSTATS_OK;

fail:
    free(all_options);
    if (program) clReleaseProgram(program);
    return status;
}

int clstats__program(clstats_ctx *ctx, const char *source_name, const char *options,
                     cl_program *out)
{
    return clstats__program_prefixed(ctx, source_name, NULL, options, out);
}

int clstats__program_prefixed(clstats_ctx *ctx, const char *source_name, const char *prefix,
                              const char *options, cl_program *out)
{
    char *key = NULL;
    cl_program program = NULL;
    int status = CLSTATS_OK;

    if (!prefix) prefix = "";
    size_t key_len = strlen(source_name) + strlen(options) + strlen(prefix) + 3;
    key = malloc(key_len);
    if (!key) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate a program key");
    snprintf(key, key_len, "%s\n%s\n%s", source_name, options, prefix);
    for (size_t i = 0; i < ctx->n_programs; i++) {
        if (strcmp(ctx->programs[i].key, key) == 0) {
            free(key);
            *out = ctx->programs[i].program;
            return CLSTATS_OK;
        }
    }

    const char *source = clstats__kernel_source(source_name);
    if (!source) {
        free(key);
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "no embedded kernel named %s", source_name);
    }
    const char *sources[2] = {prefix, source};
    const char *extra = ctx->build_options;
    const bool tuning = extra != NULL; /* such builds neither use nor fill the disk cache */
    program = tuning ? NULL : clstats__cache_load(ctx, sources, options);
    if (!program) {
        status =
            build_from_source(ctx, source_name, sources, options, tuning ? extra : NULL, &program);
        if (status != CLSTATS_OK) goto fail;
        if (!tuning) clstats__cache_store(ctx, sources, options, program);
    }

    if (ctx->n_programs == ctx->programs_cap) {
        /* No eviction: the variants a context builds (widths, shapes, dtypes) are few, and a
         * program rebuilt would cost far more than the memory it holds. */
        const size_t cap = ctx->programs_cap ? 2 * ctx->programs_cap : 16;
        struct cached_program *grown = realloc(ctx->programs, cap * sizeof *grown);
        if (!grown) {
            status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot keep program %s", source_name);
            goto fail;
        }
        ctx->programs = grown;
        ctx->programs_cap = cap;
    }
    memset(&ctx->programs[ctx->n_programs], 0, sizeof ctx->programs[0]);
    ctx->programs[ctx->n_programs].key = key;
    ctx->programs[ctx->n_programs].program = program;
    ctx->n_programs++;
    *out = program;
    return CLSTATS_OK;

fail:
    if (program) clReleaseProgram(program);
    free(key);
    return status;
}

int clstats__kernel(clstats_ctx *ctx, cl_program program, const char *name, cl_kernel *out)
{
    struct cached_program *c = NULL;
    for (size_t i = 0; i < ctx->n_programs && !c; i++)
        if (ctx->programs[i].program == program) c = &ctx->programs[i];
    int k = 0;
    for (; c && k < PROGRAM_KERNELS && c->kernels[k]; k++) {
        if (strcmp(c->kernel_names[k], name) == 0) {
            *out = c->kernels[k];
            return CLSTATS_OK;
        }
    }
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    int status = clstats__cl_check(ctx, err, name);
    if (status != CLSTATS_OK) return status;
    char *copy = strdup(name);
    if (!c || k == PROGRAM_KERNELS || !copy) { /* not cacheable: never expected */
        clReleaseKernel(kernel);
        free(copy);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot keep kernel %s", name);
    }
    c->kernels[k] = kernel;
    c->kernel_names[k] = copy;
    *out = kernel;
    return CLSTATS_OK;
}
