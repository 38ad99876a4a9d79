/* sorted_select.cl - the k-th smallest key of a window held as WX sorted runs of WY keys, and
 * the k-th smallest deviation from its median, by counting: what the sorted-runs designs share
 * (median_filter_sorted.cl holds its runs in local memory, median_filter_runs.cl in global).
 *
 * Run j of a window starts at base + j, and its i-th key lies at base[j + i * stride]. A count
 * is a binary search per run (WX log WY), and snaps the bracket to window keys, so ties cost
 * nothing. For the MAD, rounding is monotone (fl(v - m) grows with v above m, fl(m - v) shrinks
 * below it), so the values within a deviation d of m are one interval of keys around m: a count
 * of deviations <= d is a count of plain keys in that interval, two binary searches per run, and
 * deviations are computed exactly as the reference does, only at the interval's edges.
 *
 * Keys: order-preserving uint images of float bits (-0 just below +0); NaN (missing) is the key
 * 0xffffffff, above every number's, so sorting puts it at a run's end and no count includes it.
 * Deviation keys are the bits of the non-negative deviation.
 *
 * The includer defines WX, WY, EVEN, SEG_SPACE (__local or __global, where the runs lie) and
 * SEG_COUNTS (the type of the runs' counts of valid keys, with its address space), and
 * UNROLL_WINDOW_LOOPS to unroll the loops over the WX runs (fast for small windows in local
 * memory; large windows would make builds slow, bench/RESULTS.md).
 */
#ifndef SORTED_SELECT_CL
#define SORTED_SELECT_CL

#include "../common/float_keys.cl"
#include "even_rule.cl"

/* The first step of the binary searches: the largest power of two <= WY. */
#if WY >= 128
#define TOP_STEP 128
#elif WY >= 64
#define TOP_STEP 64
#elif WY >= 32
#define TOP_STEP 32
#elif WY >= 16
#define TOP_STEP 16
#elif WY >= 8
#define TOP_STEP 8
#elif WY >= 4
#define TOP_STEP 4
#elif WY >= 2
#define TOP_STEP 2
#else
#define TOP_STEP 1
#endif

/* With RUN_BOUNDS (an includer's number) counts may be told where in each run their answers
 * lie: for a bracket [L, H] of keys, bounds[j] and bounds[RUN_BOUNDS + j] are run j's counts of
 * keys below L and at or under H, so a search for any t >= L - 1 starts at the first and one for
 * t <= H ends at the second (count_bounded): exact for every t, a few keys for t in the bracket.
 * bkeys.xy is the bracket of the counts' upper ends (the median's counts, the MAD's interval's
 * upper end); bkeys.zw, with bounds[2 RUN_BOUNDS + j] and bounds[3 RUN_BOUNDS + j], the
 * bracket of the MAD interval's lower end. NULL: whole runs. */
#ifdef RUN_BOUNDS
#define BOUNDS_PARAM , __local const ushort *bounds, uint4 bkeys
#define BOUNDS_PASS , bounds, bkeys
#define NO_BOUNDS , (__local const ushort *)0, (uint4)(0u)
#else
#define BOUNDS_PARAM
#define BOUNDS_PASS
#define NO_BOUNDS
#endif

/* Key of the deviation of the value with key k from m (finite), as the reference computes
 * it. */
inline uint dev_key(uint k, float m)
{
    return as_uint(deviation(value_of(k), m));
}

/* Number of keys <= t in a sorted run (branch-free binary search). NaN keys, at the run's end,
 * lie above every t a count asks about. */
inline int count_le(SEG_SPACE const uint *col, int stride, uint t)
{
    int q = 0;
#pragma unroll
    for (int step = TOP_STEP; step > 0; step >>= 1)
        if (q + step <= WY) q = col[(q + step - 1) * stride] <= t ? q + step : q;
    return q;
}

#ifdef RUN_BOUNDS
/* Number of keys <= t in a sorted run, knowing it lies in [lo, hi]. */
inline int count_between(SEG_SPACE const uint *col, int stride, int lo, int hi, uint t)
{
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (col[(mid - 1) * stride] <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Number of keys <= t in a sorted run with `below` keys under L and `upto` keys <= H: the count
 * is at least `below` where t >= L - 1 and at most `upto` where t <= H, whatever L and H are. */
inline int count_bounded(SEG_SPACE const uint *col, int stride, uint L, uint H, int below,
                         int upto, uint t)
{
    return count_between(col, stride, (L == 0u || t >= L - 1u) ? below : 0, t <= H ? upto : WY,
                         t);
}
#endif

/* The window's keys in [klo, khi]: their count, their smallest and largest (*in_min, *in_max),
 * and the nearest keys outside, below klo (*out_lo, 0 if none) and above khi (*out_hi, NO_KEY
 * if none). klo == 0 means no lower end, and skips half the searches. */
inline int count_window(SEG_SPACE const uint *base, int stride BOUNDS_PARAM, uint klo, uint khi,
                        uint *in_min, uint *in_max, uint *out_lo, uint *out_hi)
{
    int c = 0;
    *in_min = NO_KEY;
    *in_max = 0u;
    *out_lo = 0u;
    *out_hi = NO_KEY;
#ifdef UNROLL_WINDOW_LOOPS
#pragma unroll
#endif
    for (int j = 0; j < WX; j++) {
        SEG_SPACE const uint *col = base + j;
#ifdef RUN_BOUNDS
        const int qh = bounds ? count_bounded(col, stride, bkeys.x, bkeys.y, bounds[j],
                                              bounds[RUN_BOUNDS + j], khi)
                              : count_le(col, stride, khi);
        const int ql = !klo    ? 0
                       : bounds ? count_bounded(col, stride, bkeys.z, bkeys.w,
                                                bounds[2 * RUN_BOUNDS + j],
                                                bounds[3 * RUN_BOUNDS + j], klo - 1u)
                                : count_le(col, stride, klo - 1u);
#else
        const int qh = count_le(col, stride, khi);
        const int ql = klo ? count_le(col, stride, klo - 1u) : 0;
#endif
        c += qh - ql;
        if (qh > ql) {
            *in_min = min(*in_min, col[ql * stride]);
            *in_max = max(*in_max, col[(qh - 1) * stride]);
        }
        if (ql > 0) *out_lo = max(*out_lo, col[(ql - 1) * stride]);
        if (qh < WY) *out_hi = min(*out_hi, col[qh * stride]);
    }
    return c;
}

#define KEY_NEG_INF 0x007fffffu /* key_of(-inf): the smallest key of a number */
#define KEY_POS_INF 0xff800000u /* key_of(+inf): the largest */

/* Whether the value with key k lies within deviation t (a deviation key) of m. */
inline bool within(uint k, float m, uint t)
{
    return dev_key(k, m) <= t;
}

/* The keys whose deviation from m is <= t form one interval around km = key_of(m), because
 * rounding is monotone. Its upper end: the last key in [km, +inf] within t. The first guess,
 * fl(m + d), is right or one key off unless m + d lost many bits; then a bisection. */
inline uint upper_end(float m, uint km, uint t)
{
    const float u = m + as_float(t);
    const uint k = is_nan(u) ? KEY_POS_INF : clamp(key_of(u), km, KEY_POS_INF);
    if (within(k, m, t)) {
        if (k == KEY_POS_INF || !within(k + 1u, m, t)) return k;
    } else if (within(k - 1u, m, t)) { /* k > km: km itself is within */
        return k - 1u;
    }
    uint lo = km, hi = KEY_POS_INF; /* lo is within; the end is in [lo, hi] */
    while (lo < hi) {
        const uint mid = lo + ((hi - lo + 1u) >> 1);
        if (within(mid, m, t)) lo = mid;
        else hi = mid - 1u;
    }
    return lo;
}

/* Its lower end: the first key in [-inf, km] within t. */
inline uint lower_end(float m, uint km, uint t)
{
    const float u = m - as_float(t);
    const uint k = is_nan(u) ? KEY_NEG_INF : clamp(key_of(u), KEY_NEG_INF, km);
    if (within(k, m, t)) {
        if (k == KEY_NEG_INF || !within(k - 1u, m, t)) return k;
    } else if (within(k + 1u, m, t)) {
        return k + 1u;
    }
    uint lo = KEY_NEG_INF, hi = km; /* hi is within; the end is in [lo, hi] */
    while (lo < hi) {
        const uint mid = lo + ((hi - lo) >> 1);
        if (within(mid, m, t)) hi = mid;
        else lo = mid + 1u;
    }
    return lo;
}

/* Count of the window's keys <= t, with the window keys next to t: *below the largest <= t
 * (0 if none), *above the smallest > t (NO_KEY if none). For the MAD (use_dev) keys are
 * deviation keys from m: a value's deviation is <= t exactly when its key lies in one interval
 * around km, so the count is one of plain keys, and the deviations nearest t are those of the
 * keys nearest that interval's ends. */
inline int count_keys(SEG_SPACE const uint *base, int stride BOUNDS_PARAM, int use_dev, float m, uint km, uint t,
                      uint *below, uint *above)
{
    uint in_min, in_max, out_lo, out_hi;
    if (!use_dev) {
        const int c = count_window(base, stride BOUNDS_PASS, 0u, t, &in_min, &in_max, &out_lo, &out_hi);
        *below = in_max;
        *above = out_hi;
        return c;
    }
    const int c = count_window(base, stride BOUNDS_PASS, lower_end(m, km, t), upper_end(m, km, t), &in_min, &in_max,
                               &out_lo, &out_hi);
    *below = c ? max(dev_key(in_min, m), dev_key(in_max, m)) : 0u;
    const uint a_lo = out_lo ? dev_key(out_lo, m) : NO_KEY;
    const uint a_hi = out_hi != NO_KEY ? dev_key(out_hi, m) : NO_KEY;
    *above = min(a_lo, a_hi);
    return c;
}

inline float key_value(uint k, int use_dev)
{
    return use_dev ? as_float(k) : value_of(k);
}

inline uint value_key(float v, int use_dev)
{
    return use_dev ? as_uint(fmax(v, 0.0f)) : key_of(v);
}

/* Intel's CPU runtime (2026.2, on AMD EPYC) compiled the sorted design's MAD at w = 7 with small
 * work-groups into an invalid instruction (SIGILL: "vpcmpeqd ... (bad)") where select_key was
 * inlined; built for CPU devices with -D SELECT_KEY_CALL, it stays a call, which it compiles
 * right. GPUs inline it. */
#ifdef SELECT_KEY_CALL
#define SELECT_KEY_LINKAGE __attribute__((noinline))
#else
#define SELECT_KEY_LINKAGE
#endif

/* Smallest key K with count(keys <= K) >= rank + 1, for K in [lo, hi], where c_lo keys lie
 * below lo and c_hi at or below hi. Thresholds only steer (exactness comes from the counts):
 * `guess` first, then a Newton step of `per_rank` (an estimate of value per rank near the
 * answer), then interpolation of the rank in the bracket; every fourth halves it, which bounds
 * the worst case. *next is the smallest key above K when the last count told it (*next_known;
 * the even-count median needs it). */
SELECT_KEY_LINKAGE uint select_key(SEG_SPACE const uint *base, int stride BOUNDS_PARAM, int use_dev, float m, uint km, int rank, uint lo,
                uint hi, int c_lo, int c_hi, uint guess, float per_rank, uint *next,
                int *next_known)
{
    uint t = clamp(guess, lo, hi);
    int lo_counted = 0, hi_counted = 0; /* whether a count has moved that end */
    *next_known = 0;
    for (int step = 0; lo < hi; step++) {
        if (t >= hi) t = lo + ((hi - lo) >> 1); /* t must split [lo, hi) */
        uint below, above;
        const int c = count_keys(base, stride BOUNDS_PASS, use_dev, m, km, t, &below, &above);
        if (c == rank + 1) {
            *next = above;
            *next_known = 1;
            return below;
        }
        if (c == rank) return above;
        if (c > rank + 1) {
            hi_counted = 1;
            hi = below;
            c_hi = c;
        } else {
            lo_counted = 1;
            lo = above;
            c_lo = c;
        }
        if (lo >= hi) break;
        const uint span = hi - lo;
        /* 0.8: a step a little short of the estimate measured fewer passes (the scale
         * estimate is rough, and overshooting costs more than falling short). */
        const float newton =
            key_value(t, use_dev) + ((float)rank + 0.5f - (float)c) * per_rank * 0.8f;
        if (!(lo_counted && hi_counted) && isfinite(newton)) {
            t = clamp(value_key(newton, use_dev), lo, hi - 1u);
        } else if (step % 4 == 3) {
            t = lo + (span >> 1);
        } else {
            const float f = ((float)(rank - c_lo) + 0.5f) / (float)(c_hi - c_lo);
            t = lo + min(convert_uint_sat(f * (float)span), span - 1u);
        }
    }
    return lo;
}

/* The middle of the window's n keys by the even rule: rank MIDDLE_RANK(n), and under the mean
 * rule for even n the mean with the next; c_lo keys lie below lo, c_hi at or below hi. */
float select_middle(SEG_SPACE const uint *base, int stride BOUNDS_PARAM, int use_dev, float m,
                    int n, uint lo, uint hi, int c_lo, int c_hi, uint guess, float per_rank)
{
    const int r = MIDDLE_RANK(n);
    const uint km = key_of(m);
    uint next;
    int next_known;
    const uint ka =
        select_key(base, stride BOUNDS_PASS, use_dev, m, km, r, lo, hi, c_lo, c_hi, guess, per_rank,
                   &next, &next_known);
    const float a = key_value(ka, use_dev);
    if (!MIDDLE_IS_MEAN(n)) return a;
    uint kb = next;
    if (!next_known) {
        uint below;
        kb = count_keys(base, stride BOUNDS_PASS, use_dev, m, km, ka, &below, &next) >= r + 2 ? ka : next;
    }
    return mean_of_middles(a, key_value(kb, use_dev));
}

/* What a window's runs tell at a glance: its valid keys' count and extremes, and first guesses
 * of its median (as a key) and of its MAD and value per rank, robust ones (each run's median and
 * half its interquartile range, the MAD of normal data, averaged) or a neighbouring pixel's
 * answers (prev_med, prev_mad as keys, NO_KEY when none). counts[j]: run j's valid keys, which
 * come first. */
struct window_glance {
    int n;
    uint kmin, kmax, guess;
    float spread, sd;
};

inline struct window_glance glance_window(SEG_SPACE const uint *base, int stride,
                                          SEG_COUNTS *counts, uint prev_med, uint prev_mad)
{
    struct window_glance g = {0, NO_KEY, 0u, NO_KEY, 0.0f, 0.0f};
    int columns = 0;
    float mid_sum = 0.0f, spread_sum = 0.0f;
#ifdef UNROLL_WINDOW_LOOPS
#pragma unroll
#endif
    for (int j = 0; j < WX; j++) {
        const int cnt = counts[j];
        g.n += cnt;
        columns += cnt > 0;
        g.kmin = min(g.kmin, base[j]);
        if (cnt) {
            g.kmax = max(g.kmax, base[j + (cnt - 1) * stride]);
            mid_sum += value_of(base[j + (cnt / 2) * stride]);
            spread_sum += value_of(base[j + (3 * cnt / 4) * stride]) -
                          value_of(base[j + (cnt / 4) * stride]);
        }
    }
    if (g.n == 0) return g;
    const float mid = mid_sum / (float)columns;
    g.spread = prev_mad != NO_KEY ? as_float(prev_mad) : 0.5f * spread_sum / (float)columns;
    g.sd = 1.4826f * g.spread;
    g.guess = prev_med != NO_KEY ? prev_med : is_nan(mid) ? g.kmin : key_of(mid);
    return g;
}

/* Value per rank near the median, and near the MAD, of normal data of sd 1.4826 MAD:
 * 1 / (n pdf(0)) and 1 / (2 n pdf(0.6745)). */
#define MEDIAN_PER_RANK(g) (2.5066f * (g).sd / (float)(g).n)
#define MAD_PER_RANK(g) (1.5733f * (g).sd / (float)(g).n)

/* The MAD of the window g glanced at, whose median is med (NaN where nothing is valid);
 * *prev_mad takes it as a key where it was selected. */
float window_mad(SEG_SPACE const uint *base, int stride BOUNDS_PARAM,
                 const struct window_glance *g, float med, uint *prev_mad)
{
    if (g->n == 0 || is_nan(med)) return as_float(CANONICAL_NAN);
    if (g->kmin == g->kmax) return mad_without_selection(med, true);
    if (is_inf(med)) return mad_without_selection(med, false);
    /* |x - m| is largest at the extremes. */
    const uint dhi = max(dev_key(g->kmin, med), dev_key(g->kmax, med));
    const uint dguess = is_nan(g->spread) ? 0u : as_uint(fabs(g->spread));
    const float mad = select_middle(base, stride BOUNDS_PASS, 1, med, g->n, 0u, dhi, 0, g->n,
                                    dguess, MAD_PER_RANK(*g));
    *prev_mad = as_uint(mad);
    return mad;
}

/* The median of the window g glanced at, into *med_out (NaN where nothing is valid), and with
 * want_mad its MAD into *mad_out (from whole runs); the median lies in [lo, hi], with c_lo keys
 * below lo and c_hi at or below hi. *prev_med and *prev_mad take the answers as keys. */
void select_window(SEG_SPACE const uint *base, int stride BOUNDS_PARAM, uint lo, uint hi,
                   int c_lo, int c_hi, const struct window_glance *g, int want_mad,
                   uint *prev_med, uint *prev_mad, float *med_out, float *mad_out)
{
    float med = as_float(CANONICAL_NAN);
    const int n = g->n;
    if (n > 0 && g->kmin == g->kmax) {
        med = value_of(g->kmin);
    } else if (n > 0) {
        med = select_middle(base, stride BOUNDS_PASS, 0, 0.0f, n, lo, hi, c_lo, c_hi, g->guess,
                            MEDIAN_PER_RANK(*g));
        *prev_med = key_of(med);
    }
    *med_out = med;
    *mad_out = want_mad ? window_mad(base, stride NO_BOUNDS, g, med, prev_mad)
                        : as_float(CANONICAL_NAN);
}

/* The median and MAD of the window whose runs start at base (counts[j]: run j's valid keys),
 * from the first guesses glance_window makes. */
void window_median_mad(SEG_SPACE const uint *base, int stride, SEG_COUNTS *counts, int want_mad,
                       uint *prev_med, uint *prev_mad, float *med_out, float *mad_out)
{
    const struct window_glance g = glance_window(base, stride, counts, *prev_med, *prev_mad);
    select_window(base, stride NO_BOUNDS, g.kmin, g.kmax, 0, g.n, &g, want_mad, prev_med,
                  prev_mad, med_out, mad_out);
}

#endif
