/* bracket_mad.cl - the bracket design's MAD (median_filter_bracket.cl includes it under -D MAD=1):
 * from each pixel's median, a search over ranks of the tile's union with two brackets of its
 * own (mad_pass, whose comment tells the search). Its brackets and walks are its own, not the
 * median's: the median keeps its single walk from the list's start, which its two ranks need,
 * while the MAD asks many ranks a round and walks only between the probes that bracket its
 * answer.
 *
 * Build options beyond median_filter_bracket.cl's: -D G (the MAD search's probes a round, at
 * least 2; 8 when absent), -D MAD_HALF (forces the elements each MAD bracket first holds on each
 * side of its estimate). */

#define ONCE _Pragma("unroll 1") /* loops whose bodies are large: never unrolled */
/* Functions without barriers that CPU builds keep out of line: inlined at every call site, the
 * kernel grows past what PoCL builds in minutes. */
#if ROLLED
#define OUT_OF_LINE __attribute__((noinline))
#else
#define OUT_OF_LINE
#endif
/* Loops of two whose bodies hold barriers: one call site on CPUs, where every inlined copy of a
 * barrier costs PoCL's build time, two on GPUs, where the loop's index must fold away. */
#if ROLLED
#define TWICE(j) _Pragma("unroll 1") for (int j = 0; j < 2; j++)
#else
#define TWICE(j) _Pragma("unroll") for (int j = 0; j < 2; j++)
#endif
#ifndef G
#define G 8
#endif
#define NT G /* ranks a pixel asks of one selection: the search's probes */
#define KEY_NEG_INF 0x007fffffu /* key_of(-inf) */
#define KEY_POS_INF 0xff800000u /* key_of(+inf) */

/* Halves the bracket [*L, *H] about its middle. */
inline void halve_about_middle(ulong *L, ulong *H)
{
    const ulong span = (*H - *L) >> 1, centre = *L + span;
    *L = centre - (span >> 1);
    *H = centre + (span >> 1);
}

/* A bracket [L, H] of union elements: its list (sorted, len elements) and each of the
 * work-item's pixels' window counts below L (below) and at or under H (upto), so that the
 * pixel's window elements in the list hold its ranks below .. upto - 1. */
typedef struct {
    ulong L, H;
    int len;
    ushort below[PY], upto[PY];
} bracket;

/* The union's elements in b's [L, H] into list (at most cap, a power of two), sorted, and its
 * counts. A bracket whose elements overflow the list is halved (dir < 0: its upper half kept,
 * dir > 0: its lower, 0: its middle) and built again: in element order, so ties and clumps
 * split too. The whole group calls it (barriers); counter: a local int. */
void build_bracket(SOURCE, bracket *b, int dir, __local ulong *list, int cap,
                   __local ushort *sums, volatile __local int *counter, int lid, int lx, int ly)
{
    for (;;) {
        if (lid == 0) *counter = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int ur = ly; ur < UH; ur += GY)
            for (int uc = lx; uc < UW; uc += GX) {
                const ulong e = ELEMENT(ur, uc);
                if (e >= b->L && e <= b->H) {
                    const int i = atomic_inc(counter);
                    if (i < cap) list[i] = e;
                }
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        b->len = *counter;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (b->len <= cap) break;
        if (dir < 0) b->L = b->H - (b->H - b->L) / 2;
        else if (dir > 0) b->H = b->L + (b->H - b->L) / 2;
        else halve_about_middle(&b->L, &b->H);
    }
    int n2 = 1;
    while (n2 < b->len)
        n2 <<= 1;
    for (int i = b->len + lid; i < n2; i += GROUP)
        list[i] = NO_ELEM;
    barrier(CLK_LOCAL_MEM_FENCE);
    bitonic_sort(list, n2, lid);
    TWICE(j)
        box_counts(SOURCE_PASS, j ? b->H + 1ul : b->L, sums, lid, lx, ly, j ? b->upto : b->below);
}

/* The ranks each pixel asks, ascending and distinct: count of them (0: none), the j-th
 * off + first + j span / (NT - 1) where span >= NT - 1 (spread evenly over first .. first +
 * span), else off + first + j; off is the caller's, a pixel's own. */
typedef struct {
    int first[PY], span[PY], count[PY];
} targets;

inline int target_rank(const targets *t, const int *off, int p, int j)
{
    return off[p] + t->first[p] + (t->span[p] >= NT - 1 ? j * t->span[p] / (NT - 1) : j);
}

/* The next target of pixel p from its slot on that b's list holds, as a count of its window's
 * listed elements; -1 (no count) when none is left. */
inline int next_target(const targets *t, const int *off, const bracket *b, int p, int slot,
                       int end)
{
    return slot < end ? target_rank(t, off, p, slot) - (int)b->below[p] : -1;
}

#define NO_POS 0xffffu /* a list index unknown */

/* The MAD search's test of its probes, judged where the upper list's walk finds each probe's
 * partner (mad_pass): the pixel's median m, the first probe whose test holds (first_true, NT
 * where none) with its partner's deviation (dev_true), and the last that fails (last_false,
 * -1 where none) with its partner's deviation (up_false) and its index in the upper list
 * (false_at, NO_POS where that list has been built again since). */
typedef struct {
    float m[PY], dev_true[PY], up_false[PY];
    int first_true[PY], last_false[PY], false_at[PY];
} verdicts;

/* What the walk holds for pixel p's probe j: key[p][j], an index into the lower list where
 * bit j of held[p] is set (the lower list's walk keeps indices, so that the next round can
 * start past them), else a key. */
inline uint raw_at(uint key[PY][NT], int p, int j)
{
    uint k = 0u;
    ROLL for (int q = 0; q < NT; q++)
        if (q == j) k = key[p][q];
    return k;
}

/* The key of pixel p's probe j's lower element (lower: the lower list, as when it was walked). */
inline uint key_at(uint key[PY][NT], const uint *held, __local const ulong *lower, int p, int j)
{
    const uint k = raw_at(key, p, j);
    return held[p] >> j & 1u ? (uint)(lower[k] >> 32) : k;
}

/* Pixel p's probe j, whose lower element's key key_at holds and whose partner is e, at index
 * at of the upper list: the search's test d(e_i) <= d(e_{i+k}) with e_{i+k} >= m, into v. */
OUT_OF_LINE void judge_probe(verdicts *v, uint key[PY][NT], const uint *held,
                             __local const ulong *lower, int p, int j, ulong e, int at)
{
    const float m = v->m[p], vu = value_of((uint)(e >> 32));
    const float dl = deviation(value_of(key_at(key, held, lower, p, j)), m),
                du = deviation(vu, m);
    if (vu >= m && dl <= du) {
        if (j < v->first_true[p]) v->first_true[p] = j, v->dev_true[p] = du;
    } else if (j > v->last_false[p]) {
        v->last_false[p] = j, v->up_false[p] = du, v->false_at[p] = at;
    }
}

/* Where a pixel's walk of a list may start: resume[p] packs a list index (low 16 bits) and the
 * count of the pixel's window elements before it (high 16), 0 for the list's start. A round's
 * probes all lie above the last probe that failed, so the next round's walks start just past
 * its elements (mad_pass), not at the lists' start. */
#define RESUME(at, count) ((uint)(at) | (uint)(count) << 16)

/* One walk of b's list: each pixel's targets inside b's ranks get their window elements' indices
 * in the list (key[p][j], bit j of held[p] set), or with judge the search's test against the
 * lower elements held (v; lower: the lower list). Each pixel starts where resume says; where
 * they start together, every work-item reads the same entry at once (a broadcast), and the
 * pixels of a work-item share its read and its column test. */
OUT_OF_LINE void walk_list(__local const ulong *list, const bracket *b, int lx, int ly,
                           const targets *t, const int *off, uint key[PY][NT], uint *held,
                           bool judge, verdicts *v, __local const ulong *lower,
                           const uint *resume)
{
    int cnt[PY], slot[PY], end[PY], next[PY], from[PY], start = b->len;
    for (int p = 0; p < PY; p++) {
        from[p] = (int)(resume[p] & 0xffffu);
        cnt[p] = (int)(resume[p] >> 16);
        slot[p] = end[p] = 0;
        ROLL for (int j = 0; j < NT; j++)
            if (j < t->count[p]) {
                const int r = target_rank(t, off, p, j);
                slot[p] += r < (int)b->below[p];
                end[p] += r < (int)b->upto[p];
            }
        next[p] = next_target(t, off, b, p, slot[p], end[p]);
        if (slot[p] < end[p]) start = min(start, from[p]);
    }
    for (int i = start; i < b->len; i++) {
        bool more = false;
        for (int p = 0; p < PY; p++)
            more |= slot[p] < end[p];
        if (!more) break;
        const ulong e = list[i];
        const int uc = (int)(e & 0xffffu), ur = (int)((uint)e >> 16);
        if ((uint)(uc - lx) >= (uint)WX) continue;
        for (int p = 0; p < PY; p++)
            if ((uint)(ur - ly - p * GY) < (uint)WY && i >= from[p]) {
                if (cnt[p] == next[p]) {
                    if (judge) {
                        judge_probe(v, key, held, lower, p, slot[p], e, i);
                    } else {
                        ROLL for (int j = 0; j < NT; j++)
                            if (j == slot[p]) key[p][j] = (uint)i;
                        held[p] |= 1u << slot[p];
                    }
                    slot[p]++;
                    next[p] = next_target(t, off, b, p, slot[p], end[p]);
                }
                cnt[p]++;
            }
    }
}

/* Every target of the work-item's pixels answered (walk_list: keys, or with judge verdicts):
 * from b's list where its counts place them, else from further brackets, contiguous stretches
 * of the union's order below (first) or above what was covered, each march_steps of the sample
 * long. Each covers elements never covered before, and the union is finite, so every target is
 * answered; b ends as the last bracket built, and where one is built, the walks' resume points
 * and the list indices found before it (pos) are forgotten. The whole group calls it
 * (barriers); flags: a local int. */
void select_ranks(SOURCE, bracket *b, __local ulong *list, int cap, __local ushort *sums,
                  __local const ulong *sample, volatile __local int *flags, int march_steps,
                  int lid, int lx, int ly, const targets *t, const int *off, uint key[PY][NT],
                  uint *held, bool judge, verdicts *v, __local const ulong *lower,
                  uint *resume)
{
    ulong cov_lo = b->L, cov_hi = b->H;
    int covered_below[PY], covered_upto[PY]; /* each pixel's ranks covered so far */
    for (int p = 0; p < PY; p++) {
        covered_below[p] = b->below[p];
        covered_upto[p] = b->upto[p];
    }
    ONCE for (;;) {
        walk_list(list, b, lx, ly, t, off, key, held, judge, v, lower, resume);
        int side = 0;
        for (int p = 0; p < PY; p++)
            if (t->count[p] > 0) {
                side |= target_rank(t, off, p, 0) < covered_below[p] ? 1 : 0;
                side |= target_rank(t, off, p, t->count[p] - 1) >= covered_upto[p] ? 2 : 0;
            }
        if (lid == 0) *flags = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (side) atomic_or(flags, side);
        barrier(CLK_LOCAL_MEM_FENCE);
        const int left = *flags;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!left) break;
        int dir;
        if (left & 1) { /* below: nothing lies below element 0, so cov_lo > 0 */
            dir = -1;
            b->H = cov_lo - 1ul;
            const int i = sample_index(sample, cov_lo) - march_steps;
            b->L = i >= 0 ? min(sample[i], b->H) : 0ul;
        } else { /* above: every element lies at or under ELEM_TOP, so cov_hi < ELEM_TOP */
            dir = 1;
            b->L = cov_hi + 1ul;
            const int i = sample_index(sample, b->L) + march_steps - 1;
            b->H = i < SAMPLE ? max(sample[i], b->L) : ELEM_TOP;
        }
        /* The list is built again: indices into it give way to its keys, and walks start at
         * its start (the build's first barrier orders these reads before its writes). */
        for (int p = 0; p < PY; p++) {
            resume[p] = 0u;
            if (judge) {
                v->false_at[p] = NO_POS;
            } else {
                ROLL for (int j = 0; j < NT; j++)
                    if (held[p] >> j & 1u) key[p][j] = (uint)(list[key[p][j]] >> 32);
                held[p] = 0u;
            }
        }
        build_bracket(SOURCE_PASS, b, dir, list, cap, sums, flags, lid, lx, ly);
        cov_lo = min(cov_lo, b->L);
        cov_hi = max(cov_hi, b->H);
        for (int p = 0; p < PY; p++) {
            covered_below[p] = min(covered_below[p], (int)b->below[p]);
            covered_upto[p] = max(covered_upto[p], (int)b->upto[p]);
        }
    }
}

/* Whether any work-item of the group says so. The whole group calls it; flags: a local int. */
bool any_in_group(bool mine, volatile __local int *flags, int lid)
{
    if (lid == 0) *flags = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mine) *flags = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    const bool any = *flags != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    return any;
}

/* ---- The MAD: the middle of |x - m| over each pixel's window, m its median. ----
 *
 * Over a window's valid elements in order, e_0 < ... < e_{n-1}, the deviation d(e) = |e - m|
 * (rounded as the reference rounds it: monotone, so d falls up to m and rises after it), the
 * k + 1 smallest deviations are one stretch of the order around m, so the k-th smallest is the
 * least over i of f(i) = max(d(e_i), d(e_{i+k})), i from 0 to n - 1 - k. The test
 * Q(i) = e_{i+k} >= m and d(e_i) <= d(e_{i+k}) is false and then true as i grows: where it is
 * false e_i lies at or below m and f(i) = d(e_i) falls, where it is true e_{i+k} lies at or
 * above m and f(i) = d(e_{i+k}) rises. So with i* its first true i, the answer is the lesser
 * of d(e_{i*-1}) and d(e_{i*+k}), where they exist.
 *
 * Each pixel searches for i* with G probes a round, evenly over a hint of where it lies (at
 * first the ranks both of its brackets' lists hold; then between the probes it falls between,
 * or past the end probe, twice as wide as before), and each probe asks two ranks: i of the
 * lower list, i + k of the upper. A round's ranks are answered by one shared walk of each list
 * (select_ranks), so every work-item's pixels read each entry once. The two lists lie around
 * the tile's lower ends m - MAD and upper ends m + MAD, placed by the sample's own MAD about its
 * middle, each in half the local list; ranks outside them march further brackets as the
 * median's do, and each list keeps the last bracket it built for the next round. Ties need no
 * care: ranks count (key, position) pairs. Infinite medians take no search
 * (mad_without_selection), only the count that tells whether every valid value equals them. */
#define HC (CAP / 2)

inline float value_of_elem(ulong e)
{
    return value_of((uint)(e >> 32));
}

/* The MAD of each of the work-item's pixels (n[p] valid, median med[p]) into mad[p]; the whole
 * group calls it (barriers). */
void mad_pass(SOURCE, int nx, int ny, __local ushort *sums, __local ulong *list,
              __local const ulong *sample, volatile __local int *flags, int lid, int lx, int ly,
              const ushort *n, const float *med, int valid_samples, int per_step, float *mad)
{
    /* Where the union's sample puts m - MAD and m + MAD: its middle's deviations merged
     * outward, by one work-item (the answer only steers). */
    __local int *steer = (__local int *)sums;
    if (lid == 0) {
        int lo = valid_samples > 0 ? (valid_samples - 1) / 2 : SAMPLE / 2, hi = lo + 1;
        const float mc = value_of_elem(sample[lo]);
        for (int taken = 0; taken < valid_samples / 2 && isfinite(mc); taken++) {
            const float dl = lo > 0 ? deviation(value_of_elem(sample[lo - 1]), mc) : INFINITY;
            const float dh = hi < valid_samples ? deviation(value_of_elem(sample[hi]), mc)
                                                : INFINITY;
            if (dl <= dh && lo > 0) lo--;
            else if (hi < valid_samples) hi++;
        }
        steer[0] = lo;
        steer[1] = max(hi - 1, lo);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int at_lo = steer[0], at_hi = steer[1];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Elements each bracket holds on each side of its estimate: the tile's spread of lower
     * (upper) ends, about 1.4 UNION / w, and twice the sample's error at a quartile, about
     * 0.43 UNION / sqrt(SAMPLE); at most 2/5 of a list, so that few overflow. */
    const float w = sqrt((float)(WX * WY));
#ifdef MAD_HALF
    const int half_elems = MAD_HALF;
#else
    const int half_elems =
        min(HC * 2 / 5, (int)(1.4f * UNION / w + 0.86f * UNION / sqrt((float)SAMPLE)));
#endif
    const int half_steps = clamp(half_elems / per_step, 1, SAMPLE / 2);
    const int march_steps = clamp((HC / 2) / per_step, 1, SAMPLE);
    bracket lower = {.L = at_lo >= half_steps ? sample[at_lo - half_steps] : 0ul,
                     .H = at_lo + half_steps < SAMPLE ? sample[at_lo + half_steps] : ELEM_TOP};
    bracket upper = {.L = at_hi >= half_steps ? sample[at_hi - half_steps] : 0ul,
                     .H = at_hi + half_steps < SAMPLE ? sample[at_hi + half_steps] : ELEM_TOP};
    __local ulong *lower_list = list, *upper_list = list + HC;
    TWICE(s)
        build_bracket(SOURCE_PASS, s ? &upper : &lower, 0, s ? upper_list : lower_list, HC, sums,
                      flags, lid, lx, ly);

    /* Infinite medians: whether every valid value equals them (then NaN, else +inf), from the
     * counts below +inf and at or under -inf. */
    bool mine = false;
    for (int p = 0; p < PY; p++)
        mine |= n[p] > 0 && is_inf(med[p]);
    if (any_in_group(mine, flags, lid)) {
        ushort below_inf[PY], upto_neg_inf[PY];
        TWICE(j)
            box_counts(SOURCE_PASS, j ? (ulong)(KEY_NEG_INF + 1u) << 32 : (ulong)KEY_POS_INF << 32,
                       sums, lid, lx, ly, j ? upto_neg_inf : below_inf);
        for (int p = 0; p < PY; p++)
            if (n[p] > 0 && is_inf(med[p]))
                mad[p] = mad_without_selection(
                    med[p], med[p] > 0.0f ? below_inf[p] == 0 : upto_neg_inf[p] == n[p]);
    }

    /* The k-th smallest deviation, k the middle rank (h = 0) or, under the mean rule with an
     * even count, the one after it (h = 1). */
    float dev[2][PY];
    ONCE for (int h = 0; h < 2; h++) {
        int k[PY], lo[PY], hi[PY], hint_lo[PY], hint_hi[PY];
        float dev_lo[PY], dev_hi[PY]; /* d(e_lo), d(e_{hi+k}) */
        for (int p = 0; p < PY; p++) {
            const int cnt = n[p];
            k[p] = MIDDLE_RANK(cnt) + h;
            const bool inside = x0 + lx < nx && y0 + ly + p * GY < ny;
            const bool searched = inside && cnt > 0 && isfinite(med[p]) &&
                                  (h == 0 || MIDDLE_IS_MEAN(cnt));
            /* i* lies in lo + 1 .. hi: no true i known yet (hi = n - k), none false (lo = -1). */
            lo[p] = -1;
            hi[p] = searched ? cnt - k[p] : 0;
            dev_lo[p] = dev_hi[p] = INFINITY;
            /* The first hint: the i both lists hold (at least G of them where they hold fewer). */
            const int last = max(cnt - k[p] - 1, 0);
            int a = max((int)lower.below[p], (int)upper.below[p] - k[p]);
            int b = min((int)lower.upto[p], (int)upper.upto[p] - k[p]) - 1;
            a = clamp(a, 0, last);
            b = clamp(b, a, last);
            if (b - a < NT - 1) {
                b = min(a + NT - 1, last);
                a = max(b - (NT - 1), 0);
            }
            hint_lo[p] = a;
            hint_hi[p] = b;
        }
        const int no_off[PY] = {0};
        uint resume[2][PY]; /* each list's (s = 0 lower, 1 upper) walks start at its start */
        for (int p = 0; p < PY; p++)
            resume[0][p] = resume[1][p] = 0u;
        ONCE for (;;) {
            targets probes;
            verdicts v;
            uint key[PY][NT], held[PY];
            bool open = false;
            for (int p = 0; p < PY; p++) {
                probes.first[p] = hint_lo[p];
                probes.span[p] = hint_hi[p] - hint_lo[p];
                probes.count[p] = hi[p] - lo[p] > 1 ? min(NT, probes.span[p] + 1) : 0;
                open |= hi[p] - lo[p] > 1;
                v.m[p] = med[p];
                v.first_true[p] = NT;
                v.last_false[p] = -1;
                v.false_at[p] = NO_POS;
                held[p] = 0u;
            }
            if (!any_in_group(open, flags, lid)) break;
            /* The lower list's keys, then the upper list's walk judges each probe. */
            TWICE(s)
                select_ranks(SOURCE_PASS, s ? &upper : &lower, s ? upper_list : lower_list, HC,
                             sums, sample, flags, march_steps, lid, lx, ly, &probes,
                             s ? k : no_off, key, held, s == 1, &v, lower_list, resume[s]);
            for (int p = 0; p < PY; p++) {
                if (probes.count[p] == 0) continue;
                const int jt = v.first_true[p], jf = v.last_false[p];
                if (jt < NT) {
                    hi[p] = target_rank(&probes, no_off, p, jt);
                    dev_hi[p] = v.dev_true[p];
                }
                float g_lo = 0.0f, g_hi = 0.0f; /* d(e_i) - d(e_{i+k}) at lo and hi */
                if (jf >= 0) {
                    lo[p] = target_rank(&probes, no_off, p, jf);
                    /* The next round's probes lie above lo: its walks start past e_lo and
                     * e_{lo+k} where this round's found them in the lists held now. */
                    if (held[p] >> jf & 1u)
                        resume[0][p] =
                            RESUME(raw_at(key, p, jf) + 1, lo[p] - (int)lower.below[p] + 1);
                    if (v.false_at[p] != NO_POS)
                        resume[1][p] =
                            RESUME(v.false_at[p] + 1, lo[p] + k[p] - (int)upper.below[p] + 1);
                    dev_lo[p] = deviation(value_of(key_at(key, held, lower_list, p, jf)), med[p]);
                    g_lo = dev_lo[p] - v.up_false[p];
                }
                /* The next hint: where the line through the test's margins at the probes i*
                 * falls between crosses zero, G wide; or past the end probe, twice as wide as
                 * this round's. */
                const int width = 2 * (hint_hi[p] - hint_lo[p] + 1);
                if (jt < NT && jf >= 0) {
                    g_hi = deviation(value_of(key_at(key, held, lower_list, p, jt)), med[p]) -
                           dev_hi[p];
                    const float t = g_lo / (g_lo - g_hi); /* g_lo > 0 >= g_hi where finite */
                    int c = lo[p] + 1;
                    if (t > 0.0f && t < 1.0f) c = lo[p] + (int)(t * (float)(hi[p] - lo[p]));
                    hint_lo[p] = max(lo[p] + 1, c - NT / 2);
                    hint_hi[p] = min(hi[p] - 1, hint_lo[p] + NT - 1);
                    hint_lo[p] = max(lo[p] + 1, hint_hi[p] - (NT - 1));
                } else if (jt < NT) {
                    hint_hi[p] = hi[p] - 1;
                    hint_lo[p] = max(lo[p] + 1, hint_hi[p] - width + 1);
                } else {
                    hint_lo[p] = lo[p] + 1;
                    hint_hi[p] = min(hi[p] - 1, hint_lo[p] + width - 1);
                }
            }
        }
        for (int p = 0; p < PY; p++)
            dev[h][p] = min(lo[p] >= 0 ? dev_lo[p] : INFINITY,
                            hi[p] < n[p] - k[p] ? dev_hi[p] : INFINITY);
    }
    for (int p = 0; p < PY; p++) {
        const int cnt = n[p];
        if (cnt > 0 && isfinite(med[p]))
            mad[p] = MIDDLE_IS_MEAN(cnt) ? mean_of_middles(dev[0][p], dev[1][p]) : dev[0][p];
    }
}

