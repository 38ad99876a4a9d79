/* outputs.h - the OUTPUT and --png names of every input, as given for one input or derived from
 * -o's directory or pattern ({} for the input's name), all checked before any input is read: a
 * PNG output holds one map, cfitsio must not read a name as a filter, no two outputs may be one
 * file however spelled. */
#ifndef MADFILTER_OUTPUTS_H
#define MADFILTER_OUTPUTS_H

#include "options.h"

#include <stdbool.h>

struct output_names {
    char **names;   /* two per input: OUTPUT, then the --png file; NULL for none */
    int count;      /* inputs */
    bool batch;     /* several inputs, or -o DIR / PATTERN: each message names its input */
    char *make_dir; /* -o's directory, to be made before the first output; NULL if none */
};

/* The file name of each input's maps under -o DIR: DIR/NAME_maps.fits, NAME the input's stem, so
 * that a map never takes the name of the image it was made from. */
#define OUTPUTS_DIR_PATTERN "%s/{}_maps.fits"

/* OUTPUT "-": the maps go to standard output as FITS. */
bool outputs_is_stdout(const char *name);

/* Names and checks every output. Returns EXIT_OK, or EXIT_USAGE after printing one line, or
 * EXIT_RUNTIME (an output is a file some input reads, or no memory) after one line. */
int outputs_plan(const struct options *o, struct output_names *n);

/* An input's OUTPUT and --png file; NULL for none. */
const char *outputs_file(const struct output_names *n, int input);
const char *outputs_png(const struct output_names *n, int input);

void outputs_free(struct output_names *n);

#endif
