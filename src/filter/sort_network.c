/* sort_network.c - writes sorting networks as OpenCL C source, for kernels that sort small
 * arrays in registers (a loop nest of comparators would need the compiler to unroll it
 * completely, or the array leaves the registers).
 *
 * Batcher's odd-even merge sort (K. E. Batcher, "Sorting networks and their applications",
 * 1968) for the next power of two, without the comparators that cannot move a key because
 * their upper position holds +infinite padding: what is left sorts n keys.
 *
 * No network is written for more than 16 keys, or for more than merging two sorted runs of 16:
 * a network for a few dozen keys, one unrolled block of a few hundred comparators, is more
 * than some compilers survive (Intel's OpenCL CPU compiler 2026.2 crashed in its machine-code
 * passes on the networks for 23 keys and more, 127 comparators). Wider sorts are built by the
 * kernel from such blocks (kernels/sort_blocks.cl), looping over them. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Keys a network is written for, at most; also the length of the runs a merge block merges. */
#define SORT_BLOCK_KEYS 16

struct text {
    char *s;
    size_t len, cap;
    bool failed;
};

static void put(struct text *t, const char *fmt, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        char *grown = realloc(t->s, t->cap * 2 + (size_t)n);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->s = grown;
        t->cap = t->cap * 2 + (size_t)n;
    }
}

/* The comparators of the merge stages p = first, 2 first, ... < last of the network for p2
 * positions, as one macro. Stage p merges sorted runs of p keys into runs of 2p; all stages
 * from 1 sort. pad[i] marks the positions that hold padding (the largest key) on input: a
 * comparator whose upper position holds padding cannot move anything and is left out, and one
 * whose lower position does moves the padding up. */
static void network(struct text *t, const char *name, int first, int last, int p2, bool *pad)
{
    put(t, "#define %s(v) \\\n", name);
    for (int p = first; p < last; p *= 2)
        for (int k = p; k >= 1; k /= 2)
            for (int j = k % p; j + k < p2; j += 2 * k)
                for (int i = 0; i < k; i++) {
                    const int a = i + j, b = i + j + k;
                    if (a / (2 * p) != b / (2 * p) || pad[b]) continue;
                    pad[b] = pad[a];
                    pad[a] = false;
                    put(t, "  CE(v, %d, %d) \\\n", a, b);
                }
    put(t, "\n");
}

/* Padding marks for p2 positions: runs of `run` positions, each holding keys in its first
 * real[j] positions (real[j] for j < p2 / run). */
static void mark_padding(bool *pad, int p2, int run, const int *real)
{
    for (int i = 0; i < p2; i++)
        pad[i] = i % run >= real[i / run];
}

char *clstats__sort_network_source(int n)
{
    struct text t = {.s = malloc(4096), .cap = 4096};
    bool pad[2 * SORT_BLOCK_KEYS];
    if (!t.s) return NULL;
    t.s[0] = '\0';
    if (n <= SORT_BLOCK_KEYS) {
        int p2 = 1;
        while (p2 < n)
            p2 *= 2;
        const int real[1] = {n};
        mark_padding(pad, p2, p2, real);
        network(&t, "SORT_NETWORK", 1, p2, p2, pad);
    } else {
        /* What kernels/sort_blocks.cl asks for. Runs of `run` keys, each sorted in SORT_BLOCKS
         * positions: up to 32 keys two halves, whose merge stays close to the one network's
         * comparator count; beyond, whole blocks and the rest. Merges take two runs of
         * SORT_BLOCKS positions: MERGE_BLOCK two whole ones, MERGE_TAIL the last pair of the
         * first merge level where that is short, its second run holding `tail` keys. */
        const int b = SORT_BLOCK_KEYS;
        const int run = n <= 2 * b ? (n + 1) / 2 : b;
        const int last_pair = (n - run - 1) / (2 * run) * (2 * run);
        const int tail = last_pair + 2 * b > n ? n - last_pair - run : 0;
        int run_p2 = 1;
        while (run_p2 < run)
            run_p2 *= 2;
        put(&t, "#define SORT_BLOCKS %d\n#define SORT_RUN_KEYS %d\n#define MERGE_TAIL_KEYS %d\n", b,
            run, tail);
        const int whole[2] = {b, b}, runs[2] = {run, tail}, one[1] = {run};
        mark_padding(pad, run_p2, run_p2, one);
        network(&t, "SORT_RUN", 1, run_p2, run_p2, pad);
        mark_padding(pad, 2 * b, b, whole);
        network(&t, "MERGE_BLOCK", b, 2 * b, 2 * b, pad);
        if (tail) {
            mark_padding(pad, 2 * b, b, runs);
            network(&t, "MERGE_TAIL", b, 2 * b, 2 * b, pad);
        }
    }
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    return t.s;
}
