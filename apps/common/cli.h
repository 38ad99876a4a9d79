/* cli.h - the command-line parsing madfilter and imstats share, so both accept the same forms:
 * "-w 11", "-w11", "--width 11", "--width=11", options before or after the file names, "--" to
 * end them, and "-" alone as a file name (standard input). */
#ifndef MADFILTER_CLI_H
#define MADFILTER_CLI_H

#include <stdbool.h>
#include <stddef.h>

struct cli_option {
    int id;           /* the program's own code for the option */
    const char *name; /* long form, without "--" */
    char letter;      /* short form, 0 for none */
    bool has_value;
};

/* The options every program takes, parsed by cli_parse itself: -d/--device SPEC, -q/--quiet,
 * -h/--help, -V/--version. */
struct cli_common {
    const char *device; /* NULL: $CLSTATS_DEVICE, else "auto" (the library decides) */
    bool quiet, help, version;
};

/* Exit codes, as both programs' --help documents them. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Parses argv: the common options into *common, apply(user, id, value) for each of the
 * program's own in order (value NULL for a flag), and the other arguments into names (room for
 * argc entries), their count into *n_names. Returns EXIT_OK, apply's first failure, or
 * EXIT_USAGE after one "PROGRAM: ..." line. */
int cli_parse(const char *program, int argc, char **argv, const struct cli_option *specs,
              size_t n_specs, int (*apply)(void *user, int id, const char *value), void *user,
              struct cli_common *common, const char **names, int *n_names);

/* Prints "PROGRAM: <message> (see PROGRAM --help)" and returns EXIT_USAGE; PROGRAM is the one
 * cli_parse was last given. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "PROGRAM: <message>" and returns EXIT_RUNTIME: a file, the data or the device failed. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A number as strtod reads it ("nan" and "inf" included), the whole text. */
bool cli_number(const char *text, double *out);

#endif
