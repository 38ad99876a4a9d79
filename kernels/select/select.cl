/* select.cl - exact k-th smallest value of a whole array: radix select on order-preserving keys
 * of the float bits, and Kelley's cutting-plane method that brackets the answer before a radix
 * select of the bracket. All state lives in a small device buffer, so the host only enqueues.
 *
 * Build options: -D KEY64=0|1 (float32 or float64 data, read as raw bits), -D WG=work-group size,
 * -D VPT=values per work-item per tile, -D RADIX_BITS=digit width, -D HAVE_FP64=0|1 (the
 * cutting-plane objective sums in double when 1, else in compensated float).
 *
 * Exactness never depends on floating point: counts are integers (64-bit, built from 32-bit
 * atomics with a carry word, since 64-bit atomics are an extension) and the answer is a key.
 * NaNs are counted and left out; -0.0 sorts just below +0.0.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef KEY64
#define KEY64 0
#endif
#ifndef WG
#define WG 256
#endif
/* Barriers of a group of WG work-items: none in a group of one, as LR_BARRIER (local_radix.cl)
 * explains; the sample kernel, whose group is the local radix's, uses that one. */
#if WG == 1
#define WG_BARRIER(flags)
#else
#define WG_BARRIER(flags) barrier(flags)
#endif
#ifndef VPT
#define VPT 8
#endif
#ifndef RADIX_BITS
#define RADIX_BITS 11
#endif
#ifndef HAVE_FP64
#define HAVE_FP64 0
#endif

#if HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif

#if KEY64
typedef ulong key_t;
#define KEY_BITS 64
#define SIGN_BIT 0x8000000000000000UL
#define INF_BITS 0x7ff0000000000000UL
#define KEY_MAX 0xffffffffffffffffUL
#else
typedef uint key_t;
#define KEY_BITS 32
#define SIGN_BIT 0x80000000u
#define INF_BITS 0x7f800000u
#define KEY_MAX 0xffffffffu
#endif

#define NB (1 << RADIX_BITS)
#define NPASS ((KEY_BITS + RADIX_BITS - 1) / RADIX_BITS)
#define TILE (WG * VPT)

/* State words (ulong), shared with src/select/select.c. */
#define ST_N 0        /* values in the array, NaN included */
#define ST_NAN 1      /* NaNs found */
#define ST_NV 2       /* valid (non-NaN) values */
#define ST_R0 3       /* wanted ranks among valid values, 0-based, r0 <= r1 <= r0 + 1 */
#define ST_R1 4
#define ST_FLAGS 5
#define ST_MODE 6     /* how pass 0 sets the ranks: MODE_KTH, MODE_MEDIAN or MODE_GIVEN */
#define ST_K 7
#define ST_COMPACT 8  /* 0: keys read from the data; 1: from kbuf after radix pass 1; 2: from pass 0 */
#define ST_CAP 9      /* capacity of kbuf, in keys */
#define ST_PA 10      /* radix: key prefixes of the two ranks found so far */
#define ST_PB 11
#define ST_RA 12      /* radix: ranks left within those prefixes */
#define ST_RB 13
#define ST_RES0 14    /* result keys of ranks r0 and r1 */
#define ST_RES1 15
#define ST_LO 16      /* cutting plane: closed key bracket [lo, hi] holding both ranks */
#define ST_HI 17
#define ST_T 18       /* trial key: the pass splits the bracket into [lo, t] and (t, hi] */
#define ST_L 19       /* valid values below lo */
#define ST_C 20       /* values inside the bracket */
#define ST_S 21       /* as_ulong of the real sum over the bracket of (x - value(lo)) */
#define ST_PHASE 22   /* 0: the first pass (min, max, count); 1: iterating */
#define ST_BISECT 23  /* the last trial was a bisection */
#define ST_ITERS 24   /* reduction passes run */
#define ST_TAIL 25    /* radix: trailing passes not needed (a bracket's digits end sooner) */
#define ST_BASE 26    /* radix: the digits are those of (key - ST_BASE) << ST_SHIFT, */
#define ST_SHIFT 27   /*   so a bracket's keys take as few passes as its width needs */
#define ST_WORDS 32

#define FLAG_DONE 1u
#define FLAG_EMPTY 2u
#define FLAG_RANGE 4u

#define MODE_KTH 0
#define MODE_MEDIAN 1
#define MODE_GIVEN 2

/* Counter words (uint pairs, low then high) */
#define CTR_NAN 0
#define CTR_KEYS 2  /* keys appended to kbuf (their slots; only the low word counts) */
#define CTR_IN 4    /* sample bracket: valid values inside it */
#define CTR_BELOW 6 /* sample bracket: valid values below it */
#define CTR_WORDS 8

inline bool bits_nan(key_t b)
{
    return (b & ~SIGN_BIT) > INF_BITS;
}

/* Order-preserving map of float bits to unsigned keys: total order, -0 just below +0. */
inline key_t key_of_bits(key_t b)
{
    return (b & SIGN_BIT) ? ~b : (b | SIGN_BIT);
}

inline key_t bits_of_key(key_t k)
{
    return (k & SIGN_BIT) ? (k & ~SIGN_BIT) : ~k;
}

inline real real_of_key(key_t k)
{
#if KEY64
    return as_double(bits_of_key(k));
#else
    return (real)as_float(bits_of_key(k));
#endif
}

/* Key of the data value nearest v (v finite), as the data type rounds it. */
inline key_t key_of_real(real v)
{
#if KEY64
    return key_of_bits(as_ulong(v));
#else
    return key_of_bits(as_uint((float)v));
#endif
}

/* 64-bit counter from 32-bit atomics: a carry out of the low word bumps the high word, so the
 * pair is exact once every add has landed (adds only, never read while adding). */
inline void add64(volatile __global uint *c, uint v)
{
    if (v == 0u) return;
    uint old = atomic_add(&c[0], v);
    if (old + v < old) atomic_inc(&c[1]);
}

inline ulong read64(__global const uint *c)
{
    return ((ulong)c[1] << 32) | (ulong)c[0];
}

/* Digit of radix pass p: pass 0 takes the top RADIX_BITS bits, the last pass what is left. */
inline int pass_shift(int p)
{
    return max(KEY_BITS - (p + 1) * RADIX_BITS, 0);
}

inline key_t pass_dmask(int p)
{
    int width = KEY_BITS - p * RADIX_BITS - pass_shift(p);
    return (((key_t)1) << width) - 1;
}

/* Bits fixed before pass p: zero in pass 0 (a shift by KEY_BITS is undefined, so guarded). */
inline key_t pass_hmask(int p)
{
    return p == 0 ? (key_t)0 : ~((((key_t)1) << (KEY_BITS - p * RADIX_BITS)) - 1);
}

/* The last pass a run needs. */
inline int last_pass(__global const ulong *st)
{
    return NPASS - 1 - (int)st[ST_TAIL];
}

/* Keys inside a bracket [lo, hi] are digitised relative to it: (key - lo) shifted up so that
 * its top bit is the first digit's, and only the passes that cover hi - lo run. A bracket
 * 2^22 keys wide (a median's 8% of 2^25 values straddling an exponent) then takes two
 * passes instead of three. The prefixes restart from zero. */
inline void digits_relative_to(__global ulong *st, key_t lo, key_t hi)
{
    const key_t width = hi - lo;
    const int bits = width == 0 ? 1 : KEY_BITS - (int)clz(width);
    st[ST_BASE] = lo;
    st[ST_SHIFT] = (ulong)(KEY_BITS - bits);
    st[ST_TAIL] = (ulong)(NPASS - (bits + RADIX_BITS - 1) / RADIX_BITS);
    st[ST_PA] = st[ST_PB] = 0;
}

/* ---- Radix select ------------------------------------------------------------------------
 * Each pass histograms one digit of the keys that match the prefixes found so far (two
 * prefixes: an even-count median wants ranks r0 and r0 + 1, which may part ways), then one
 * work-group scans the histogram and extends each prefix by the digit that holds its rank.
 * After pass 0, when the bins found hold at most ST_CAP keys, pass 1 also copies those keys
 * to kbuf and the later passes read only kbuf. */

/* One work-item per group (CPU devices, -D WG=1) owns its local memory: no atomics needed. */
#if WG == 1
#define LOCAL_INC(x) ((x)++)
#else
#define LOCAL_INC(x) atomic_inc(&(x))
#endif

/* Counts one key into the local histograms; returns whether it matched a prefix. */
inline bool hist_key(__local uint *lh, key_t k, key_t hmask, key_t pa, key_t pb, int shift,
                     key_t dmask)
{
    key_t h = k & hmask;
    if (h == pa) {
        LOCAL_INC(lh[(uint)((k >> shift) & dmask)]);
        return true;
    }
    if (h == pb) {
        LOCAL_INC(lh[NB + (uint)((k >> shift) & dmask)]);
        return true;
    }
    return false;
}

/* ---- Gathering keys to kbuf ----------------------------------------------------------------
 * Matching keys are staged in local memory and appended to kbuf a stageful at a time: per tile
 * one barrier, and a flush (one global atomic for the slots, coalesced copies, two barriers)
 * only when the next tile might not fit. A tile's keys take their offsets from one of three
 * local counters in turn, so that a counter is zeroed while no work-item can be reading it.
 * Flushing every tile took four barriers and a global atomic a tile, about half of the bracket
 * pass's time on the H200. (Private arrays kept across barriers were miscompiled by PoCL 3.1,
 * so the stage is local.) */

/* Stage capacity of the gathering passes, in tiles: the host sets more than one where the
 * groups it launches still fit a compute unit's local memory together (src/select/select.c). */
#ifndef STAGE_TILES
#define STAGE_TILES 1
#endif
#define GATHER_STAGE (STAGE_TILES * TILE)

/* A work-item's matches in a tile are collected in mine[0..count) and staged with one local
 * atomic: a counter that every matching key incremented was the bottleneck of the gathering
 * passes. With one work-item per group (CPU devices, where VPT is large) they go to the stage
 * directly, after the `filled` keys staged before. */
#if WG == 1
#define MINE_SIZE 1
#define MINE(k) (stage[filled + count++] = (k))
#else
#define MINE_SIZE VPT
#define MINE(k) (mine[count++] = (k))
#endif

/* Stages tile number `it` of this group (its work-items' mine[0..count)) after the `filled`
 * keys already staged; returns the keys staged now, the same in every work-item. tc[0..2]
 * start at zero. */
inline uint stage_tile(__local key_t *stage, volatile __local uint *tc, uint it, uint filled,
                       const key_t *mine, int count)
{
#if WG == 1
    return filled + (uint)count;
#else
    if (count) {
        const uint at = filled + atomic_add(&tc[it % 3], (uint)count);
        for (int i = 0; i < count; i++) stage[at + i] = mine[i];
    }
    /* Everyone read tc[(it + 1) % 3], tile it - 2's, before the last barrier. */
    if (get_local_id(0) == 0) tc[(it + 1) % 3] = 0;
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    return filled + tc[it % 3];
#endif
}

/* Appends the `filled` staged keys to kbuf, a kbuf of cap keys (slots past its end are
 * counted, not written); returns 0, the keys left staged. Every work-item calls it. */
inline uint flush_stage(__global key_t *kbuf, volatile __global uint *kcount, ulong cap,
                        __local const key_t *stage, volatile __local uint *lbase, uint filled)
{
    if (get_local_id(0) == 0) *lbase = atomic_add(kcount, filled);
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    const uint base = *lbase;
    for (uint i = get_local_id(0); i < filled; i += WG)
        if ((ulong)base + i < cap) kbuf[base + i] = stage[i];
    WG_BARRIER(CLK_LOCAL_MEM_FENCE); /* every copy done before the stage and lbase are reused */
    return 0;
}

/* Merges the local histograms (and NaN count) into the global 64-bit ones. */
inline void merge_hist(__local uint *lh, __global uint *hist, int two)
{
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    for (int b = get_local_id(0); b < (two ? 2 * NB : NB); b += WG)
        add64(&hist[2 * b], lh[b]);
}

inline void clear_hist(__local uint *lh)
{
    for (int b = get_local_id(0); b < 2 * NB; b += WG) lh[b] = 0;
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
}

/* Histogram pass: over the data (n values from data + off), or over the keys gathered in kbuf
 * once a pass or a bracket has compacted them (no NaNs there; at most ST_CAP of them, as over
 * parts a part's pass may run on a bracket that overflowed its kbuf before the parts agree that
 * the bracket missed). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
radix_hist(__global const key_t *data, ulong off, ulong n, __global ulong *st, __global uint *hist,
           __global uint *ctr, __global key_t *kbuf, int pass)
{
    __local uint lh[2 * NB];
    __local key_t stage[TILE]; /* a tile: this pass gathers up to a quarter of the values */
    __local uint tc[3], lbase, lnan;
    const ulong compact = st[ST_COMPACT];
    const bool from_kbuf = compact == 2 || (compact == 1 && pass > 1);
    /* Skipped passes run with no tiles rather than returning early: PoCL's work-group
     * compiler has miscompiled an early return ahead of barriers. */
    if ((st[ST_FLAGS] & FLAG_DONE) || pass > last_pass(st)) n = 0;
    else if (from_kbuf) n = min(read64(&ctr[CTR_KEYS]), st[ST_CAP]);
    const key_t key_base = (key_t)st[ST_BASE];
    const int key_shift = (int)st[ST_SHIFT];
    const bool do_append = compact == 1 && pass == 1;
    clear_hist(lh);
    if (get_local_id(0) == 0) tc[0] = tc[1] = tc[2] = lnan = 0;
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);

    const key_t pa = (key_t)st[ST_PA], pb = (key_t)st[ST_PB];
    const key_t hmask = pass_hmask(pass), dmask = pass_dmask(pass);
    const int shift = pass_shift(pass);
    const int lid = get_local_id(0);
    uint nan = 0, filled = 0, it = 0;
    data += off;
    const ulong ntiles = (n + TILE - 1) / TILE;
    for (ulong t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        const ulong base = t * TILE;
        key_t mine[MINE_SIZE];
        int count = 0;
        for (int j = 0; j < VPT; j++) {
            const ulong i = base + (ulong)j * WG + lid;
            if (i >= n) continue;
            key_t k;
            if (from_kbuf) {
                k = (kbuf[i] - key_base) << key_shift;
            } else {
                const key_t b = data[i];
                if (bits_nan(b)) {
                    nan++;
                    continue;
                }
                k = key_of_bits(b);
            }
            if (hist_key(lh, k, hmask, pa, pb, shift, dmask) && do_append) MINE(k);
        }
        if (do_append) {
            filled = stage_tile(stage, tc, it++, filled, mine, count);
            /* Every tile, unconditionally: a barrier under a condition here made PoCL's code
             * for the whole pass a quarter slower on CPUs, appending or not. */
            filled = flush_stage(kbuf, &ctr[CTR_KEYS], st[ST_CAP], stage, &lbase, filled);
        }
    }
    if (pass == 0 && nan) atomic_add(&lnan, nan);
    merge_hist(lh, hist, pa != pb);
    if (pass == 0 && lid == 0) add64(&ctr[CTR_NAN], lnan);

}

/* Bin of histogram `h` (NB counts, chunked WG ways) that holds rank *r; *r becomes the rank
 * within that bin and *count its size. Every work-item calls it (barriers inside). */
inline uint find_bin(__global const uint *h, ulong *r, ulong *count, __local ulong *part,
                     __local ulong *out)
{
    const int lid = get_local_id(0);
    const int per = (NB + WG - 1) / WG, b0 = lid * per, b1 = min(b0 + per, NB);
    ulong s = 0;
    for (int b = b0; b < b1; b++) s += read64(&h[2 * b]);
    part[lid] = s;
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    /* Hillis-Steele inclusive scan of the WG chunk sums. */
    for (int d = 1; d < WG; d <<= 1) {
        ulong add = lid >= d ? part[lid - d] : 0;
        WG_BARRIER(CLK_LOCAL_MEM_FENCE);
        part[lid] += add;
        WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    }
    const ulong incl = part[lid], excl = incl - s, want = *r;
    if (want >= excl && want < incl) {
        ulong c = excl;
        for (int b = b0; b < b1; b++) {
            ulong hb = read64(&h[2 * b]);
            if (want < c + hb) {
                out[0] = (ulong)b;
                out[1] = want - c;
                out[2] = hb;
                break;
            }
            c += hb;
        }
    }
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    const uint bin = (uint)out[0];
    *r = out[1];
    *count = out[2];
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    return bin;
}

/* One work-group: picks the digits of pass `pass` and zeroes the histograms for the next. */
inline void scan_pass(__global ulong *st, __global uint *hist, __global uint *ctr, int pass,
                      __local ulong *part, __local ulong *out)
{
    const ulong compact = st[ST_COMPACT];
    if ((st[ST_FLAGS] & FLAG_DONE) || pass > last_pass(st)) return;
    const int lid = get_local_id(0);

    if (pass == 0 && compact == 0) {
        /* First pass over the data: NaNs are known, so the wanted ranks are too. */
        const ulong n = st[ST_N], nan = read64(&ctr[CTR_NAN]), nv = n - nan;
        ulong r0 = st[ST_R0], r1 = st[ST_R1];
        if (st[ST_MODE] == MODE_KTH) r0 = r1 = st[ST_K];
        if (st[ST_MODE] == MODE_MEDIAN) {
            r0 = nv ? (nv - 1) / 2 : 0;
            r1 = nv / 2;
        }
        WG_BARRIER(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            st[ST_NAN] = nan;
            st[ST_NV] = nv;
            st[ST_R0] = r0;
            st[ST_R1] = r1;
            st[ST_RA] = r0;
            st[ST_RB] = r1;
            if (nv == 0) st[ST_FLAGS] |= FLAG_EMPTY | FLAG_DONE;
            else if (r1 >= nv) st[ST_FLAGS] |= FLAG_RANGE | FLAG_DONE;
        }
        WG_BARRIER(CLK_GLOBAL_MEM_FENCE);
        if (nv == 0 || r1 >= nv) return;
    }
    const key_t pa = (key_t)st[ST_PA], pb = (key_t)st[ST_PB];
    ulong ra = st[ST_RA], rb = st[ST_RB], ca, cb;
    const int shift = pass_shift(pass);
    const bool two = pa != pb;
    uint da = find_bin(hist, &ra, &ca, part, out);
    uint db = find_bin(two ? hist + 2 * NB : hist, &rb, &cb, part, out);
    /* Every work-item has read the histograms and st (global memory, which find_bin's local
     * barriers do not order) before they are overwritten below. */
    WG_BARRIER(CLK_GLOBAL_MEM_FENCE);
    for (int b = lid; b < 2 * 2 * NB; b += WG) hist[b] = 0;
    if (lid == 0) {
        const key_t na = pa | ((key_t)da << shift), nb = pb | ((key_t)db << shift);
        st[ST_PA] = na;
        st[ST_PB] = nb;
        st[ST_RA] = ra;
        st[ST_RB] = rb;
        if (pass == 0 && compact == 0) {
            const ulong cand = ca + (na != nb ? cb : 0);
            if (cand <= st[ST_CAP]) st[ST_COMPACT] = 1;
        }
        if (pass == last_pass(st)) {
            const key_t key_base = (key_t)st[ST_BASE];
            const int key_shift = (int)st[ST_SHIFT];
            st[ST_RES0] = (na >> key_shift) + key_base;
            st[ST_RES1] = (nb >> key_shift) + key_base;
            st[ST_FLAGS] |= FLAG_DONE;
        }
    }
}

/* The scan as a kernel of its own (one work-group). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
radix_scan(__global ulong *st, __global uint *hist, __global uint *ctr, int pass)
{
    __local ulong part[WG];
    __local ulong out[3];
    scan_pass(st, hist, ctr, pass, part, out);
}

/* ---- Cutting plane -----------------------------------------------------------------------
 * Kelley's cutting-plane method on the convex f(y) = sum |x_i - y| + lambda y, whose minimiser
 * is the k-th smallest value for lambda = n - 2k + 1 (Kelley 1960; Beliakov 2011, "Parallel
 * calculation of the median and order statistics on GPUs with application to robust
 * regression"). The robust form (RESEARCH.md): a closed key bracket [lo, hi] with
 * c(< lo) <= r0 and c(<= hi) > r1, each pass one fused reduction of the counts, the objective
 * sums relative to the bracket (values outside it contribute only counts, so 1e30 next to 1
 * loses nothing) and the min and max keys on each side of the trial; the bracket shrinks to
 * the min and max of the side kept, so ties end it when they are equal. Counts decide, the
 * objective only steers; a weak step is followed by a bisection in key space, which bounds
 * the passes. When the bracket holds at most ST_CAP values they are copied to kbuf and the
 * radix kernels above finish. */

#define CP_Q 6 /* per-group ulong partials: cl, cr, minl, maxl, minr, maxr */

/* Kahan-compensated sum for devices without fp64: the objective only steers, but stays sane. */
typedef struct {
    real s, c;
} ksum;

inline void kadd(ksum *k, real v)
{
#if HAVE_FP64
    k->s += v;
#else
    real y = v - k->c, t = k->s + y;
    k->c = (t - k->s) - y;
    k->s = t;
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
cp_reduce(__global const key_t *data, ulong off, ulong n, __global const ulong *st,
          __global ulong *pc, __global real *ps)
{
    if ((st[ST_FLAGS] & FLAG_DONE) || st[ST_COMPACT] == 2) return;
    const int lid = get_local_id(0);
    const bool first = st[ST_PHASE] == 0;
    const key_t lo = first ? 0 : (key_t)st[ST_LO], hi = first ? KEY_MAX : (key_t)st[ST_HI];
    const key_t tk = first ? KEY_MAX : (key_t)st[ST_T];
    const real a = first ? 0 : real_of_key(lo), t = first ? 0 : real_of_key(tk);
    ulong cl = 0, cr = 0;
    key_t minl = KEY_MAX, maxl = 0, minr = KEY_MAX, maxr = 0;
    ksum sl = {0, 0}, sr = {0, 0};
    data += off;
    const ulong ntiles = (n + TILE - 1) / TILE;
    for (ulong g = get_group_id(0); g < ntiles; g += get_num_groups(0)) {
        const ulong base = g * TILE;
        for (int j = 0; j < VPT; j++) {
            const ulong i = base + (ulong)j * WG + lid;
            if (i >= n) continue;
            const key_t b = data[i];
            if (bits_nan(b)) continue;
            const key_t k = key_of_bits(b);
            if (k < lo || k > hi) continue;
#if KEY64
            const real x = as_double(b);
#else
            const real x = (real)as_float(b);
#endif
            if (k <= tk) {
                cl++;
                minl = min(minl, k);
                maxl = max(maxl, k);
                /* k == lo adds 0; skipping it keeps -inf - -inf out of the sum */
                if (!first && k != lo) kadd(&sl, x - a);
            } else {
                cr++;
                minr = min(minr, k);
                maxr = max(maxr, k);
                kadd(&sr, x - t);
            }
        }
    }
    __local ulong lq[CP_Q][WG];
    __local real lr[2][WG];
    lq[0][lid] = cl;
    lq[1][lid] = cr;
    lq[2][lid] = minl;
    lq[3][lid] = maxl;
    lq[4][lid] = minr;
    lq[5][lid] = maxr;
    lr[0][lid] = sl.s - sl.c;
    lr[1][lid] = sr.s - sr.c;
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lq[0][lid] += lq[0][lid + s];
            lq[1][lid] += lq[1][lid + s];
            lq[2][lid] = min(lq[2][lid], lq[2][lid + s]);
            lq[3][lid] = max(lq[3][lid], lq[3][lid + s]);
            lq[4][lid] = min(lq[4][lid], lq[4][lid + s]);
            lq[5][lid] = max(lq[5][lid], lq[5][lid + s]);
            lr[0][lid] += lr[0][lid + s];
            lr[1][lid] += lr[1][lid + s];
        }
        WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        const size_t g = get_group_id(0);
        for (int q = 0; q < CP_Q; q++) pc[g * CP_Q + q] = lq[q][0];
        ps[g * 2] = lr[0][0];
        ps[g * 2 + 1] = lr[1][0];
    }
}

/* Next trial key inside [lo, hi): Kelley's step on the objective when it is finite and the
 * last step was strong, else the middle of the bracket in key space. */
inline key_t next_trial(__global ulong *st, key_t lo, key_t hi, ulong L, ulong C, real S,
                        bool weak)
{
    key_t t = lo + (hi - lo) / 2;
    const bool bisect = weak && !st[ST_BISECT];
    if (!bisect) {
        const real a = real_of_key(lo), b = real_of_key(hi), w = b - a;
        const real nv = (real)st[ST_NV], k1 = (real)st[ST_R0] + 1;
        const real lam = nv - 2 * k1 + 1;
        const real R = nv - (real)L - (real)C;
        const real D = w * ((real)L + (real)C - R + lam) - 2 * S; /* f(b) - f(a) */
        const real ga = 2 * (real)L - 2 * k1 + 1;                 /* left subgradient at a */
        const real gb = 2 * ((real)L + (real)C) - 2 * k1 + 1;     /* right subgradient at b */
        const real y = a + (D - gb * w) / (ga - gb);
        if (isfinite(y) && isfinite(w)) {
            key_t ky = key_of_real(y);
            t = ky < lo ? lo : (ky >= hi ? hi - 1 : ky);
        }
    }
    st[ST_BISECT] = bisect;
    return t;
}

/* One work-group: reduces the partials of cp_reduce and moves the bracket. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
cp_update(__global ulong *st, __global const ulong *pc, __global const real *ps, uint groups)
{
    if ((st[ST_FLAGS] & FLAG_DONE) || st[ST_COMPACT] == 2) return;
    const int lid = get_local_id(0);
    ulong q[CP_Q] = {0, 0, KEY_MAX, 0, KEY_MAX, 0};
    real sl = 0, sr = 0;
    for (uint g = lid; g < groups; g += WG) {
        q[0] += pc[g * CP_Q];
        q[1] += pc[g * CP_Q + 1];
        q[2] = min(q[2], pc[g * CP_Q + 2]);
        q[3] = max(q[3], pc[g * CP_Q + 3]);
        q[4] = min(q[4], pc[g * CP_Q + 4]);
        q[5] = max(q[5], pc[g * CP_Q + 5]);
        sl += ps[g * 2];
        sr += ps[g * 2 + 1];
    }
    __local ulong lq[CP_Q][WG];
    __local real lr[2][WG];
    for (int i = 0; i < CP_Q; i++) lq[i][lid] = q[i];
    lr[0][lid] = sl;
    lr[1][lid] = sr;
    /* Global too: every work-item's reads of st above come before work-item 0 writes it. */
    WG_BARRIER(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lq[0][lid] += lq[0][lid + s];
            lq[1][lid] += lq[1][lid + s];
            lq[2][lid] = min(lq[2][lid], lq[2][lid + s]);
            lq[3][lid] = max(lq[3][lid], lq[3][lid + s]);
            lq[4][lid] = min(lq[4][lid], lq[4][lid + s]);
            lq[5][lid] = max(lq[5][lid], lq[5][lid + s]);
            lr[0][lid] += lr[0][lid + s];
            lr[1][lid] += lr[1][lid + s];
        }
        WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    }
    if (lid != 0) return;

    const ulong cl = lq[0][0], cr = lq[1][0];
    const key_t minl = (key_t)lq[2][0], maxl = (key_t)lq[3][0];
    const key_t minr = (key_t)lq[4][0], maxr = (key_t)lq[5][0];
    ulong L = st[ST_L], C;
    key_t lo, hi;
    real S;
    st[ST_ITERS] += 1;
    if (st[ST_PHASE] == 0) {
        /* First pass: every valid value fell on the left. */
        const ulong nv = cl, nan = st[ST_N] - nv;
        ulong r0 = st[ST_R0], r1 = st[ST_R1];
        if (st[ST_MODE] == MODE_KTH) r0 = r1 = st[ST_K];
        if (st[ST_MODE] == MODE_MEDIAN) {
            r0 = nv ? (nv - 1) / 2 : 0;
            r1 = nv / 2;
        }
        st[ST_NAN] = nan;
        st[ST_NV] = nv;
        st[ST_R0] = r0;
        st[ST_R1] = r1;
        if (nv == 0) {
            st[ST_FLAGS] |= FLAG_EMPTY | FLAG_DONE;
            return;
        }
        if (r1 >= nv) {
            st[ST_FLAGS] |= FLAG_RANGE | FLAG_DONE;
            return;
        }
        L = 0;
        C = nv;
        lo = minl;
        hi = maxl;
        S = NAN;
        st[ST_PHASE] = 1;
        st[ST_BISECT] = 0;
    } else {
        const ulong r0 = st[ST_R0], r1 = st[ST_R1];
        const real a = real_of_key((key_t)st[ST_LO]), t = real_of_key((key_t)st[ST_T]);
        if (L + cl > r1) { /* both ranks at or below t */
            lo = minl;
            hi = maxl;
            C = cl;
            S = lr[0][0] - (real)cl * (real_of_key(minl) - a);
        } else if (L + cl <= r0) { /* both above t */
            L += cl;
            lo = minr;
            hi = maxr;
            C = cr;
            S = lr[1][0] - (real)cr * (real_of_key(minr) - t);
        } else { /* r0 is the largest value <= t and r1 the smallest above */
            st[ST_RES0] = maxl;
            st[ST_RES1] = minr;
            st[ST_FLAGS] |= FLAG_DONE;
            return;
        }
    }
    const ulong prev = st[ST_C];
    st[ST_LO] = lo;
    st[ST_HI] = hi;
    st[ST_L] = L;
    st[ST_C] = C;
    if (lo == hi) {
        st[ST_RES0] = st[ST_RES1] = lo;
        st[ST_FLAGS] |= FLAG_DONE;
        return;
    }
    if (C <= st[ST_CAP]) {
        /* Small enough: gather it and let the radix kernels finish from pass 0. */
        st[ST_COMPACT] = 2;
        digits_relative_to(st, lo, hi);
        st[ST_RA] = st[ST_R0] - L;
        st[ST_RB] = st[ST_R1] - L;
        return;
    }
    const bool weak = !isfinite(S) || 2 * C > prev;
    st[ST_T] = next_trial(st, lo, hi, L, C, S, weak);
}

/* Copies the keys inside the final bracket to kbuf (at most ST_CAP of them). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
cp_gather(__global const key_t *data, ulong off, ulong n, __global const ulong *st,
          __global uint *ctr, __global key_t *kbuf)
{
    __local key_t stage[GATHER_STAGE];
    __local uint tc[3], lbase;
    if ((st[ST_FLAGS] & FLAG_DONE) || st[ST_COMPACT] != 2) n = 0;
    if (get_local_id(0) == 0) tc[0] = tc[1] = tc[2] = 0;
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    const key_t lo = (key_t)st[ST_LO], hi = (key_t)st[ST_HI];
    const ulong cap = st[ST_CAP];
    const int lid = get_local_id(0);
    uint filled = 0, it = 0;
    data += off;
    const ulong ntiles = (n + TILE - 1) / TILE;
    for (ulong t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        const ulong base = t * TILE;
        key_t mine[MINE_SIZE];
        int count = 0;
        for (int j = 0; j < VPT; j++) {
            const ulong i = base + (ulong)j * WG + lid;
            if (i >= n) continue;
            const key_t b = data[i];
            if (bits_nan(b)) continue;
            const key_t k = key_of_bits(b);
            if (k >= lo && k <= hi) MINE(k);
        }
        filled = stage_tile(stage, tc, it++, filled, mine, count);
        if (STAGE_TILES == 1 || filled > GATHER_STAGE - TILE) /* see radix_hist */
            filled = flush_stage(kbuf, &ctr[CTR_KEYS], cap, stage, &lbase, filled);
    }
    if (STAGE_TILES > 1 && filled) flush_stage(kbuf, &ctr[CTR_KEYS], cap, stage, &lbase, filled);
}

/* ---- Sample bracket ----------------------------------------------------------------------
 * One pass over the data instead of two or three: the quantiles of a strided sample give keys
 * a <= b whose ranks bracket the wanted ones with a wide margin (5 standard deviations of a
 * sample quantile); one pass counts the values below a and gathers those in [a, b] to kbuf;
 * the radix passes then finish on kbuf. If the ranks fell outside (or the bracket overflowed
 * kbuf), the state is reset and the radix passes run on the data: slower, never wrong. Counts
 * decide; the sample only steers. */

/* Sample keys, held in local memory by one work-group (CLSTATS_SELECT_SAMPLE sets it): the
 * bracket narrows as 1 / sqrt(SAMPLE), while picking its two quantiles costs one compute
 * unit time in proportion to SAMPLE / SAMPLE_WG. */
#ifndef SAMPLE
#if KEY64
#define SAMPLE 1024
#else
#define SAMPLE 2048
#endif
#endif

#ifndef SAMPLE_WG
#define SAMPLE_WG 256
#endif

#define LR_WG SAMPLE_WG
#define LR_BITS RADIX_BITS
#include "local_radix.cl"

/* Zeroes the histograms and counters a run starts from (scratch buffers keep old contents). */
__kernel void select_init(__global uint *hist, __global uint *ctr)
{
    for (size_t i = get_global_id(0); i < 4 * NB; i += get_global_size(0)) hist[i] = 0;
    for (size_t i = get_global_id(0); i < CTR_WORDS; i += get_global_size(0)) ctr[i] = 0;
}

/* Keys *ka and *kb of ranks ra and rb (ra <= rb < SAMPLE) of the sample s: a radix select in
 * local memory, a few barriers a digit, where a bitonic sort of the sample took 66 barriers. Every work-item calls it and gets the keys. */
inline void sample_quantiles(__local const key_t *s, uint ra, uint rb, key_t *ka, key_t *kb,
                             __local uint *lh, __local uint *csum, __local uint *found)
{
    const int lid = get_local_id(0);
    key_t pa = 0, pb = 0;
    for (int pass = 0; pass < NPASS; pass++) {
        for (int b = lid; b < 2 * NB; b += SAMPLE_WG) lh[b] = 0;
        LR_BARRIER(CLK_LOCAL_MEM_FENCE);
        const key_t hmask = pass_hmask(pass), dmask = pass_dmask(pass);
        const int shift = pass_shift(pass);
        for (int i = lid; i < SAMPLE; i += SAMPLE_WG) {
            const key_t k = s[i], h = k & hmask;
            if (h == pa) LR_INC(lh[(uint)((k >> shift) & dmask)]);
            else if (h == pb) LR_INC(lh[NB + (uint)((k >> shift) & dmask)]);
        }
        uint da, db;
        find_bins(lh, pa != pb, &ra, &rb, &da, &db, csum, found, lid, SAMPLE_WG);
        pa |= (key_t)da << shift;
        pb |= (key_t)db << shift;
    }
    *ka = pa;
    *kb = pb;
}

__kernel __attribute__((reqd_work_group_size(SAMPLE_WG, 1, 1))) void
sample_bracket(__global const key_t *data, ulong off, ulong n, __global ulong *st,
               __global uint *hist, __global uint *ctr)
{
    __local key_t s[SAMPLE];
    __local uint lh[2 * NB], csum[2 * LR_NCHUNK], found[8];
    __local uint lvalid;
    const int lid = get_local_id(0);
    /* select_init's work, a launch saved. */
    for (int i = lid; i < 4 * NB; i += SAMPLE_WG) hist[i] = 0;
    for (int i = lid; i < CTR_WORDS; i += SAMPLE_WG) ctr[i] = 0;
    if (lid == 0) lvalid = 0;
    LR_BARRIER(CLK_LOCAL_MEM_FENCE);
    uint valid = 0;
    const ulong stride = n / SAMPLE;
    for (int i = lid; i < SAMPLE; i += SAMPLE_WG) {
        const key_t b = data[off + (ulong)i * stride + stride / 2];
        const bool nan = bits_nan(b);
        valid += !nan;
        s[i] = nan ? KEY_MAX : key_of_bits(b); /* NaNs rank last */
    }
    atomic_add(&lvalid, valid);
    LR_BARRIER(CLK_LOCAL_MEM_FENCE);
    const uint sv = lvalid;
    /* The wanted rank as a fraction of the valid values (their number estimated by the
     * sample for a k-th value; exact for the median). */
    const float nv_est = (float)n * (float)sv / (float)SAMPLE;
    float p = 0.5f;
    if (st[ST_MODE] == MODE_KTH) p = nv_est > 0 ? ((float)st[ST_K] + 0.5f) / nv_est : 0.5f;
    if (st[ST_MODE] == MODE_GIVEN) p = nv_est > 0 ? ((float)st[ST_R0] + 0.5f) / nv_est : 0.5f;
    p = clamp(p, 0.0f, 1.0f);
    const float margin = 5.0f * sqrt((float)SAMPLE * p * (1.0f - p)) + 4.0f;
    const float lo_i = floor(p * (float)sv - margin), hi_i = ceil(p * (float)sv + margin);
    /* An end of the bracket at or past the sample's own ends stays open. */
    const bool open_lo = sv == 0 || lo_i <= 0, open_hi = sv == 0 || hi_i >= sv - 1;
    key_t lo = 0, hi = KEY_MAX;
    if (!(open_lo && open_hi)) /* the same for every work-item */
        sample_quantiles(s, open_lo ? 0 : (uint)lo_i, open_hi ? sv - 1 : (uint)hi_i, &lo, &hi,
                         lh, csum, found);
    if (lid != 0) return;
    st[ST_LO] = open_lo ? 0 : lo;
    st[ST_HI] = open_hi ? KEY_MAX : hi;
}

/* Over parts (src/select/select.c): this part's m sample values, value i at element
 * off + i stride + stride / 2 (sample_bracket's places), their bits to out[0 .. m). */
__kernel void sample_values(__global const key_t *data, ulong off, ulong stride, ulong m,
                            __global key_t *out)
{
    const ulong i = get_global_id(0);
    if (i < m) out[i] = data[off + i * stride + stride / 2];
}

/* Counts the valid values below [lo, hi] and inside it, and gathers those inside to kbuf (as
 * many as fit: the count says whether all did). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
bracket_pass(__global const key_t *data, ulong off, ulong n, __global const ulong *st,
             __global uint *ctr, __global key_t *kbuf)
{
    __local key_t stage[GATHER_STAGE];
    __local uint tc[3], lbase, lnan, lbelow, lin;
    const int lid = get_local_id(0);
    if (lid == 0) tc[0] = tc[1] = tc[2] = lnan = lbelow = lin = 0;
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    const key_t lo = (key_t)st[ST_LO], hi = (key_t)st[ST_HI];
    const ulong cap = st[ST_CAP];
    uint nan = 0, below = 0, in = 0, filled = 0, it = 0;
    data += off;
    const ulong ntiles = (n + TILE - 1) / TILE;
    for (ulong t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        const ulong base = t * TILE;
        key_t mine[MINE_SIZE];
        int count = 0;
        for (int j = 0; j < VPT; j++) {
            const ulong i = base + (ulong)j * WG + lid;
            if (i >= n) continue;
            const key_t b = data[i];
            if (bits_nan(b)) {
                nan++;
                continue;
            }
            const key_t k = key_of_bits(b);
            if (k < lo) {
                below++;
            } else if (k <= hi) {
                in++;
                MINE(k);
            }
        }
        filled = stage_tile(stage, tc, it++, filled, mine, count);
        if (STAGE_TILES == 1 || filled > GATHER_STAGE - TILE) /* see radix_hist */
            filled = flush_stage(kbuf, &ctr[CTR_KEYS], cap, stage, &lbase, filled);
    }
    if (STAGE_TILES > 1 && filled) flush_stage(kbuf, &ctr[CTR_KEYS], cap, stage, &lbase, filled);
    atomic_add(&lnan, nan);
    atomic_add(&lbelow, below);
    atomic_add(&lin, in);
    WG_BARRIER(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        add64(&ctr[CTR_NAN], lnan);
        add64(&ctr[CTR_BELOW], lbelow);
        add64(&ctr[CTR_IN], lin);
    }
}

/* One work-item: the wanted ranks from the NaN count; the radix passes go on from kbuf when
 * the bracket holds them (all of it gathered), else from the data, as if no bracket had been. */
__kernel void bracket_update(__global ulong *st, __global uint *ctr)
{
    if (get_global_id(0) != 0) return;
    const ulong n = st[ST_N], nan = read64(&ctr[CTR_NAN]), nv = n - nan;
    const ulong below = read64(&ctr[CTR_BELOW]), in = read64(&ctr[CTR_IN]);
    ulong r0 = st[ST_R0], r1 = st[ST_R1];
    if (st[ST_MODE] == MODE_KTH) r0 = r1 = st[ST_K];
    if (st[ST_MODE] == MODE_MEDIAN) {
        r0 = nv ? (nv - 1) / 2 : 0;
        r1 = nv / 2;
    }
    st[ST_ITERS] = 1;
    if (nv == 0 || r1 >= nv) {
        st[ST_NAN] = nan;
        st[ST_NV] = nv;
        st[ST_FLAGS] |= nv == 0 ? FLAG_EMPTY | FLAG_DONE : FLAG_RANGE | FLAG_DONE;
        return;
    }
    if (below <= r0 && r1 < below + in && in <= st[ST_CAP]) {
        st[ST_NAN] = nan;
        st[ST_NV] = nv;
        st[ST_R0] = r0;
        st[ST_R1] = r1;
        st[ST_L] = below;
        st[ST_C] = in;
        st[ST_COMPACT] = 2;
        st[ST_RA] = r0 - below;
        st[ST_RB] = r1 - below;
        digits_relative_to(st, (key_t)st[ST_LO], (key_t)st[ST_HI]);
        return;
    }
    for (int i = 0; i < CTR_WORDS; i++) ctr[i] = 0; /* the data passes count afresh */
    st[ST_ITERS] = 2; /* a missed bracket: the radix path follows */
}
