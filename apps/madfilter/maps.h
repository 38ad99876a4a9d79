/* maps.h - the maps madfilter can write (MAD, MEDIAN, SIGMA, SNR, RESIDUAL): their names and which of the
 * library's maps each needs (the library computes them all: clstats_sigma_snr, clstats_residual). */
#ifndef MADFILTER_MAPS_H
#define MADFILTER_MAPS_H

#include <stdbool.h>
#include <stddef.h>

enum map_kind { MAP_MAD, MAP_MEDIAN, MAP_SIGMA, MAP_SNR, MAP_RESIDUAL, MAP_KINDS };

/* Lower-case option name ("mad") and upper-case EXTNAME ("MAD") of a map. */
const char *map_option_name(enum map_kind k);
const char *map_extname(enum map_kind k);
/* One-line description for the EXTNAME comment and the PNG text. */
const char *map_description(enum map_kind k);

/* Parses a comma-separated list such as "mad,median" (case-insensitive, no repeats) into
 * kinds[], at most MAP_KINDS entries. Returns the count, or -1 with a reason in err. */
int maps_parse(const char *list, enum map_kind *kinds, char *err, size_t errlen);

#endif
