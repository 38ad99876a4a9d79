/* internal.h - what the library's files share and callers never see: the context's layout,
 * error recording and program building (src/device.c, src/errors.c). */
#ifndef CLSTATS_INTERNAL_H
#define CLSTATS_INTERNAL_H

#include "clstats.h"
#include <stdbool.h>

#define CTX_PROGRAM_CACHE 16

#define PROGRAM_KERNELS 16
#define CTX_SCRATCH 13

struct cached_program {
    char *key; /* kernel source name + '\n' + build options */
    cl_program program;
    cl_kernel kernels[PROGRAM_KERNELS]; /* created on first use, by name */
    char *kernel_names[PROGRAM_KERNELS];
};

/* A device buffer kept between calls, grown on demand (clstats__scratch). */
struct scratch_buffer {
    cl_mem mem;
    size_t bytes;
};

struct clstats_ctx {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char device_name[320];
    char message[4096];
    bool has_fp64;
    cl_ulong max_alloc;
    cl_ulong global_mem;
    size_t max_work_group;
    cl_ulong local_mem;
    cl_uint compute_units;
    bool is_cpu; /* local memory is ordinary memory there, and work-items are loop iterations */
    cl_uint nv_compute_major; /* NVIDIA's compute capability (major), 0 on other devices */
    bool load_hint_refused;   /* the driver would not build the kernels' L2 load hint */
    double last_kernel_ms;    /* kernels of the last call, from profiling events */
    struct cached_program programs[CTX_PROGRAM_CACHE];
    int n_programs;
    struct scratch_buffer scratch[CTX_SCRATCH];
};

/* Records a printf-style detail on ctx (or the process-wide slot when ctx is NULL) and returns
 * status, so failures read `return fail(ctx, CLSTATS_ERR_ARG, "width %d is even", w);`. */
int clstats__fail(clstats_ctx *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Checks one OpenCL call: CL_SUCCESS gives CLSTATS_OK; otherwise records "what: CL_NAME" and
 * returns CLSTATS_ERR_DEVICE_MEMORY for allocation failures, else CLSTATS_ERR_OPENCL. */
int clstats__cl_check(clstats_ctx *ctx, cl_int err, const char *what);

const char *clstats__cl_error_name(cl_int err);

/* The built program for an embedded kernel file (e.g. "median_filter.cl") and build options,
 * built once per context. A compile failure returns CLSTATS_ERR_BUILD with the build log. */
int clstats__program(clstats_ctx *ctx, const char *source_name, const char *options,
                     cl_program *out);

/* The same with generated source text put before the file's (e.g. a sorting network); prefix
 * may be NULL. Programs are cached by name, prefix and options. */
int clstats__program_prefixed(clstats_ctx *ctx, const char *source_name, const char *prefix,
                              const char *options, cl_program *out);

/* A read-only device buffer holding `bytes` of host data, ready for commands enqueued after
 * it on ctx->queue; the host data must stay unchanged until the calling operation has
 * finished (src/transfer.c). `what` names it in errors. */
int clstats__upload(clstats_ctx *ctx, const void *host, size_t bytes, const char *what,
                    cl_mem *out);

/* The program built from sources[0..2) with options, from the on-disk cache, or NULL; and
 * storing a built one there (src/program_cache.c). Failures only mean no cache. */
cl_program clstats__cache_load(clstats_ctx *ctx, const char *const sources[2], const char *options);
void clstats__cache_store(clstats_ctx *ctx, const char *const sources[2], const char *options,
                          cl_program program);

/* "#define SORT_NETWORK(v) CE(v, i, j) ..." sorting v[0..n) in place with a comparator macro
 * CE the kernel defines, or above 16 keys the blocks kernels/sort_blocks.cl sorts n keys with;
 * malloc'd, NULL when out of memory (src/sort_network.c). */
char *clstats__sort_network_source(int n);

/* The kernel `name` of a program from clstats__program, created once and kept with the
 * program (its arguments are the caller's to set before each launch). */
int clstats__kernel(clstats_ctx *ctx, cl_program program, const char *name, cl_kernel *out);

/* A device buffer of at least `bytes` kept in slot (0..CTX_SCRATCH) between calls, so hot
 * paths do not allocate device memory each time; its contents are whatever was left. */
int clstats__scratch(clstats_ctx *ctx, int slot, size_t bytes, cl_mem *out);

/* Adds the run time of a finished kernel event to ctx->last_kernel_ms and releases it. */
void clstats__account_event(clstats_ctx *ctx, cl_event event);

/* Run time of a finished command (queue with profiling), in ms; 0 when unknown. */
double clstats__event_ms(cl_event event);

/* Sizes from the caller's numbers, checked, so that a wrong stride or count is refused rather
 * than wrapped into a small buffer that the kernels then read past. No array is larger than
 * PTRDIFF_MAX bytes: C objects end there, and so do the kernels' signed 64-bit indices. */
#define CLSTATS_MAX_ARRAY_BYTES ((size_t)PTRDIFF_MAX)

/* n elements of `size` bytes into *bytes; false where that is more than any array. */
static inline bool clstats__array_bytes(size_t n, size_t size, size_t *bytes)
{
    if (size && n > CLSTATS_MAX_ARRAY_BYTES / size) return false;
    *bytes = n * size;
    return true;
}

/* The bytes of `rows` rows `stride` elements apart whose last holds `cols` elements of `size`
 * bytes, (rows - 1) stride + cols elements; false where that overflows or is more than any
 * array. */
static inline bool clstats__span_bytes(size_t rows, size_t stride, size_t cols, size_t size,
                                       size_t *bytes)
{
    if (rows == 0 || (stride && rows - 1 > SIZE_MAX / stride)) return false;
    const size_t before_last = (rows - 1) * stride;
    return before_last <= SIZE_MAX - cols && clstats__array_bytes(before_last + cols, size, bytes);
}

/* A positive number from the environment variable `name` (tuning), else fallback. */
long clstats__env_long(const char *name, long fallback);

/* Source text of an embedded kernel file, or NULL (generated: kernels_embedded.c). */
const char *clstats__kernel_source(const char *name);

#define CL_TRY(ctx, call, what)                                                                    \
    do {                                                                                           \
        status = clstats__cl_check((ctx), (call), (what));                                         \
        if (status != CLSTATS_OK) goto fail;                                                       \
    } while (0)

#endif
