/* median_filter_rank.cl - exact sliding-window median and MAD for CPU devices: one work-item
 * per work-group, each filtering one tile of TX x TY outputs in a snake sweep.
 *
 * The tile's input (tile + halo, boundary applied) is sorted once, so every element has a
 * unique rank (NaNs sort last, above every valid rank); the window is then a set of ranks kept
 * as a bitset, and a move by one pixel toggles 2WY bits (2WX down a row) (Huang, Yang & Tang 1979,
 * "A fast two-dimensional median filtering algorithm", with ranks in place of a value histogram).
 * Cursors remember a rank position and the count of window ranks below it across moves, so a
 * select starts from the previous pixel's answer: a few popcounts, then a bit select.
 *
 * Several output rows a sweep (-D ROWS=K): the K windows of a column of K outputs share all but
 * K - 1 of their rows, so those shared rows' ranks are one bitset S and each window keeps its
 * other K - 1 rows' ranks in a bitset E_j of its own; the window is S | E_j word by word. A column
 * move toggles the shared column's ranks once for the K outputs (2(WY - K + 1) toggles, plus
 * 2(K - 1) into each E_j), where K sweeps of one row toggle 2WY each; the counts below each
 * window's cursors are still compared per window, in the same pass over the column.
 *
 * MAD: with the window sorted as s_0 <= ... <= s_(n-1) and L the first rank not below the
 * median m, fl(s - m) rises with rank above L and fl(m - s) rises going down from L - 1, so the
 * deviations are two sorted sequences and their k smallest are a run [a, a + k] of ranks. The
 * run is found as the split of a merge (each end's deviation at most the next outside one),
 * walking from the previous pixel's run; its ends and neighbours give the k-th and (k+1)-th
 * smallest deviation, exactly as the sorted deviations would.
 *
 * Build options: -D WX, -D WY (window columns and rows) -D TX=.. -D TY=.. (tile shape)
 * -D RANK_BITS=16|32 -D EVEN (even_rule.cl), -D GLOBAL_TILE (the tile in global memory),
 * -D ROWS=K (output rows a sweep; the host keeps 2K - 1 <= WY).
 * Boundary modes live in colmap/rowmap (host-built, see median_filter.cl): -1 means cval.
 */
#pragma OPENCL FP_CONTRACT OFF

#include "../common/float_keys.cl"
#include "even_rule.cl"

/* Ranks: 16-bit where the tile's input has at most 65536 elements, else 32-bit. */
#if RANK_BITS == 16
#define RANK_T ushort
#define RANK_V ushort16
#define MASK_V short16
#define RANK_VN 16
#define RANK_VLOAD vload16
#define LANE_IDS ((short16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#define MASK_V8 short8
#define MASK_V4 short4
#define CONVERT_INT4(v) convert_int4(v)
#else
#define RANK_T uint
#define RANK_V uint16
#define MASK_V int16
#define RANK_VN 16
#define RANK_VLOAD vload16
#define LANE_IDS ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#define MASK_V8 int8
#define MASK_V4 int4
#define CONVERT_INT4(v) (v)
#endif
#define IW_MAX (TX + WX - 1)
#define IH_MAX (TY + WY - 1)
#define N_MAX (IW_MAX * IH_MAX)
#define N_WORDS ((N_MAX + 63) / 64)
#ifndef ROWS
#define ROWS 1
#endif
#define BITSET_WORDS (N_WORDS + 3) /* a bitset and a word of zeros either side */
/* A word of window j's ranks: the shared rows' bits and its own rows' (in `extra`); i is read
 * twice, so it must have no side effects. */
#if ROWS > 1
#define WORD(i) (bits[i] | extra[i])
#else
#define WORD(i) (bits[i])
#endif
#define NAN_KEY 0xffffffffu /* above key_of(any number): NaNs take the top ranks */
/* For the helpers the sweep calls per pixel: PoCL's compiler left them calls, with the window's
 * cursors passed through memory; inlined, they stay in registers. */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Where the tile's arrays live: local memory, or with -D GLOBAL_TILE (a tile larger than the
 * device's local memory, for the largest windows) each group's part of a global scratch
 * buffer, TILE_WORDS 8-byte words a group (on CPU devices both are ordinary memory). */
#ifdef GLOBAL_TILE
#define TILE_SPACE __global
#define TILE_WORDS                                                                                 \
    (2 * N_MAX + (ROWS + 1) * BITSET_WORDS +                                                       \
     (N_MAX * 4 + (N_MAX + RANK_VN) * (RANK_BITS / 8) + 7) / 8)
#else
#define TILE_SPACE __local
#endif

/* The lane sums of four vectors at once: one tree of adds that transposes as it halves, in
 * place of a tree for each. */
inline int4 sum_lanes4(MASK_V a, MASK_V b, MASK_V c, MASK_V d)
{
    const MASK_V x = (MASK_V)(a.lo + a.hi, b.lo + b.hi), y = (MASK_V)(c.lo + c.hi, d.lo + d.hi);
    const MASK_V z = (MASK_V)(x.even + x.odd, y.even + y.odd); /* 4 lanes each of a, b, c, d */
    const MASK_V8 u = z.even + z.odd;
    return CONVERT_INT4(u.even + u.odd);
}

inline int ctz64(ulong x)
{
    return 63 - (int)clz(x & (~x + 1UL));
}

/* Position of the j-th (0-based) set bit of x, which has more than j, without a branch:
 * byte popcounts summed into every byte by a multiply locate the byte, then three halvings
 * (Vigna 2008, "Broadword implementation of rank/select queries", select9's first step). */
inline int select_in_word(ulong x, int j)
{
    const ulong ones = 0x0101010101010101UL, msbs = 0x8080808080808080UL;
    ulong s = x - ((x >> 1) & 0x5555555555555555UL);
    s = (s & 0x3333333333333333UL) + ((s >> 2) & 0x3333333333333333UL);
    s = ((s + (s >> 4)) & 0x0f0f0f0f0f0f0f0fUL) * ones; /* byte i: bits in bytes 0..i */
    /* Bytes whose running count is <= j lie wholly below the bit (counts are < 0x80). */
    const int place = (int)popcount(((((ulong)j * ones) | msbs) - s) & msbs) * 8;
    int r = j - (int)(((s << 8) >> place) & 0xffUL);
    ulong b = (x >> place) & 0xffUL;
    int pos = place;
    int c = (int)popcount(b & 0xfUL);
    bool up = r >= c;
    r -= up ? c : 0;
    b = up ? b >> 4 : b & 0xfUL;
    pos += up ? 4 : 0;
    c = (int)popcount(b & 0x3UL);
    up = r >= c;
    r -= up ? c : 0;
    b = up ? b >> 2 : b & 0x3UL;
    pos += up ? 2 : 0;
    return pos + (r >= (int)(b & 1UL) ? 1 : 0);
}

/* A position in rank space and the number of window ranks below it, kept right across moves
 * by the toggles, so the next select starts here. */
struct cursor {
    int p, below;
};

/* Moves c to the window's r-th smallest rank (0-based; the window holds more than r). */
ALWAYS_INLINE void cursor_select(TILE_SPACE const ulong *bits, TILE_SPACE const ulong *extra,
                                 struct cursor *c, int r)
{
    int wi = c->p >> 6;
    ulong word = WORD(wi);
    if (c->below == r && ((word >> (c->p & 63)) & 1UL)) return; /* still there: common */
    int before = c->below - (int)popcount(word & ((1UL << (c->p & 63)) - 1UL));
    int count = (int)popcount(word);
    while (before > r) {
        wi--;
        word = WORD(wi);
        count = (int)popcount(word);
        before -= count;
    }
    while (before + count <= r) {
        before += count;
        wi++;
        word = WORD(wi);
        count = (int)popcount(word);
    }
    c->p = (wi << 6) + select_in_word(word, r - before);
    c->below = r;
}

/* Trailing zeros, 64 for 0 (the pattern compilers turn into one instruction). */
inline int tz64(ulong x)
{
    return (int)popcount(~x & (x - 1UL));
}

/* The window's next rank above p, and the one below p (the caller knows they exist). The
 * neighbouring word is read either way and folded in by arithmetic (no branch, no select for
 * the compiler to make one of), so the common step into it is never mispredicted; only a
 * gap of a whole word takes the loop. */
ALWAYS_INLINE int next_rank(TILE_SPACE const ulong *bits, TILE_SPACE const ulong *extra, int p)
{
    int wi = p >> 6;
    const ulong here = WORD(wi) & (~1UL << (p & 63)), after = WORD(wi + 1);
    if ((here | after) != 0) {
        const int a = tz64(here); /* 64: none here, so count on into the next word */
        return (wi << 6) + a + (tz64(after) & -(a >> 6));
    }
    ulong word = 0;
    wi++;
    while (word == 0) {
        wi++;
        word = WORD(wi);
    }
    return (wi << 6) + ctz64(word);
}

ALWAYS_INLINE int prev_rank(TILE_SPACE const ulong *bits, TILE_SPACE const ulong *extra, int p)
{
    int wi = p >> 6;
    const ulong here = WORD(wi) & ((1UL << (p & 63)) - 1UL), before = WORD(wi - 1);
    if ((here | before) != 0) {
        const int a = (int)clz(here); /* 64: none here, so count on into the previous word */
        return (wi << 6) + 63 - a - ((int)clz(before) & -(a >> 6));
    }
    ulong word = 0;
    wi--;
    while (word == 0) {
        wi--;
        word = WORD(wi);
    }
    return (wi << 6) + 63 - (int)clz(word);
}

/* The window's state: its ranks, their number below nvalid (the valid values), and cursors at
 * the median and at the two ends of the MAD's run. */
struct window {
    int n;
    struct cursor med, lo, hi;
};

/* Toggles ranks out[i] (leaving) and in[i] (entering), i < len, in the bitset. */
inline void toggle(TILE_SPACE ulong *bits, TILE_SPACE const RANK_T *out,
                   TILE_SPACE const RANK_T *in, int len)
{
    for (int i = 0; i < len; i++) {
        const int qo = out[i], qi = in[i];
        bits[qo >> 6] ^= 1UL << (qo & 63);
        bits[qi >> 6] ^= 1UL << (qi & 63);
    }
}

/* Moves the ROWS windows one column: the shared rows' len contiguous ranks leave S and len
 * enter. Each window's counts below its thresholds are vector compares over RANK_VN lanes (the
 * rank array is padded, and lanes past len are masked off), one pass over the column for all. */
inline void move_column(TILE_SPACE ulong *bits, TILE_SPACE const RANK_T *out,
                        TILE_SPACE const RANK_T *in, int len, int nvalid, struct window *win)
{
    const RANK_V tn = (RANK_V)((RANK_T)nvalid);
    RANK_V tm[ROWS], tl[ROWS], th[ROWS];
    MASK_V an = 0, am[ROWS], al[ROWS], ah[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; j++) {
        tm[j] = (RANK_V)((RANK_T)win[j].med.p);
        tl[j] = (RANK_V)((RANK_T)win[j].lo.p);
        th[j] = (RANK_V)((RANK_T)win[j].hi.p);
        am[j] = al[j] = ah[j] = 0;
    }
    for (int i = 0; i < len; i += RANK_VN) {
        const RANK_V vo = RANK_VLOAD(0, out + i), vi = RANK_VLOAD(0, in + i);
        const MASK_V lanes = LANE_IDS < (MASK_V)(len - i); /* -1 where the lane is in the column */
        /* A compare gives -1 for true: (vo < t) - (vi < t) is +1 for an entering rank below t. */
        an += ((vo < tn) - (vi < tn)) & lanes;
#pragma unroll
        for (int j = 0; j < ROWS; j++) {
            am[j] += ((vo < tm[j]) - (vi < tm[j])) & lanes;
            al[j] += ((vo < tl[j]) - (vi < tl[j])) & lanes;
            ah[j] += ((vo < th[j]) - (vi < th[j])) & lanes;
        }
    }
#pragma unroll
    for (int j = 0; j < ROWS; j++) {
        const int4 d = sum_lanes4(an, am[j], al[j], ah[j]);
        win[j].n += d.x;
        win[j].med.below += d.y;
        win[j].lo.below += d.z;
        win[j].hi.below += d.w;
    }
    toggle(bits, out, in, len);
}

/* Moves a one-row band's window one row down: WX ranks `step` apart leave, WX enter, counted
 * and toggled in one pass. */
inline void move_row(TILE_SPACE ulong *bits, TILE_SPACE const RANK_T *out,
                     TILE_SPACE const RANK_T *in, int step, int nvalid, struct window *win)
{
    int dn = 0, dm = 0, dl = 0, dh = 0;
    const int pm = win->med.p, pl = win->lo.p, ph = win->hi.p;
    for (int i = 0; i < WX; i++) {
        const int qo = out[i * step], qi = in[i * step];
        dn += (qi < nvalid) - (qo < nvalid);
        dm += (qi < pm) - (qo < pm);
        dl += (qi < pl) - (qo < pl);
        dh += (qi < ph) - (qo < ph);
        bits[qo >> 6] ^= 1UL << (qo & 63);
        bits[qi >> 6] ^= 1UL << (qi & 63);
    }
    win->n += dn;
    win->med.below += dm;
    win->lo.below += dl;
    win->hi.below += dh;
}

/* Adds sign times the counts of the ranks rank[i], i < len, below window w's thresholds. */
inline void count_ranks(TILE_SPACE const RANK_T *rank, int len, int sign, int nvalid,
                        struct window *w)
{
    int dn = 0, dm = 0, dl = 0, dh = 0;
    const int pm = w->med.p, pl = w->lo.p, ph = w->hi.p;
    for (int i = 0; i < len; i++) {
        const int q = rank[i];
        dn += q < nvalid;
        dm += q < pm;
        dl += q < pl;
        dh += q < ph;
    }
    w->n += sign * dn;
    w->med.below += sign * dm;
    w->lo.below += sign * dl;
    w->hi.below += sign * dh;
}

/* Window j's own rows at a band's top row oy with kk output rows: [oy + j, oy + kk - 1) above
 * the shared rows, [oy + WY, oy + WY + j) below them. A column move toggles them in extra and
 * counts them against the window's thresholds. */
inline void move_own_rows(TILE_SPACE ulong *extra, TILE_SPACE const RANK_T *out,
                          TILE_SPACE const RANK_T *in, int j, int kk, int nvalid, struct window *w)
{
    count_ranks(out + j, kk - 1 - j, -1, nvalid, w);
    count_ranks(in + j, kk - 1 - j, 1, nvalid, w);
    toggle(extra, out + j, in + j, kk - 1 - j);
    count_ranks(out + WY, j, -1, nvalid, w);
    count_ranks(in + WY, j, 1, nvalid, w);
    toggle(extra, out + WY, in + WY, j);
}

/* Toggles the ranks of rows [a, b) of the window's WX columns (column-major, ih apart). */
inline void toggle_rows(TILE_SPACE ulong *bits, TILE_SPACE const RANK_T *col, int ih, int a, int b)
{
    for (int c = 0; c < WX; c++)
        for (int r = a; r < b; r++) {
            const int q = col[c * ih + r];
            bits[q >> 6] ^= 1UL << (q & 63);
        }
}

/* Counts rows [a, b) of the window's WX columns into window w, times sign. */
inline void count_rows(TILE_SPACE const RANK_T *col, int ih, int a, int b, int sign, int nvalid,
                       struct window *w)
{
    for (int c = 0; c < WX; c++)
        count_ranks(col + c * ih + a, b - a, sign, nvalid, w);
}

/* Toggles the symmetric difference of row ranges [a1, b1) and [a2, b2), a1 <= a2, b1 <= b2,
 * of the window's columns: the set of rows [a1, b1) becomes [a2, b2). */
inline void shift_rows(TILE_SPACE ulong *bits, TILE_SPACE const RANK_T *col, int ih, int a1, int b1,
                       int a2, int b2)
{
    toggle_rows(bits, col, ih, a1, min(a2, b1));
    toggle_rows(bits, col, ih, max(a2, b1), b2);
}

/* Window j's own rows (see move_own_rows) toggled in or out of extra. */
inline void toggle_own_rows(TILE_SPACE ulong *extra, TILE_SPACE const RANK_T *col, int ih, int oy,
                            int kk, int j)
{
    toggle_rows(extra, col, ih, oy + j, oy + kk - 1);
    toggle_rows(extra, col, ih, oy + WY, oy + WY + j);
}

#define DEV(p) deviation(vals[p], m)

/* The MAD of the window, whose median m (finite) is rank r = (n - 1) / 2, or for even n rank
 * r + 1 or the two's mean (the even rule), and which takes the rule's middle deviation. */
ALWAYS_INLINE float window_mad(TILE_SPACE const ulong *bits, TILE_SPACE const ulong *extra,
                               TILE_SPACE const float *vals, struct window *win, float m)
{
    const int n = win->n, k = (n - 1) / 2;
    /* L: a rank with s_(L-1) <= m <= s_L, which the middles give (their mean never overflows,
     * so it lies between them). */
    const int L = (n & 1) ? k : k + 1;
    const int amin = max(0, L - k - 1), amax = min(n - 1 - k, L);
    const int a0 = clamp(win->lo.below, amin, amax);
    int a = a0;
    cursor_select(bits, extra, &win->lo, a);
    cursor_select(bits, extra, &win->hi, a + k);
    /* The run's ends (ranks a, a + k) and, once known, its outside neighbours (a - 1, a + k + 1;
     * -1 while not): a step makes an end a neighbour, so each is looked up once. */
    int pl = win->lo.p, ph = win->hi.p;
    float dl = DEV(pl), dh = DEV(ph);
    /* Both neighbours up front: two independent lookups, rather than one after a branch. */
    int pp = a > 0 ? prev_rank(bits, extra, pl) : -1,
        pn = a + k + 1 < n ? next_rank(bits, extra, ph) : -1;
    float dp = pp < 0 ? 0.0f : DEV(pp), dn = pn < 0 ? 0.0f : DEV(pn);
    for (;;) {
        /* The run's low end is on the low side and its deviation exceeds that of the rank past
         * the high end: move up. */
        if (a < L && a + k + 1 < n) {
            if (pn < 0) {
                pn = next_rank(bits, extra, ph);
                dn = DEV(pn);
            }
            if (dl > dn) {
                pp = pl;
                dp = dl;
                ph = pn;
                dh = dn;
                pn = -1;
                pl = next_rank(bits, extra, pl);
                dl = DEV(pl);
                a++;
                continue;
            }
        }
        /* The high end is on the high side and exceeds the rank below the low end: move down. */
        if (a + k >= L && a > 0) {
            if (pp < 0) {
                pp = prev_rank(bits, extra, pl);
                dp = DEV(pp);
            }
            if (dh > dp) {
                pn = ph;
                dn = dh;
                pl = pp;
                dl = dp;
                pp = -1;
                ph = prev_rank(bits, extra, ph);
                dh = DEV(ph);
                a--;
                continue;
            }
        }
        break;
    }
    win->lo.p = pl;
    win->lo.below = a;
    win->hi.p = ph;
    win->hi.below = a + k;
    const float kth = dl > dh ? dl : dh;
    if (n & 1) return kth;
    /* Even count: the (k+1)-th is the nearer of the run's two outside neighbours. */
    float next = 0.0f;
    bool have = false;
    if (a + k + 1 < n) {
        next = pn < 0 ? DEV(next_rank(bits, extra, ph)) : dn;
        have = true;
    }
    if (a > 0) {
        const float d = pp < 0 ? DEV(prev_rank(bits, extra, pl)) : dp;
        next = have && next < d ? next : d;
    }
    return EVEN == EVEN_LOWER ? kth : EVEN == EVEN_UPPER ? next : mean_of_middles(kth, next);
}

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
median_mad(__global const float *img, long stride, int nx, int ny, __global const int *colmap,
           __global const int *rowmap, float cval, __global float *median_out,
           __global float *mad_out, int want_median, int want_mad
#ifdef GLOBAL_TILE
           ,
           __global ulong *scratch
#endif
)
{
#ifdef GLOBAL_TILE
    /* This group's part of the scratch: the arrays below, in the same order. */
    __global ulong *pairs =
        scratch + (get_group_id(1) * get_num_groups(0) + get_group_id(0)) * (size_t)TILE_WORDS;
    __global ulong *bitstore = pairs + 2 * N_MAX;
    __global float *vals = (__global float *)(bitstore + (ROWS + 1) * BITSET_WORDS);
    __global RANK_T *rank = (__global RANK_T *)(vals + N_MAX);
#else
    __local ulong pairs[2 * N_MAX];       /* (key << 32 | position), two buffers for the sort */
    __local RANK_T rank[N_MAX + RANK_VN]; /* rank of each position, column-major; padded */
    __local float vals[N_MAX];            /* the values in rank order */
    __local ulong bitstore[(ROWS + 1) * BITSET_WORDS]; /* S, then E_j for each window j */
#endif

    const int x0 = get_global_id(0) * TX, y0 = get_global_id(1) * TY;
    if (x0 >= nx || y0 >= ny) return;
    const int tw = min(TX, nx - x0), th = min(TY, ny - y0);
    const int iw = tw + WX - 1, ih = th + WY - 1, count = iw * ih;

    /* Gather the tile's input, column-major positions, boundary applied through the maps. */
    int nvalid = 0;
    for (int r = 0; r < ih; r++) {
        const int sr = rowmap[y0 + r];
        for (int c = 0; c < iw; c++) {
            const int sc = colmap[x0 + c];
            const float v = (sr < 0 || sc < 0) ? cval : img[(long)sr * stride + sc];
            const bool nan = is_nan(v);
            nvalid += !nan;
            const int pos = c * ih + r;
            pairs[pos] = ((ulong)(nan ? NAN_KEY : key_of(v)) << 32) | (ulong)pos;
        }
    }

    /* LSD radix sort on the keys, 8 bits a pass; a pass whose digit is the same everywhere is
     * skipped. Equal keys are equal bits, so which of them takes which rank does not matter. */
    uint hist[4][256];
    for (int d = 0; d < 4; d++)
        for (int b = 0; b < 256; b++)
            hist[d][b] = 0;
    for (int i = 0; i < count; i++) {
        const uint k = (uint)(pairs[i] >> 32);
        hist[0][k & 255]++;
        hist[1][(k >> 8) & 255]++;
        hist[2][(k >> 16) & 255]++;
        hist[3][k >> 24]++;
    }
    TILE_SPACE ulong *src = pairs, *dst = pairs + N_MAX;
    for (int d = 0; d < 4; d++) {
        const int shift = 32 + 8 * d;
        if (hist[d][(uint)(src[0] >> shift) & 255] == (uint)count) continue;
        uint sum = 0;
        for (int b = 0; b < 256; b++) {
            const uint t = hist[d][b];
            hist[d][b] = sum;
            sum += t;
        }
        for (int i = 0; i < count; i++) {
            const ulong e = src[i];
            dst[hist[d][(uint)(e >> shift) & 255]++] = e;
        }
        TILE_SPACE ulong *t = src;
        src = dst;
        dst = t;
    }
    for (int i = count; i < count + RANK_VN; i++)
        rank[i] = 0; /* padding, read and masked */
    for (int i = 0; i < count; i++) {
        const ulong e = src[i];
        rank[(uint)e] = (RANK_T)i;
        vals[i] = value_of((uint)(e >> 32));
    }

    /* The first band's windows, at outputs (0, 0 .. kk - 1): bitsets S (the shared rows) and
     * E_j (window j's own rows) for the first WX columns. */
    TILE_SPACE ulong *bits = bitstore + 1;
    for (int s = 0; s <= ROWS; s++)
        for (int i = -1; i <= (count >> 6) + 1; i++)
            bits[s * BITSET_WORDS + i] = 0;
    struct window win[ROWS];
    int oy = 0, kk = min(ROWS, th);
    toggle_rows(bits, rank, ih, kk - 1, WY);
    for (int j = 0; j < ROWS; j++) {
        win[j] = (struct window){0, {0, 0}, {0, 0}, {0, 0}};
        if (j >= kk) continue;
        toggle_own_rows(bits + (j + 1) * BITSET_WORDS, rank, ih, oy, kk, j);
        count_rows(rank, ih, j, j + WY, 1, nvalid, &win[j]);
    }

    /* Snake sweep of bands of kk output rows: right along even bands, left along odd ones,
     * ROWS rows down in between. */
    int ox = 0, dir = 1;
    for (;;) {
        /* The band's rows, a constant for the compiler where ROWS is 1 (its column loop then
         * unrolls as before there were bands). */
        const int band = ROWS == 1 ? 1 : kk;
        for (int i = 0; i < tw; i++) {
            if (i > 0) {
                const int out = dir > 0 ? ox - 1 : ox + WX, in = dir > 0 ? ox + WX - 1 : ox;
                TILE_SPACE const RANK_T *cout = rank + out * ih + oy, *cin = rank + in * ih + oy;
                move_column(bits, cout + band - 1, cin + band - 1, WY - band + 1, nvalid, win);
#if ROWS > 1
                for (int j = 0; j < kk; j++)
                    move_own_rows(bits + (j + 1) * BITSET_WORDS, cout, cin, j, kk, nvalid, &win[j]);
#endif
            }
            for (int j = 0; j < band; j++) {
                TILE_SPACE const ulong *extra = bits + (j + 1) * BITSET_WORDS;
                struct window w = win[j];
                float med = as_float(CANONICAL_NAN), mad = as_float(CANONICAL_NAN);
                const int n = w.n;
                if (n > 0) {
                    cursor_select(bits, extra, &w.med, (n - 1) / 2);
                    med = vals[w.med.p];
#if EVEN != EVEN_LOWER
                    if (!(n & 1)) {
                        const float next = vals[next_rank(bits, extra, w.med.p)];
                        med = EVEN == EVEN_UPPER ? next : mean_of_middles(med, next);
                    }
#endif
                    if (want_mad && is_inf(med)) {
                        /* The window's far end tells whether any value differs from med. */
                        struct cursor end = w.med;
                        cursor_select(bits, extra, &end, med > 0.0f ? 0 : n - 1);
                        mad = mad_without_selection(med, vals[end.p] == med);
                    } else if (want_mad && !is_nan(med)) {
                        mad = window_mad(bits, extra, vals, &w, med);
                    }
                }
                win[j] = w;
                const long o = (long)(y0 + oy + j) * nx + x0 + ox;
                if (want_median) median_out[o] = stored_result(med);
                if (want_mad) mad_out[o] = stored_result(mad);
            }
            ox += dir;
        }
        ox -= dir; /* back on the band's last output column */
        if (oy + ROWS >= th) break;
        /* Down ROWS rows: window j loses rows [oy + j, oy + j + ROWS) and gains the ROWS rows
         * below it; S and each E_j change to the next band's rows. */
        const int oy2 = oy + ROWS, kk2 = min(ROWS, th - oy2);
        TILE_SPACE const RANK_T *col = rank + ox * ih;
#if ROWS == 1
        move_row(bits, col + oy, col + oy + WY, ih, nvalid, win);
#else
        for (int j = 0; j < kk2; j++) {
            count_rows(col, ih, oy + j, oy + j + ROWS, -1, nvalid, &win[j]);
            count_rows(col, ih, oy + j + WY, oy + j + WY + ROWS, 1, nvalid, &win[j]);
        }
        shift_rows(bits, col, ih, oy + kk - 1, oy + WY, oy2 + kk2 - 1, oy2 + WY);
        for (int j = 0; j < kk; j++) {
            TILE_SPACE ulong *extra = bits + (j + 1) * BITSET_WORDS;
            toggle_own_rows(extra, col, ih, oy, kk, j);
            if (j < kk2) toggle_own_rows(extra, col, ih, oy2, kk2, j);
        }
#endif
        oy = oy2;
        kk = kk2;
        dir = -dir;
    }
}
