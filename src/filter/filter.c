/* filter.c - sliding-window median and MAD maps (clstats_median_filter, and
 * clstats_median_filter_band for an image given a strip at a time): checks the arguments, turns
 * the window (src/filter/window.c) and the boundary mode into row and column maps, picks a design
 * (kernels/median_filter*.cl: the rectangle designs for float32 windows of every cell of a
 * rectangle, any size, origin and even rule; the footprint design for true footprints and
 * float64) and runs it in bands of rows so no single launch runs for long. An origin only
 * shifts the maps, so every design serves it. */
#include "filter_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Window values visited per launch, at most: keeps each launch well under a second. */
#define WORK_PER_LAUNCH (1L << 31)

/* Bands of a streamed call (src/core/staging.c): enough that the first band's upload and the
 * last one's download, which nothing overlaps, are a small part of the whole. */
#define STREAM_BANDS 8

/* The rank design's tiles in global memory, for the groups of one launch, at most. */
#define TILE_SCRATCH_BUDGET (256UL << 20)

/* The rank design's tile side where its tile lies in global memory. */
#define GLOBAL_RANK_TILE 256

/* The designs (see the kernel files): sorted column runs, fastest on GPUs where its tile fits;
 * counting bisection over a local-memory tile; the binned reference design reading global
 * memory, for any width; on CPU devices, rank sets swept over a sorted tile, one work-item per
 * group; for large windows on GPUs, sorted runs built column by column in global memory. */
enum filter_path {
    PATH_SORTED,
    PATH_BISECT,
    PATH_BINNED,
    PATH_RANK,
    PATH_FOOTPRINT,
    PATH_RUNS,
    PATH_BRACKET
};

/* Above this many rows or columns GPUs take the runs design: the sorted design's segments stop
 * fitting registers and its groups shrink there (bench/RESULTS.md, issue 20). */
#define RUNS_FROM 36

/* From this many rows or columns GPUs take the bracket design for a median without a MAD: it
 * measured faster than the sorted design from w = 31 and than the runs design at every w from
 * 37 to 255 (bench/RESULTS.md, "the bracket design"). */
#define BRACKET_FROM 31

/* With a MAD, GPUs take the bracket design where the window's larger side is from
 * BRACKET_MAD_FROM to BRACKET_MAD_TO: measured faster than the runs design from w = 81 to 201
 * (H100: 133 against 126 Mpixel/s at 81, 106 against 82 at 101, 30.5 against 22.5 at 201),
 * slower at 71 (142 against 147) and 239 (19.3 against 20.3), and than the sorted design at 31;
 * the switches where the measured ratios cross one (bench/RESULTS.md, "issue20l"). */
#define BRACKET_MAD_FROM 75
#define BRACKET_MAD_TO 233

struct filter_plan {
    enum filter_path path;
    int bins, cap; /* binned: value bins; largest bin sorted in registers */
    int tx, ty;    /* bisect, sorted: work-group shape; rank: tile shape */
    int px, py;    /* output pixels per work-item along x and y (rank: a whole tile) */
    int run_group; /* runs: the building pass's work-group */
    int sample;    /* bracket: the sample's size (cap: the list's capacity) */
    size_t tile_bytes; /* rank: a group's tile in global scratch, 0 for local memory */
    size_t local[2];
    char options[160];
    const char *source;
    char *prefix; /* generated source before the kernel file's, or NULL; owned */
};

/* The rectangle designs' window: wx columns, wy rows, the even rule. */
struct rect {
    int wx, wy, even;
};

/* Local memory of the sorted design's work-group (kernels/median_filter_sorted.cl). */
static size_t sorted_local_bytes(struct rect r, int tx, int ty, int px)
{
    const size_t cw = (size_t)(tx * px + r.wx - 1), th = (size_t)(ty + r.wy - 1);
    return 4 * th * cw + 4 * (size_t)r.wy * (size_t)ty * cw + (size_t)ty * cw;
}

/* The sorted design's shape for the window r: the first that fits, preferring many output rows per
 * group (each sorted segment serves a row). One pixel per work-item measured best for median
 * and MAD together at w = 11 on the H200 (bench/RESULTS.md); more trade MAD for median speed.
 * The tuning parameters filter.shape_tx, _ty and _px force a shape that fits. */
static bool plan_sorted(const clstats_ctx *ctx, struct rect r, struct filter_plan *plan)
{
    static const int shapes[][3] = {{32, 8, 1}, {32, 4, 1}, {16, 4, 1},
                                    {32, 2, 1}, {16, 2, 1}, {8, 2, 1}};
    int tx = (int)clstats__tuned(ctx, P_FILTER_SHAPE_TX),
        ty = (int)clstats__tuned(ctx, P_FILTER_SHAPE_TY),
        px = (int)clstats__tuned(ctx, P_FILTER_SHAPE_PX);
    /* Its window loops unroll WX and WY times: slow builds (bench/RESULTS.md). */
    if (r.wx > 63 || r.wy > 63) return false;
    if (tx > 0 && ty > 0 && px > 0 && sorted_local_bytes(r, tx, ty, px) <= ctx->local_mem &&
        (size_t)(tx * ty) <= ctx->max_work_group) {
        plan->tx = tx, plan->ty = ty, plan->px = px;
        return true;
    }
    /* A little local memory is the implementation's own. */
    const size_t budget = ctx->local_mem > 2048 ? ctx->local_mem - 1024 : ctx->local_mem;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tx = shapes[i][0], ty = shapes[i][1], px = shapes[i][2];
        if (sorted_local_bytes(r, tx, ty, px) <= budget &&
            (size_t)(tx * ty) <= ctx->max_work_group) {
            plan->tx = tx, plan->ty = ty, plan->px = px;
            return true;
        }
    }
    return false;
}

/* Bytes of the rank design's tile of t x t outputs for the window r swept `rows` output rows at
 * a time (a bitset each and one shared), its ranks 16-bit where they fit
 * (kernels/filter/median_filter_rank.cl's arrays, TILE_WORDS there). */
static size_t rank_tile_bytes(struct rect r, int t, int rows, int *rank_bits)
{
    const size_t n = (size_t)(t + r.wx - 1) * (size_t)(t + r.wy - 1);
    const size_t rank_size = n < 65536 ? 2 : 4; /* nvalid <= n must fit too */
    *rank_bits = (int)(8 * rank_size);
    return 8 * (2 * n + (size_t)(rows + 1) * ((n + 63) / 64 + 3) +
                (n * 4 + (n + 16) * rank_size + 7) / 8);
}

/* Output rows a sweep of the rank design: its windows share all but rows - 1 of their rows, so
 * a column move toggles the shared ranks once for all of them (kernels/filter/
 * median_filter_rank.cl). Four from RANK_ROWS_FROM window rows on, measured on PoCL 1.3-1.5x
 * faster than one at w = 201..255 and 5-9% at w = 51..101; eight no faster, more slower; no
 * gain below (bench/RESULTS.md, issue 20). filter.shape_px forces it (tests, benchmarks); at
 * most (wy + 1) / 2, so that a band's windows overlap. */
#define RANK_ROWS_FROM 41
static int rank_rows(const clstats_ctx *ctx, struct rect r)
{
    const long forced = clstats__tuned(ctx, P_FILTER_SHAPE_PX);
    const int rows = forced > 0 ? (int)forced : r.wy >= RANK_ROWS_FROM ? 4 : 1;
    return rows < (r.wy + 1) / 2 ? rows : (r.wy + 1) / 2;
}

/* The rank design's tile for the window r: about 3w on a side, w its longer side (measured best
 * from 16 for w <= 5 to 64 for w = 21..101 on PoCL for squares; bench/RESULTS-cpu.md), so that
 * the halo's share of the sort stays small while the window still fills a good part of the
 * tile's ranks (sparse bitsets cost scanning). Where local memory cannot hold it (w above
 * about 150 on PoCL's 1 MiB) each group's tile lies in a global scratch buffer instead, a larger
 * one; on CPU devices both are ordinary memory (issue 20: the smaller local tiles, or the binned
 * design they once fell to, cost up to 8x). */
static bool plan_rank(const clstats_ctx *ctx, struct rect r, struct filter_plan *plan)
{
    const int w = r.wx > r.wy ? r.wx : r.wy;
    const int rows = rank_rows(ctx, r);
    int t = (3 * w + 4) / 8 * 8, rank_bits;
    t = t < 16 ? 16 : t > 64 ? 64 : t;
    /* In global memory the tile can grow: at 256 on a side the outputs are a quarter of the
     * sort's input at w = 255 (at 128 a ninth), measured 1.4-1.7x faster than 64 and
     * 5-7% faster than 128 at w = 201..255 (bench/RESULTS.md). */
    if (rank_tile_bytes(r, t, rows, &rank_bits) > ctx->local_mem) t = GLOBAL_RANK_TILE;
    const long forced = clstats__tuned(ctx, P_FILTER_SHAPE_TX); /* for benchmarks */
    if (forced > 0) t = (int)forced;
    const size_t bytes = rank_tile_bytes(r, t, rows, &rank_bits);
    if (bytes > ctx->max_alloc) return false;
    plan->path = PATH_RANK;
    plan->tx = plan->ty = t;
    plan->px = plan->py = t;
    plan->local[0] = plan->local[1] = 1;
    plan->source = "median_filter_rank.cl";
    plan->tile_bytes = bytes > ctx->local_mem ? bytes : 0;
    snprintf(plan->options, sizeof plan->options,
             "-D WX=%d -D WY=%d -D EVEN=%d -D TX=%d -D TY=%d -D RANK_BITS=%d -D ROWS=%d%s", r.wx,
             r.wy, r.even, t, t, rank_bits, rows, plan->tile_bytes ? " -D GLOBAL_TILE" : "");
    return true;
}

/* The runs design (src/filter/runs.c): select work-groups of 32 x 4 work-items, each walking
 * PY output rows down (filter.shape_px forces PY), each pixel starting from the answers of the
 * one above. */
static bool plan_runs(const clstats_ctx *ctx, struct rect r, struct filter_plan *plan)
{
    if (!clstats__runs_plan(ctx, r.wy, &plan->run_group) || ctx->max_work_group < 128)
        return false;
    const long py = clstats__tuned(ctx, P_FILTER_SHAPE_PX);
    plan->path = PATH_RUNS;
    plan->px = 1;
    plan->py = py > 0 ? (int)py : 4;
    plan->local[0] = 32;
    plan->local[1] = 4;
    plan->source = "median_filter_runs.cl";
    snprintf(plan->options, sizeof plan->options,
             "-D WX=%d -D WY=%d -D EVEN=%d -D RUN_GROUP=%d -D PY=%d", r.wx, r.wy, r.even,
             plan->run_group, plan->py);
    return true;
}

/* Local memory of the bracket design's group for the window r (kernels/filter/
 * median_filter_bracket.cl: its sums, list and sample; tiles of 32 x 8 py). */
static size_t bracket_local_bytes(struct rect r, int py, int cap, int sample)
{
    const size_t uw = 32 + (size_t)r.wx - 1;
    return 2 * (8 * (size_t)py * uw + 256) + 8 * (size_t)cap + 8 * (size_t)sample + 64;
}

/* The bracket design (the median, and with want_mad the MAD): work-groups of 32 x 8
 * work-items over tiles of 32 x 32 outputs; the largest list (a power of two up to 4096) and
 * sample (1024, or 512 where local memory is short) that fit. Where filter.path forces the
 * design, filter.shape_tx forces the list's capacity (tests make it small so that brackets
 * overflow and miss; at least 2 with a MAD, whose two lists take a half each). Its counts are
 * 16-bit: windows of at most 65535 cells. */
static bool plan_bracket(const clstats_ctx *ctx, struct rect r, bool forced, bool want_mad,
                         struct filter_plan *plan)
{
    const int py = 4;
    if ((long)r.wx * r.wy > 65535 || ctx->max_work_group < 256) return false;
    const size_t budget = ctx->local_mem > 2048 ? ctx->local_mem - 1024 : ctx->local_mem;
    int sample = 1024, cap = 4096;
    while (sample > 512 && bracket_local_bytes(r, py, 1024, sample) > budget)
        sample /= 2;
    while (cap > 1024 && bracket_local_bytes(r, py, cap, sample) > budget)
        cap /= 2;
    const long forced_cap = forced ? clstats__tuned(ctx, P_FILTER_SHAPE_TX) : 0;
    if (forced_cap > 0) {
        cap = want_mad ? 2 : 1; /* the MAD's two lists take a half each */
        while (cap * 2 <= forced_cap && cap < 4096)
            cap *= 2;
    }
    if (bracket_local_bytes(r, py, cap, sample) > budget) return false;
    /* The MAD search's probes a round: 8 (bench/RESULTS.md); filter.shape_ty forces them (tests
     * make them few, so that searches take many rounds). */
    const long forced_probes = forced ? clstats__tuned(ctx, P_FILTER_SHAPE_TY) : 0;
    const int probes = forced_probes >= 2 && forced_probes <= 32 ? (int)forced_probes : 8;
    plan->path = PATH_BRACKET;
    plan->tx = 32;
    plan->px = 1;
    plan->py = py;
    plan->cap = cap;
    plan->sample = sample;
    plan->local[0] = 32;
    plan->local[1] = 8;
    plan->source = "median_filter_bracket.cl";
    /* CPU devices take the design only where tests force it, and build it unoptimised: PoCL's
     * optimiser spends minutes on its many barrier regions (over 8 CPU minutes for the MAD's
     * kernel, a minute for the median's), unoptimised about a second (bench/RESULTS.md). */
    snprintf(plan->options, sizeof plan->options,
             "-D WX=%d -D WY=%d -D EVEN=%d -D PY=%d -D CAP=%d -D SAMPLE=%d -D MAD=%d -D G=%d "
             "-D ROLLED=%d%s",
             r.wx, r.wy, r.even, py, cap, sample, want_mad, probes, ctx->is_cpu,
             ctx->is_cpu ? " -cl-opt-disable" : "");
    /* filter.shape_px forces the MAD brackets' first half-widths, in 16 elements (benchmarks). */
    const long forced_half = forced && want_mad ? clstats__tuned(ctx, P_FILTER_SHAPE_PX) : 0;
    if (forced_half > 0) {
        const size_t used = strlen(plan->options);
        snprintf(plan->options + used, sizeof plan->options - used, " -D MAD_HALF=%ld",
                 16 * forced_half);
    }
    return true;
}

/* Chooses the design and its build options: on GPUs sorted runs where the window is small and
 * the tile fits, the runs design for larger windows (the bracket design for a median alone
 * there, and with a MAD from BRACKET_MAD_FROM to BRACKET_MAD_TO), else bisection where its
 * tile fits; rank
 * on CPU devices, else binned where the rank tile cannot fit (bench/RESULTS.md). The tuning
 * parameter filter.path forces one (tests judge each; a design whose tile cannot fit falls
 * back as the default would). */
static int plan_filter(clstats_ctx *ctx, struct rect r, bool want_mad, struct filter_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->px = plan->py = 1;
    const long forced = clstats__tuned(ctx, P_FILTER_PATH);
    const bool large = r.wx >= RUNS_FROM || r.wy >= RUNS_FROM;
    const long fallback = ctx->is_cpu ? FILTER_RANK : large ? FILTER_RUNS : FILTER_SORTED;
    const int side = r.wx > r.wy ? r.wx : r.wy;
    const bool bracket = want_mad ? side >= BRACKET_MAD_FROM && side <= BRACKET_MAD_TO
                                  : side >= BRACKET_FROM;
    long want = forced ? forced : !ctx->is_cpu && bracket ? FILTER_BRACKET : fallback;
    if (want == FILTER_BRACKET) {
        if (plan_bracket(ctx, r, forced == FILTER_BRACKET, want_mad, plan)) return CLSTATS_OK;
        want = fallback;
    }

    if (want == FILTER_RANK && plan_rank(ctx, r, plan)) return CLSTATS_OK;
    if (want == FILTER_RUNS && plan_runs(ctx, r, plan)) return CLSTATS_OK;
    if (want == FILTER_SORTED && plan_sorted(ctx, r, plan)) {
        plan->path = PATH_SORTED;
        plan->local[0] = (size_t)plan->tx;
        plan->local[1] = (size_t)plan->ty;
        plan->source = "median_filter_sorted.cl";
        plan->prefix = clstats__sort_network_source(r.wy);
        if (!plan->prefix)
            return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate a sorting network");
        snprintf(plan->options, sizeof plan->options,
                 "-D WX=%d -D WY=%d -D EVEN=%d -D TX=%d -D TY=%d -D PX=%d%s", r.wx, r.wy, r.even,
                 plan->tx, plan->ty, plan->px, ctx->is_cpu ? " -D SELECT_KEY_CALL" : "");
        return CLSTATS_OK;
    }
    plan->path = PATH_BINNED;
    if (want == FILTER_SORTED || want == FILTER_BISECT || want == FILTER_RUNS) {
        for (int t = 16; t >= 8 && plan->path == PATH_BINNED; t /= 2) {
            size_t bytes = (size_t)(t + r.wx - 1) * (size_t)(t + r.wy - 1) * sizeof(float);
            if (bytes <= ctx->local_mem && (size_t)(t * t) <= ctx->max_work_group) {
                plan->path = PATH_BISECT;
                plan->tx = plan->ty = t;
            }
        }
    }
    if (plan->path == PATH_BISECT) {
        plan->local[0] = (size_t)plan->tx;
        plan->local[1] = (size_t)plan->ty;
        plan->source = "median_filter_bisect.cl";
        snprintf(plan->options, sizeof plan->options, "-D WX=%d -D WY=%d -D EVEN=%d -D TX=%d -D TY=%d",
                 r.wx, r.wy, r.even, plan->tx, plan->ty);
        return CLSTATS_OK;
    }
    /* Bins grow with the window so the median's bin stays small. */
    const int n = r.wx * r.wy;
    plan->bins = 32;
    while (plan->bins < 256 && plan->bins * 4 < n)
        plan->bins *= 2;
    plan->cap = n > 200 ? 64 : 32;
    plan->local[0] = 16;
    plan->local[1] = 4;
    plan->source = "median_filter.cl";
    snprintf(plan->options, sizeof plan->options, "-D WX=%d -D WY=%d -D EVEN=%d -D NB=%d -D CAP=%d",
             r.wx, r.wy, r.even, plan->bins, plan->cap);
    return CLSTATS_OK;
}

static const char *const boundary_names[] = {"reflect", "mirror", "nearest", "constant", "wrap"};

int clstats_boundary_from_name(const char *name, enum clstats_boundary *out)
{
    for (int i = 0; name && i < 5; i++) {
        if (strcmp(name, boundary_names[i]) == 0) {
            *out = (enum clstats_boundary)i;
            return CLSTATS_OK;
        }
    }
    return clstats__fail(NULL, CLSTATS_ERR_ARG,
                         "unknown boundary mode \"%s\" (reflect, mirror, nearest, constant, wrap)",
                         name ? name : "(null)");
}

const char *clstats_boundary_name(enum clstats_boundary b)
{
    return (unsigned)b < 5 ? boundary_names[b] : "unknown";
}

/* Source index of position i on an axis of n samples, as scipy.ndimage extends it; -1 means
 * the constant value. Periodic, so windows wider than the image are handled too. */
static int extend_index(long i, long n, enum clstats_boundary mode)
{
    if (i >= 0 && i < n) return (int)i;
    long p;
    switch (mode) {
    case CLSTATS_BOUNDARY_REFLECT: /* d c b a | a b c d | d c b a: period 2n */
        p = 2 * n;
        i %= p;
        if (i < 0) i += p;
        return (int)(i < n ? i : p - 1 - i);
    case CLSTATS_BOUNDARY_MIRROR: /* d c b | a b c d | c b a: period 2n - 2 */
        if (n == 1) return 0;
        p = 2 * n - 2;
        i %= p;
        if (i < 0) i += p;
        return (int)(i < n ? i : p - i);
    case CLSTATS_BOUNDARY_NEAREST:
        return (int)(i < 0 ? 0 : n - 1);
    case CLSTATS_BOUNDARY_WRAP:
        i %= n;
        return (int)(i < 0 ? i + n : i);
    case CLSTATS_BOUNDARY_CONSTANT:
    default:
        return -1;
    }
}

long clstats_boundary_index(long i, size_t n, enum clstats_boundary mode)
{
    if (n == 0 || n > INT32_MAX || (unsigned)mode > CLSTATS_BOUNDARY_WRAP) return -1;
    return extend_index(i, (long)n, mode);
}

/* Which rows a call computes, and how its buffer holds the rows their windows read. */
struct row_span {
    size_t full_ny;     /* the whole image's rows: the boundary applies against them */
    size_t row0, rows;  /* the output rows */
    size_t buffer_rows; /* rows in the caller's buffer */
    bool window_order;  /* buffer row j is window position j (a band), not image row j */
};

/* Map of window positions to source indices for outputs first .. first + padded - 1 (n outputs
 * rounded up to whole work-groups): `padded` + extent - 1 entries, position j being index
 * first + j - before of an axis of n samples (`before`: the window's cells before its pixel). In
 * window order the buffer already holds each position's row, so the map only marks the
 * constant's positions (-1); the padding past the band reads the constant too (those outputs
 * are never stored). */
static int *axis_map(size_t n, size_t first, size_t padded, int extent, int before,
                     enum clstats_boundary mode, size_t window_rows)
{
    size_t len = padded + (size_t)extent - 1;
    int *map = malloc(len * sizeof *map);
    if (!map) return NULL;
    for (size_t j = 0; j < len; j++) {
        map[j] = extend_index((long)(first + j) - before, (long)n, mode);
        if (window_rows && map[j] >= 0) map[j] = j < window_rows ? (int)j : -1;
    }
    return map;
}

static int check_params(clstats_ctx *ctx, const struct clstats_filter_params *p)
{
    int status = clstats__window_check(ctx, p);
    if (status != CLSTATS_OK) return status;
    if ((unsigned)p->boundary > CLSTATS_BOUNDARY_WRAP)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "unknown boundary mode %d", (int)p->boundary);
    if ((unsigned)p->even > CLSTATS_EVEN_UPPER)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "unknown even-count rule %d", (int)p->even);
    return CLSTATS_OK;
}

static int check_args(clstats_ctx *ctx, const void *image, size_t nx, size_t ny, size_t stride,
                      const struct clstats_filter_params *p, const void *median_out,
                      const void *mad_out)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    if (!image || !p) return clstats__fail(ctx, CLSTATS_ERR_ARG, "image or params is NULL");
    if (!median_out && !mad_out)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "neither a median nor a MAD output given");
    if (nx == 0 || ny == 0 || nx > INT32_MAX / 2 || ny > INT32_MAX / 2)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "image size %zu x %zu is out of range", nx, ny);
    if (stride < nx)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "row stride %zu is less than the width %zu",
                             stride, nx);
    return check_params(ctx, p);
}

/* Whether a map can come down through the staging slots: a host array of whole rows, or none. */
static bool streams_to(const struct clstats_array *out)
{
    return !out || (out->host && clstats__array_stride(out) == out->nx);
}

/* The footprint design for any window, rule and dtype (kernels/median_filter_footprint.cl). */
static void plan_footprint(bool f64, struct filter_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->path = PATH_FOOTPRINT;
    plan->px = plan->py = 1;
    plan->local[0] = 16;
    plan->local[1] = 4;
    plan->source = "median_filter_footprint.cl";
    snprintf(plan->options, sizeof plan->options, "%s", f64 ? "-D FP64" : "");
}

/* The filter for span->rows output rows of the image `in` holds (span->buffer_rows of it);
 * `ny` below counts the output rows. median_out and mad_out (either may be NULL) are nx x ny of
 * the image's dtype. The one implementation behind every entry point. */
static int filter_span(clstats_ctx *ctx, const struct clstats_array *in,
                       const struct row_span *span, const struct clstats_filter_params *p,
                       const struct clstats_array *median_out, const struct clstats_array *mad_out)
{
    int status;
    const bool f64 = in->dtype == CLSTATS_FLOAT64;
    const size_t ny = span->rows, nx = in->nx, es = f64 ? sizeof(double) : sizeof(float);
    /* A mask gives a packed copy with the masked pixels NaN. */
    const size_t stride = p->mask ? nx : clstats__array_stride(in);
    bool own_input = false;
    clstats__begin(ctx);

    int *colmap = NULL, *rowmap = NULL;
    cl_mem img_buf = NULL, col_buf = NULL, row_buf = NULL, med_buf = NULL, mad_buf = NULL,
           cell_buf = NULL, tile_buf = NULL;
    cl_kernel kernel = NULL;
    cl_program program;
    cl_int err;
    bool streamed = false;
    struct filter_window win = {0};
    size_t in_bytes;
    if (f64 && !ctx->has_fp64)
        return clstats__end(ctx, clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                                               "the device has no fp64 for a float64 image"));
    status = clstats__array_check(ctx, in, "the image", &in_bytes);
    if (status != CLSTATS_OK) return clstats__end(ctx, status);
    const size_t out_bytes = nx * ny * es; /* below 2^63: check_args bounds nx, ny */

    if (in_bytes > ctx->max_alloc || out_bytes > ctx->max_alloc)
        return clstats__end(ctx, clstats__fail(ctx, CLSTATS_ERR_DEVICE_MEMORY,
                                               "a %zu x %zu image is larger than the device's "
                                               "largest buffer (%llu MiB)",
                                               nx, ny, (unsigned long long)(ctx->max_alloc >> 20)));
    status = clstats__window_of(ctx, p, &win);
    if (status != CLSTATS_OK) return clstats__end(ctx, status);

    struct filter_plan plan;
    const bool rectangle = win.rectangle && !f64;
    if (rectangle) {
        const struct rect r = {win.width, win.height, (int)p->even};
        status = plan_filter(ctx, r, mad_out != NULL, &plan);
        if (status != CLSTATS_OK) goto fail;
    } else {
        plan_footprint(f64, &plan);
    }
    clstats__log(ctx, "median filter: %d x %d window of %d cells, %s, %s design (%s)", win.width,
                 win.height, win.n_cells, f64 ? "float64" : "float32",
                 rectangle ? "rectangle" : "footprint", plan.source);
    status = clstats__program_prefixed(ctx, plan.source, plan.prefix, plan.options, &program);
    free(plan.prefix);
    if (status != CLSTATS_OK) goto fail;
    status = clstats__kernel(ctx, program, "median_mad", &kernel);
    if (status != CLSTATS_OK) goto fail;

    const size_t *local = plan.local;
    /* Output pixels per work-group along each axis; the maps cover whole groups. */
    const size_t step_x = local[0] * (size_t)plan.px, step_y = local[1] * (size_t)plan.py;
    const size_t gx = (nx + step_x - 1) / step_x * step_x;
    const size_t gy = (ny + step_y - 1) / step_y * step_y;
    colmap = axis_map(nx, 0, gx, win.width, win.left, p->boundary, 0);
    rowmap = axis_map(span->full_ny, span->row0, gy, win.height, win.top, p->boundary,
                      span->window_order ? span->buffer_rows : 0);
    if (!colmap || !rowmap) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate boundary maps");
        goto fail;
    }

    const cl_mem_flags in_flags = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    /* Streamed: the image goes up, and the maps come down, band by band beside the kernels.
     * The runs design sorts every column over the whole image before its first pixel, so it
     * has no bands to overlap: it takes the plain transfers. */
    streamed = in->host && !p->mask && plan.path != PATH_RUNS && streams_to(median_out) &&
               streams_to(mad_out) && clstats__stage_wanted(ctx) &&
               clstats__stage_begin(ctx) == CLSTATS_OK;
    if (streamed) {
        /* The device's copies are kept by the context: a driver may take longer to allocate
         * them than the bus takes to fill them, and a strip loop or a batch calls again. */
        clstats__log(ctx, "median filter: image and maps streamed through pinned slots");
        status = clstats__scratch(ctx, "filter.image", in_bytes, &img_buf);
    } else if (p->mask) {
        status = clstats__array_in_masked(ctx, in, p->mask, &img_buf, &own_input);
    } else {
        status = clstats__array_in(ctx, in, false, &img_buf, NULL, &own_input);
    }
    if (status != CLSTATS_OK) goto fail;
    col_buf = clCreateBuffer(ctx->context, in_flags, (gx + (size_t)win.width - 1) * sizeof(int),
                             colmap, &err);
    CL_TRY(ctx, err, "clCreateBuffer(column map)");
    row_buf = clCreateBuffer(ctx->context, in_flags, (gy + (size_t)win.height - 1) * sizeof(int),
                             rowmap, &err);
    CL_TRY(ctx, err, "clCreateBuffer(row map)");
    /* An unused output still needs a valid buffer argument: a one-element stand-in. */
    if (streamed) {
        if ((status =
                 clstats__scratch(ctx, "filter.median", median_out ? out_bytes : es, &med_buf)) ||
            (status = clstats__scratch(ctx, "filter.mad", mad_out ? out_bytes : es, &mad_buf)))
            goto fail;
    } else {
        med_buf = clCreateBuffer(ctx->context, CL_MEM_WRITE_ONLY, median_out ? out_bytes : es, NULL,
                                 &err);
        CL_TRY(ctx, err, "clCreateBuffer(median)");
        mad_buf =
            clCreateBuffer(ctx->context, CL_MEM_WRITE_ONLY, mad_out ? out_bytes : es, NULL, &err);
        CL_TRY(ctx, err, "clCreateBuffer(MAD)");
    }

    if (plan.path == PATH_RUNS) {
        const struct runs_job job = {.img = img_buf, .colmap = col_buf, .rowmap = row_buf,
                                     .median = med_buf, .mad = mad_buf, .nx = nx, .ny = ny,
                                     .stride = stride, .gx = gx, .gy = gy, .step_y = step_y,
                                     .local = local, .wx = win.width, .wy = win.height,
                                     .py = plan.py, .run_group = plan.run_group,
                                     .cval = p->cval, .want_median = median_out != NULL,
                                     .want_mad = mad_out != NULL, .progress = p->progress,
                                     .progress_user = p->progress_user};
        status = clstats__filter_runs(ctx, program, &job);
        if (status != CLSTATS_OK) goto fail;
        goto outputs;
    }

    const cl_long stride_arg = (cl_long)stride;
    const cl_int nx_arg = (cl_int)nx, ny_arg = (cl_int)ny;
    const cl_int want_median = median_out != NULL, want_mad = mad_out != NULL;
    const cl_float cval = p->cval;
    const cl_double cval64 = p->cval_f64 ? *p->cval_f64 : (double)p->cval;
    CL_TRY(ctx, clSetKernelArg(kernel, 0, sizeof img_buf, &img_buf), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 1, sizeof stride_arg, &stride_arg), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 2, sizeof nx_arg, &nx_arg), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 3, sizeof ny_arg, &ny_arg), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 4, sizeof col_buf, &col_buf), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 5, sizeof row_buf, &row_buf), "clSetKernelArg");
    if (f64)
        CL_TRY(ctx, clSetKernelArg(kernel, 6, sizeof cval64, &cval64), "clSetKernelArg");
    else
        CL_TRY(ctx, clSetKernelArg(kernel, 6, sizeof cval, &cval), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 7, sizeof med_buf, &med_buf), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 8, sizeof mad_buf, &mad_buf), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 9, sizeof want_median, &want_median), "clSetKernelArg");
    CL_TRY(ctx, clSetKernelArg(kernel, 10, sizeof want_mad, &want_mad), "clSetKernelArg");
    /* Window values a launch visits: the rectangle designs read each about once per pixel, the
     * footprint design once per 4-bit pass (up to 8 for float32 keys, 16 for float64). */
    long work = (long)win.n_cells;
    if (plan.path == PATH_FOOTPRINT) {
        cell_buf = clCreateBuffer(ctx->context, in_flags, (size_t)win.n_cells * sizeof(int),
                                  win.cells, &err);
        CL_TRY(ctx, err, "clCreateBuffer(window cells)");
        const cl_int n_cells = win.n_cells, even = (cl_int)p->even;
        CL_TRY(ctx, clSetKernelArg(kernel, 11, sizeof cell_buf, &cell_buf), "clSetKernelArg");
        CL_TRY(ctx, clSetKernelArg(kernel, 12, sizeof n_cells, &n_cells), "clSetKernelArg");
        CL_TRY(ctx, clSetKernelArg(kernel, 13, sizeof even, &even), "clSetKernelArg");
        work *= f64 ? 16 : 8;
    }
    if (plan.path == PATH_BRACKET) {
        /* Its local arrays (kernels/filter/median_filter_bracket.cl); a pixel costs about its
         * list's walk, whatever the window. */
        const size_t uw = (size_t)plan.tx + (size_t)win.width - 1;
        CL_TRY(ctx, clSetKernelArg(kernel, 11, 2 * (8 * (size_t)plan.py * uw + 256), NULL),
               "clSetKernelArg");
        CL_TRY(ctx, clSetKernelArg(kernel, 12, 8 * (size_t)plan.cap, NULL), "clSetKernelArg");
        CL_TRY(ctx, clSetKernelArg(kernel, 13, 8 * (size_t)plan.sample, NULL), "clSetKernelArg");
        work = plan.cap / 4 + 64;
    }

    long band = WORK_PER_LAUNCH / ((long)gx * work);
    if (plan.tile_bytes) {
        /* The rank design's tiles in global scratch, one per group of a launch: bands short
         * enough that the scratch stays within its budget. */
        const size_t groups_per_row = gx / step_x, budget = ctx->max_alloc < TILE_SCRATCH_BUDGET
                                                               ? ctx->max_alloc
                                                               : TILE_SCRATCH_BUDGET;
        const long fit = (long)(budget / (plan.tile_bytes * groups_per_row)) * (long)step_y;
        band = band < fit ? band : fit;
    }
    band = band < (long)step_y ? (long)step_y : band / (long)step_y * (long)step_y;
    /* Streamed: about STREAM_BANDS bands, so that the bus works while the kernels do. */
    const long even = ((long)ny + STREAM_BANDS - 1) / STREAM_BANDS;
    if (streamed && band > even) band = (even + (long)step_y - 1) / (long)step_y * (long)step_y;
    const size_t row_bytes = stride * es;
    size_t uploaded = 0; /* bytes of the image on the device so far (streamed) */
    if (plan.tile_bytes) {
        const size_t groups = gx / step_x * ((size_t)band / step_y);
        tile_buf = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, groups * plan.tile_bytes, NULL,
                                  &err);
        CL_TRY(ctx, err, "clCreateBuffer(rank tiles)");
        CL_TRY(ctx, clSetKernelArg(kernel, 11, sizeof tile_buf, &tile_buf), "clSetKernelArg");
    }
    for (size_t y0 = 0; y0 < ny; y0 += (size_t)band) {
        size_t rows = ny - y0 < (size_t)band ? ny - y0 : (size_t)band;
        const size_t offset[2] = {0, y0 / (size_t)plan.py};
        const size_t global[2] = {gx / (size_t)plan.px, (rows + step_y - 1) / step_y * local[1]};
        if (streamed) {
            /* The band's windows read the image's rows up to the last its row map names. */
            const size_t first = y0,
                         last = y0 + global[1] / local[1] * step_y + (size_t)win.height - 1;
            long top_row = -1;
            for (size_t j = first; j < last; j++)
                if (rowmap[j] > top_row) top_row = rowmap[j];
            const size_t need = top_row < 0 ? 0
                                : (size_t)top_row * row_bytes + nx * es < in_bytes
                                    ? (size_t)top_row * row_bytes + nx * es
                                    : in_bytes;
            if (uploaded < need) {
                status = clstats__stage_upload(ctx, img_buf, uploaded,
                                               (const char *)in->host + uploaded, need - uploaded);
                if (status == CLSTATS_OK) status = clstats__stage_uploaded(ctx);
                if (status != CLSTATS_OK) goto fail;
                uploaded = need;
            }
        }
        status = clstats__launch(ctx, kernel, 2, offset, global, local, "median_mad");
        if (status != CLSTATS_OK) goto fail;
        if (streamed) {
            status = clstats__stage_kernels_done(ctx);
            const size_t at = y0 * nx * es, bytes = rows * nx * es;
            if (status == CLSTATS_OK && median_out)
                status =
                    clstats__stage_download(ctx, med_buf, at, (char *)median_out->host + at, bytes);
            if (status == CLSTATS_OK && mad_out)
                status =
                    clstats__stage_download(ctx, mad_buf, at, (char *)mad_out->host + at, bytes);
            if (status == CLSTATS_OK) status = clstats__stage_poll(ctx);
            if (status != CLSTATS_OK) goto fail;
        }
        if (p->progress) {
            CL_TRY(ctx, clFinish(ctx->queue), "clFinish(median filter band)");
            p->progress(p->progress_user, (double)(y0 + rows) / (double)ny);
        } else {
            CL_TRY(ctx, clFlush(ctx->queue), "clFlush");
        }
    }
outputs:
    if (!streamed && median_out && (status = clstats__array_out(ctx, med_buf, median_out)))
        goto fail;
    if (!streamed && mad_out && (status = clstats__array_out(ctx, mad_buf, mad_out))) goto fail;
    CL_TRY(ctx, clFinish(ctx->queue), "clFinish(median filter)");

fail:
    if (streamed) {
        const int finished = clstats__stage_finish(ctx);
        if (status == CLSTATS_OK) status = finished;
    }
    status = clstats__end(ctx, status);
    if (img_buf && own_input) clReleaseMemObject(img_buf);
    if (col_buf) clReleaseMemObject(col_buf);
    if (row_buf) clReleaseMemObject(row_buf);
    if (med_buf && !streamed) clReleaseMemObject(med_buf);
    if (mad_buf && !streamed) clReleaseMemObject(mad_buf);
    if (cell_buf) clReleaseMemObject(cell_buf);
    if (tile_buf) clReleaseMemObject(tile_buf);
    free(colmap);
    free(rowmap);
    free(win.cells);
    return status;
}

/* A host array of the caller's (the simple entry points' arguments). */
static struct clstats_array host_array(const void *data, enum clstats_dtype dtype, size_t nx,
                                       size_t ny, size_t stride)
{
    return (struct clstats_array){
        .host = (void *)data, .dtype = dtype, .nx = nx, .ny = ny, .stride = stride};
}

/* The whole image of a host entry point, in either dtype. */
static int filter_host(clstats_ctx *ctx, const void *image, enum clstats_dtype dtype, size_t nx,
                       size_t ny, size_t stride, const struct clstats_filter_params *p,
                       void *median_out, void *mad_out)
{
    int status = check_args(ctx, image, nx, ny, stride, p, median_out, mad_out);
    if (status != CLSTATS_OK) return status;
    const struct row_span whole = {.full_ny = ny, .row0 = 0, .rows = ny, .buffer_rows = ny};
    const struct clstats_array in = host_array(image, dtype, nx, ny, stride),
                               median = host_array(median_out, dtype, nx, ny, nx),
                               mad = host_array(mad_out, dtype, nx, ny, nx);
    return filter_span(ctx, &in, &whole, p, median_out ? &median : NULL, mad_out ? &mad : NULL);
}

int clstats_median_filter(clstats_ctx *ctx, const float *image, size_t nx, size_t ny, size_t stride,
                          const struct clstats_filter_params *p, float *median_out, float *mad_out)
{
    return filter_host(ctx, image, CLSTATS_FLOAT32, nx, ny, stride, p, median_out, mad_out);
}

int clstats_median_filter_f64(clstats_ctx *ctx, const double *image, size_t nx, size_t ny,
                              size_t stride, const struct clstats_filter_params *p,
                              double *median_out, double *mad_out)
{
    return filter_host(ctx, image, CLSTATS_FLOAT64, nx, ny, stride, p, median_out, mad_out);
}

/* A band of either dtype (the band entry points' one implementation). */
static int filter_band(clstats_ctx *ctx, const void *band, enum clstats_dtype dtype, size_t nx,
                       size_t ny, size_t stride, size_t row0, size_t rows,
                       const struct clstats_filter_params *p, void *median_out, void *mad_out)
{
    int status = check_args(ctx, band, nx, ny, stride, p, median_out, mad_out);
    if (status != CLSTATS_OK) return status;
    if (rows == 0 || row0 >= ny || rows > ny - row0)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "rows %zu .. %zu are not rows of an image of %zu rows", row0,
                             row0 + rows, ny);
    int height;
    clstats_filter_window(p, NULL, &height, NULL, NULL);
    const struct row_span band_span = {.full_ny = ny,
                                       .row0 = row0,
                                       .rows = rows,
                                       .buffer_rows = rows + (size_t)height - 1,
                                       .window_order = true};
    const struct clstats_array in = host_array(band, dtype, nx, band_span.buffer_rows, stride),
                               median = host_array(median_out, dtype, nx, rows, nx),
                               mad = host_array(mad_out, dtype, nx, rows, nx);
    return filter_span(ctx, &in, &band_span, p, median_out ? &median : NULL, mad_out ? &mad : NULL);
}

int clstats_median_filter_band(clstats_ctx *ctx, const float *band, size_t nx, size_t ny,
                               size_t stride, size_t row0, size_t rows,
                               const struct clstats_filter_params *p, float *median_out,
                               float *mad_out)
{
    return filter_band(ctx, band, CLSTATS_FLOAT32, nx, ny, stride, row0, rows, p, median_out,
                       mad_out);
}

int clstats_median_filter_band_f64(clstats_ctx *ctx, const double *band, size_t nx, size_t ny,
                                   size_t stride, size_t row0, size_t rows,
                                   const struct clstats_filter_params *p, double *median_out,
                                   double *mad_out)
{
    return filter_band(ctx, band, CLSTATS_FLOAT64, nx, ny, stride, row0, rows, p, median_out,
                       mad_out);
}

/* An output array must hold the image's shape, in float32. */
static int check_output(clstats_ctx *ctx, const struct clstats_array *out,
                        const struct clstats_array *image, const char *what)
{
    if (!out) return CLSTATS_OK;
    int status = clstats__array_check(ctx, out, what, NULL);
    if (status != CLSTATS_OK) return status;
    if (out->nx != image->nx || out->ny != image->ny || out->dtype != image->dtype)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "%s must have the image's dtype and shape, %zu x %zu, not %zu x %zu",
                             what, image->nx, image->ny, out->nx, out->ny);
    return CLSTATS_OK;
}

int clstats_median_filter_array(clstats_ctx *ctx, const struct clstats_array *image,
                                const struct clstats_filter_params *p,
                                const struct clstats_array *median_out,
                                const struct clstats_array *mad_out)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    if (!image || !p) return clstats__fail(ctx, CLSTATS_ERR_ARG, "image or params is NULL");
    if (!median_out && !mad_out)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "neither a median nor a MAD output given");
    if (image->dtype == CLSTATS_UINT8)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the filter takes float32 or float64 images");
    int status = clstats__array_check(ctx, image, "the image", NULL);
    if (status != CLSTATS_OK) return status;
    if (image->nx > INT32_MAX / 2 || image->ny > INT32_MAX / 2)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "image size %zu x %zu is out of range",
                             image->nx, image->ny);
    if ((status = check_params(ctx, p)) ||
        (status = check_output(ctx, median_out, image, "the median output")) ||
        (status = check_output(ctx, mad_out, image, "the MAD output")))
        return status;
    const struct row_span whole = {
        .full_ny = image->ny, .row0 = 0, .rows = image->ny, .buffer_rows = image->ny};
    return filter_span(ctx, image, &whole, p, median_out, mad_out);
}
