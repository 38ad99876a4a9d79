/* _mpi_api.h - the MPI module's calls (include/clstats/mpi.h) as the extension clstats._mpi
 * hands them to clstats._ext: a capsule of function pointers, imported on the first MPI call.
 * _ext itself links no MPI, so that `import clstats` never loads libmpi; only clstats.mpi's
 * calls do. The communicator travels as its Fortran handle (mpi4py's Comm.py2f()), so that
 * neither extension needs mpi4py's headers, and a call's traffic as two words (bytes,
 * messages: struct clstats_mpi_traffic). */
#ifndef CLSTATS_PY_MPI_API_H
#define CLSTATS_PY_MPI_API_H

#include "clstats.h"

#define CLSTATS_PY_MPI_CAPSULE "clstats._mpi._api"

struct clstats_py_mpi_api {
    int (*select_kth)(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                      uint64_t k, const struct clstats_select_options *opts, double *out,
                      uint64_t *traffic);
    int (*median)(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                  const struct clstats_select_options *opts, double *out, uint64_t *traffic);
    int (*quantiles)(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                     const double *q, size_t nq, const struct clstats_select_options *opts,
                     double *out, uint64_t *traffic);
    int (*median_filter_rows)(clstats_ctx *ctx, long long comm, const float *band, size_t nx,
                              size_t ny, size_t row0, size_t rows,
                              const struct clstats_filter_params *params, float *median_out,
                              float *mad_out, uint64_t *traffic);
    int (*column_medians)(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                          const struct clstats_select_options *opts, double *out,
                          uint64_t *traffic);
    int (*column_smallest)(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                           const uint64_t *k, const struct clstats_select_options *opts,
                           double *kth, double *sum, uint64_t *traffic);
};

#endif
