/* program_cache.c - compiled kernel programs kept on disk, so that a second run on the same
 * device does not pay the OpenCL C compile again (seconds on PoCL, a fraction on GPUs).
 *
 * A program is stored under a hash of everything that shapes it: library version, platform,
 * device, device and driver versions, build options and the full source text. The file holds
 * that whole description too, and a load compares it, so a hash collision can never hand back
 * the wrong program. Files are written to a temporary name and renamed, so a reader never sees
 * half of one. Any failure (no directory, a stale or foreign file, a driver refusing the binary)
 * only means compiling from source as before.
 *
 * Where: $CLSTATS_CACHE_DIR, else $XDG_CACHE_HOME/clstats, else $HOME/.cache/clstats;
 * CLSTATS_CACHE_DIR=off turns the cache off. */
#include "internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "clstats-program-cache 1\n"

/* The cache directory (created if missing), or false when caching is off or impossible. */
static bool cache_dir(char *out, size_t size)
{
    const char *dir = getenv("CLSTATS_CACHE_DIR");
    if (dir && (strcmp(dir, "off") == 0 || dir[0] == '\0')) return false;
    if (dir) {
        snprintf(out, size, "%s", dir);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            snprintf(out, size, "%s/clstats", xdg);
        else if (home && home[0])
            snprintf(out, size, "%s/.cache/clstats", home);
        else
            return false;
    }
    /* mkdir -p, one level at a time. */
    for (char *p = out + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(out, 0755) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return mkdir(out, 0755) == 0 || errno == EEXIST;
}

static uint64_t fnv1a(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

static void append_info(char **text, size_t *len, const char *what)
{
    size_t n = strlen(what);
    char *grown = realloc(*text, *len + n + 2);
    if (!grown) return;
    memcpy(grown + *len, what, n);
    grown[*len + n] = '\n';
    grown[*len + n + 1] = '\0';
    *text = grown;
    *len += n + 1;
}

static void append_device_info(cl_device_id d, cl_device_info what, char **text, size_t *len)
{
    char value[512] = "";
    size_t got = 0;
    if (clGetDeviceInfo(d, what, sizeof value - 1, value, &got) != CL_SUCCESS) value[0] = '\0';
    append_info(text, len, value);
}

/* Everything that shapes the program, as one text; NULL when out of memory. */
static char *describe(clstats_ctx *ctx, const char *const sources[2], const char *options,
                      size_t *len)
{
    char *text = NULL;
    *len = 0;
    append_info(&text, len, MAGIC CLSTATS_VERSION);
    append_info(&text, len, ctx->device_name);
    append_device_info(ctx->device, CL_DEVICE_VERSION, &text, len);
    append_device_info(ctx->device, CL_DRIVER_VERSION, &text, len);
    append_info(&text, len, options);
    append_info(&text, len, sources[0]);
    append_info(&text, len, sources[1]);
    return text;
}

static void cache_path(const char *dir, const char *text, size_t len, char *out, size_t size)
{
    const uint64_t a = fnv1a(text, len, 0xcbf29ce484222325ULL);
    const uint64_t b = fnv1a(text, len, 0x84222325cbf29ce4ULL);
    snprintf(out, size, "%s/%016llx%016llx.bin", dir, (unsigned long long)a, (unsigned long long)b);
}

cl_program clstats__cache_load(clstats_ctx *ctx, const char *const sources[2], const char *options)
{
    char dir[1024], path[1100];
    size_t len;
    if (!cache_dir(dir, sizeof dir)) return NULL;
    char *text = describe(ctx, sources, options, &len);
    if (!text) return NULL;
    cache_path(dir, text, len, path, sizeof path);

    cl_program program = NULL;
    unsigned char *binary = NULL;
    char *stored = NULL;
    FILE *f = fopen(path, "rb");
    uint64_t header[2];
    if (!f || fread(header, sizeof header, 1, f) != 1 || header[0] != len || header[1] > (1u << 30))
        goto done;
    stored = malloc(len);
    binary = malloc(header[1] ? header[1] : 1);
    if (!stored || !binary || fread(stored, 1, len, f) != len || memcmp(stored, text, len) != 0 ||
        fread(binary, 1, header[1], f) != header[1])
        goto done;
    size_t size = (size_t)header[1];
    cl_int status, err;
    const unsigned char *bin = binary;
    program = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &size, &bin, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS ||
        clBuildProgram(program, 1, &ctx->device, options, NULL, NULL) != CL_SUCCESS) {
        if (program) clReleaseProgram(program);
        program = NULL;
    }
done:
    if (f) fclose(f);
    free(stored);
    free(binary);
    free(text);
    return program;
}

void clstats__cache_store(clstats_ctx *ctx, const char *const sources[2], const char *options,
                          cl_program program)
{
    char dir[1024], path[1100], tmp[1200];
    size_t len, size = 0;
    if (!cache_dir(dir, sizeof dir)) return;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) !=
            CL_SUCCESS ||
        size == 0)
        return;
    unsigned char *binary = malloc(size);
    char *text = describe(ctx, sources, options, &len);
    if (!binary || !text ||
        clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) != CL_SUCCESS)
        goto done;
    cache_path(dir, text, len, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path);
    const int fd = mkstemp(tmp);
    if (fd < 0) goto done;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        remove(tmp);
        goto done;
    }
    const uint64_t header[2] = {len, size};
    const bool ok = fwrite(header, sizeof header, 1, f) == 1 && fwrite(text, 1, len, f) == len &&
                    fwrite(binary, 1, size, f) == size;
    if (fclose(f) == 0 && ok)
        rename(tmp, path);
    else
        remove(tmp);
done:
    free(binary);
    free(text);
}
