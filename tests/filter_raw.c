/* filter_raw.c - the library's filter on raw arrays, for the Python comparisons against
 * scipy.ndimage (compare_windows_scipy.py): reads an image of float32 or float64 (and an
 * optional uint8 footprint) as raw native bytes, writes the median and MAD maps the same way.
 * usage: filter_raw f32|f64 NX NY W H OX OY MODE CVAL EVEN IN MED MAD [FOOTPRINT FW FH] */
#include "clstats.h"

#include <stdio.h>
#include <stdlib.h>

static void *slurp(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    void *buf = malloc(bytes ? bytes : 1);
    if (!f || !buf || fread(buf, 1, bytes, f) != bytes) {
        fprintf(stderr, "filter_raw: cannot read %zu bytes of %s\n", bytes, path);
        exit(2);
    }
    fclose(f);
    return buf;
}

static void spill(const char *path, const void *buf, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "filter_raw: cannot write %s\n", path);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc != 14 && argc != 17) {
        fprintf(stderr, "usage: filter_raw f32|f64 NX NY W H OX OY MODE CVAL EVEN IN MED MAD "
                        "[FOOTPRINT FW FH]\n");
        return 2;
    }
    const int f64 = argv[1][1] == '6';
    const size_t nx = strtoul(argv[2], NULL, 10), ny = strtoul(argv[3], NULL, 10);
    const size_t es = f64 ? 8 : 4, bytes = nx * ny * es;
    const double cval = strtod(argv[9], NULL);
    struct clstats_filter_params p = {.width = atoi(argv[4]),
                                      .height = atoi(argv[5]),
                                      .origin_x = atoi(argv[6]),
                                      .origin_y = atoi(argv[7]),
                                      .cval = (float)cval,
                                      .cval_f64 = &cval,
                                      .even = (enum clstats_even)atoi(argv[10])};
    if (clstats_boundary_from_name(argv[8], &p.boundary) != CLSTATS_OK) return 2;
    if (argc == 17) {
        p.footprint_width = atoi(argv[15]);
        p.footprint_height = atoi(argv[16]);
        p.footprint = slurp(argv[14], (size_t)p.footprint_width * (size_t)p.footprint_height);
    }
    void *img = slurp(argv[11], bytes), *med = malloc(bytes), *mad = malloc(bytes);
    clstats_ctx *ctx;
    int status = clstats_ctx_create(&ctx, NULL);
    if (status != CLSTATS_OK) {
        fprintf(stderr, "filter_raw: %s\n", clstats_ctx_message(NULL));
        return 1;
    }
    status = f64 ? clstats_median_filter_f64(ctx, img, nx, ny, nx, &p, med, mad)
                 : clstats_median_filter(ctx, img, nx, ny, nx, &p, med, mad);
    if (status != CLSTATS_OK) {
        fprintf(stderr, "filter_raw: %s: %s\n", clstats_strerror(status), clstats_ctx_message(ctx));
        return 1;
    }
    spill(argv[12], med, bytes);
    spill(argv[13], mad, bytes);
    clstats_ctx_destroy(ctx);
    free(img), free(med), free(mad), free((void *)p.footprint);
    return 0;
}
