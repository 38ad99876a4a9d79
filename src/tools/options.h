/* options.h - madfilter's command line: what it asks for, parsed into one struct, and the manual
 * that --help prints. */
#ifndef MADFILTER_OPTIONS_H
#define MADFILTER_OPTIONS_H

#include "clstats.h"
#include "maps.h"

#include <stdbool.h>
#include <stdio.h>

#define MADFILTER_DEFAULT_WIDTH 11

/* Exit codes, as --help documents them. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

struct options {
    const char *input;      /* as given: may carry cfitsio syntax such as "in.fits[SCI]" */
    const char *output;     /* without a leading '!' (that sets overwrite); NULL when only --png */
    const char *png_output; /* --png FILE, or NULL */
    int width;
    enum clstats_boundary boundary;
    float cval;
    bool cval_given;
    const char *device; /* NULL: $CLSTATS_DEVICE, else "auto" (the library decides) */
    enum map_kind maps[MAP_KINDS];
    int n_maps;
    bool overwrite, quiet;
    bool help, version, list_devices; /* actions that need no input file */
};

/* Parses argv. Returns EXIT_OK, or EXIT_USAGE after printing one "madfilter: ..." line. */
int options_parse(int argc, char **argv, struct options *o);

void options_print_help(FILE *f);

#endif
