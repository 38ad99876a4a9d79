/* sort_blocks.cl - sorts SORT_KEYS keys, more than one generated network sorts
 * (src/filter/sort_network.c), in blocks: runs sorted in registers, then merged in pairs through the destination in local
 * memory, with Batcher's odd-even merge. No block holds more than 65 comparators, and the
 * blocks run in loops that stay loops, so no compiler meets one huge function.
 *
 * Needs SORT_KEYS, the comparator macro CE(v, a, b), and from the host's generated source
 * SORT_BLOCKS, SORT_RUN_KEYS, SORT_RUN(v), MERGE_BLOCK(v), MERGE_TAIL_KEYS, MERGE_TAIL(v). */
#ifdef SORT_BLOCKS

/* The largest key: padding, which no comparator moves below a key. */
#define SORT_PAD 0xffffffffu

/* Two sorted runs of SORT_BLOCKS keys, at positions at, at + r, at + 2r, ... of a, merged in
 * place by MERGE_BLOCK; positions from SORT_KEYS on stand for padding, neither read nor
 * written. */
inline void merge_block(__local uint *a, int stride, int at, int r)
{
    uint v[2 * SORT_BLOCKS];
#pragma unroll
    for (int i = 0; i < 2 * SORT_BLOCKS; i++)
        v[i] = at + i * r < SORT_KEYS ? a[(at + i * r) * stride] : SORT_PAD;
    MERGE_BLOCK(v)
#pragma unroll
    for (int i = 0; i < 2 * SORT_BLOCKS; i++)
        if (at + i * r < SORT_KEYS) a[(at + i * r) * stride] = v[i];
}

#if MERGE_TAIL_KEYS
/* The last pair of runs of the first merge level, when that is short: SORT_RUN_KEYS keys from
 * position at, then MERGE_TAIL_KEYS, each run padded to SORT_BLOCKS for MERGE_TAIL. */
inline void merge_tail(__local uint *a, int stride, int at)
{
    uint v[2 * SORT_BLOCKS];
#pragma unroll
    for (int i = 0; i < SORT_BLOCKS; i++) {
        v[i] = i < SORT_RUN_KEYS ? a[(at + i) * stride] : SORT_PAD;
        v[SORT_BLOCKS + i] = i < MERGE_TAIL_KEYS ? a[(at + SORT_RUN_KEYS + i) * stride] : SORT_PAD;
    }
    MERGE_TAIL(v)
#pragma unroll
    for (int i = 0; i < SORT_RUN_KEYS + MERGE_TAIL_KEYS; i++)
        a[(at + i) * stride] = v[i];
}
#endif

/* Sorts the SORT_KEYS keys src[i * src_stride] into dst[i * dst_stride]; returns how many are
 * below SORT_PAD. The loops stay loops (unroll 1), and the last, shorter run is padded and sorted by
 * the same network as the others: with its own network beside that one in the loop, Intel's
 * compiler (2026.2) still crashed at 23 to 31 keys. */
int sort_in_blocks(__local const uint *src, int src_stride, __local uint *dst, int dst_stride)
{
    int n = 0;
#pragma unroll 1
    for (int b = 0; b < SORT_KEYS; b += SORT_RUN_KEYS) {
        uint v[SORT_RUN_KEYS];
#pragma unroll
        for (int i = 0; i < SORT_RUN_KEYS; i++) {
            v[i] = b + i < SORT_KEYS ? src[(b + i) * src_stride] : SORT_PAD;
            n += v[i] != SORT_PAD;
        }
        SORT_RUN(v)
#pragma unroll
        for (int i = 0; i < SORT_RUN_KEYS; i++)
            if (b + i < SORT_KEYS) dst[(b + i) * dst_stride] = v[i];
    }
    /* The first merge level: pairs of runs. */
#pragma unroll 1
    for (int b = 0; b + SORT_RUN_KEYS < SORT_KEYS; b += 2 * SORT_RUN_KEYS) {
#if MERGE_TAIL_KEYS
        if (b + 2 * SORT_BLOCKS > SORT_KEYS) {
            merge_tail(dst, dst_stride, b);
            break;
        }
#endif
        merge_block(dst, dst_stride, b, 1);
    }
    /* Runs of L = 32, 64, ... keys (whole runs of SORT_BLOCKS from here on) merged in pairs:
     * for each offset o < r, the keys at o, o + r, ... are again two sorted runs of
     * SORT_BLOCKS, merged by MERGE_BLOCK; then, as the odd-even merge does, keys d apart are
     * compared for d = r/2, ..., 1: the pairs (i + o, i + o + d), i = d, 3d, 5d, ..., o < d. */
#pragma unroll 1
    for (int L = 2 * SORT_BLOCKS; L < SORT_KEYS; L *= 2) {
        const int r = L / SORT_BLOCKS;
#pragma unroll 1
        for (int base = 0; base + L < SORT_KEYS; base += 2 * L) {
#pragma unroll 1
            for (int o = 0; o < r; o++)
                merge_block(dst, dst_stride, base + o, r);
#pragma unroll 1
            for (int d = r / 2; d >= 1; d /= 2)
#pragma unroll 1
                for (int i = base + d; i + d < base + 2 * L && i + d < SORT_KEYS; i += 2 * d)
#pragma unroll 1
                    for (int j = i; j < i + d && j + d < SORT_KEYS; j++) {
                        const uint x = dst[j * dst_stride], y = dst[(j + d) * dst_stride];
                        dst[j * dst_stride] = min(x, y);
                        dst[(j + d) * dst_stride] = max(x, y);
                    }
        }
    }
    return n;
}

#endif
