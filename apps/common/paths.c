/* paths.c - output names for several inputs, and telling whether two names are one file, so
 * that no output can overwrite an input or another output through a different spelling. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* Longest first, so "x.fits.gz" loses both parts. */
static const char *const extensions[] = {".fits.gz", ".fits.fz", ".fit.gz", ".fts.gz", ".fits",
                                         ".fit",     ".fts",     ".fz",     ".gz",     ".png"};

void path_stem(const char *input, char *stem, size_t len)
{
    const char *slash = strrchr(input, '/');
    const char *base = slash ? slash + 1 : input;
    size_t n = strcspn(base, "["); /* cfitsio's HDU or section selector */
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++) {
        size_t m = strlen(extensions[i]);
        if (n > m && strncasecmp(base + n - m, extensions[i], m) == 0) {
            n -= m;
            break;
        }
    }
    snprintf(stem, len, "%.*s", (int)n, base);
}

int path_expand(const char *pattern, const char *input, char *out, size_t len)
{
    char stem[1024];
    path_stem(input, stem, sizeof stem);
    if (stem[0] == '\0') return -1;
    size_t used = 0;
    for (const char *p = pattern; *p; p++) {
        const char *piece = p;
        size_t n = 1;
        if (p[0] == '{' && p[1] == '}') {
            piece = stem;
            n = strlen(stem);
            p++;
        }
        if (used + n >= len) return -1;
        memcpy(out + used, piece, n);
        used += n;
    }
    out[used] = '\0';
    return 0;
}

bool path_resolve(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!realpath(dir, real)) return false;
    return snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base) < (int)len;
}

bool path_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcasecmp(path + n - m, suffix) == 0;
}

bool path_is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool path_has_image_extension(const char *path)
{
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++)
        if (path_has_suffix(path, extensions[i])) return true;
    return false;
}

int path_make_directories(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* Each parent in turn: an existing one is fine, whoever made it. */
    for (char *p = path + 1;; p++) {
        const bool end = *p == '\0';
        if (*p == '/' || end) {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
            if (!path_is_directory(path)) {
                errno = ENOTDIR;
                return -1;
            }
            if (end) return 0;
            *p = '/';
        }
    }
}
