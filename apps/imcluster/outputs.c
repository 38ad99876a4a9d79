/* outputs.c - imcluster's files. The FITS file is written with cfitsio directly (two small HDUs,
 * integers and a table of centres, which apps/common's strip writer of float maps does not
 * make); its cards come from the input header less the WCS of axes past the second (the bands
 * are not a sky axis of the label image). */
#include "outputs.h"

#include "clstats.h"
#include "fits_io.h"
#include "png_io.h"

#include <errno.h>
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* WCS keywords of axis 3 and beyond (CTYPE3, PC3_1, CD1_3, ...): they describe the band axis,
 * which the label image does not have. */
static bool is_band_axis_card(const char *card)
{
    static const char *const stems[] = {"CTYPE", "CRPIX", "CRVAL", "CDELT", "CUNIT", "CROTA",
                                        "CNAME", "CRDER", "CSYER"};
    for (size_t i = 0; i < sizeof stems / sizeof *stems; i++) {
        const size_t n = strlen(stems[i]);
        if (strncmp(card, stems[i], n) == 0 && card[n] >= '3' && card[n] <= '9') return true;
    }
    /* PCi_j, CDi_j (axes i and j), PVi_m, PSi_m (axis i) */
    const bool matrix = (card[0] == 'P' && card[1] == 'C') || (card[0] == 'C' && card[1] == 'D');
    if ((matrix || (card[0] == 'P' && (card[1] == 'V' || card[1] == 'S'))) && card[2] >= '1' &&
        card[2] <= '9' && card[3] == '_')
        return card[2] >= '3' || (matrix && card[4] >= '3' && card[4] <= '9');
    return strncmp(card, "WCSAXES", 7) == 0;
}

static bool skipped_card(const char *card)
{
    static const char *const keys[] = {"DATE    ", "BUNIT   ", "EXTNAME ", "BLANK   ", "DATAMIN ",
                                       "DATAMAX ", "CHECKSUM", "DATASUM "};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strncmp(card, keys[i], 8) == 0) return true;
    return strncmp(card, "KM", 2) == 0 && card[8] == '='; /* an earlier run's keywords */
}

static int fits_fail(int status, const char *what, char *err, size_t errlen)
{
    fits_io_describe(status, what, err, errlen);
    return -1;
}

int outputs_fits(const char *path, const struct tool_image *img, const struct pixel_table *t,
                 const struct cluster_result *r, char *err, size_t errlen)
{
    fitsfile *f = NULL;
    int status = 0;
    const size_t n = t->nx * t->ny;
    const bool wide = r->k > 32767;
    long axes[2] = {(long)t->nx, (long)t->ny};
    if (fits_create_file(&f, path, &status))
        return fits_fail(status, "cannot create the FITS output", err, errlen);
    fits_create_img(f, wide ? LONG_IMG : SHORT_IMG, 2, axes, &status);
    fits_write_key_str(f, "EXTNAME", "LABELS", "class of each pixel (k-means)", &status);
    /* -1 stays a value, not BLANK: readers then give integers, as scikit-learn's labels. */
    fits_write_key_lng(f, "KMNOCLAS", -1, "label of pixels without a value in every band",
                       &status);
    if (img)
        for (int i = 0; i < img->n_cards && !status; i++) {
            char card[81];
            memcpy(card, img->cards + 80 * (size_t)i, 80);
            card[80] = '\0';
            if (skipped_card(card) || (img->planes > 1 && is_band_axis_card(card))) continue;
            fits_write_record(f, card, &status);
        }
    fits_write_key_lng(f, "KMK", r->k, "k-means: classes", &status);
    fits_write_key_lng(f, "KMBANDS", t->bands, "k-means: bands (features) a pixel", &status);
    fits_write_key_log(f, "KMSTAND", t->standardised, "bands standardised before clustering",
                       &status);
    fits_write_key_str(f, "KMINIT", r->init, "k-means: initial centres", &status);
    fits_write_key_lng(f, "KMNINIT", r->n_init, "k-means: runs, the lowest inertia kept",
                       &status);
    fits_write_key_lng(f, "KMSEED", (long long)r->seed, "k-means: seed of the initialisation",
                       &status);
    fits_write_key_lng(f, "KMNITER", r->n_iter, "k-means: Lloyd iterations of the kept run",
                       &status);
    fits_write_key_dbl(f, "KMINERT", r->inertia, -17,
                       "k-means: sum of squared distances to the centres", &status);
    fits_write_key_lng(f, "KMNVALID", (long long)t->n_valid, "pixels with a class", &status);
    char line[200];
    snprintf(line, sizeof line, "imcluster (libclstats %s): k-means of %d band%s into %d classes",
             clstats_version(), t->bands, t->bands == 1 ? "" : "s", r->k);
    fits_write_history(f, line, &status);
    fits_write_date(f, &status);
    int32_t *buf = malloc(n * sizeof *buf);
    if (!buf) {
        fits_close_file(f, &status);
        snprintf(err, errlen, "no memory for the label image");
        return -1;
    }
    memcpy(buf, r->labels, n * sizeof *buf);
    fits_write_img(f, TINT, 1, (LONGLONG)n, buf, &status);
    free(buf);
    long caxes[2] = {t->bands, r->k};
    fits_create_img(f, DOUBLE_IMG, 2, caxes, &status);
    fits_write_key_str(f, "EXTNAME", "CENTRES", "class centres: one row a class, one column a band",
                       &status);
    for (int b = 0; b < t->bands && t->standardised; b++) {
        char key[16];
        snprintf(key, sizeof key, "KMMEAN%d", b + 1);
        fits_write_key_dbl(f, key, t->mean[b], -17, "band's mean taken off (standardised)",
                           &status);
        snprintf(key, sizeof key, "KMSCAL%d", b + 1);
        fits_write_key_dbl(f, key, t->scale[b], -17, "band's std it was divided by", &status);
    }
    for (int j = 0; j < r->k && !status; j++) {
        char key[16];
        snprintf(key, sizeof key, "KMCNT%d", j);
        if (j < 1000) fits_write_key_lng(f, key, (long long)r->counts[j], "pixels of class", &status);
    }
    fits_write_img(f, TDOUBLE, 1, (LONGLONG)r->k * t->bands, (void *)r->centres, &status);
    fits_write_chksum(f, &status);
    fits_movabs_hdu(f, 1, NULL, &status);
    fits_write_chksum(f, &status);
    int close_status = 0;
    fits_close_file(f, &close_status);
    if (status || close_status)
        return fits_fail(status ? status : close_status, "cannot write the FITS output", err,
                         errlen);
    return 0;
}

/* Distinct colours for classes that are not colours themselves: matplotlib's tab10, then hues
 * a golden angle apart. */
static void distinct_colour(int j, unsigned char rgb[3])
{
    static const unsigned char tab10[10][3] = {
        {31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},   {148, 103, 189},
        {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
    if (j < 10) {
        memcpy(rgb, tab10[j], 3);
        return;
    }
    const double h = fmod(j * 0.618033988749895, 1.0) * 6.0, v = j % 2 ? 0.75 : 0.95;
    const int sector = (int)h;
    const double f = h - sector, p = v * 0.3, q = v * (1 - 0.7 * f), u = v * (1 - 0.7 * (1 - f));
    const double c[6][3] = {{v, u, p}, {q, v, p}, {p, v, u}, {p, q, v}, {u, p, v}, {v, p, q}};
    for (int i = 0; i < 3; i++)
        rgb[i] = (unsigned char)lround(255 * c[sector % 6][i]);
}

int outputs_png(const char *path, const char *shown, const struct pixel_table *t,
                const struct cluster_result *r, bool centre_colours, char *err, size_t errlen)
{
    if (r->k > 255) {
        snprintf(err, errlen, "%s: a palette PNG holds at most 255 classes, not %d", shown, r->k);
        return -1;
    }
    unsigned char colours[255][3];
    const double full = t->png_depth == 16 ? 65535.0 : 255.0;
    for (int j = 0; j < r->k; j++) {
        if (!centre_colours) {
            distinct_colour(j, colours[j]);
            continue;
        }
        for (int c = 0; c < 3; c++) {
            const double v = r->centres[(size_t)j * t->bands + (t->bands == 3 ? c : 0)];
            const double level = 255.0 * v / full;
            colours[j][c] = (unsigned char)(level <= 0 ? 0 : level >= 255 ? 255 : lround(level));
        }
    }
    char text[200];
    snprintf(text, sizeof text, "imcluster: k-means classes 0..%d as palette indices; index %d "
                                "(transparent) = no class",
             r->k - 1, r->k);
    return png_io_write_palette(path, shown, r->labels, t->nx, t->ny,
                                (const unsigned char(*)[3])colours, r->k, text, err, errlen);
}

int outputs_centres_text(const char *path, const char *shown, const struct pixel_table *t,
                         const struct cluster_result *r, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "w");
    if (!fp) {
        snprintf(err, errlen, "cannot create %s: %s", shown, strerror(errno));
        return -1;
    }
    fprintf(fp, "# label pixels");
    for (int b = 0; b < t->bands; b++)
        fprintf(fp, " band%d", b + 1);
    fprintf(fp, "\n");
    for (int j = 0; j < r->k; j++) {
        fprintf(fp, "%d %zu", j, r->counts[j]);
        for (int b = 0; b < t->bands; b++)
            fprintf(fp, " %.17g", r->centres[(size_t)j * t->bands + b]);
        fprintf(fp, "\n");
    }
    errno = 0;
    if (ferror(fp) | fclose(fp)) {
        snprintf(err, errlen, "cannot write %s: %s", shown, errno ? strerror(errno) : "error");
        return -1;
    }
    return 0;
}
