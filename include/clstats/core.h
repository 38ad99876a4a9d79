/* clstats/core.h - libclstats's core: statuses, errors, devices and contexts. Every module's
 * header includes it; include <clstats.h> for the whole API.
 *
 * Every function returns an int status (CLSTATS_OK or a negative enum clstats_status);
 * clstats_strerror() turns it into words and clstats_ctx_message() gives the detail of the last
 * error on a context. The library does no file I/O and never exits the process.
 *
 * Sizes: every size the arguments make (stride or ld times rows, offset plus count, times the
 * element's bytes) is computed with checks before anything is read. One that overflows size_t
 * or passes PTRDIFF_MAX bytes, more than any array can be, gives CLSTATS_ERR_ARG; so does a
 * region past the end of a cl_mem. One that fits but is more than the device's largest buffer
 * gives CLSTATS_ERR_DEVICE_MEMORY, so that a caller can split the work (madfilter's strips).
 * A single row never steps by its stride, so any stride is accepted there.
 *
 * Threads: a context belongs to one thread at a time. Give each thread its own context (they
 * share nothing and run at once; the device is shared by the OpenCL runtime), or guard every
 * call on a shared context, clstats_ctx_message() included, with one lock: a context holds a
 * program cache, the last error and the last timing, none of them locked. Functions without a
 * context (clstats_strerror, clstats_list_devices, clstats_boundary_*) are safe from any thread;
 * clstats_ctx_message(NULL) is per thread.
 */
#ifndef CLSTATS_CORE_H
#define CLSTATS_CORE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLSTATS_VERSION "0.1.0"

/* What the shared library exports: these declarations, nothing else (its internal names are
 * hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define CLSTATS_API __attribute__((visibility("default")))
#else
#define CLSTATS_API
#endif

enum clstats_status {
    CLSTATS_OK = 0,
    CLSTATS_ERR_ARG = -1,           /* an argument is out of range or NULL */
    CLSTATS_ERR_NOMEM = -2,         /* host memory allocation failed */
    CLSTATS_ERR_NO_DEVICE = -3,     /* no OpenCL platform or device at all */
    CLSTATS_ERR_DEVICE_SPEC = -4,   /* the device spec matches no device */
    CLSTATS_ERR_BUILD = -5,         /* a kernel failed to compile (build log in the message) */
    CLSTATS_ERR_OPENCL = -6,        /* an OpenCL call failed */
    CLSTATS_ERR_DEVICE_MEMORY = -7, /* the device ran out of memory or resources */
    CLSTATS_ERR_UNSUPPORTED = -8,   /* the device lacks a needed feature (e.g. fp64) */
    CLSTATS_ERR_NAN = -9,           /* NaN found where the caller asked for an error on NaN */
    CLSTATS_ERR_EMPTY = -10,        /* no valid value to take a statistic of */
    CLSTATS_ERR_CALLBACK = -11,     /* a callback of the caller's stopped the operation */
    CLSTATS_ERR_SINGULAR = -12,     /* a matrix is singular or not positive definite */
};

/* The element types of the library's arrays. */
enum clstats_dtype {
    CLSTATS_FLOAT32 = 0,
    CLSTATS_FLOAT64, /* needs a device with fp64, else CLSTATS_ERR_UNSUPPORTED */
    CLSTATS_UINT8,   /* masks only: non-zero marks an element missing, as NaN does */
};

/* An even count of valid values has two middle values a <= b: which one a median gives (the
 * selection's option and the filter's parameter, one rule for both). */
enum clstats_even {
    CLSTATS_EVEN_MEAN = 0, /* (a + b) / 2, rounded once to the data type (numpy's median) */
    CLSTATS_EVEN_LOWER,    /* a */
    CLSTATS_EVEN_UPPER,    /* b (scipy.ndimage.median_filter's choice: rank n // 2) */
};

/* An array the library reads or writes, in host memory or in a buffer of the context on the
 * device: the one descriptor every operation takes (the simpler entry points are wrappers of
 * it). Element (x, y) is element offset + y * stride + x. An input's elements are never written;
 * a host input may be changed again once the call has returned. */
struct clstats_array {
    void *host;    /* host memory; NULL when the array is in buffer */
    cl_mem buffer; /* a buffer of the context's cl_context, when host is NULL */
    size_t offset; /* elements before element (0, 0) in buffer (0 for host memory) */
    enum clstats_dtype dtype;
    size_t nx, ny; /* elements a row, and rows (1 for a vector) */
    size_t stride; /* elements from one row to the next; 0 means nx */
};

/* Words for a status code; never NULL. */
CLSTATS_API const char *clstats_strerror(int status);

/* The version of the library the program runs with ("0.1.0"); CLSTATS_VERSION is that of the
 * header it was compiled with. */
CLSTATS_API const char *clstats_version(void);

/* ---- Contexts and devices ---------------------------------------------------------------- */

typedef struct clstats_ctx clstats_ctx;

/* Creates a context on one OpenCL device. device_spec:
 *   NULL      - take $CLSTATS_DEVICE, else "auto"
 *   "auto"    - the first GPU of any platform, else the first CPU, else any device
 *   "gpu", "cpu", "accelerator" - the first device of that type
 *   "gpu:N", "cpu:N", "accelerator:N" - the N-th (0-based) device of that type, over all
 *               platforms: one GPU a process, "gpu:%local_rank%" in madfilter under mpirun
 *   "P:D"     - device D of platform P, both 0-based indices as clstats_list_devices() gives them
 *   other     - the first device whose platform name, device name or device version (as
 *               clstats_list_devices gives them) contains it, case-insensitive: "nvidia", "pocl"
 * On failure *ctx is set to NULL and a detail is in clstats_ctx_message(NULL). */
CLSTATS_API int clstats_ctx_create(clstats_ctx **ctx, const char *device_spec);
CLSTATS_API void clstats_ctx_destroy(clstats_ctx *ctx);

/* Detail of the last error on ctx ("" if none); with ctx NULL, of the last failed create. */
CLSTATS_API const char *clstats_ctx_message(const clstats_ctx *ctx);

/* "platform name / device name" of the context's device. */
CLSTATS_API const char *clstats_ctx_device_name(const clstats_ctx *ctx);

/* The context's OpenCL objects, for callers that keep data on the device. Owned by ctx. */
CLSTATS_API cl_context clstats_ctx_cl_context(const clstats_ctx *ctx);
CLSTATS_API cl_command_queue clstats_ctx_cl_queue(const clstats_ctx *ctx);
CLSTATS_API cl_device_id clstats_ctx_cl_device(const clstats_ctx *ctx);

/* Device time, in milliseconds, of the kernels run by the last call on ctx (from OpenCL
 * profiling events; transfers excluded). For benchmarks and progress estimates. */
CLSTATS_API double clstats_ctx_last_kernel_ms(const clstats_ctx *ctx);

/* Makes now what the first call that streams host arrays through a GPU makes (pinned host
 * buffers, copy threads, queues: tens of milliseconds), so that a program can do it on a thread of
 * its own while it reads its input. Nothing to do on CPU devices, which use host arrays in place.
 * Optional: results do not depend on it. */
CLSTATS_API int clstats_ctx_prepare_transfers(clstats_ctx *ctx);

/* Releases the device memory and pinned host memory the context keeps between calls (each
 * module's working buffers, grown to the largest call so far: PaSS's hold X twice and its Gram
 * cache, gigabytes at p = 40 000; the pinned transfer slots), keeping its device, queue and
 * compiled kernels. The next call allocates again what it needs, which costs milliseconds on
 * a GPU; results do not depend on it. No call may be running on ctx meanwhile. */
CLSTATS_API void clstats_ctx_release_buffers(clstats_ctx *ctx);

/* Gives the device back before the context is destroyed: its programs, buffers, pinned host
 * memory, copy threads, queues and OpenCL context are released, so that a GPU driver's teardown
 * (a tenth of a second on the H100) can run on a thread of the caller's while the caller goes on
 * with its files. No call may be running on ctx or start on it afterwards, except
 * clstats_ctx_destroy, which frees the rest; clstats_ctx_message and clstats_ctx_device_name
 * stay readable, and a library call that was returning when this began may still write the
 * message. */
CLSTATS_API void clstats_ctx_release_device(clstats_ctx *ctx);

/* What the context's device offers, read once when the context was made: for callers that size
 * their own work (madfilter's strips), so that they need not ask OpenCL. */
struct clstats_device_limits {
    uint64_t global_memory;  /* bytes */
    uint64_t max_allocation; /* the largest single buffer, bytes */
    uint64_t local_memory;   /* a work-group's, bytes */
    size_t max_work_group;
    unsigned compute_units;
    int has_fp64;
    int is_cpu;
};
CLSTATS_API int clstats_ctx_limits(const clstats_ctx *ctx, struct clstats_device_limits *out);

/* A log for detail the library otherwise keeps to itself (it never writes to stderr): every
 * kernel build's log, and the paths operations took. Called on the calling thread, one line
 * (or a build log) at a time; NULL turns it off. */
CLSTATS_API void clstats_ctx_set_log(clstats_ctx *ctx, void (*log)(void *user, const char *line),
                                     void *user);

/* Forces a tuning parameter of the context, for tests and benchmarks: a path ("filter.path",
 * "rank"), a work-group shape ("select.wg", "256"), or "build.options" (added to every kernel
 * build). value NULL restores the table's value for the device's class. The parameters and
 * their defaults per class of device are listed in src/core/tuning.c; 0 means "auto". Returns
 * CLSTATS_ERR_ARG for an unknown name or a value it does not take. Not needed for results: every
 * value gives the same exact results, only the speed differs. */
CLSTATS_API int clstats_ctx_tune(clstats_ctx *ctx, const char *name, const char *value);

struct clstats_device_info {
    int platform_index;
    int device_index;
    char platform_name[128];
    char device_name[128];
    char type[16]; /* "gpu", "cpu", "accelerator" or "other" */
    char version[64];
};

/* Fills up to max entries of out (out may be NULL with max 0) and sets *count to the number
 * of devices there are. Returns CLSTATS_ERR_NO_DEVICE when there is no platform. */
CLSTATS_API int clstats_list_devices(struct clstats_device_info *out, size_t max, size_t *count);

#ifdef __cplusplus
}
#endif
#endif
