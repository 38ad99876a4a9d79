/* select.c - k-th values, medians and percentiles of an array spread over MPI ranks
 * (include/clstats/mpi.h): each rank runs src/select/'s whole-array selection on its own part
 * through select_internal.h (struct select_parts: its radix passes hand over their histograms),
 * and this file sums the histograms over the ranks through the call's link (link.c). The
 * results are the one-device call's because the runs are the one-device run's, with every
 * histogram the whole array's. */
#include "../select/select_internal.h"
#include "mpi_internal.h"

#include <math.h>

enum what { KTH, MEDIAN, PERCENTILES, QUANTILES };

struct request {
    enum what what;
    uint64_t k;
    const double *q;
    size_t nq;
};

int clstats__mpi_check_part(clstats_ctx *ctx, const struct clstats_array *part,
                            const struct clstats_select_options *opts)
{
    if (part->dtype != CLSTATS_FLOAT32 && part->dtype != CLSTATS_FLOAT64)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the data must be float32 or float64");
    if (part->nx && part->ny && !part->host && !part->buffer)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the part has neither host memory nor a buffer");
    if (opts && ((unsigned)opts->nan_policy > CLSTATS_NAN_ERROR ||
                 (unsigned)opts->even > CLSTATS_EVEN_UPPER))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "unknown selection option value");
    if (part->dtype == CLSTATS_FLOAT64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "%s has no fp64: float64 data cannot be used there",
                             ctx->device_name);
    return CLSTATS_OK;
}

/* A rank's own checks, before any message: what would make the one-device call refuse. */
static int check_part(clstats_ctx *ctx, const struct clstats_array *part,
                      const struct clstats_select_options *opts, const struct request *rq,
                      const double *out)
{
    if (!ctx) return CLSTATS_ERR_ARG;
    if (!part || !out || (rq->nq && !rq->q))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "part, q or out is NULL");
    return clstats__mpi_check_part(ctx, part, opts);
}

static int distributed(clstats_ctx *ctx, MPI_Comm comm, const struct clstats_array *part,
                       const struct request *rq, const struct clstats_select_options *opts,
                       double *out, struct clstats_mpi_traffic *traffic)
{
    for (size_t i = 0; out && i < (rq->what >= PERCENTILES ? rq->nq : 1); i++)
        out[i] = NAN;
    int status = check_part(ctx, part, opts, rq, out);
    const uint64_t n = status == CLSTATS_OK ? (uint64_t)part->nx * part->ny : 0;
    /* A message holds the NaNs and one histogram (2^select.bits bins, the same on every rank),
     * and where it is the sample bracket's, that bracket's counts. */
    const long bits = ctx ? clstats__tuned(ctx, P_SELECT_BITS) : 11;
    const int b = bits >= 4 && bits <= 16 ? (int)bits : 11;
    const size_t words = 1 + ((size_t)1 << b) + SELECT_PARTS_EXTRA;
    /* Every rank must ask for the same method: the method decides the messages. */
    const enum clstats_select_method m = opts ? opts->method : CLSTATS_SELECT_AUTO;
    const bool plane = m == CLSTATS_SELECT_CUTTING_PLANE;
    const uint32_t same = ((uint32_t)(m & 3) << 5 | (uint32_t)b) << 1 |
                          (part && part->dtype == CLSTATS_FLOAT64);
    struct mpi_link link;
    uint64_t n_total = 0;
    bool all_gpus = false;
    status = clstats__mpi_open(&link, ctx, comm, words, plane ? SELECT_PLANE_WORDS : 0, status, n,
                               same, ctx && !ctx->is_cpu, &n_total, &all_gpus);
    if (status == CLSTATS_OK && link.size == 1 && n_total) {
        /* One rank holds the whole array: the one-device call itself, with no histogram read
         * back and written again around a message that would only copy it (the link still
         * opens and closes, as on any number of ranks). An empty array takes the parts' path,
         * which answers it as the ranks do (the one-device call refuses it outright). */
        if (rq->what == KTH)
            status = clstats_select_kth_array(ctx, part, rq->k, opts, out);
        else if (rq->what == MEDIAN)
            status = clstats_median_array(ctx, part, opts, out);
        else if (rq->what == PERCENTILES)
            status = clstats_percentiles_array(ctx, part, rq->q, rq->nq, opts, out);
        else
            status = clstats_quantiles_array(ctx, part, rq->q, rq->nq, opts, out);
    } else if (status == CLSTATS_OK) {
        /* The sample's bracket first (one pass over the data instead of two) where asked, or
         * where the one-device call would take it: from 2^21 values, every rank on a GPU (on
         * CPU devices a pass costs little next to the bracket's). Radix alone otherwise. */
        const bool bracket = link.size <= (1 << b) &&
                             (m == CLSTATS_SELECT_SAMPLE ||
                              (m == CLSTATS_SELECT_AUTO && all_gpus &&
                               n_total >= ((uint64_t)1 << 21)));
        const struct select_parts parts = {clstats__mpi_sum_counts, &link, n_total, bracket,
                                           link.rank, link.size, plane, clstats__mpi_gather};
        if (rq->what == KTH)
            status = clstats__select_kth_parts(ctx, part, rq->k, opts, &parts, out);
        else if (rq->what == MEDIAN)
            status = clstats__median_parts(ctx, part, opts, &parts, out);
        else
            status = clstats__percentiles_parts(ctx, part, rq->q, rq->nq,
                                                rq->what == PERCENTILES ? 100.0 : 1.0, opts,
                                                &parts, out);
    }
    status = clstats__mpi_close(&link, status, traffic);
    if (status != CLSTATS_OK)
        for (size_t i = 0; out && i < (rq->what >= PERCENTILES ? rq->nq : 1); i++)
            out[i] = NAN;
    return status;
}

int clstats_mpi_select_kth(clstats_ctx *ctx, MPI_Comm comm, const struct clstats_array *part,
                           uint64_t k, const struct clstats_select_options *opts, double *out,
                           struct clstats_mpi_traffic *traffic)
{
    const struct request rq = {.what = KTH, .k = k};
    return distributed(ctx, comm, part, &rq, opts, out, traffic);
}

int clstats_mpi_median(clstats_ctx *ctx, MPI_Comm comm, const struct clstats_array *part,
                       const struct clstats_select_options *opts, double *out,
                       struct clstats_mpi_traffic *traffic)
{
    const struct request rq = {.what = MEDIAN};
    return distributed(ctx, comm, part, &rq, opts, out, traffic);
}

int clstats_mpi_percentiles(clstats_ctx *ctx, MPI_Comm comm, const struct clstats_array *part,
                            const double *q, size_t nq, const struct clstats_select_options *opts,
                            double *out, struct clstats_mpi_traffic *traffic)
{
    const struct request rq = {.what = PERCENTILES, .q = q, .nq = nq};
    return distributed(ctx, comm, part, &rq, opts, out, traffic);
}

int clstats_mpi_quantiles(clstats_ctx *ctx, MPI_Comm comm, const struct clstats_array *part,
                          const double *q, size_t nq, const struct clstats_select_options *opts,
                          double *out, struct clstats_mpi_traffic *traffic)
{
    const struct request rq = {.what = QUANTILES, .q = q, .nq = nq};
    return distributed(ctx, comm, part, &rq, opts, out, traffic);
}

MPI_Comm clstats_mpi_comm_from_handle(long long handle)
{
    return MPI_Comm_f2c((MPI_Fint)handle);
}
