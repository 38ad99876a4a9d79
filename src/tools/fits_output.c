/* fits_output.c - madfilter's FITS output: one float32 HDU per map, each carrying the input's
 * header, created first and then filled a run of rows at a time as strips finish, so no whole
 * map need be in memory. What is known only at the end (a count of missing pixels, checksums)
 * goes into room reserved in each header, so the data never has to move. */
#include "fits_io.h"

#include <fitsio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fits_output {
    fitsfile *f;
    int n_maps, n_late;
    size_t nx;
};

/* Cards CHECKSUM and DATASUM need, beside the late HISTORY lines. */
#define CHECKSUM_CARDS 2

static void write_header(fitsfile *f, const struct tool_image *img, const struct fits_map *m,
                         const char *const *history, int n_history, int n_late, int *status)
{
    long naxes[3] = {(long)img->nx, (long)img->ny, (long)img->planes};
    char card[81];
    fits_create_img(f, FLOAT_IMG, img->cube ? 3 : 2, naxes, status);
    fits_write_key_str(f, "EXTNAME", (char *)m->extname, (char *)m->comment, status);
    for (int i = 0; i < img->n_cards && *status == 0; i++) {
        memcpy(card, img->cards + 80 * (size_t)i, 80);
        card[80] = '\0';
        if (m->unitless && strncmp(card, "BUNIT   ", 8) == 0) continue;
        fits_write_record(f, card, status);
    }
    for (int i = 0; i < n_history; i++)
        fits_write_history(f, (char *)history[i], status);
    fits_write_date(f, status);
    fits_set_hdrsize(f, n_late + CHECKSUM_CARDS, status);
}

int fits_output_create(struct fits_output **out, const char *path, const struct tool_image *img,
                       const struct fits_map *maps, int n_maps, const char *const *history,
                       int n_history, int n_late, char *err, size_t errlen)
{
    int status = 0;
    *out = calloc(1, sizeof **out);
    if (!*out) {
        snprintf(err, errlen, "out of memory creating the output");
        return -1;
    }
    (*out)->n_maps = n_maps;
    (*out)->n_late = n_late;
    (*out)->nx = img->nx;
    if (fits_create_file(&(*out)->f, path, &status)) {
        fits_io_describe(status, "cannot create the output", err, errlen);
        free(*out);
        *out = NULL;
        return -1;
    }
    for (int i = 0; i < n_maps && status == 0; i++)
        write_header((*out)->f, img, &maps[i], history, n_history, n_late, &status);
    if (status) {
        fits_io_describe(status, "cannot write the output", err, errlen);
        fits_output_abort(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int fits_output_write_rows(struct fits_output *out, int map, size_t plane, size_t row0, size_t rows,
                           const float *data, char *err, size_t errlen)
{
    int status = 0;
    LONGLONG first[3] = {1, (LONGLONG)row0 + 1, (LONGLONG)plane + 1};
    fits_movabs_hdu(out->f, map + 1, NULL, &status);
    fits_write_pixll(out->f, TFLOAT, first, (LONGLONG)(rows * out->nx), (float *)data, &status);
    if (status) {
        fits_io_describe(status, "cannot write the output", err, errlen);
        return -1;
    }
    return 0;
}

int fits_output_finish(struct fits_output *out, const char *const *late, int n_late, char *err,
                       size_t errlen)
{
    int status = 0;
    if (n_late > out->n_late) n_late = out->n_late;
    for (int i = 0; i < out->n_maps && status == 0; i++) {
        fits_movabs_hdu(out->f, i + 1, NULL, &status);
        for (int k = 0; k < n_late; k++)
            fits_write_history(out->f, (char *)late[k], &status);
        fits_write_chksum(out->f, &status);
    }
    if (status) {
        fits_io_describe(status, "cannot write the output", err, errlen);
        fits_output_abort(out);
        return -1;
    }
    /* Closing flushes the buffers (and gzips a .gz file): a failure here is a failed write. */
    fits_close_file(out->f, &status);
    free(out);
    if (status) {
        fits_io_describe(status, "cannot finish writing the output", err, errlen);
        return -1;
    }
    return 0;
}

void fits_output_abort(struct fits_output *out)
{
    if (!out) return;
    int status = 0;
    fits_close_file(out->f, &status);
    fits_clear_errmsg();
    free(out);
}
