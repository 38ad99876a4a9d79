/* mpi_run.h - madfilter under mpirun (mpi_run.c; mpi_none.c where the build has no MPI, a single
 * process): many inputs shared among the ranks, largest first, one summary at the end; one input
 * filtered in bands of rows, one a rank, the strips gathered to rank 0, which alone writes the
 * output, and only once every rank has finished well (no partial output). */
#ifndef MADFILTER_MPI_RUN_H
#define MADFILTER_MPI_RUN_H

#include "clstats.h"

#include <stdbool.h>
#include <stddef.h>

/* Starts MPI when mpirun (or another MPI launcher) started the process. */
void mpi_start(int *argc, char ***argv);
/* The exit code every rank returns (the worst), MPI finished. */
int mpi_finish(int rc);
int mpi_ranks(void);  /* 1 without MPI */
bool mpi_leads(void); /* rank 0, or no MPI */
int mpi_local_rank(void); /* among the ranks of this machine; 0 without MPI */

/* The device spec (NULL: $CLSTATS_DEVICE) with %local_rank% replaced by mpi_local_rank(), e.g.
 * "gpu:%local_rank%" for a GPU a rank; NULL where neither names one (mpi_device.c). */
const char *mpi_device(const char *spec);

/* Several inputs: which this rank filters, the largest files first, each to the rank with the
 * least bytes so far (the same answer on every rank). */
void mpi_share_inputs(const char *const *inputs, int n);
bool mpi_takes(int i);
/* The end of a shared run: the failed inputs of all ranks (and whether any rank found no
 * device), rank 0's summary line. */
int mpi_batch_end(int failed, bool *fatal, int n_inputs, double seconds);

/* One input in bands: this rank's rows of a ny-row image. */
void mpi_band(size_t ny, size_t *row_begin, size_t *row_end);
/* The image's shape (nx values a row, float64 maps when f64), then whether this rank keeps its
 * strips until the gather (ranks other than 0, and rank 0 too for a cube, whose planes come in
 * order) through mpi_keep_strip, a writer for clstats_rows_job (user ignored). */
void mpi_strips_begin(size_t nx, size_t planes, bool f64);
bool mpi_keeps_strips(void);
int mpi_keep_strip(void *user, const struct clstats_strip *strip);
/* Every rank with its status (an exit code): when all are well, rank 0 receives the others'
 * strips in rank order and hands each to take(user, strip); *n_nan and *n_strips become all
 * ranks' sums. Returns the exit code all ranks agree on. */
int mpi_gather_strips(int rc, int (*take)(void *user, const struct clstats_strip *strip),
                      void *user, size_t *n_nan, size_t *n_strips);

#endif
