/* test_sort_network.c - the sorting networks src/filter/sort_network.c writes for the sorted filter
 * design, run on the host: every network sorts (or merges) every input, by the 0-1 principle
 * (a comparator network sorts all inputs when it sorts all inputs of zeros and ones; D. E.
 * Knuth, TAOCP vol. 3, 5.3.4), and no network is larger than a merge of two 16-key runs, so
 * that no width hands a compiler one huge function (Intel's OpenCL compiler crashed on them). */
#include "../src/core/internal.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A merge of two sorted runs of 16 keys: the largest block a width may generate. */
#define MAX_COMPARATORS 65
#define MAX_POSITIONS 64

struct network {
    int count;
    int a[1024], b[1024];
};

/* The comparators of macro `name` ("#define NAME(v) \ CE(v, a, b) \ ..."); false if absent. */
static bool parse_network(const char *src, const char *name, struct network *net)
{
    char head[64];
    snprintf(head, sizeof head, "#define %s(v) \\\n", name);
    const char *p = strstr(src, head);
    net->count = 0;
    if (!p) return false;
    p += strlen(head);
    int a, b, used;
    while (sscanf(p, " CE(v, %d, %d) \\%n", &a, &b, &used) == 2) {
        ck_assert_int_lt(net->count, 1024);
        ck_assert(a >= 0 && a < b && b < MAX_POSITIONS);
        net->a[net->count] = a;
        net->b[net->count] = b;
        net->count++;
        p += used;
        while (*p == '\n')
            p++;
    }
    return true;
}

/* The value of "#define NAME value", or -1. */
static int parse_value(const char *src, const char *name)
{
    char head[64];
    snprintf(head, sizeof head, "#define %s ", name);
    const char *p = strstr(src, head);
    return p ? atoi(p + strlen(head)) : -1;
}

static void run_network(const struct network *net, int *v)
{
    for (int i = 0; i < net->count; i++) {
        const int lo = v[net->a[i]] < v[net->b[i]] ? v[net->a[i]] : v[net->b[i]];
        v[net->b[i]] = v[net->a[i]] + v[net->b[i]] - lo;
        v[net->a[i]] = lo;
    }
}

static bool is_sorted(const int *v, int n)
{
    for (int i = 1; i < n; i++)
        if (v[i - 1] > v[i]) return false;
    return true;
}

/* Whether the network sorts every 0-1 input of n keys, positions n .. width - 1 holding
 * padding (1, the largest value, when thresholded). */
static bool sorts_every_zero_one_input(const struct network *net, int n, int width)
{
    for (long bits = 0; bits < 1L << n; bits++) {
        int v[MAX_POSITIONS];
        for (int i = 0; i < width; i++)
            v[i] = i < n ? (int)(bits >> i & 1) : 1;
        run_network(net, v);
        if (!is_sorted(v, width)) return false;
    }
    return true;
}

/* Whether the network merges every pair of sorted 0-1 runs laid out as the kernel lays them:
 * positions 0 .. 15 hold the first run's n1 keys then padding, 16 .. 31 the second's n2. */
static bool merges_every_zero_one_pair(const struct network *net, int n1, int n2)
{
    for (int z1 = 0; z1 <= n1; z1++)
        for (int z2 = 0; z2 <= n2; z2++) {
            int v[32];
            for (int i = 0; i < 16; i++) {
                v[i] = i >= z1; /* z1 zeros, then ones and padding */
                v[16 + i] = i >= z2;
            }
            run_network(net, v);
            if (!is_sorted(v, 32)) return false;
        }
    return true;
}

START_TEST(no_network_is_larger_than_a_merge_of_two_16_key_runs)
{
    static const char *names[] = {"SORT_NETWORK", "SORT_RUN", "MERGE_BLOCK", "MERGE_TAIL"};
    for (int n = 1; n <= MAX_POSITIONS; n++) {
        char *src = clstats__sort_network_source(n);
        ck_assert_ptr_nonnull(src);
        int found = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            struct network net;
            if (!parse_network(src, names[k], &net)) continue;
            found++;
            ck_assert_msg(net.count <= MAX_COMPARATORS, "n = %d: %s has %d comparators", n,
                          names[k], net.count);
        }
        ck_assert_msg(found > 0, "n = %d: no network in\n%s", n, src);
        free(src);
    }
}
END_TEST

START_TEST(one_network_sorts_up_to_16_keys)
{
    for (int n = 1; n <= 16; n++) {
        char *src = clstats__sort_network_source(n);
        struct network net;
        ck_assert(parse_network(src, "SORT_NETWORK", &net));
        ck_assert_int_eq(parse_value(src, "SORT_BLOCKS"), -1);
        ck_assert_msg(sorts_every_zero_one_input(&net, n, n), "n = %d", n);
        free(src);
    }
}
END_TEST

/* Above 16 keys: runs sorted by SORT_RUN, merged in pairs by MERGE_BLOCK (two whole runs of
 * 16) and MERGE_TAIL (the last pair where it is short), as kernels/sort_blocks.cl uses them. */
START_TEST(blocks_sort_and_merge_above_16_keys)
{
    for (int n = 17; n <= MAX_POSITIONS; n++) {
        char *src = clstats__sort_network_source(n);
        struct network run, merge, tail;
        ck_assert_int_eq(parse_value(src, "SORT_BLOCKS"), 16);
        const int run_keys = parse_value(src, "SORT_RUN_KEYS");
        const int tail_keys = parse_value(src, "MERGE_TAIL_KEYS");
        ck_assert(run_keys >= 1 && run_keys <= 16);
        if (n > 32) ck_assert_int_eq(run_keys, 16);
        ck_assert(tail_keys >= 0 && tail_keys <= run_keys);
        ck_assert(parse_network(src, "SORT_RUN", &run));
        ck_assert(parse_network(src, "MERGE_BLOCK", &merge));
        ck_assert_msg(sorts_every_zero_one_input(&run, run_keys, run_keys), "n = %d run", n);
        ck_assert_msg(merges_every_zero_one_pair(&merge, 16, 16), "n = %d merge", n);
        /* Up to 32 keys: two runs, the whole sort in one merge. */
        if (n <= 32) ck_assert_int_eq(run_keys + (tail_keys ? tail_keys : run_keys), n);
        ck_assert_int_eq(parse_network(src, "MERGE_TAIL", &tail), tail_keys > 0);
        if (tail_keys)
            ck_assert_msg(merges_every_zero_one_pair(&tail, run_keys, tail_keys), "n = %d tail", n);
        free(src);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sort_network");
    TCase *tc = tcase_create("networks");
    tcase_add_test(tc, no_network_is_larger_than_a_merge_of_two_16_key_runs);
    tcase_add_test(tc, one_network_sorts_up_to_16_keys);
    tcase_add_test(tc, blocks_sort_and_merge_above_16_keys);
    suite_add_tcase(s, tc);
    return test_run_suite(s);
}
