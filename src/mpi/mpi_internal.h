/* mpi_internal.h - what the files of src/mpi/ share: one collective call's link between the
 * ranks, which carries the call's messages, counts their bytes and makes every rank agree on
 * one status when any of them fails. */
#ifndef CLSTATS_MPI_INTERNAL_H
#define CLSTATS_MPI_INTERNAL_H

#include "clstats/mpi.h"
#include "internal.h"

/* The most words a rank's record may hold in a gather. */
enum { MPI_GATHER_MAX = 16 };

struct mpi_link {
    clstats_ctx *ctx;
    MPI_Comm comm;
    int rank, size;
    int agreed;        /* CLSTATS_OK while every rank is well; else the status all return */
    size_t words;      /* counts a message carries (sum_counts), fixed for the call */
    bool narrow;       /* counts travel as 32-bit words (every count below 2^32) */
    void *message;     /* 1 + words words: the failed ranks, then the counts */
    size_t gather_words;  /* words a part's record holds in a gather (clstats__mpi_gather) */
    uint64_t *gathered;   /* every rank's record and its failure word, size (1 + gather_words) */
    struct clstats_mpi_traffic traffic;
};

/* Opens a call's link, whose count messages (clstats__mpi_sum_counts) will carry `words`
 * counts (0: the call sends none) and whose gathers (clstats__mpi_gather) `gather_words` words
 * a rank (0: none): every rank's status so far (its own argument checks), its
 * value, `same` (below 2^26: what every rank must pass alike, such as the data's type) and
 * whether its device is a GPU are combined in one message, *total the sum of the values,
 * *all_gpus (may be NULL) whether every rank's device is; returns the status all agree on (a
 * `same` that differs: CLSTATS_ERR_ARG). Close it whatever that is. */
int clstats__mpi_open(struct mpi_link *link, clstats_ctx *ctx, MPI_Comm comm, size_t words,
                      size_t gather_words, int status, uint64_t value, uint32_t same, bool gpu, uint64_t *total,
                      bool *all_gpus);

/* A message of one word: whether any rank failed since the last; the status all agree on. */
int clstats__mpi_check(struct mpi_link *link, int status);

/* The call's last message (a count message, or a check where the link has no counts): a rank
 * that failed since its last message says so; returns the status all agree on, frees the link
 * and hands its traffic to the caller's (may be NULL). */
int clstats__mpi_close(struct mpi_link *link, int status, struct clstats_mpi_traffic *traffic);

/* struct select_parts's sum_counts over the link (user: the link): counts summed over all ranks
 * in a message of 1 + link->words words, the first the number of ranks that failed. */
int clstats__mpi_sum_counts(void *user, uint64_t *counts, size_t n, int status);

/* struct select_parts's gather over the link: every rank's `words` words (link->gather_words)
 * to every rank, in rank order, in one MPI_Allgather whose first word a rank is its failure. */
int clstats__mpi_gather(void *user, const uint64_t *mine, size_t words, uint64_t *all, int status);

/* Every rank learns that some failed (their number, failed, from a message all received):
 * the lowest failing rank's status and message go to the others. */
int clstats__mpi_agree_failure(struct mpi_link *link, int status);

/* A rank's part of a selection checked as the one-device call would (src/mpi/select.c): its
 * dtype, memory, options and the device's fp64. */
int clstats__mpi_check_part(clstats_ctx *ctx, const struct clstats_array *part,
                            const struct clstats_select_options *opts);

/* A message sent or contributed, counted. */
void clstats__mpi_count(struct mpi_link *link, uint64_t bytes);

#endif
