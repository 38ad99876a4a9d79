/* internal.h - what the library's modules may use of src/core and callers never see: the
 * context's layout (the device it knows, its tuning, programs and scratch buffers), errors,
 * program building, launches and their timing, transfers (docs/ARCHITECTURE.md). None of these
 * names is exported from the shared library. */
#ifndef CLSTATS_INTERNAL_H
#define CLSTATS_INTERNAL_H

#include "clstats.h"
#include "tuning.h"

#include <stdbool.h>

#define PROGRAM_KERNELS 16

struct cached_program {
    char *key; /* kernel source name + '\n' + build options + '\n' + generated prefix */
    cl_program program;
    cl_kernel kernels[PROGRAM_KERNELS]; /* created on first use, by name */
    char *kernel_names[PROGRAM_KERNELS];
};

/* The library's random generator (src/core/random.c): xoshiro256** seeded by splitmix64. */
struct clstats__rng {
    uint64_t s[4];
};
void clstats__rng_seed(struct clstats__rng *r, uint64_t seed);
uint64_t clstats__rng_next(struct clstats__rng *r);
double clstats__rng_uniform(struct clstats__rng *r); /* [0, 1), 53 bits */
uint64_t clstats__rng_below(struct clstats__rng *r, uint64_t n); /* [0, n), no modulo bias */

/* A device buffer kept between calls under a name, grown on demand (clstats__scratch). */
struct scratch_buffer {
    const char *name; /* the module's literal, e.g. "select.hist" */
    cl_mem mem;
    size_t bytes;
    void *host; /* clstats__scratch_pinned's: the buffer mapped, for as long as it is kept */
};

struct clstats_ctx {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char device_name[320];
    char message[4096];
    /* What the device offers, read once when the context is made: modules read these and
     * never ask OpenCL themselves. */
    enum clstats__class device_class;
    bool has_fp64;
    /* The build option that makes float division and sqrt correctly rounded, "" where the
     * device does not offer it. Needed where a kernel divides in double and rounds to float:
     * a compiler may legally turn that into a float division, which NVIDIA's compiler then
     * approximates unless told otherwise (the mesh background's SEP bits depend on it). */
    const char *exact_divide_option;
    cl_ulong max_alloc;
    cl_ulong global_mem;
    size_t max_work_group;
    cl_ulong local_mem;
    cl_uint compute_units;
    bool is_cpu; /* local memory is ordinary memory there, and work-items are loop iterations */
    cl_uint nv_compute_major; /* NVIDIA's compute capability (major), 0 on other devices */
    bool load_hint_refused;   /* the driver would not build the kernels' L2 load hint */
    long tuning[PARAMS];      /* the class's table, and what clstats_ctx_tune forced */
    char *build_options;      /* added to every build (tuning: "build.options"), or NULL */
    void (*log)(void *user, const char *line); /* clstats_ctx_set_log, or NULL */
    void *log_user;
    double last_kernel_ms; /* kernels of the last call, from profiling events */
    cl_event *events;      /* launched since the call began (clstats__launch) */
    size_t n_events, events_cap;
    char (*event_what)[32]; /* each event's kernel, for the log's breakdown (clstats__end) */
    struct cached_program *programs;
    size_t n_programs, programs_cap;
    struct scratch_buffer *scratch;
    size_t n_scratch;
    struct clstats__staging *staging; /* pinned slots, queues and copy threads, or NULL */
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
 * finished (src/core/transfer.c). `what` names it in errors. */
int clstats__upload(clstats_ctx *ctx, const void *host, size_t bytes, const char *what,
                    cl_mem *out);

/* Host arrays streamed to and from the device through pinned slots (src/core/staging.c), for
 * calls that overlap the bus with their kernels: clstats__stage_wanted says whether the device
 * gains by it (GPUs; the tuning parameter transfer.stream forces it); clstats__stage_begin makes
 * the slots, queues and copy threads once per context. Then, in order: uploads of byte ranges of
 * a host array into a buffer; clstats__stage_uploaded, after which kernels enqueued on ctx->queue
 * see every upload so far; the kernels; clstats__stage_kernels_done, after which downloads see
 * them; downloads of byte ranges into host arrays, finished by clstats__stage_poll as they
 * arrive and by clstats__stage_finish, which every call that streamed must reach (failed or
 * not), before it returns. The host arrays must stay valid until then. */
bool clstats__stage_wanted(const clstats_ctx *ctx);
int clstats__stage_begin(clstats_ctx *ctx);
int clstats__stage_upload(clstats_ctx *ctx, cl_mem dst, size_t offset, const void *src,
                          size_t bytes);
int clstats__stage_uploaded(clstats_ctx *ctx);
int clstats__stage_kernels_done(clstats_ctx *ctx);
int clstats__stage_download(clstats_ctx *ctx, cl_mem src, size_t offset, void *dst, size_t bytes);
int clstats__stage_poll(clstats_ctx *ctx);
int clstats__stage_finish(clstats_ctx *ctx);
void clstats__stage_free(clstats_ctx *ctx);

/* The program built from sources[0..2) with options, from the on-disk cache, or NULL; and
 * storing a built one there (src/core/program_cache.c). Failures only mean no cache. */
cl_program clstats__cache_load(clstats_ctx *ctx, const char *const sources[2], const char *options);
void clstats__cache_store(clstats_ctx *ctx, const char *const sources[2], const char *options,
                          cl_program program);

/* "#define SORT_NETWORK(v) CE(v, i, j) ..." sorting v[0..n) in place with a comparator macro
 * CE the kernel defines, or above 16 keys the blocks kernels/sort_blocks.cl sorts n keys with;
 * malloc'd, NULL when out of memory (src/filter/sort_network.c). */
char *clstats__sort_network_source(int n);

/* Releases every program the context built (clstats_ctx_destroy). */
void clstats__release_programs(clstats_ctx *ctx);

/* The device a spec names, with what the context needs to know of it (src/core/devices.c);
 * a spec that names none records the devices there are, on the process-wide message. */
struct clstats__device {
    cl_platform_id platform;
    cl_device_id device;
    struct clstats_device_info info;
    enum clstats__class device_class;
    cl_uint nv_compute_major; /* NVIDIA's compute capability (major), 0 elsewhere */
};
int clstats__find_device(const char *spec, struct clstats__device *out);

/* The kernel `name` of a program from clstats__program, created once and kept with the
 * program (its arguments are the caller's to set before each launch). */
int clstats__kernel(clstats_ctx *ctx, cl_program program, const char *name, cl_kernel *out);

/* A device buffer of at least `bytes` kept under `name` between calls, so hot paths do not
 * allocate device memory each time; its contents are whatever was left (src/core/scratch.c).
 * Names are the modules' own literals ("select.hist"); two users of one name share it. */
int clstats__scratch(clstats_ctx *ctx, const char *name, size_t bytes, cl_mem *out);

/* Pinned host memory of at least `bytes` kept under `name` alike (a CL_MEM_ALLOC_HOST_PTR
 * buffer mapped once, when made or grown): transfers to and from it skip the bounce through
 * pinned memory that pageable memory costs on GPUs. Names apart from clstats__scratch's. */
int clstats__scratch_pinned(clstats_ctx *ctx, const char *name, size_t bytes, void **host);

/* Every kept buffer, device and pinned, released (clstats_ctx_release_buffers). */
void clstats__scratch_free(clstats_ctx *ctx);

/* Launches and their timing (src/core/launch.c), one path for every module, so that
 * clstats_ctx_last_kernel_ms is true after every call: a public entry calls clstats__begin
 * first; every kernel goes through clstats__launch, which keeps its event; clstats__end waits
 * for the queue, sums the events into last_kernel_ms and releases them (also on failure).
 * clstats__events_ms sums those from index `first` (a mark from clstats__event_mark) once they
 * have finished, for a caller that reports one run's time. */
void clstats__begin(clstats_ctx *ctx);
int clstats__launch(clstats_ctx *ctx, cl_kernel kernel, cl_uint dims, const size_t *offset,
                    const size_t *global, const size_t *local, const char *what);
/* An event of a command enqueued elsewhere (CLBlast's, src/linalg/blas.c), kept like a
 * launch's so that its time counts too; released by clstats__end. */
int clstats__keep_event(clstats_ctx *ctx, cl_event ev);
size_t clstats__event_mark(const clstats_ctx *ctx);
double clstats__events_ms(const clstats_ctx *ctx, size_t first);
/* For loops of many short launches (k-means' iterations), where an event a launch costs the host
 * time at each launch and again at the end: a launch that keeps no event, handing its event to
 * the caller only where ev is not NULL (the first and last launch of a run); then
 * clstats__add_span, once both have finished, adds the device time from the first's start to
 * the last's end to last_kernel_ms (kernels and the short gaps between them) and releases them. */
int clstats__launch_span(clstats_ctx *ctx, cl_kernel kernel, cl_uint dims, const size_t *offset,
                         const size_t *global, const size_t *local, const char *what, cl_event *ev);
void clstats__add_span(clstats_ctx *ctx, cl_event first, cl_event last);
int clstats__end(clstats_ctx *ctx, int status);

/* Run time of a finished command (queue with profiling), in ms; 0 when unknown. */
double clstats__event_ms(cl_event event);

/* The tuning table's value for the context (src/core/tuning.c); 0 is "auto". */
void clstats__tuning_init(clstats_ctx *ctx);
long clstats__tuned(const clstats_ctx *ctx, enum clstats__param_id id);

/* A line of detail for the caller's log (clstats_ctx_set_log), if it has one: the paths an
 * operation took, build logs. The library never writes to stderr. */
void clstats__log(clstats_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

/* Array descriptors (src/core/arrays.c). The element size of a dtype; a descriptor's row stride
 * (0 stands for nx); checking one ("what" names it in errors) and the bytes it spans; its
 * elements in a device buffer for a kernel (the caller's buffer itself where it can be, at
 * *offset when the caller can take one (offset NULL: a copy from the array's offset), else a
 * copy: *owned says whether to release it; `packed` asks for rows with no gaps); and a
 * contiguous nx x ny result written into one, wherever it lives. */
size_t clstats__dtype_size(enum clstats_dtype dtype);
static inline size_t clstats__array_stride(const struct clstats_array *a)
{
    return a->stride ? a->stride : a->nx;
}
int clstats__array_check(clstats_ctx *ctx, const struct clstats_array *a, const char *what,
                         size_t *bytes);
int clstats__array_in(clstats_ctx *ctx, const struct clstats_array *a, bool packed, cl_mem *out,
                      size_t *offset, bool *owned);
int clstats__array_out(clstats_ctx *ctx, cl_mem src, const struct clstats_array *a);
/* The array's elements packed on the device (as clstats__array_in with `packed`), and where a
 * mask is given (uint8, the array's shape; src/core/masks.c) a copy whose masked elements are
 * NaN, which every module then leaves out as missing. */
int clstats__array_in_masked(clstats_ctx *ctx, const struct clstats_array *a,
                             const struct clstats_array *mask, cl_mem *out, bool *owned);

/* Source text of an embedded kernel file, or NULL (generated: kernels_embedded.c). */
const char *clstats__kernel_source(const char *name);

#define CL_TRY(ctx, call, what)                                                                    \
    do {                                                                                           \
        status = clstats__cl_check((ctx), (call), (what));                                         \
        if (status != CLSTATS_OK) goto fail;                                                       \
    } while (0)

/* A kernel's arguments in order, each its size and where its value is (KERNEL_ARG), or a size
 * and no value: a work-group's own local memory (KERNEL_LOCAL); CLSTATS_SET_ARGS sets a list
 * of them from argument 0 on, `what` naming the kernel in an error. */
struct clstats__arg {
    size_t size;
    const void *value;
};
#define KERNEL_ARG(v) {sizeof(v), &(v)}
#define KERNEL_LOCAL(bytes) {(bytes), NULL}
int clstats__set_args(clstats_ctx *ctx, cl_kernel k, const char *what,
                      const struct clstats__arg *args, size_t count);
#define CLSTATS_SET_ARGS(ctx, k, what, ...)                                                        \
    clstats__set_args(ctx, k, what, (const struct clstats__arg[]){__VA_ARGS__},                    \
                      sizeof((const struct clstats__arg[]){__VA_ARGS__}) /                         \
                          sizeof(struct clstats__arg))

/* Kernel argument i of k from the variable v (its size and address), through CL_TRY. */
#define CL_ARG(k, i, v) CL_TRY(ctx, clSetKernelArg((k), (i), sizeof(v), &(v)), "clSetKernelArg")

#endif
