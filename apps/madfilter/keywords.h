/* keywords.h - the keyword cards madfilter writes into every map HDU (MFWIDTH, MFFOOT, ...), so
 * that a program can read how a map was made; HISTORY says the same in words. */
#ifndef MADFILTER_KEYWORDS_H
#define MADFILTER_KEYWORDS_H

#include "fits_io.h"
#include "options.h"
#include "window.h"

#define MADFILTER_KEYS 11

/* The cards for this run: keys[] receives at most MADFILTER_KEYS, pointing into o, w, text (the
 * caller's, which must outlive keys' use) and device; returns how many. */
struct keyword_text {
    char foot[72], maps[64];
};
int keywords_make(const struct options *o, const struct window *w, const char *device,
                  struct keyword_text *text, struct fits_key *keys);

#endif
