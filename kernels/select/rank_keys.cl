/* rank_keys.cl - what the two batched-selection designs share (column_ranks.cl, one work-group a
 * column; column_ranks_split.cl, a column split over many work-groups): order-preserving keys of
 * REAL, the digit walk of their radix select, and the order of the sum below the k-th value.
 * Pulled in with #include.
 *
 * The sum below t is the same bits in both designs and at every work-group size: the rows go in
 * blocks of BLOCK; within a block row r goes to lane r mod LANES, each lane adds its rows in
 * ascending order from +0, and the block's sum adds the lanes in lane order; the column's sum
 * adds the blocks' sums in block order from +0. A work-item owns the lanes congruent to its id
 * mod WG (WG divides LANES, LANES divides BLOCK), so it meets each of its lanes' rows in order.
 * Up to BLOCK rows this is the lanes' sum alone. */
#ifndef RANK_KEYS_CL
#define RANK_KEYS_CL

#pragma OPENCL FP_CONTRACT OFF
#ifdef CLSTATS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef REAL
#define REAL float
#endif
#ifndef WG
#define WG 1
#endif

#define DIGIT 8
#define BINS (1 << DIGIT)
#define LANES 256
#ifndef BLOCK
#define BLOCK 4096 /* rows: src/select/column_ranks.c passes its COLUMN_BLOCK */
#endif

#ifdef ORDERED_SUMS
#define ORDERED_READ volatile
#else
#define ORDERED_READ
#endif

#ifdef CLSTATS_FP64
typedef ulong key_t;
#define KEY_BITS 64
#define NAN_KEY 0xffffffffffffffffUL
/* Order-preserving map of double bits: total order, -0 below +0 (NaN handled by the caller). */
inline key_t key_of_real(double v)
{
    const ulong b = as_ulong(v);
    return (b >> 63) ? ~b : (b | 0x8000000000000000UL);
}
inline bool real_nan(double v)
{
    return (as_ulong(v) & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL;
}
#else
typedef uint key_t;
#define KEY_BITS 32
#define NAN_KEY 0xffffffffu
inline key_t key_of_real(float v)
{
    const uint b = as_uint(v);
    return (b >> 31) ? ~b : (b | 0x80000000u);
}
inline bool real_nan(float v)
{
    return (as_uint(v) & 0x7fffffffu) > 0x7f800000u;
}
#endif

#if WG == 1
#define BARRIER()
#define INC(x) ((x)++)
#else
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define INC(x) atomic_inc(&(x))
#endif

/* Bits of the keys from kmin to kmax that they do not all share. */
inline int unshared_bits(key_t kmin, key_t kmax)
{
    return kmin == kmax ? 0 : KEY_BITS - (int)clz(kmin ^ kmax);
}

/* One digit of the walk: the digit at bit `shift` (negative: the last, narrower one) of keys
 * that agree with prefix above it. */
struct digit {
    int s, width;
    key_t above, want_above;
};

inline struct digit digit_at(int shift, key_t prefix)
{
    struct digit d;
    d.s = max(shift, 0);
    d.width = shift < 0 ? DIGIT + shift : DIGIT;
    d.above = (d.s + d.width >= KEY_BITS) ? 0 : (~(key_t)0) << (d.s + d.width);
    d.want_above = prefix & d.above;
    return d;
}

/* The bin of key k in digit d, or -1 where k does not agree with the prefix above it. */
inline int bin_of(struct digit d, key_t k)
{
    return (k & d.above) == d.want_above ? (int)((uint)(k >> d.s) & ((1u << d.width) - 1u)) : -1;
}

/* The prefix after the rank's bin b of digit d was chosen: bits below d.s zero. */
inline key_t prefix_after(struct digit d, uint b)
{
    return d.want_above | ((key_t)b << d.s);
}

/* This work-item's share of rows start .. end of a column (every WG-th from start + lid): the
 * range of its valid keys into *kmin, *kmax (NAN_KEY, 0 where none) and its NaN count. */
inline void key_range(__global const REAL *col, ulong rstep, uint start, uint end, uint lid,
                      key_t *kmin, key_t *kmax, uint *nan)
{
    *kmin = NAN_KEY, *kmax = 0, *nan = 0;
    for (uint r = start + lid; r < end; r += WG) {
        const REAL v = col[(ulong)r * rstep];
        if (real_nan(v)) {
            ++*nan;
            continue;
        }
        const key_t k = key_of_real(v);
        *kmin = min(*kmin, k);
        *kmax = max(*kmax, k);
    }
}

/* Rows start .. end (at most BLOCK, start a multiple of it) of a column, or none where skip: the
 * counts of values below t and equal to it added into this work-item's *less and *equal, and
 * the block's sum below t in the order above, returned on work-item 0. Every work-item of the
 * group calls it (barriers). */
inline REAL block_below(__global const REAL *col, ulong rstep, uint start, uint end, key_t t,
                        bool skip, uint lid, __local REAL *lanes, uint *less, uint *equal)
{
    for (uint j = lid; j < LANES; j += WG) lanes[j] = 0;
    BARRIER();
    for (uint r = start + lid; !skip && r < end; r += WG) {
        const REAL v = col[(ulong)r * rstep];
        if (real_nan(v)) continue;
        const key_t k = key_of_real(v);
        if (k < t) {
            ++*less;
            lanes[r % LANES] += v;
        } else if (k == t) {
            ++*equal;
        }
    }
    BARRIER();
    REAL block = 0;
    if (lid == 0) {
        /* Where built with -D ORDERED_SUMS (CPU devices, src/select/column_ranks.c), read
         * through a volatile pointer: Intel's CPU compiler otherwise vectorised this sum,
         * reordering its additions (the last bits differed between work-group sizes). */
        ORDERED_READ __local REAL *in_order = lanes;
        block = in_order[0];
        for (uint j = 1; j < LANES; j++) block += in_order[j];
    }
    BARRIER();
    return block;
}

#endif
