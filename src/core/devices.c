/* devices.c - the OpenCL devices there are: listing them, and choosing the one a device spec
 * names ("auto", "gpu", "P:D", part of a name or version), with what the context needs to know
 * of it. */
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
    /* "gpu:N": the N-th GPU (0-based) of all platforms, as a process per GPU names its own
     * (madfilter under mpirun: "gpu:%local_rank%"); likewise "cpu:N" and "accelerator:N". */
    static const char *const types[] = {"gpu", "cpu", "accelerator"};
    for (int t = 0; t < 3; t++) {
        const size_t len = strlen(types[t]);
        int k, used = 0;
        if (strncmp(spec, types[t], len) != 0 || spec[len] != ':' ||
            sscanf(spec + len + 1, "%d%n", &k, &used) != 1 || spec[len + 1 + used] != '\0' || k < 0)
            continue;
        for (int i = 0; i < n; i++)
            if (strcmp(found[i].info.type, types[t]) == 0 && k-- == 0) return i;
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

int clstats__find_device(const char *spec, struct clstats__device *out)
{
    struct found_device found[MAX_DEVICES];
    int n = 0;
    char skipped[512];
    int status = enumerate(found, MAX_DEVICES, &n, skipped, sizeof skipped);
    if (status != CLSTATS_OK) return status;
    const int pick = choose(found, n, spec);
    if (pick < 0) {
        /* Name what there is: a driver that failed to show its GPU is then plain to see. */
        char seen[512] = "";
        for (int i = 0, len = 0; i < n && len < (int)sizeof seen; i++)
            len += snprintf(seen + len, sizeof seen - (size_t)len, "%s%d:%d %s", i ? ", " : "",
                            found[i].info.platform_index, found[i].info.device_index,
                            found[i].info.device_name);
        return clstats__fail(NULL, CLSTATS_ERR_DEVICE_SPEC,
                             "no OpenCL device matches \"%s\" (devices: %s%s)", spec, seen,
                             skipped);
    }
    out->platform = found[pick].platform;
    out->device = found[pick].device;
    out->info = found[pick].info;
    out->nv_compute_major = nv_compute_major(out->device);
    cl_uint vendor = 0;
    clGetDeviceInfo(out->device, CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, NULL);
    out->device_class = strcmp(out->info.type, "cpu") == 0 ? CLASS_CPU
                        : vendor == 0x10de                 ? CLASS_NVIDIA
                        : vendor == 0x1002                 ? CLASS_AMD
                                                           : CLASS_GPU;
    return CLSTATS_OK;
}
