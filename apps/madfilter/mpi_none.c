/* mpi_none.c - mpi_run.h without MPI: one process does everything. */
#include "mpi_run.h"

void mpi_start(int *argc, char ***argv)
{
    (void)argc, (void)argv;
}

int mpi_finish(int rc)
{
    return rc;
}

int mpi_ranks(void)
{
    return 1;
}

bool mpi_leads(void)
{
    return true;
}

int mpi_local_rank(void)
{
    return 0;
}

void mpi_share_inputs(const char *const *inputs, int n)
{
    (void)inputs, (void)n;
}

bool mpi_takes(int i)
{
    (void)i;
    return true;
}

int mpi_batch_end(int failed, bool *fatal, int n_inputs, double seconds)
{
    (void)fatal, (void)n_inputs, (void)seconds;
    return failed;
}

void mpi_band(size_t ny, size_t *row_begin, size_t *row_end)
{
    *row_begin = 0;
    *row_end = ny;
}

void mpi_strips_begin(size_t nx, size_t planes, bool f64)
{
    (void)nx, (void)planes, (void)f64;
}

bool mpi_keeps_strips(void)
{
    return false;
}

int mpi_keep_strip(void *user, const struct clstats_strip *strip)
{
    (void)user, (void)strip;
    return -1;
}

int mpi_gather_strips(int rc, int (*take)(void *user, const struct clstats_strip *strip),
                      void *user, size_t *n_nan, size_t *n_strips)
{
    (void)take, (void)user, (void)n_nan, (void)n_strips;
    return rc;
}
