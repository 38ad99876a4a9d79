/* link.c - one collective call's link between the ranks (mpi_internal.h): the messages of a
 * distributed selection, their bytes, and one status for every rank. The rule that keeps any
 * rank from waiting forever: every rank makes the same collective calls in the same order until
 * one of them carries a failure; a rank that fails sends that failure in place of its next
 * message, whose size it knows in advance (link->words), and after a failure is known no rank
 * sends anything but the failure's own two messages. */
#include "mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clstats__mpi_count(struct mpi_link *link, uint64_t bytes)
{
    link->traffic.bytes += bytes;
    link->traffic.messages++;
}

int clstats__mpi_agree_failure(struct mpi_link *link, int status)
{
    int mine = status != CLSTATS_OK ? link->rank : link->size, root;
    MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, link->comm);
    clstats__mpi_count(link, sizeof mine);
    struct {
        int status;
        char text[252];
    } word = {status, {0}};
    if (root == link->rank)
        snprintf(word.text, sizeof word.text, "%s", clstats_ctx_message(link->ctx));
    MPI_Bcast(&word, (int)sizeof word, MPI_BYTE, root, link->comm);
    clstats__mpi_count(link, root == link->rank ? sizeof word : 0);
    if (word.status == CLSTATS_OK) word.status = CLSTATS_ERR_ARG; /* a root sent no status */
    link->agreed = word.status;
    if (root != link->rank) clstats__fail(link->ctx, word.status, "rank %d: %s", root, word.text);
    return link->agreed;
}

int clstats__mpi_open(struct mpi_link *link, clstats_ctx *ctx, MPI_Comm comm, size_t words,
                      size_t gather_words, int status, uint64_t value, uint32_t same, bool gpu,
                      uint64_t *total, bool *all_gpus)
{
    memset(link, 0, sizeof *link);
    link->ctx = ctx;
    link->comm = comm;
    link->words = words;
    MPI_Comm_rank(comm, &link->rank);
    MPI_Comm_size(comm, &link->size);
    if (words && !(link->message = calloc(1 + words, sizeof(uint64_t))) && status == CLSTATS_OK)
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate a message");
    /* The gathers' buffer now, where a failure can still be told in the first message. */
    link->gather_words = gather_words <= MPI_GATHER_MAX ? gather_words : MPI_GATHER_MAX;
    if (gather_words &&
        !(link->gathered = calloc((1 + gather_words) * (size_t)link->size, sizeof(uint64_t))) &&
        status == CLSTATS_OK)
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate a message");
    /* `same` is the same on every rank exactly when the sum of its squares is size times
     * (sum / size)^2: equality in Cauchy-Schwarz (sums below 2^64 for values below 2^26). */
    uint64_t w[5] = {status != CLSTATS_OK, value, same, (uint64_t)same * same, gpu};
    MPI_Allreduce(MPI_IN_PLACE, w, 5, MPI_UINT64_T, MPI_SUM, comm);
    clstats__mpi_count(link, sizeof w);
    *total = w[1];
    if (all_gpus) *all_gpus = w[4] == (uint64_t)link->size;
    link->narrow = w[1] <= UINT32_MAX; /* no count exceeds the values, nor the failures the ranks */
    if (w[0]) return clstats__mpi_agree_failure(link, status);
    if (w[3] * (uint64_t)link->size != w[2] * w[2]) {
        /* Every rank sees the same sums: all fail alike, with no message more. */
        link->agreed = clstats__fail(ctx, CLSTATS_ERR_ARG,
                                     "the ranks disagree on the data's type, its width, the "
                                     "method or the select.bits tuning: every rank must pass "
                                     "the same");
        return link->agreed;
    }
    return CLSTATS_OK;
}

int clstats__mpi_check(struct mpi_link *link, int status)
{
    if (link->agreed != CLSTATS_OK) return link->agreed;
    uint32_t failed = status != CLSTATS_OK;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_UINT32_T, MPI_SUM, link->comm);
    clstats__mpi_count(link, sizeof failed);
    return failed ? clstats__mpi_agree_failure(link, status) : CLSTATS_OK;
}

int clstats__mpi_sum_counts(void *user, uint64_t *counts, size_t n, int status)
{
    struct mpi_link *link = user;
    if (link->agreed != CLSTATS_OK) return link->agreed;
    const size_t len = 1 + link->words, size = link->narrow ? 4 : 8;
    if (n > link->words) n = link->words;
    uint32_t *m32 = link->message;
    uint64_t *m64 = link->message;
    for (size_t i = 0; i < len; i++) {
        const uint64_t v = i == 0 ? (status != CLSTATS_OK) : (counts && i <= n ? counts[i - 1] : 0);
        if (link->narrow)
            m32[i] = (uint32_t)v;
        else
            m64[i] = v;
    }
    MPI_Allreduce(MPI_IN_PLACE, link->message, (int)len, link->narrow ? MPI_UINT32_T : MPI_UINT64_T,
                  MPI_SUM, link->comm);
    clstats__mpi_count(link, len * size);
    const uint64_t failed = link->narrow ? m32[0] : m64[0];
    if (failed) return clstats__mpi_agree_failure(link, status);
    for (size_t i = 0; counts && i < n; i++)
        counts[i] = link->narrow ? m32[i + 1] : m64[i + 1];
    return CLSTATS_OK;
}

int clstats__mpi_gather(void *user, const uint64_t *mine, size_t words, uint64_t *all, int status)
{
    struct mpi_link *link = user;
    if (link->agreed != CLSTATS_OK) return link->agreed;
    const size_t len = 1 + link->gather_words;
    uint64_t record[1 + MPI_GATHER_MAX] = {status != CLSTATS_OK};
    for (size_t i = 0; status == CLSTATS_OK && mine && i < words && i < link->gather_words; i++)
        record[1 + i] = mine[i];
    MPI_Allgather(record, (int)len, MPI_UINT64_T, link->gathered, (int)len, MPI_UINT64_T,
                  link->comm);
    clstats__mpi_count(link, len * sizeof *record);
    uint64_t failed = 0;
    for (int q = 0; q < link->size; q++)
        failed += link->gathered[(size_t)q * len];
    if (failed) return clstats__mpi_agree_failure(link, status);
    for (int q = 0; all && q < link->size; q++)
        for (size_t i = 0; i < words && i < link->gather_words; i++)
            all[(size_t)q * words + i] = link->gathered[(size_t)q * len + 1 + i];
    return CLSTATS_OK;
}

int clstats__mpi_close(struct mpi_link *link, int status, struct clstats_mpi_traffic *traffic)
{
    if (link->agreed != CLSTATS_OK)
        status = link->agreed;
    else if (link->words)
        status = clstats__mpi_sum_counts(link, NULL, 0, status);
    else
        status = clstats__mpi_check(link, status);
    free(link->message);
    free(link->gathered);
    link->message = NULL;
    link->gathered = NULL;
    if (traffic) *traffic = link->traffic;
    return status;
}
