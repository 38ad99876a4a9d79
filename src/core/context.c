/* device.c - the device layer: listing OpenCL devices, choosing one from a spec, owning the
 * context and queue, and building embedded kernel programs once per context. It knows nothing
 * of medians. */
#include "internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

struct found_device {
    cl_platform_id platform;
    cl_device_id device;
    struct clstats_device_info info;
};

/* A device string, truncated to fit: OpenCL refuses a buffer shorter than the whole string. */
static void device_string(cl_device_id d, cl_device_info what, char *out, size_t size)
{
    size_t need = 0;
    out[0] = '\0';
    if (clGetDeviceInfo(d, what, 0, NULL, &need) != CL_SUCCESS || need == 0) return;
    char *full = malloc(need + 1);
    if (!full) return;
    if (clGetDeviceInfo(d, what, need, full, NULL) == CL_SUCCESS) {
        full[need] = '\0';
        snprintf(out, size, "%s", full);
    }
    free(full);
}

static const char *type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return "gpu";
    if (t & CL_DEVICE_TYPE_CPU) return "cpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

/* Every device of every platform, in platform then device order. */
/* Platforms that fail to list devices are named in skipped (when not NULL), so a driver that
 * lost its GPU is plain to see. */
static int enumerate_unlocked(struct found_device *out, int max, int *count, char *skipped,
                              size_t skipped_size)
{
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint np = 0;
    size_t skipped_len = 0;
    *count = 0;
    if (skipped) skipped[0] = '\0';
    if (clGetPlatformIDs(MAX_PLATFORMS, platforms, &np) != CL_SUCCESS || np == 0)
        return clstats__fail(NULL, CLSTATS_ERR_NO_DEVICE,
                             "no OpenCL platform found (is an ICD such as pocl-opencl-icd "
                             "or a GPU driver installed?)");
    if (np > MAX_PLATFORMS) np = MAX_PLATFORMS;
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id devices[MAX_DEVICES];
        cl_uint nd = 0;
        char pname[128] = "";
        clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        cl_int err = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devices, &nd);
        if (err != CL_SUCCESS) {
            if (skipped && skipped_len < skipped_size)
                skipped_len += (size_t)snprintf(skipped + skipped_len, skipped_size - skipped_len,
                                                "; platform %u (%s) lists no device: %s", p, pname,
                                                clstats__cl_error_name(err));
            continue;
        }
        if (nd > MAX_DEVICES) nd = MAX_DEVICES;
        for (cl_uint d = 0; d < nd && *count < max; d++) {
            struct found_device *f = &out[(*count)++];
            memset(f, 0, sizeof *f);
            f->platform = platforms[p];
            f->device = devices[d];
            f->info.platform_index = (int)p;
            f->info.device_index = (int)d;
            snprintf(f->info.platform_name, sizeof f->info.platform_name, "%s", pname);
            device_string(devices[d], CL_DEVICE_NAME, f->info.device_name,
                          sizeof f->info.device_name);
            device_string(devices[d], CL_DEVICE_VERSION, f->info.version, sizeof f->info.version);
            cl_device_type t = 0;
            clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            snprintf(f->info.type, sizeof f->info.type, "%s", type_name(t));
        }
    }
    if (*count == 0)
        return clstats__fail(NULL, CLSTATS_ERR_NO_DEVICE,
                             "OpenCL platforms found, but no device on any of them");
    return CLSTATS_OK;
}

/* One enumeration at a time in the process: PoCL 3.1 answers CL_DEVICE_NOT_FOUND to a thread
 * that lists devices while another thread's first listing is still starting them up. */
static int enumerate(struct found_device *out, int max, int *count, char *skipped,
                     size_t skipped_size)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int status = enumerate_unlocked(out, max, count, skipped, skipped_size);
    pthread_mutex_unlock(&lock);
    return status;
}

int clstats_list_devices(struct clstats_device_info *out, size_t max, size_t *count)
{
    struct found_device found[MAX_DEVICES];
    int n = 0;
    if (!count) return clstats__fail(NULL, CLSTATS_ERR_ARG, "count is NULL");
    *count = 0;
    int status = enumerate(found, MAX_DEVICES, &n, NULL, 0);
    if (status != CLSTATS_OK) return status;
    for (int i = 0; i < n && (size_t)i < max && out; i++)
        out[i] = found[i].info;
    *count = (size_t)n;
    return CLSTATS_OK;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return true;
    }
    return n == 0;
}

/* Index into found[] of the device the spec names, or -1. */
static int choose(const struct found_device *found, int n, const char *spec)
{
    if (strcmp(spec, "auto") == 0 || spec[0] == '\0') {
        for (int i = 0; i < n; i++)
            if (strcmp(found[i].info.type, "gpu") == 0) return i;
        for (int i = 0; i < n; i++)
            if (strcmp(found[i].info.type, "cpu") == 0) return i;
        return n > 0 ? 0 : -1;
    }
    if (strcmp(spec, "gpu") == 0 || strcmp(spec, "cpu") == 0 || strcmp(spec, "accelerator") == 0) {
        for (int i = 0; i < n; i++)
            if (strcmp(found[i].info.type, spec) == 0) return i;
        return -1;
    }
    int p, d, used = 0;
    if (sscanf(spec, "%d:%d%n", &p, &d, &used) == 2 && spec[used] == '\0') {
        for (int i = 0; i < n; i++)
            if (found[i].info.platform_index == p && found[i].info.device_index == d) return i;
        return -1;
    }
    /* What clstats_list_devices shows: platform, device and version. Debian's PoCL names its
     * platform "Portable Computing Language" and says "PoCL" only in its version. */
    for (int i = 0; i < n; i++) {
        char full[400];
        snprintf(full, sizeof full, "%s / %s / %s", found[i].info.platform_name,
                 found[i].info.device_name, found[i].info.version);
        if (contains_nocase(full, spec)) return i;
    }
    return -1;
}

/* NVIDIA's compute capability (major) through cl_nv_device_attribute_query; 0 elsewhere. */
#define COMPUTE_CAPABILITY_MAJOR_NV 0x4000
static cl_uint nv_compute_major(cl_device_id device)
{
    size_t size = 0;
    cl_uint major = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS) return 0;
    char *extensions = calloc(size + 1, 1);
    const bool nv =
        extensions &&
        clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, extensions, NULL) == CL_SUCCESS &&
        strstr(extensions, "cl_nv_device_attribute_query");
    free(extensions);
    if (!nv || clGetDeviceInfo(device, COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major, NULL) !=
                   CL_SUCCESS)
        return 0;
    return major;
}

int clstats_ctx_create(clstats_ctx **out, const char *device_spec)
{
    struct found_device found[MAX_DEVICES];
    int n = 0, status;
    cl_int err;
    clstats_ctx *ctx = NULL;

    if (!out) return clstats__fail(NULL, CLSTATS_ERR_ARG, "ctx pointer is NULL");
    *out = NULL;
    if (!device_spec) device_spec = getenv("CLSTATS_DEVICE");
    if (!device_spec) device_spec = "auto";

    char skipped[512];
    status = enumerate(found, MAX_DEVICES, &n, skipped, sizeof skipped);
    if (status != CLSTATS_OK) return status;
    int pick = choose(found, n, device_spec);
    if (pick < 0) {
        /* Name what there is: a driver that failed to show its GPU is then plain to see. */
        char seen[512] = "";
        for (int i = 0, len = 0; i < n && len < (int)sizeof seen; i++)
            len += snprintf(seen + len, sizeof seen - (size_t)len, "%s%d:%d %s", i ? ", " : "",
                            found[i].info.platform_index, found[i].info.device_index,
                            found[i].info.device_name);
        return clstats__fail(NULL, CLSTATS_ERR_DEVICE_SPEC,
                             "no OpenCL device matches \"%s\" (devices: %s%s)", device_spec, seen,
                             skipped);
    }

    ctx = calloc(1, sizeof *ctx);
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_NOMEM, "cannot allocate a context");
    ctx->platform = found[pick].platform;
    ctx->device = found[pick].device;
    snprintf(ctx->device_name, sizeof ctx->device_name, "%s / %s", found[pick].info.platform_name,
             found[pick].info.device_name);

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
    ctx->context = clCreateContext(props, 1, &ctx->device, NULL, NULL, &err);
    CL_TRY(ctx, err, "clCreateContext");
    ctx->queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
    CL_TRY(ctx, err, "clCreateCommandQueue");

    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(ctx->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    ctx->has_fp64 = fp64 != 0;
    clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ctx->max_alloc,
                    &ctx->max_alloc, NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ctx->global_mem,
                    &ctx->global_mem, NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof ctx->max_work_group,
                    &ctx->max_work_group, NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ctx->local_mem, &ctx->local_mem,
                    NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof ctx->compute_units,
                    &ctx->compute_units, NULL);
    ctx->is_cpu = strcmp(found[pick].info.type, "cpu") == 0;
    ctx->nv_compute_major = nv_compute_major(ctx->device);
    *out = ctx;
    return CLSTATS_OK;

fail:
    /* Keep the detail where the caller can read it once ctx is gone. */
    clstats__fail(NULL, status, "%s: %s", ctx->device_name, ctx->message);
    clstats_ctx_destroy(ctx);
    return status;
}

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

void clstats_ctx_destroy(clstats_ctx *ctx)
{
    if (!ctx) return;
    for (int i = 0; i < ctx->n_programs; i++)
        release_cached(&ctx->programs[i]);
    for (int i = 0; i < CTX_SCRATCH; i++)
        if (ctx->scratch[i].mem) clReleaseMemObject(ctx->scratch[i].mem);
    if (ctx->queue) clReleaseCommandQueue(ctx->queue);
    if (ctx->context) clReleaseContext(ctx->context);
    free(ctx);
}

const char *clstats_ctx_device_name(const clstats_ctx *ctx)
{
    return ctx ? ctx->device_name : "";
}

double clstats_ctx_last_kernel_ms(const clstats_ctx *ctx)
{
    return ctx ? ctx->last_kernel_ms : 0.0;
}

double clstats__event_ms(cl_event event)
{
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
            CL_SUCCESS &&
        end > start)
        return (double)(end - start) * 1e-6;
    return 0.0;
}

void clstats__account_event(clstats_ctx *ctx, cl_event event)
{
    if (!event) return;
    ctx->last_kernel_ms += clstats__event_ms(event);
    clReleaseEvent(event);
}

long clstats__env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end;
    long x = strtol(v, &end, 0);
    return (*end == '\0' && x > 0) ? x : fallback;
}

cl_context clstats_ctx_cl_context(const clstats_ctx *ctx)
{
    return ctx ? ctx->context : NULL;
}

cl_command_queue clstats_ctx_cl_queue(const clstats_ctx *ctx)
{
    return ctx ? ctx->queue : NULL;
}

cl_device_id clstats_ctx_cl_device(const clstats_ctx *ctx)
{
    return ctx ? ctx->device : NULL;
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

static void print_build_log(clstats_ctx *ctx, cl_program program, const char *name,
                            const char *options)
{
    size_t size = 0;
    clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = malloc(size + 1);
    if (!log) return;
    log[0] = '\0';
    clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    log[size] = '\0';
    fprintf(stderr, "clstats: built %s (%s) for %s:\n%s\n", name, options, ctx->device_name, log);
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
     * For tuning, CLSTATS_BUILD_OPTIONS adds options (e.g. -cl-nv-verbose) and
     * CLSTATS_BUILD_LOG=1 prints every build log on stderr. */
    err = clBuildProgram(program, 1, &ctx->device, all_options ? all_options : options, NULL, NULL);
    if (err != CL_SUCCESS) {
        status = build_failure(ctx, program, name, err);
        goto fail;
    }
    if (getenv("CLSTATS_BUILD_LOG")) print_build_log(ctx, program, name, options);
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
    for (int i = 0; i < ctx->n_programs; i++) {
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
    const char *extra = getenv("CLSTATS_BUILD_OPTIONS");
    const bool tuning = extra && *extra; /* such builds neither use nor fill the disk cache */
    program = tuning ? NULL : clstats__cache_load(ctx, sources, options);
    if (!program) {
        status =
            build_from_source(ctx, source_name, sources, options, tuning ? extra : NULL, &program);
        if (status != CLSTATS_OK) goto fail;
        if (!tuning) clstats__cache_store(ctx, sources, options, program);
    }

    if (ctx->n_programs == CTX_PROGRAM_CACHE) {
        /* Evict the oldest: contexts that build this many variants are rare. */
        release_cached(&ctx->programs[0]);
        memmove(ctx->programs, ctx->programs + 1,
                (CTX_PROGRAM_CACHE - 1) * sizeof ctx->programs[0]);
        ctx->n_programs--;
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
    for (int i = 0; i < ctx->n_programs && !c; i++)
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

int clstats__scratch(clstats_ctx *ctx, int slot, size_t bytes, cl_mem *out)
{
    struct scratch_buffer *b = &ctx->scratch[slot];
    if (bytes == 0) bytes = 1;
    if (b->mem && b->bytes >= bytes) {
        *out = b->mem;
        return CLSTATS_OK;
    }
    if (b->mem) clReleaseMemObject(b->mem);
    b->mem = NULL;
    b->bytes = 0;
    cl_int err;
    cl_mem mem = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    int status = clstats__cl_check(ctx, err, "clCreateBuffer(scratch)");
    if (status != CLSTATS_OK) return status;
    b->mem = mem;
    b->bytes = bytes;
    *out = mem;
    return CLSTATS_OK;
}
