/* cli.c - command-line parsing shared by madfilter and imstats. Hand-written rather than
 * getopt_long so that it builds the same on any C11 system. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program = "madfilter";

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see %s --help)\n", program);
    va_end(ap);
    return EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_RUNTIME;
}

bool cli_number(const char *text, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    /* ERANGE: an overflow is +-HUGE_VAL, an underflow a subnormal or 0; both are what the text
     * says as nearly as a double can, so they are kept and the caller decides. */
    if (end == text || *end != '\0') return false;
    *out = v;
    return true;
}

enum { COMMON_DEVICE = -1, COMMON_QUIET = -2, COMMON_HELP = -3, COMMON_VERSION = -4 };

static const struct cli_option common_specs[] = {
    {COMMON_DEVICE, "device", 'd', true},
    {COMMON_QUIET, "quiet", 'q', false},
    {COMMON_HELP, "help", 'h', false},
    {COMMON_VERSION, "version", 'V', false},
};

static int apply_common(struct cli_common *c, int id, const char *value)
{
    switch (id) {
    case COMMON_DEVICE:
        /* The library would take "" for auto; on a command line it is an unset variable. */
        if (value[0] == '\0')
            return cli_usage_error("--device needs a device spec (auto, gpu, cpu, P:D or a name)");
        c->device = value;
        break;
    case COMMON_QUIET:
        c->quiet = true;
        break;
    case COMMON_HELP:
        c->help = true;
        break;
    case COMMON_VERSION:
        c->version = true;
        break;
    }
    return EXIT_OK;
}

/* The spec an argument names, and where its attached value starts ("--width=11", "-w11"). */
static const struct cli_option *lookup(const struct cli_option *specs, size_t n, const char *arg,
                                       const char **attached)
{
    *attached = NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        for (size_t i = 0; i < n; i++) {
            if (strlen(specs[i].name) == len && strncmp(specs[i].name, name, len) == 0) {
                if (eq) *attached = eq + 1;
                return &specs[i];
            }
        }
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (specs[i].letter && specs[i].letter == arg[1]) {
            if (arg[2] != '\0') *attached = arg + 2;
            return &specs[i];
        }
    }
    return NULL;
}

int cli_parse(const char *prog, int argc, char **argv, const struct cli_option *specs,
              size_t n_specs, int (*apply)(void *user, int id, const char *value), void *user,
              struct cli_common *common, const char **names, int *n_names)
{
    program = prog;
    memset(common, 0, sizeof *common);
    *n_names = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        /* "-" alone is a file name (standard input), not an option. */
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            names[(*n_names)++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        const char *value;
        const struct cli_option *s = lookup(specs, n_specs, arg, &value);
        if (!s) s = lookup(common_specs, sizeof common_specs / sizeof common_specs[0], arg, &value);
        if (!s) return cli_usage_error("unknown option \"%s\"", arg);
        if (s->has_value && !value) {
            if (i + 1 >= argc) return cli_usage_error("option \"%s\" needs a value", arg);
            value = argv[++i];
        } else if (!s->has_value && value) {
            return cli_usage_error("option \"%s\" takes no value", arg);
        }
        int rc = s->id < 0 ? apply_common(common, s->id, value) : apply(user, s->id, value);
        if (rc != EXIT_OK) return rc;
    }
    return EXIT_OK;
}
