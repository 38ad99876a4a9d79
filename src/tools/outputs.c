/* outputs.c - where each input's maps go: OUTPUT and the --png file as given for one input, or
 * derived from -o's directory or pattern for several, and every name checked before the first
 * input is read, so that a batch never stops halfway for a name. Names take the memory their
 * length needs: a night's thousands of inputs are fine. */
#include "outputs.h"
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for one derived file name while it is made. */
#define NAME_LEN (PATH_MAX + 256)

static int out_of_memory(void)
{
    fprintf(stderr, "madfilter: out of memory for the output names\n");
    return EXIT_RUNTIME;
}

/* Output and --png names of every input: as given for one input, else from -o's directory or
 * pattern and --png's pattern. */
static int name_outputs(const struct options *o, struct output_names *n)
{
    const char *target = o->output_target;
    /* Only with -o: in the two-argument form a "{}" is part of a file's name. */
    bool pattern = target && o->output_option && strstr(target, "{}"),
         dir = target && !pattern && o->output_option && path_is_directory(target);
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
    if (dir) snprintf(dir_pattern, sizeof dir_pattern, "%s/{}.fits", target);
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
            if (!(n->names[2 * i + k] = strdup(name))) return out_of_memory();
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

/* Checks on names alone, for every output at once. */
static int check_names(const struct options *o, const struct output_names *n)
{
    for (int i = 0; i < 2 * n->count; i++) {
        const char *name = n->names[i];
        if (!name) continue;
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
    }
    return check_collisions(o, n);
}

int outputs_plan(const struct options *o, struct output_names *n)
{
    memset(n, 0, sizeof *n);
    int rc = name_outputs(o, n);
    return rc == EXIT_OK ? check_names(o, n) : rc;
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
    n->names = NULL;
}
