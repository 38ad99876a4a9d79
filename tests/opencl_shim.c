/* opencl_shim.c - an LD_PRELOAD layer between libclstats and the OpenCL loader for madfilter's
 * end-to-end tests: it plays the devices CI does not have (one with little memory, one whose
 * allocations fail, one lost mid-run) through the real error paths, and counts what was built;
 * it also plays a damaged compressed tile on which cfitsio crashes.
 * Each behaviour is asked for in the environment:
 *   OPENCL_SHIM_DEVICE_MEMORY=N  the device reports N bytes of memory and of largest buffer
 *   OPENCL_SHIM_MAX_BUFFER=N     a buffer of more than N bytes fails, as on a full device
 *                                (CL_MEM_OBJECT_ALLOCATION_FAILURE)
 *   OPENCL_SHIM_LOSE_AFTER=N     kernel launches after the Nth fail with CL_OUT_OF_RESOURCES, as
 *                                on a GPU that fell off the bus
 *   OPENCL_SHIM_RAISE=SIG        the first kernel launch raises signal SIG in the process, as a
 *                                hangup or Ctrl-C in the middle of a run would
 *   OPENCL_SHIM_CRASH_UNPACKING=S  the tile reader's child process dies of SIGSEGV unpacking a
 *                                file whose name contains S, as on a garbled Rice tile under
 *                                ASan: in cfitsio's pixel read (ffgpxvll) where cfitsio is a
 *                                shared library, else as the child sends the unpacked rows (a
 *                                cfitsio linked statically cannot be interposed)
 *   OPENCL_SHIM_REPORT=FILE      "contexts C builds B launches L" is kept in FILE
 *   OPENCL_SHIM_CONTEXT_DELAY_MS=N  making a context takes N ms more, as a GPU driver's does */
#define _GNU_SOURCE
#include <CL/cl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int contexts, builds;
static long launches;

/* The counts so far, rewritten at every count: madfilter ends with _exit, which runs no
 * destructor. */
__attribute__((constructor)) static void report(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const char *path = getenv("OPENCL_SHIM_REPORT");
    if (!path) return;
    pthread_mutex_lock(&lock);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "contexts %d builds %d launches %ld\n", contexts, builds, launches);
        fclose(f);
    }
    pthread_mutex_unlock(&lock);
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "opencl_shim: no %s below the shim\n", name);
        abort();
    }
    return f;
}

/* The number in an environment variable, or -1 when it is not set. */
static long long setting(const char *name)
{
    const char *v = getenv(name);
    return v ? strtoll(v, NULL, 0) : -1;
}

cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void *value,
                       size_t *size_ret)
{
    static cl_int (*next)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    if (!next) next = real("clGetDeviceInfo");
    cl_int err = next(device, param, size, value, size_ret);
    long long memory = setting("OPENCL_SHIM_DEVICE_MEMORY");
    if (err == CL_SUCCESS && memory > 0 && value && size >= sizeof(cl_ulong) &&
        (param == CL_DEVICE_GLOBAL_MEM_SIZE || param == CL_DEVICE_MAX_MEM_ALLOC_SIZE))
        *(cl_ulong *)value = (cl_ulong)memory;
    return err;
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                      cl_int *err)
{
    static cl_mem (*next)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
    if (!next) next = real("clCreateBuffer");
    long long limit = setting("OPENCL_SHIM_MAX_BUFFER");
    if (limit >= 0 && (long long)size > limit) {
        if (err) *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    return next(context, flags, size, host_ptr, err);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                              const size_t *offset, const size_t *global, const size_t *local,
                              cl_uint n_wait, const cl_event *wait, cl_event *event)
{
    static cl_int (*next)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                          const size_t *, cl_uint, const cl_event *, cl_event *);
    if (!next) next = real("clEnqueueNDRangeKernel");
    long long lose_after = setting("OPENCL_SHIM_LOSE_AFTER");
    if (lose_after >= 0 && launches >= lose_after) return CL_OUT_OF_RESOURCES;
    long long sig = setting("OPENCL_SHIM_RAISE");
    if (sig > 0 && launches == 0) raise((int)sig);
    launches++;
    report();
    return next(queue, kernel, dims, offset, global, local, n_wait, wait, event);
}

cl_context clCreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *devs,
                           void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                           void *user, cl_int *err)
{
    static cl_context (*next)(const cl_context_properties *, cl_uint, const cl_device_id *,
                              void(CL_CALLBACK *)(const char *, const void *, size_t, void *),
                              void *, cl_int *);
    if (!next) next = real("clCreateContext");
    const long long delay = setting("OPENCL_SHIM_CONTEXT_DELAY_MS");
    if (delay > 0) {
        const struct timespec ts = {delay / 1000, delay % 1000 * 1000000};
        nanosleep(&ts, NULL);
    }
    contexts++;
    report();
    return next(props, n, devs, notify, user, err);
}

cl_int clBuildProgram(cl_program program, cl_uint n, const cl_device_id *devs, const char *options,
                      void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    static cl_int (*next)(cl_program, cl_uint, const cl_device_id *, const char *,
                          void(CL_CALLBACK *)(cl_program, void *), void *);
    if (!next) next = real("clBuildProgram");
    builds++;
    report();
    return next(program, n, devs, options, notify, user);
}

/* The process the shim was loaded into: madfilter itself, not a child it forked. */
static pid_t shim_pid;

__attribute__((constructor)) static void note_pid(void)
{
    shim_pid = getpid();
}

/* Whether the process has a file open whose path contains `part`. */
static int has_open_file(const char *part)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
        char link[300], target[1200];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        const ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        found = strstr(target, part) != NULL;
    }
    closedir(d);
    return found;
}

/* The tile reader's child sends its rows over a socket (apps/common/fits_reader.c): a child of
 * madfilter's that sends while the damaged file is open is that reader, done unpacking it. */
ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    static ssize_t (*next)(int, const void *, size_t, int);
    if (!next) next = real("send");
    const char *crash = getenv("OPENCL_SHIM_CRASH_UNPACKING");
    if (crash && getpid() != shim_pid && has_open_file(crash)) raise(SIGSEGV);
    return next(fd, buf, len, flags);
}

/* cfitsio's fits_read_pixll, long names off: the shim needs no cfitsio headers. */
int ffgpxvll(void *fptr, int datatype, long long *firstpix, long long nelem, void *nulval,
             void *array, int *anynul, int *status)
{
    static int (*next)(void *, int, long long *, long long, void *, void *, int *, int *);
    static int (*file_name)(void *, char *, int *);
    if (!next) next = real("ffgpxvll");
    if (!file_name) file_name = real("ffflnm");
    const char *crash = getenv("OPENCL_SHIM_CRASH_UNPACKING");
    char name[1200] = "";
    int ignored = 0;
    if (crash && file_name(fptr, name, &ignored) == 0 && strstr(name, crash)) raise(SIGSEGV);
    return next(fptr, datatype, firstpix, nelem, nulval, array, anynul, status);
}
