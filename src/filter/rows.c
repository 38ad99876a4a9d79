/* rows.c - images larger than memory, filtered a strip of rows at a time: how tall a strip the
 * memories allow, reading each strip with the halo its windows reach (through the caller's
 * source), filtering it against the whole image's boundary, so that the maps are the same bits
 * as a one-piece run, and handing them to the caller's sink. A strip that runs the device out of
 * memory is halved and filtered again. Each plane of a cube is an image of its own. A float64
 * job takes the same path with 8-byte elements; a float32 job's arithmetic is untouched. */
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int count_maps(unsigned maps)
{
    return !!(maps & CLSTATS_MAP_MEDIAN) + !!(maps & CLSTATS_MAP_MAD) +
           !!(maps & CLSTATS_MAP_SIGMA) + !!(maps & CLSTATS_MAP_SNR) +
           !!(maps & CLSTATS_MAP_RESIDUAL);
}

/* What the filter itself must compute for the maps asked: SIGMA needs the MAD, SNR the median
 * and the MAD, RESIDUAL the median. */
static unsigned library_maps(unsigned maps)
{
    unsigned need = maps & (CLSTATS_MAP_MEDIAN | CLSTATS_MAP_MAD);
    if (maps & (CLSTATS_MAP_SIGMA | CLSTATS_MAP_SNR)) need |= CLSTATS_MAP_MAD;
    if (maps & (CLSTATS_MAP_SNR | CLSTATS_MAP_RESIDUAL)) need |= CLSTATS_MAP_MEDIAN;
    return need;
}

/* Maps held on the host a strip: the filter's, SIGMA for SNR too, and the ones asked. */
static unsigned host_maps(unsigned maps)
{
    unsigned held = library_maps(maps) | (maps & (CLSTATS_MAP_SIGMA | CLSTATS_MAP_RESIDUAL));
    if (maps & CLSTATS_MAP_SNR) held |= CLSTATS_MAP_SIGMA | CLSTATS_MAP_SNR;
    return held;
}

static int strip_height(clstats_ctx *ctx, size_t elem, size_t nx, size_t ny, int width,
                        unsigned maps, uint64_t host_bytes, size_t *height)
{
    if (!ctx || !height) return clstats__fail(ctx, CLSTATS_ERR_ARG, "NULL argument");
    *height = 0;
    if (nx == 0 || ny == 0 || width < 1 || !(maps & 31))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "no image, window or map to plan strips for");
    const uint64_t row = (uint64_t)nx * elem, halo = (uint64_t)(width - 1) * row;
    /* A strip of k rows holds a band of k + width - 1 rows and its maps of k rows. */
    const uint64_t host_row = row * (uint64_t)(1 + count_maps(host_maps(maps)));
    const uint64_t device_row = row * (uint64_t)(1 + count_maps(library_maps(maps)));
    /* Half the device: it may have other users, and the runtime needs room of its own. */
    const uint64_t device_bytes = ctx->global_mem / 2, device_max = ctx->max_alloc;
    if (host_bytes < halo + host_row)
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM,
                             "%llu MiB of host memory cannot hold one strip of this "
                             "%zu-pixel-wide image with a %d-pixel window: it needs %llu MiB",
                             (unsigned long long)(host_bytes >> 20), nx, width,
                             (unsigned long long)((halo + host_row + (1 << 20) - 1) >> 20));
    if (device_bytes < halo + device_row || device_max < halo + row)
        return clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                             "the device's memory (%llu MiB, buffers up to %llu MiB) cannot hold "
                             "one strip of this %zu-pixel-wide image with a %d-pixel window",
                             (unsigned long long)(device_bytes >> 20),
                             (unsigned long long)(device_max >> 20), nx, width);
    uint64_t k = (host_bytes - halo) / host_row;
    const uint64_t k_device = (device_bytes - halo) / device_row;
    const uint64_t k_alloc = (device_max - halo) / row; /* the band is the largest buffer */
    if (k_device < k) k = k_device;
    if (k_alloc < k) k = k_alloc;
    *height = k < ny ? (size_t)k : ny;
    return CLSTATS_OK;
}

int clstats_filter_strip_height(clstats_ctx *ctx, size_t nx, size_t ny, int width, unsigned maps,
                                uint64_t host_bytes, size_t *height)
{
    return strip_height(ctx, sizeof(float), nx, ny, width, maps, host_bytes, height);
}

int clstats_filter_strip_height_f64(clstats_ctx *ctx, size_t nx, size_t ny, int width,
                                    unsigned maps, uint64_t host_bytes, size_t *height)
{
    return strip_height(ctx, sizeof(double), nx, ny, width, maps, host_bytes, height);
}

/* NaNs among n values: x != x, a loop the compiler vectorises (isnan in a branch it did not). */
static size_t count_nan(const float *x, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += x[i] != x[i];
    return count;
}

static size_t count_nan_f64(const double *x, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += x[i] != x[i];
    return count;
}

/* A strip's NaNs counted on a thread of their own while the device filters it (the count is a
 * pass over the strip in memory, tens of milliseconds for a large one, which the filter's wait
 * for the device would otherwise follow). */
struct nan_count {
    const void *x;
    size_t n;
    bool f64;
    size_t count;
    pthread_t thread;
    bool started;
};

static void *count_nans(void *arg)
{
    struct nan_count *c = arg;
    c->count = c->f64 ? count_nan_f64(c->x, c->n) : count_nan(c->x, c->n);
    return NULL;
}

static void nan_count_start(struct nan_count *c, const void *x, size_t n, bool f64)
{
    *c = (struct nan_count){.x = x, .n = n, .f64 = f64};
    c->started = pthread_create(&c->thread, NULL, count_nans, c) == 0;
}

/* The count, once the thread is done; counted here where no thread could be made. */
static size_t nan_count_finish(struct nan_count *c)
{
    if (c->started)
        pthread_join(c->thread, NULL);
    else
        count_nans(c);
    c->started = false;
    return c->count;
}

/* What the library's progress callback needs to speak of the whole image. */
struct run_state {
    struct clstats_rows_job *job;
    size_t done_rows, total_rows, strip_rows;
};

static void on_band_progress(void *user, double fraction)
{
    struct run_state *st = user;
    const struct clstats_filter_params *p = &st->job->params;
    p->progress(p->progress_user, ((double)st->done_rows + fraction * (double)st->strip_rows) /
                                      (double)st->total_rows);
}

/* The band of a strip: band row j is image row clstats_boundary_index(row0 + j - top), read
 * in runs of consecutive rows; the constant's rows are never read by the filter. */
static int read_band(struct clstats_rows_job *job, size_t plane, size_t row0, size_t rows,
                     int height, int top, void *band)
{
    float *band32 = band;
    double *band64 = band;
    const size_t band_rows = rows + (size_t)height - 1, nx = job->nx;
    for (size_t j = 0; j < band_rows;) {
        const long src =
            clstats_boundary_index((long)(row0 + j) - top, job->ny, job->params.boundary);
        size_t run = 1;
        while (j + run < band_rows && src >= 0 &&
               clstats_boundary_index((long)(row0 + j + run) - top, job->ny,
                                      job->params.boundary) == src + (long)run)
            run++;
        if (src < 0) {
            for (size_t i = 0; i < nx; i++) {
                if (job->read_f64)
                    band64[j * nx + i] = NAN;
                else
                    band32[j * nx + i] = NAN;
            }
        } else if (job->read_f64
                       ? job->read_f64(job->user, plane, (size_t)src, run, band64 + j * nx)
                       : job->read(job->user, plane, (size_t)src, run, band32 + j * nx)) {
            return -1;
        }
        j += run;
    }
    return 0;
}

int clstats_filter_rows(clstats_ctx *ctx, struct clstats_rows_job *job)
{
    if (!ctx || !job || !(job->read || job->read_f64) || !job->write)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "a job needs a context, a reader and a writer");
    if (job->nx == 0 || job->ny == 0 || job->planes == 0 || job->height == 0 || !(job->maps & 31))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the job has no image, strip height or map");
    int height, top;
    int status = clstats_filter_window(&job->params, NULL, &height, NULL, &top);
    if (status != CLSTATS_OK) return clstats__fail(ctx, status, "%s", clstats_ctx_message(NULL));
    if (job->params.mask)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "a job's reader gives NaN for missing pixels: it takes no mask");
    const size_t row_end = job->row_end ? job->row_end : job->ny;
    if (job->row_begin > row_end || row_end > job->ny)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "rows %zu .. %zu are not rows of a %zu-row image", job->row_begin,
                             row_end, job->ny);
    const size_t nx = job->nx, max_rows = job->height;
    const bool f64 = job->read_f64 != NULL;
    const size_t elem = f64 ? sizeof(double) : sizeof(float);
    const unsigned lib = library_maps(job->maps), held = host_maps(job->maps);
    size_t band_elems, strip_elems;
    if (!clstats__array_bytes(max_rows + (size_t)height - 1, nx, &band_elems) ||
        !clstats__array_bytes(max_rows, nx, &strip_elems) ||
        !clstats__array_bytes(band_elems, elem, &band_elems))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "strips of %zu rows are larger than any array",
                             max_rows);
    char *band = malloc(band_elems);
    void *maps[5] = {NULL, NULL, NULL, NULL, NULL}; /* median, MAD, SIGMA, SNR, RESIDUAL */
    status = band ? CLSTATS_OK : CLSTATS_ERR_NOMEM;
    for (int m = 0; m < 5 && status == CLSTATS_OK; m++)
        if ((held & (1u << m)) && !(maps[m] = malloc(strip_elems * elem)))
            status = CLSTATS_ERR_NOMEM;
    if (status != CLSTATS_OK) {
        status =
            clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory for strips of %zu rows", max_rows);
        goto done;
    }
    struct run_state st = {.job = job, .total_rows = job->planes * (row_end - job->row_begin)};
    struct clstats_filter_params p = job->params;
    p.progress = job->params.progress ? on_band_progress : NULL;
    p.progress_user = &st;
    job->n_nan = job->n_strips = 0;

    for (size_t plane = 0; plane < job->planes; plane++) {
        for (size_t row0 = job->row_begin; row0 < row_end;) {
            const size_t rows = row_end - row0 < job->height ? row_end - row0 : job->height;
            if (read_band(job, plane, row0, rows, height, top, band) != 0) {
                status = clstats__fail(ctx, CLSTATS_ERR_CALLBACK, "the reader stopped");
                goto done;
            }
            st.strip_rows = rows;
            void *median = lib & CLSTATS_MAP_MEDIAN ? maps[0] : NULL,
                 *mad = lib & CLSTATS_MAP_MAD ? maps[1] : NULL;
            /* the strip's own rows follow the halo */
            const void *own = band + (size_t)top * nx * elem;
            const size_t n = rows * nx;
            struct nan_count nans;
            nan_count_start(&nans, own, n, f64);
            status = f64 ? clstats_median_filter_band_f64(ctx, (const double *)band, nx, job->ny,
                                                          nx, row0, rows, &p, median, mad)
                         : clstats_median_filter_band(ctx, (const float *)band, nx, job->ny, nx,
                                                      row0, rows, &p, median, mad);
            const size_t strip_nans = nan_count_finish(&nans);
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
            if (status != CLSTATS_OK) goto done;
            job->n_nan += strip_nans;
            void *snr = job->maps & CLSTATS_MAP_SNR ? maps[3] : NULL;
            if ((held & CLSTATS_MAP_SIGMA) && f64)
                clstats_sigma_snr_f64(own, maps[0], maps[1], n, maps[2], snr);
            else if (held & CLSTATS_MAP_SIGMA)
                clstats_sigma_snr(own, maps[0], maps[1], n, maps[2], snr);
            if ((held & CLSTATS_MAP_RESIDUAL) && f64)
                clstats_residual_f64(own, maps[0], n, maps[4]);
            else if (held & CLSTATS_MAP_RESIDUAL)
                clstats_residual(own, maps[0], n, maps[4]);
            const void *asked[5];
            for (int m = 0; m < 5; m++)
                asked[m] = job->maps & (1u << m) ? maps[m] : NULL;
            struct clstats_strip strip = {.plane = plane, .row0 = row0, .rows = rows};
            if (f64) {
                strip.pixels_f64 = own;
                strip.median_f64 = asked[0], strip.mad_f64 = asked[1];
                strip.sigma_f64 = asked[2], strip.snr_f64 = asked[3];
                strip.residual_f64 = asked[4];
            } else {
                strip.pixels = own;
                strip.median = asked[0], strip.mad = asked[1];
                strip.sigma = asked[2], strip.snr = asked[3];
                strip.residual = asked[4];
            }
            if (job->write(job->user, &strip) != 0) {
                status = clstats__fail(ctx, CLSTATS_ERR_CALLBACK, "the writer stopped");
                goto done;
            }
            job->n_strips++;
            row0 += rows;
            st.done_rows += rows;
            if (job->params.progress)
                job->params.progress(job->params.progress_user,
                                     (double)st.done_rows / (double)st.total_rows);
        }
    }

done:
    free(band);
    for (int m = 0; m < 5; m++)
        free(maps[m]);
    return status;
}
