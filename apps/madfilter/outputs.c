/* outputs.c - where each input's maps go: OUTPUT and the --png file as given for one input, or
 * derived from -o's directory or pattern for several, and every name checked before the first
 * input is read, so that a batch never stops halfway for a name and no output replaces an input.
 * Names take the memory their length needs: a night's thousands of inputs are fine. */
#include "outputs.h"
#include "fits_io.h"
#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Room for one derived file name while it is made. */
#define NAME_LEN (PATH_MAX + 256)

static int out_of_memory(void)
{
    fprintf(stderr, "madfilter: out of memory for the output names\n");
    return EXIT_RUNTIME;
}

bool outputs_is_stdout(const char *name)
{
    return name && strcmp(name, "-") == 0;
}

/* Whether -o's target names a directory: one that exists, a name ending in '/', or, for several
 * inputs, a name that is no file yet and has no image extension (so that a mistyped
 * "-o plain.fits" stays an error rather than a directory of that name). */
static bool names_directory(const struct options *o, const char *target)
{
    struct stat st;
    if (path_is_directory(target)) return true;
    if (target[0] && target[strlen(target) - 1] == '/') return true;
    return o->n_inputs > 1 && !outputs_is_stdout(target) && !path_has_image_extension(target) &&
           lstat(target, &st) != 0;
}

/* Output and --png names of every input: as given for one input, else from -o's directory or
 * pattern and --png's pattern. */
static int name_outputs(const struct options *o, struct output_names *n)
{
    const char *target = o->output_target;
    /* Only with -o: in the two-argument form a "{}" is part of a file's name. */
    bool pattern = target && o->output_option && strstr(target, "{}"),
         dir = target && !pattern && o->output_option && names_directory(o, target);
    if (outputs_is_stdout(target) && o->n_inputs > 1) {
        fprintf(stderr, "madfilter: standard output (-) takes the maps of one input, not %d\n",
                o->n_inputs);
        return EXIT_USAGE;
    }
    n->batch = o->n_inputs > 1 || pattern || dir;
    if (o->n_inputs > 1 && target && !pattern && !dir) {
        fprintf(stderr,
                "madfilter: with several inputs -o needs a directory or a pattern with {}, not "
                "\"%s\" (see madfilter --help)\n",
                target);
        return EXIT_USAGE;
    }
    n->names = calloc((size_t)o->n_inputs * 2, sizeof *n->names);
    if (!n->names) return out_of_memory();
    n->count = o->n_inputs;
    char dir_pattern[NAME_LEN], name[NAME_LEN];
    if (dir) {
        size_t len = strlen(target);
        while (len > 1 && target[len - 1] == '/')
            len--;
        if (!(n->make_dir = strndup(target, len))) return out_of_memory();
        snprintf(dir_pattern, sizeof dir_pattern, OUTPUTS_DIR_PATTERN, n->make_dir);
    }
    for (int i = 0; i < o->n_inputs; i++) {
        const char *given[2] = {dir ? dir_pattern : target, o->png_output};
        for (int k = 0; k < 2; k++) {
            if (!given[k]) continue;
            if (!n->batch || !strstr(given[k], "{}"))
                snprintf(name, sizeof name, "%s", given[k]);
            else if (path_expand(given[k], o->inputs[i], name, sizeof name) != 0) {
                fprintf(stderr, "madfilter: cannot name an output for input \"%s\"\n",
                        o->inputs[i]);
                return EXIT_USAGE;
            }
            /* Outputs are plain files: cfitsio's file:// prefix is accepted, other schemes not. */
            const char *file = strncmp(name, "file://", 7) == 0 ? name + 7 : name;
            if (strstr(file, "://")) {
                fprintf(stderr, "madfilter: output \"%s\" is a URL; outputs are files\n", name);
                return EXIT_USAGE;
            }
            if (!(n->names[2 * i + k] = strdup(file))) return out_of_memory();
        }
    }
    return EXIT_OK;
}

struct resolved {
    char *name;
    int index; /* into output_names.names: 2 * input, + 1 for the --png file */
};

static int by_name(const void *a, const void *b)
{
    const struct resolved *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->index - y->index;
}

/* No two outputs may be one file, however spelled: names are resolved once, then sorted. */
static int check_collisions(const struct options *o, const struct output_names *n)
{
    struct resolved *r = calloc((size_t)n->count * 2 + 1, sizeof *r);
    int m = 0, rc = r ? EXIT_OK : out_of_memory();
    char full[NAME_LEN];
    for (int i = 0; rc == EXIT_OK && i < 2 * n->count; i++) {
        if (!n->names[i]) continue;
        if (!path_resolve(n->names[i], full, sizeof full))
            snprintf(full, sizeof full, "%s", n->names[i]);
        r[m].index = i;
        if (!(r[m++].name = strdup(full))) rc = out_of_memory();
    }
    if (rc == EXIT_OK) qsort(r, (size_t)m, sizeof *r, by_name);
    for (int i = 1; rc == EXIT_OK && i < m; i++) {
        if (strcmp(r[i - 1].name, r[i].name) != 0) continue;
        int a = r[i - 1].index, b = r[i].index;
        if (a / 2 == b / 2)
            fprintf(stderr, "madfilter: --png names the same file as OUTPUT\n");
        else
            fprintf(stderr, "madfilter: inputs \"%s\" and \"%s\" would both write %s\n",
                    o->inputs[a / 2], o->inputs[b / 2], n->names[b]);
        rc = EXIT_USAGE;
    }
    for (int i = 0; r && i < m; i++)
        free(r[i].name);
    free(r);
    return rc;
}

/* Names cfitsio would have compressed on writing; madfilter writes FITS, or gzip for .gz. */
static const char *unwritten_compression(const char *name)
{
    static const char *const suffixes[] = {".fz", ".Z", ".bz2", ".zip"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (path_has_suffix(name, suffixes[i])) return suffixes[i];
    return NULL;
}

/* The longest file name the output's directory takes, or -1 when it cannot say. */
static long name_max(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    return pathconf(dir, _PC_NAME_MAX);
}

/* Checks on names alone, for every output at once. */
static int check_names(const struct options *o, const struct output_names *n)
{
    for (int i = 0; i < 2 * n->count; i++) {
        const char *name = n->names[i];
        if (!name || outputs_is_stdout(name)) continue;
        bool png = i % 2 == 1 || path_has_suffix(name, ".png");
        if (i % 2 == 0 && png && o->n_maps > 1) {
            fprintf(stderr,
                    "madfilter: a PNG output holds one map, not %d (write FITS, or add "
                    "--png FILE for a preview of the first map)\n",
                    o->n_maps);
            return EXIT_USAGE;
        }
        /* cfitsio would read brackets and parentheses as filters or templates. */
        if (!png && strpbrk(name, "[]()")) {
            fprintf(stderr,
                    "madfilter: output name \"%s\" contains brackets or parentheses, "
                    "which cfitsio would read as a filter\n",
                    name);
            return EXIT_USAGE;
        }
        const char *packed = png ? NULL : unwritten_compression(name);
        if (packed) {
            fprintf(stderr,
                    "madfilter: output \"%s\": madfilter writes FITS (gzip-compressed when the "
                    "name ends in .gz), not %s files; write .fits and compress it afterwards%s\n",
                    name, packed, strcmp(packed, ".fz") == 0 ? " (fpack)" : "");
            return EXIT_USAGE;
        }
        const char *slash = strrchr(name, '/');
        const size_t base = strlen(slash ? slash + 1 : name);
        const long most = name_max(name);
        if (most > 0 && base > (size_t)most) {
            fprintf(stderr,
                    "madfilter: output name \"%s\" is too long: its last part has %zu bytes, "
                    "and the file system takes %ld\n",
                    name, base, most);
            return EXIT_USAGE;
        }
    }
    return check_collisions(o, n);
}

/* The file an input is read from (the one cfitsio opens, through file:// or the .gz it falls
 * back to), when it exists. */
static bool input_file(const char *input, struct stat *st)
{
    char path[PATH_MAX + 16];
    if (stat(input, st) == 0 && S_ISREG(st->st_mode)) return true;
    return fits_io_disk_file(input, path, sizeof path) && stat(path, st) == 0 &&
           S_ISREG(st->st_mode);
}

/* No output may be a file that an input of the run reads: renaming the output into place would
 * destroy the input, before it is read when it comes later in a batch. Checked on the files
 * themselves, so every spelling (links, "..", file://, a .gz that cfitsio opens for a missing
 * name) is caught. */
static int check_inputs(const struct options *o, const struct output_names *n)
{
    struct stat *in = calloc((size_t)o->n_inputs, sizeof *in);
    bool *have = calloc((size_t)o->n_inputs, sizeof *have);
    int rc = in && have ? EXIT_OK : out_of_memory();
    for (int i = 0; rc == EXIT_OK && i < o->n_inputs; i++)
        have[i] = input_file(o->inputs[i], &in[i]);
    for (int k = 0; rc == EXIT_OK && k < 2 * n->count; k++) {
        struct stat st;
        if (!n->names[k] || outputs_is_stdout(n->names[k]) || stat(n->names[k], &st) != 0) continue;
        for (int i = 0; i < o->n_inputs; i++) {
            if (!have[i] || in[i].st_dev != st.st_dev || in[i].st_ino != st.st_ino) continue;
            if (i == k / 2)
                fprintf(stderr, "madfilter: %s%soutput %s is the input file; choose another name\n",
                        n->batch ? o->inputs[i] : "", n->batch ? ": " : "", n->names[k]);
            else
                fprintf(stderr,
                        "madfilter: output %s of input %s is input %s of this run; nothing was "
                        "written: choose output names that are not inputs\n",
                        n->names[k], o->inputs[k / 2], o->inputs[i]);
            rc = EXIT_RUNTIME;
            break;
        }
    }
    free(in);
    free(have);
    return rc;
}

int outputs_plan(const struct options *o, struct output_names *n)
{
    memset(n, 0, sizeof *n);
    int rc = name_outputs(o, n);
    if (rc == EXIT_OK) rc = check_names(o, n);
    if (rc == EXIT_OK) rc = check_inputs(o, n);
    /* Made last, once every name is known to be good: a refused run leaves no directory. */
    if (rc == EXIT_OK && n->make_dir && path_make_directories(n->make_dir) != 0) {
        fprintf(stderr, "madfilter: cannot make the output directory %s: %s\n", n->make_dir,
                strerror(errno));
        rc = EXIT_RUNTIME;
    }
    return rc;
}

const char *outputs_file(const struct output_names *n, int input)
{
    return n->names[2 * input];
}

const char *outputs_png(const struct output_names *n, int input)
{
    return n->names[2 * input + 1];
}

void outputs_free(struct output_names *n)
{
    for (int i = 0; n->names && i < 2 * n->count; i++)
        free(n->names[i]);
    free(n->names);
    free(n->make_dir);
    n->names = NULL;
    n->make_dir = NULL;
}
