/* keywords.c - madfilter's parameters as keyword cards: the window's extent and shape, origin,
 * even rule, boundary (and its constant), the maps in HDU order and the device. */
#include "keywords.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int keywords_make(const struct options *o, const struct window *w, const char *device,
                  struct keyword_text *text, struct fits_key *keys)
{
    int n = 0;
    /* MFFOOT names the shape as the command line did; a file by its name as given. */
    if (!o->footprint)
        snprintf(text->foot, sizeof text->foot, "%s",
                 o->width == o->height ? "square" : "rectangle");
    else
        snprintf(text->foot, sizeof text->foot, "%.68s",
                 o->footprint_file ? o->footprint_file : o->footprint);
    text->maps[0] = '\0';
    for (int i = 0; i < o->n_maps; i++) {
        strcat(text->maps, i ? "," : "");
        strcat(text->maps, map_extname(o->maps[i]));
    }
    const int fw = w->cells ? w->fw : o->width, fh = w->cells ? w->fh : o->height;
    keys[n++] = (struct fits_key){
        .name = "MFWIDTH", .type = 'I', .i = fw, .comment = "madfilter window width, pixels"};
    keys[n++] = (struct fits_key){
        .name = "MFHEIGHT", .type = 'I', .i = fh, .comment = "madfilter window height, pixels"};
    keys[n++] = (struct fits_key){
        .name = "MFFOOT", .type = 'S', .s = text->foot, .comment = "madfilter window shape"};
    keys[n++] = (struct fits_key){.name = "MFORIGX",
                                  .type = 'I',
                                  .i = o->origin_x,
                                  .comment = "madfilter window origin x (scipy's rule)"};
    keys[n++] = (struct fits_key){.name = "MFORIGY",
                                  .type = 'I',
                                  .i = o->origin_y,
                                  .comment = "madfilter window origin y (scipy's rule)"};
    keys[n++] = (struct fits_key){.name = "MFEVEN",
                                  .type = 'S',
                                  .s = even_names[o->even],
                                  .comment = "median of an even count: mean, lower, upper"};
    keys[n++] = (struct fits_key){.name = "MFBOUND",
                                  .type = 'S',
                                  .s = clstats_boundary_name(o->boundary),
                                  .comment = "madfilter boundary mode (scipy's names)"};
    /* The constant is part of the window only in constant mode; otherwise, and for NaN (missing,
     * which FITS cannot write), the card's value is undefined. */
    keys[n++] = (struct fits_key){.name = "MFCVAL",
                                  .type = 'F',
                                  .f = o->boundary == CLSTATS_BOUNDARY_CONSTANT ? o->cval : NAN,
                                  .comment = "constant beyond the edges, or none"};
    keys[n++] = (struct fits_key){
        .name = "MFMAPS", .type = 'S', .s = text->maps, .comment = "madfilter maps, in HDU order"};
    keys[n++] = (struct fits_key){
        .name = "MFDEVICE", .type = 'S', .s = device, .comment = "OpenCL device that filtered"};
    return n;
}
