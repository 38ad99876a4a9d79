/* maps.c - names of madfilter's output maps, and parsing --maps. */
#include "maps.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const option_names[MAP_KINDS] = {"mad", "median", "sigma", "snr", "residual"};
static const char *const extnames[MAP_KINDS] = {"MAD", "MEDIAN", "SIGMA", "SNR", "RESIDUAL"};
static const char *const descriptions[MAP_KINDS] = {
    "median absolute deviation in the window",
    "median of the window",
    "robust sigma: 1.482602218505602 * MAD",
    "(pixel - median) / sigma",
    "pixel - median",
};

const char *map_option_name(enum map_kind k)
{
    return option_names[k];
}

const char *map_extname(enum map_kind k)
{
    return extnames[k];
}

const char *map_description(enum map_kind k)
{
    return descriptions[k];
}

static bool equal_nocase(const char *a, size_t alen, const char *b)
{
    if (strlen(b) != alen) return false;
    for (size_t i = 0; i < alen; i++)
        if (tolower((unsigned char)a[i]) != b[i]) return false;
    return true;
}

int maps_parse(const char *list, enum map_kind *kinds, char *err, size_t errlen)
{
    int n = 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int found = -1;
        for (int k = 0; k < MAP_KINDS; k++)
            if (equal_nocase(p, len, option_names[k])) found = k;
        if (found < 0) {
            snprintf(err, errlen,
                     "unknown map \"%.*s\" in --maps (choose from mad, median, sigma, snr, residual)",
                     (int)len, p);
            return -1;
        }
        for (int i = 0; i < n; i++) {
            if (kinds[i] == (enum map_kind)found) {
                snprintf(err, errlen, "map \"%s\" is listed twice in --maps", option_names[found]);
                return -1;
            }
        }
        kinds[n++] = (enum map_kind)found;
        if (!end) break;
        p = end + 1;
    }
    return n;
}
