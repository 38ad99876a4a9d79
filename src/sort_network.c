/* sort_network.c - writes a sorting network for n keys as OpenCL C source, for kernels that
 * sort small arrays in registers (a loop nest of comparators would need the compiler to unroll
 * it completely, or the array leaves the registers).
 *
 * Batcher's odd-even merge sort (K. E. Batcher, "Sorting networks and their applications",
 * 1968) for the next power of two, without the comparators that touch positions >= n: those
 * would only ever hold +infinite padding, so dropping them leaves a network that sorts n keys. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

char *clstats__sort_network_source(int n)
{
    int p2 = 1;
    while (p2 < n)
        p2 *= 2;
    /* At most p2 * log2(p2)^2 / 4 comparators of at most 16 characters each. */
    size_t cap = 64 + (size_t)p2 * 16 * 4 * 8, len = 0;
    char *src = malloc(cap);
    if (!src) return NULL;
    len += (size_t)snprintf(src, cap, "#define SORT_NETWORK(v) \\\n");
    for (int p = 1; p < p2; p *= 2)
        for (int k = p; k >= 1; k /= 2)
            for (int j = k % p; j + k < p2; j += 2 * k)
                for (int i = 0; i < k && i + j + k < n; i++)
                    if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) {
                        if (cap - len < 64) {
                            char *grown = realloc(src, cap *= 2);
                            if (!grown) return free(src), NULL;
                            src = grown;
                        }
                        len += (size_t)snprintf(src + len, cap - len, "  CE(v, %d, %d) \\\n", i + j,
                                                i + j + k);
                    }
    snprintf(src + len, cap - len, "\n");
    return src;
}
