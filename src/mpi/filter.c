/* filter.c - the median and MAD filter of an image whose rows are spread over MPI ranks in
 * bands (include/clstats/mpi.h): each rank gathers the band its windows read (its own rows and
 * the halo rows the others send it in one MPI_Alltoallv, the boundary rule applied against the
 * whole image) and filters it with the public band call, clstats_median_filter_band, the one
 * src/filter/rows.c filters strips with, so that its rows are the one-device filter's bits. */
#include "mpi_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The bands of all ranks: rank q holds rows first[q] .. first[q] + count[q] - 1. */
struct bands {
    uint64_t *first, *count;
    int size;
};

static int owner(const struct bands *b, long row)
{
    for (int q = 0; q < b->size; q++)
        if (b->count[q] && (uint64_t)row >= b->first[q] && (uint64_t)row < b->first[q] + b->count[q])
            return q;
    return -1;
}

/* Image row of band row j of rank q's band (-1: the constant, never read). */
static long source_row(const struct bands *b, int q, size_t j, size_t ny, int top,
                       enum clstats_boundary boundary)
{
    return clstats_boundary_index((long)(b->first[q] + j) - top, ny, boundary);
}

/* Rows of rank q's band (its own and its halo) that rank `from` holds, in band order; rows[]
 * receives their image rows when not NULL. */
static size_t rows_between(const struct bands *b, int q, int from, size_t ny, int height, int top,
                           enum clstats_boundary boundary, long *rows)
{
    size_t found = 0;
    if (!b->count[q]) return 0;
    const size_t band_rows = b->count[q] + (size_t)height - 1;
    for (size_t j = 0; j < band_rows; j++) {
        const long src = source_row(b, q, j, ny, top, boundary);
        if (src >= 0 && owner(b, src) == from) {
            if (rows) rows[found] = src;
            found++;
        }
    }
    return found;
}

/* Whether the bands follow each other in rank order from row 0 to row ny - 1. */
static bool bands_tile(const struct bands *b, size_t ny)
{
    uint64_t next = 0;
    for (int q = 0; q < b->size; q++) {
        if (!b->count[q]) continue;
        if (b->first[q] != next) return false;
        next += b->count[q];
    }
    return next == ny;
}

static int check_args(clstats_ctx *ctx, const float *band, size_t nx, size_t ny, size_t rows,
                      const struct clstats_filter_params *params, int *height, int *top)
{
    if (!ctx) return CLSTATS_ERR_ARG;
    if (!params || (rows && !band))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "band or params is NULL");
    if (nx == 0 || ny == 0) return clstats__fail(ctx, CLSTATS_ERR_EMPTY, "the image is empty");
    if (params->mask)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "the distributed filter takes no mask: missing pixels are NaN");
    if (clstats_filter_window(params, NULL, height, NULL, top) != CLSTATS_OK)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s", clstats_ctx_message(NULL));
    return CLSTATS_OK;
}

int clstats_mpi_median_filter_rows(clstats_ctx *ctx, MPI_Comm comm, const float *band, size_t nx,
                                   size_t ny, size_t row0, size_t rows,
                                   const struct clstats_filter_params *params, float *median_out,
                                   float *mad_out, struct clstats_mpi_traffic *traffic)
{
    int height = 1, top = 0;
    int status = check_args(ctx, band, nx, ny, rows, params, &height, &top);
    struct mpi_link link;
    uint64_t total_rows = 0;
    /* Every rank must name the same image width (below 2^26 here; wider ones go unchecked). */
    status = clstats__mpi_open(&link, ctx, comm, 0, 0, status, status == CLSTATS_OK ? rows : 0,
                               (uint32_t)(nx & ((1u << 26) - 1)), false, &total_rows, NULL);
    if (status != CLSTATS_OK) return clstats__mpi_close(&link, status, traffic);
    const int size = link.size, me = link.rank;
    const enum clstats_boundary boundary = params->boundary;
    struct bands b = {calloc((size_t)size, 8), calloc((size_t)size, 8), size};
    int *sendc = calloc((size_t)size, sizeof(int)), *recvc = calloc((size_t)size, sizeof(int));
    int *sendd = calloc((size_t)size, sizeof(int)), *recvd = calloc((size_t)size, sizeof(int));
    const size_t band_rows = rows ? rows + (size_t)height - 1 : 0;
    float *whole = malloc((band_rows ? band_rows : 1) * nx * sizeof *whole);
    long *list = malloc((band_rows ? band_rows : 1) * sizeof *list);
    float *sendbuf = NULL, *recvbuf = NULL;
    uint64_t mine[2] = {row0, rows};
    if (!b.first || !b.count || !sendc || !recvc || !sendd || !recvd || !whole || !list)
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for a band of %zu rows", rows);
    /* Every rank learns the bands (2 words a rank), then whether every rank is well. */
    uint64_t *all = malloc(2 * (size_t)size * sizeof *all);
    if (!all) status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the bands");
    status = clstats__mpi_check(&link, status);
    if (status != CLSTATS_OK) goto done;
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, comm);
    clstats__mpi_count(&link, sizeof mine);
    for (int q = 0; q < size; q++) {
        b.first[q] = all[2 * q];
        b.count[q] = all[2 * q + 1];
    }
    if (!bands_tile(&b, ny)) { /* the same on every rank: no message needed */
        status = clstats__fail(ctx, CLSTATS_ERR_ARG,
                               "the ranks' bands (%llu rows) do not cover the image's %zu rows "
                               "in rank order",
                               (unsigned long long)total_rows, ny);
        link.agreed = status;
        goto done;
    }
    /* What each rank sends to each: the rows of the other's band that it holds. */
    size_t sent = 0, received = 0;
    for (int q = 0; q < size; q++) {
        const size_t out = q == me ? 0 : rows_between(&b, q, me, ny, height, top, boundary, NULL);
        const size_t in = q == me ? 0 : rows_between(&b, me, q, ny, height, top, boundary, NULL);
        sendc[q] = (int)(out * nx);
        recvc[q] = (int)(in * nx);
        sendd[q] = (int)(sent * nx);
        recvd[q] = (int)(received * nx);
        sent += out;
        received += in;
    }
    if (sent * nx > INT_MAX || received * nx > INT_MAX)
        status = clstats__fail(ctx, CLSTATS_ERR_ARG, "the halos are more than one message holds");
    else if (!(sendbuf = malloc((sent ? sent : 1) * nx * sizeof *sendbuf)) ||
             !(recvbuf = malloc((received ? received : 1) * nx * sizeof *recvbuf)))
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the halos");
    for (int q = 0; q < size && status == CLSTATS_OK; q++) {
        if (q == me) continue;
        const size_t n = rows_between(&b, q, me, ny, height, top, boundary, list);
        for (size_t i = 0; i < n; i++)
            memcpy(sendbuf + (size_t)sendd[q] + i * nx, band + (size_t)(list[i] - (long)row0) * nx,
                   nx * sizeof *sendbuf);
    }
    status = clstats__mpi_check(&link, status);
    if (status != CLSTATS_OK) goto done;
    MPI_Alltoallv(sendbuf, sendc, sendd, MPI_FLOAT, recvbuf, recvc, recvd, MPI_FLOAT, comm);
    clstats__mpi_count(&link, sent * nx * sizeof(float));
    /* The band in window order: own rows copied, the others' from their messages in the order
     * they were sent, the constant's rows NaN (the filter never reads them). */
    size_t *taken = calloc((size_t)size, sizeof *taken);
    if (!taken) status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "no memory for the band");
    for (size_t j = 0; j < band_rows && status == CLSTATS_OK; j++) {
        const long src = source_row(&b, me, j, ny, top, boundary);
        float *dst = whole + j * nx;
        const int q = src >= 0 ? owner(&b, src) : -1;
        if (q < 0) {
            for (size_t i = 0; i < nx; i++)
                dst[i] = NAN;
        } else if (q == me) {
            memcpy(dst, band + (size_t)(src - (long)row0) * nx, nx * sizeof *dst);
        } else {
            memcpy(dst, recvbuf + (size_t)recvd[q] + taken[q] * nx, nx * sizeof *dst);
            taken[q]++;
        }
    }
    free(taken);
    if (status == CLSTATS_OK && rows) {
        struct clstats_filter_params p = *params;
        p.progress = NULL;
        status = clstats_median_filter_band(ctx, whole, nx, ny, nx, row0, rows, &p, median_out,
                                            mad_out);
    }

done:
    free(b.first);
    free(b.count);
    free(sendc);
    free(recvc);
    free(sendd);
    free(recvd);
    free(whole);
    free(list);
    free(all);
    free(sendbuf);
    free(recvbuf);
    return clstats__mpi_close(&link, status, traffic);
}
