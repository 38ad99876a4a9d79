/* clstats/mpi.h - order statistics and filters of data spread over the ranks of an MPI
 * communicator, each rank on its own device (src/mpi/). Built when meson finds MPI; not part of
 * the umbrella header clstats.h, since it needs MPI's mpi.h: include it yourself.
 *
 * Every call is collective: every rank of the communicator calls it with the same arguments
 * except its own part of the data, and every rank returns the same status and the same
 * results. A rank that fails on its own (no device, out of memory, a bad argument) makes every
 * rank return its status, with its message prefixed "rank R: " on the others; no rank is left
 * waiting. The communicator must allow MPI's collectives on it while the call runs (no other
 * thread's collectives on it at the same time). */
#ifndef CLSTATS_MPI_H
#define CLSTATS_MPI_H

#include <mpi.h>

#include "core.h"
#include "filter.h"
#include "select.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a call moved between ranks, counted by the library: the bytes this rank handed to MPI
 * (its contributions to collectives and what it sent to other ranks) and the MPI calls that
 * moved them. For the selections these do not grow with the number of values: one histogram of
 * 2^select.bits counts a radix pass (32-bit counts while all ranks hold fewer than 2^32
 * values, else 64-bit), whatever n. */
struct clstats_mpi_traffic {
    uint64_t bytes;
    uint64_t messages;
};

/* The k-th smallest valid value (k 0-based among all ranks' valid values), the median and
 * percentiles of an array whose parts the ranks hold, in rank order or any order (order
 * statistics do not depend on it): each rank's part a struct clstats_array in host memory or in
 * a buffer of its own context, float32 or float64 (the same on every rank, as the select.bits
 * tuning must be), possibly empty (nx or ny 0). Results and options as
 * clstats_select_kth_array, clstats_median_array and clstats_percentiles_array give them for
 * the whole array on one device, bit for bit: each radix pass histograms every part on its own
 * device and sums the histograms with MPI_Allreduce, so only counts cross. opts->method:
 * CLSTATS_SELECT_RADIX the radix passes over the data; CLSTATS_SELECT_SAMPLE first a bracket
 * from one sample of all parts (2048 keys gathered in one message), one pass counting and
 * gathering inside it, the radix passes on what it gathered (where the bracket missed, on the
 * data); CLSTATS_SELECT_CUTTING_PLANE Kelley's cutting plane (seed 000 section V): each pass
 * every rank reduces its part to the counts, key ranges and objective sums on either side of
 * the trial, one MPI_Allgather of 88 bytes a rank gives every rank all of them, combined alike
 * (the objective's sums in rank order, so every rank steers the same; the counts decide the
 * bracket, so the answer is the one-device answer whatever the steps), and once the bracket
 * holds few values the radix passes finish on them; CLSTATS_SELECT_AUTO the sample from 2^21
 * values when every rank is on a GPU, else radix. Every rank must ask for the same method.
 * opts->nan_count receives the NaNs of all parts; opts->mask, when given, is the rank's part's
 * mask; opts->kernel_ms the rank's own device time. traffic may be NULL. */
CLSTATS_API int clstats_mpi_select_kth(clstats_ctx *ctx, MPI_Comm comm,
                                       const struct clstats_array *part, uint64_t k,
                                       const struct clstats_select_options *opts, double *out,
                                       struct clstats_mpi_traffic *traffic);
CLSTATS_API int clstats_mpi_median(clstats_ctx *ctx, MPI_Comm comm,
                                   const struct clstats_array *part,
                                   const struct clstats_select_options *opts, double *out,
                                   struct clstats_mpi_traffic *traffic);
/* Percentiles q[0..nq) in [0, 100] (quantiles: in [0, 1]), numpy's linear rule. */
CLSTATS_API int clstats_mpi_percentiles(clstats_ctx *ctx, MPI_Comm comm,
                                        const struct clstats_array *part, const double *q,
                                        size_t nq, const struct clstats_select_options *opts,
                                        double *out, struct clstats_mpi_traffic *traffic);
CLSTATS_API int clstats_mpi_quantiles(clstats_ctx *ctx, MPI_Comm comm,
                                      const struct clstats_array *part, const double *q, size_t nq,
                                      const struct clstats_select_options *opts, double *out,
                                      struct clstats_mpi_traffic *traffic);

/* Column medians and batched selections of a matrix whose rows are spread over the ranks: each
 * rank's part a struct clstats_array of part->nx columns (the same on every rank) and its
 * part->ny rows (possibly 0), float32 or float64, host memory or a buffer of its context.
 * All columns are selected at once (the batched selection's split design on every rank's
 * rows): one MPI_Allreduce of a count a column (the NaNs), then one a radix pass of a histogram
 * of 256 counts a column (4 passes for float32, 8 for float64; the median's two middles take
 * two such walks where the even rule needs both), so the bytes grow with the columns, never
 * with the rows: about 1 KB a column a pass.
 *
 * clstats_mpi_column_medians: the median of every column into out[0..nx), the same bits as
 * clstats_column_medians (float32; as double) or as clstats_median_f64 column by column
 * (float64): NaNs left out (opts->nan_policy), NaN where a column has no valid value,
 * opts->even applied; the rows in any order over the ranks. */
CLSTATS_API int clstats_mpi_column_medians(clstats_ctx *ctx, MPI_Comm comm,
                                           const struct clstats_array *part,
                                           const struct clstats_select_options *opts, double *out,
                                           struct clstats_mpi_traffic *traffic);
/* clstats_mpi_column_smallest: clstats_column_smallest of the whole matrix (k[c] from 1 to all
 * ranks' rows, the same k on every rank), bit for bit: the k[c]-th smallest valid value of
 * column c into kth[c] and, where sum is not NULL (on every rank alike), the sum of the k[c]
 * smallest into sum[c]. The sums are added in the one-device call's order, which runs along
 * the rows: the rows must follow each other in rank order (rank 0's first), and the ranks add
 * theirs in turn, each sending the next 8 x 259 nx bytes (a column's rows so far, running sum,
 * count below and 256 lanes), the last broadcasting 16 nx. */
CLSTATS_API int clstats_mpi_column_smallest(clstats_ctx *ctx, MPI_Comm comm,
                                            const struct clstats_array *part, const uint64_t *k,
                                            const struct clstats_select_options *opts,
                                            double *kth, double *sum,
                                            struct clstats_mpi_traffic *traffic);

/* The median and MAD filter (clstats_median_filter) of a float32 image of nx x ny pixels whose
 * rows are spread over the ranks in bands: rank r holds rows row0 .. row0 + rows - 1 (rows may
 * be 0), nx values a row, and the bands of ranks 0, 1, ... follow each other from row 0 to row
 * ny - 1. Each rank receives from the others only the rows its windows reach beyond its band
 * (the halo, the boundary rule applied against the whole image), filters its band on its own
 * device, and writes its rows of the maps to median_out and mad_out (nx * rows values each;
 * either may be NULL): the same bits as those rows of the one-device filter. params->progress
 * and params->mask are not taken. */
CLSTATS_API int clstats_mpi_median_filter_rows(clstats_ctx *ctx, MPI_Comm comm, const float *band,
                                               size_t nx, size_t ny, size_t row0, size_t rows,
                                               const struct clstats_filter_params *params,
                                               float *median_out, float *mad_out,
                                               struct clstats_mpi_traffic *traffic);

/* The communicator of a Fortran handle (mpi4py's Comm.py2f()): what the Python package passes. */
CLSTATS_API MPI_Comm clstats_mpi_comm_from_handle(long long handle);

#ifdef __cplusplus
}
#endif
#endif
