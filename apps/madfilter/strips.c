/* strips.c - madfilter's strip loop: each strip of rows is read with a halo of width/2 rows on
 * either side (the rows its windows reach, as clstats_median_filter_band wants them) and
 * filtered against the whole image's boundary, so the maps are the same bits as a one-piece run.
 * Each plane of a cube is an image of its own. */
#include "strips.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

size_t strips_height(const struct strip_budget *b, size_t nx, size_t ny, int width, char *err,
                     size_t errlen)
{
    const uint64_t row = (uint64_t)nx * sizeof(float), halo = (uint64_t)(width - 1) * row;
    /* A strip of k rows holds a band of k + width - 1 rows and `maps` maps of k rows. */
    const uint64_t host_row = row * (uint64_t)(1 + b->host_maps);
    const uint64_t device_row = row * (uint64_t)(1 + b->device_maps);
    if (b->host_bytes < halo + host_row) {
        snprintf(err, errlen,
                 "the memory cap of %llu MiB (--max-memory) cannot hold one strip of this "
                 "%zu-pixel-wide image with a %d-pixel window: it needs %llu MiB",
                 (unsigned long long)(b->host_bytes >> 20), nx, width,
                 (unsigned long long)((halo + host_row + (1 << 20) - 1) >> 20));
        return 0;
    }
    if (b->device_bytes < halo + device_row || b->device_max_alloc < halo + row) {
        snprintf(err, errlen,
                 "the device's memory (%llu MiB, buffers up to %llu MiB) cannot hold one strip "
                 "of this %zu-pixel-wide image with a %d-pixel window",
                 (unsigned long long)(b->device_bytes >> 20),
                 (unsigned long long)(b->device_max_alloc >> 20), nx, width);
        return 0;
    }
    uint64_t k = (b->host_bytes - halo) / host_row;
    uint64_t k_device = (b->device_bytes - halo) / device_row;
    uint64_t k_alloc = (b->device_max_alloc - halo) / row; /* the band is the largest buffer */
    if (k_device < k) k = k_device;
    if (k_alloc < k) k = k_alloc;
    return k < ny ? (size_t)k : ny;
}

/* Job state the library's progress callback needs to speak of the whole image. */
struct run_state {
    struct strip_job *job;
    size_t done_rows, total_rows, strip_rows;
};

static void on_band_progress(void *user, double fraction)
{
    struct run_state *st = user;
    if (st->job->progress)
        st->job->progress(st->job->user,
                          ((double)st->done_rows + fraction * (double)st->strip_rows) /
                              (double)st->total_rows);
}

/* The band of a strip: band row j is image row clstats_boundary_index(row0 + j - width/2), read
 * in runs of consecutive rows; the constant's rows are never read by the library. */
static int read_band(struct tool_image *img, size_t plane, size_t row0, size_t rows, int width,
                     enum clstats_boundary mode, float *band, char *err, size_t errlen)
{
    const size_t band_rows = rows + (size_t)width - 1, nx = img->nx;
    for (size_t j = 0; j < band_rows;) {
        long src = clstats_boundary_index((long)(row0 + j) - width / 2, img->ny, mode);
        size_t run = 1;
        while (j + run < band_rows && src >= 0 &&
               clstats_boundary_index((long)(row0 + j + run) - width / 2, img->ny, mode) ==
                   src + (long)run)
            run++;
        if (src < 0) {
            for (size_t i = 0; i < nx; i++)
                band[j * nx + i] = NAN;
        } else if (image_read_rows(img, plane, (size_t)src, run, band + j * nx, err, errlen) != 0) {
            return -1;
        }
        j += run;
    }
    return 0;
}

int strips_run(struct strip_job *job, char *err, size_t errlen)
{
    struct tool_image *img = job->image;
    const size_t nx = img->nx, half = (size_t)(job->params.width / 2);
    const size_t max_rows = job->height;
    int rc = -1;
    float *band = malloc((max_rows + 2 * half) * nx * sizeof *band);
    float *median = job->want_median ? malloc(max_rows * nx * sizeof *median) : NULL;
    float *mad = job->want_mad ? malloc(max_rows * nx * sizeof *mad) : NULL;
    struct run_state st = {.job = job, .total_rows = img->planes * img->ny};
    struct clstats_filter_params p = job->params;
    p.progress = job->progress ? on_band_progress : NULL;
    p.progress_user = &st;
    err[0] = '\0';
    job->library_status = CLSTATS_OK;
    job->n_nan = job->n_strips = 0;
    if (!band || (job->want_median && !median) || (job->want_mad && !mad)) {
        snprintf(err, errlen, "out of memory for strips of %zu rows", max_rows);
        goto fail;
    }

    for (size_t plane = 0; plane < img->planes; plane++) {
        for (size_t row0 = 0; row0 < img->ny;) {
            size_t rows = img->ny - row0 < job->height ? img->ny - row0 : job->height;
            if (read_band(img, plane, row0, rows, p.width, p.boundary, band, err, errlen) != 0)
                goto fail;
            st.strip_rows = rows;
            int status = clstats_median_filter_band(job->ctx, band, nx, img->ny, nx, row0, rows, &p,
                                                    median, mad);
            if (status == CLSTATS_ERR_DEVICE_MEMORY && job->height > 1) {
                /* The same strip again with half the rows; later strips keep the new height. */
                job->height = rows / 2 > 0 ? rows / 2 : 1;
                if (job->notice) {
                    char text[200];
                    snprintf(text, sizeof text,
                             "the device ran out of memory for strips of %zu rows; trying %zu",
                             rows, job->height);
                    job->notice(job->user, text);
                }
                continue;
            }
            if (status != CLSTATS_OK) {
                job->library_status = status;
                goto fail;
            }
            const float *own = band + half * nx; /* the strip's own rows follow the lower halo */
            for (size_t i = 0; i < rows * nx; i++)
                job->n_nan += isnan(own[i]) ? 1 : 0;
            const struct strip s = {plane, row0, rows, own, median, mad};
            if (job->sink(job->user, &s, err, errlen) != 0) goto fail;
            job->n_strips++;
            row0 += rows;
            st.done_rows += rows;
            if (job->progress) job->progress(job->user, (double)st.done_rows / st.total_rows);
        }
    }
    rc = 0;

fail:
    free(band);
    free(median);
    free(mad);
    return rc;
}
