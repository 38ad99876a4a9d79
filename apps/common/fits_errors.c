/* fits_errors.c - cfitsio's failures as one line: its status words and its most specific
 * message, so every FITS error madfilter prints reads the same way. */
#include "fits_io.h"

#include <fitsio.h>
#include <stdio.h>
#include <string.h>

void fits_io_describe(int status, const char *what, char *err, size_t errlen)
{
    char text[FLEN_STATUS] = "", detail[FLEN_ERRMSG] = "";
    fits_get_errstatus(status, text);
    fits_read_errmsg(detail);
    fits_clear_errmsg();
    size_t len = strlen(detail);
    while (len && (detail[len - 1] == ' ' || detail[len - 1] == '\n'))
        detail[--len] = '\0';
    if (detail[0] && strcmp(detail, text) != 0)
        snprintf(err, errlen, "%s: %s (%s)", what, text, detail);
    else
        snprintf(err, errlen, "%s: %s", what, text);
}
