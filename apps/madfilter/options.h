/* options.h - madfilter's command line: what it asks for, parsed into one struct, and the manual
 * that --help prints. */
#ifndef MADFILTER_OPTIONS_H
#define MADFILTER_OPTIONS_H

#include "cli.h"
#include "clstats.h"
#include "maps.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MADFILTER_DEFAULT_WIDTH 11
/* --max-memory's default: strips of a large image stay within it. */
#define MADFILTER_DEFAULT_MAX_MEMORY (1ULL << 30)

struct options {
    const char **inputs; /* as given: may carry cfitsio syntax such as "in.fits[SCI]" */
    int n_inputs;
    /* OUTPUT, or -o's file, directory or pattern ({} for the input's name), without a leading
     * '!' (that sets overwrite); NULL when only --png. */
    const char *output_target;
    bool output_option;     /* OUTPUT came from -o: a directory or pattern may stand there */
    const char *png_output; /* --png FILE (a pattern with several inputs), or NULL */
    uint64_t max_memory;    /* --max-memory, bytes */
    bool refuse_cubes;      /* --cube refuse */
    int width, height;      /* -w N or WxH; height is width for a square */
    int origin_x, origin_y; /* --origin X,Y (scipy's rule) */
    enum clstats_even even; /* --even */
    /* --footprint: circle:R or ring:RIN,ROUT (radii), or an image FILE (footprint_file) */
    const char *footprint; /* as given, NULL for the -w box */
    const char *footprint_file;
    double r_in, r_out; /* circle: r_in < 0 */
    const char *mask;   /* --mask FILE[EXT], NULL for none */
    bool valid_range;   /* --valid-range LO,HI */
    double valid_lo, valid_hi;
    enum clstats_boundary boundary;
    float cval;
    double cval64; /* --cval as given, for images filtered in float64 */
    bool cval_given;
    int bitpix;         /* --bitpix -32 or -64; 0: by the input */
    const char *device; /* NULL: $CLSTATS_DEVICE, else "auto" (the library decides) */
    enum map_kind maps[MAP_KINDS];
    int n_maps;
    bool overwrite, quiet;
    bool help, version, list_devices; /* actions that need no input file */
    const char **names;               /* every file name on the command line (owned) */
};

/* Parses argv. Returns EXIT_OK, or EXIT_USAGE after printing one "madfilter: ..." line. */
int options_parse(int argc, char **argv, struct options *o);

/* Frees what options_parse allocated; safe after a failed parse. */
void options_free(struct options *o);

void options_print_help(FILE *f);

/* --even's words, by enum clstats_even. */
extern const char *const even_names[3];

#endif
