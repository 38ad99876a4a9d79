/* maps.h - the maps madfilter can write (MAD, MEDIAN, SIGMA, SNR): their names, and the host-side
 * arithmetic that derives SIGMA and SNR from the library's median and MAD. */
#ifndef MADFILTER_MAPS_H
#define MADFILTER_MAPS_H

#include <stdbool.h>
#include <stddef.h>

enum map_kind { MAP_MAD, MAP_MEDIAN, MAP_SIGMA, MAP_SNR, MAP_KINDS };

/* MAD of a normal distribution times this is its standard deviation (1 / Phi^-1(3/4)). */
#define MAD_TO_SIGMA 1.4826f

/* Lower-case option name ("mad") and upper-case EXTNAME ("MAD") of a map. */
const char *map_option_name(enum map_kind k);
const char *map_extname(enum map_kind k);
/* One-line description for the EXTNAME comment and the PNG text. */
const char *map_description(enum map_kind k);

/* Parses a comma-separated list such as "mad,median" (case-insensitive, no repeats) into
 * kinds[], at most MAP_KINDS entries. Returns the count, or -1 with a reason in err. */
int maps_parse(const char *list, enum map_kind *kinds, char *err, size_t errlen);

/* Whether any of the chosen maps needs the library's median / MAD. */
bool maps_need_median(const enum map_kind *kinds, int n);
bool maps_need_mad(const enum map_kind *kinds, int n);

/* out[i] = MAD_TO_SIGMA * mad[i], in float32. */
void maps_sigma(const float *mad, size_t n, float *out);
/* out[i] = (x[i] - median[i]) / sigma[i] in float32; NaN where sigma is 0 or any input is NaN. */
void maps_snr(const float *x, const float *median, const float *sigma, size_t n, float *out);

#endif
