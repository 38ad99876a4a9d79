/* _mpi.c - the extension clstats._mpi: the library's MPI module (libclstats_mpi's objects, and
 * through them libmpi) behind the capsule _mpi_api.h describes, which clstats._ext imports on
 * its first MPI call. Nothing else: the arguments are checked, and the results built, in
 * _ext.c's MPI section. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_mpi_api.h"
#include "clstats/mpi.h"

/* A call's status, its traffic handed back as two words. */
static int done(int status, const struct clstats_mpi_traffic *t, uint64_t *traffic)
{
    traffic[0] = t->bytes;
    traffic[1] = t->messages;
    return status;
}

static int select_kth(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                      uint64_t k, const struct clstats_select_options *opts, double *out,
                      uint64_t *traffic)
{
    struct clstats_mpi_traffic t = {0};
    return done(
        clstats_mpi_select_kth(ctx, clstats_mpi_comm_from_handle(comm), part, k, opts, out, &t), &t,
        traffic);
}

static int median(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                  const struct clstats_select_options *opts, double *out, uint64_t *traffic)
{
    struct clstats_mpi_traffic t = {0};
    return done(clstats_mpi_median(ctx, clstats_mpi_comm_from_handle(comm), part, opts, out, &t),
                &t, traffic);
}

static int quantiles(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                     const double *q, size_t nq, const struct clstats_select_options *opts,
                     double *out, uint64_t *traffic)
{
    struct clstats_mpi_traffic t = {0};
    return done(
        clstats_mpi_quantiles(ctx, clstats_mpi_comm_from_handle(comm), part, q, nq, opts, out, &t),
        &t, traffic);
}

static int median_filter_rows(clstats_ctx *ctx, long long comm, const float *band, size_t nx,
                              size_t ny, size_t row0, size_t rows,
                              const struct clstats_filter_params *params, float *median_out,
                              float *mad_out, uint64_t *traffic)
{
    struct clstats_mpi_traffic t = {0};
    return done(clstats_mpi_median_filter_rows(ctx, clstats_mpi_comm_from_handle(comm), band, nx,
                                               ny, row0, rows, params, median_out, mad_out, &t),
                &t, traffic);
}

static int column_medians(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                          const struct clstats_select_options *opts, double *out, uint64_t *traffic)
{
    struct clstats_mpi_traffic t = {0};
    return done(
        clstats_mpi_column_medians(ctx, clstats_mpi_comm_from_handle(comm), part, opts, out, &t),
        &t, traffic);
}

static int column_smallest(clstats_ctx *ctx, long long comm, const struct clstats_array *part,
                           const uint64_t *k, const struct clstats_select_options *opts,
                           double *kth, double *sum, uint64_t *traffic)
{
    struct clstats_mpi_traffic t = {0};
    return done(clstats_mpi_column_smallest(ctx, clstats_mpi_comm_from_handle(comm), part, k, opts,
                                            kth, sum, &t),
                &t, traffic);
}

static const struct clstats_py_mpi_api api = {select_kth,         median,         quantiles,
                                              median_filter_rows, column_medians, column_smallest};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                    "_mpi",
                                    "The library's MPI module, for clstats._ext (clstats.mpi).",
                                    -1,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

PyMODINIT_FUNC PyInit__mpi(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *capsule = PyCapsule_New((void *)&api, CLSTATS_PY_MPI_CAPSULE, NULL);
    if (!capsule || PyModule_AddObject(m, "_api", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
