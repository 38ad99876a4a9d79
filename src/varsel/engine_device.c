/* engine_device.c - the device engine of PaSS: X (n x p, row-major, the data's dtype) goes up
 * once, as the caller gave it (on GPUs through the context's pinned slots), and is standardised
 * there (devices with fp64; else the host's
 * standardised copy goes up), and transposed (xt) for the inner products. Each iteration the
 * particles' model indices and wishes (and, where some take the argmax, their coefficients and
 * the Gram cache's plan) go up in one write, and only the chosen indices and the inner products
 * come back, in one read and one wait: each way the parts lie in one device buffer (sub-buffers
 * for the kernels) and in pinned host memory the context keeps, since on a GPU each transfer
 * from pageable memory costs tens of microseconds whatever its size, and a step's kernels take
 * about a hundred.
 *
 * E = X^T R for the particles that take the argmax is not a product over the n rows: with
 * R_j = y - X_T beta_j, X^T R_j = X^T y - sum_m (X^T x_m) beta_jm, an identity of the columns
 * as they are held (centred and scaled, so no intercept column), whatever they are. So the
 * device keeps X^T y and a cache of Gram rows x_v^T X for the variables that have been in a
 * model of a particle taking the argmax (gram_cache.c books them); each iteration one product
 * makes the rows of the variables new to the cache (X read once, for tens of variables rather
 * than 256 residuals): pass_gram_rows on NVIDIA's GPUs (from compute capability 8 in float32
 * on the tensor cores, pass_mma.cl's pass_gram_rows_mma), CLBlast's GEMM through src/linalg
 * elsewhere (tuning pass.gram_rows, pass.gram_tile); and pass_scan forms each particle's E
 * from X^T y and its k rows (k ~ 10 terms instead of n ~ 4000) while it scans for the largest
 * |E|, a chunk of the variables a work-group, pass_scan_fold taking each particle's best of its
 * chunks.
 * Where an iteration's models hold more variables than the cache has rows, E = R^T X by one
 * GEMM from the residuals, as the paper does. The argmaxes agree with the plain C engine's up to
 * rounding in the dtype, either way. On a device without fp64 the inner products are the
 * host's (products.c), from the same values. */
#include "varsel_internal.h"

#include "../linalg/linalg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pass_gram_rows's tiles (tuning pass.gram_tile, in its order, auto the first): work-items
 * across and down a work-group, each 8 x rn Gram values, x's rows a slice, and whether local
 * memory is twice over; or, with warps, pass_mma.cl's tensor-core kernel (float32 on NVIDIA from
 * compute capability 8): warps a work-group (64 x 32 warps Gram values), x's rows a slice (t).
 * auto: GRAM_TILE_F32 or _F64 by dtype, the fastest on the H100 in each (RESULTS "PaSS (issue
 * 24k)": 64x128x8d in both), and GRAM_TILE_MMA where the tensor cores can take float32
 * (64x256x32h, RESULTS "issue 24l": a third faster on the H100 than 64x128x8d). */
static const struct gram_tile {
    unsigned tx, ty, t, db; /* db: local memory twice over, a barrier a slice (GR_DB) */
    unsigned rn;            /* a work-item's columns (GR_RN) */
    unsigned warps;         /* pass_gram_rows_mma's (MM_WARPS), 0: pass_gram_rows */
    unsigned f16;           /* pass_gram_rows_mma on half-precision pieces (MM_F16), else TF32 */
} gram_tiles[] = {{8, 8, 8, 0, 8, 0, 0},    {8, 8, 16, 0, 8, 0, 0},   {16, 8, 16, 0, 8, 0, 0},
                  {16, 16, 16, 0, 8, 0, 0}, {8, 8, 32, 0, 8, 0, 0},   {8, 8, 8, 0, 8, 0, 0},
                  {4, 8, 8, 0, 8, 0, 0},    {8, 8, 8, 1, 8, 0, 0},    {8, 8, 16, 1, 8, 0, 0},
                  {16, 8, 8, 1, 8, 0, 0},   {8, 8, 8, 1, 16, 0, 0},   {16, 8, 8, 1, 16, 0, 0},
                  {128, 1, 32, 1, 1, 4, 0}, {256, 1, 32, 1, 1, 8, 0}, {128, 1, 32, 1, 1, 4, 1},
                  {256, 1, 32, 1, 1, 8, 1}};
/* auto's, by dtype and device (their indices above) */
enum { GRAM_TILE_F32 = 9, GRAM_TILE_F64 = 9, GRAM_TILE_MMA = 15 };

/* A tile's Gram values a work-group: columns (of X) and rows (new variables). */
static size_t tile_cols(const struct gram_tile *t)
{
    return t->warps ? 32 * t->warps : t->rn * t->tx;
}

static size_t tile_rows(const struct gram_tile *t)
{
    return t->warps ? 64 : 8 * t->ty;
}

/* The largest p for which the device takes the whole Gram matrix at its first argmax. */
#define WHOLE_GRAM 2048

/* The parts of a step's one write and one read (sub-buffers of up and down). */
enum { UP_IDX, UP_SLOT, UP_BETA, UP_FRESH, UP_SIZE, UP_WANT, UP_ROWS, N_UP };
enum { DOWN_ADD, DOWN_GRAM, N_DOWN };

struct device_state {
    cl_mem x, xt, y, y64, idx, beta, size, want, rows_dev, r, e, best, add, gram;
    cl_mem xty, cache, fresh, xnew, slot; /* the Gram cache (slots x p) and its helpers */
    cl_mem part_v, part_i;                /* pass_scan's best of each chunk of variables */
    cl_mem up, down;                      /* idx ... rows_dev and add, gram are their parts */
    size_t up_at[N_UP + 1], down_at[N_DOWN + 1]; /* each part's offset; the last: the size */
    char *up_host, *down_host;                   /* pinned, the context's */
    cl_kernel residuals, argmax, gather, scan, scan_fold, transpose, gram_rows, gram_fold;
    cl_kernel grams, lane_sums, lane_fold, scale; /* NULL without fp64 */
    size_t wg, chunk;             /* chunk: new rows a GEMM makes at most */
    size_t span, spans;           /* pass_scan's variables a work-group, and work-groups a particle */
    bool have_xty, own_rows; /* own_rows: pass_gram_rows makes the new rows (tuning), else CLBlast */
    struct gram_tile tile;   /* pass_gram_rows's */
    const char *rows_by;     /* the kernel gram_rows is, for the log and the tests */
    size_t split;            /* its splits of x's rows (tuning pass.gram_split; 0: auto) */
    struct pass_cache book;
    /* Where the time goes, logged at release (clstats_ctx_set_log; bench/bench_pass prints it):
     * the steps' wall time and their kernels' by part, the Gram rows made, the residual GEMMs. */
    double wall_ms, fresh_ms, scan_ms, grams_ms;
    /* the steps' host time: their writes made, their work enqueued, their reads awaited */
    double plan_ms, enqueue_ms, wait_ms;
    size_t steps, fresh_rows, by_residuals, mark_scan;
    double *columns;     /* 2 n: the host's inner products without fp64 */
};

/* What the host planned for a step's argmaxes: m particles take one (their indices in the
 * rows part), by the residuals or the cache, whose new rows are n_new from row first_row (the
 * variables in the fresh part). */
struct argmax_plan {
    size_t m, n_new, first_row;
    bool by_residuals;
};

/* core's kernel-argument lists (internal.h), under this file's short names */
#define ARG(v) KERNEL_ARG(v)
#define LOCAL_ARG(bytes) KERNEL_LOCAL(bytes)
#define SET_ARGS(ctx, k, ...) CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(PaSS)", __VA_ARGS__)

/* A device buffer the context keeps for the next fit under name (clstats__scratch), held by
 * the engine until it releases it: the large ones (X, its transposition, the Gram cache), whose
 * allocation and release cost milliseconds a fit on a GPU. */
static int kept(clstats_ctx *ctx, const char *name, size_t bytes, cl_mem *out)
{
    const int status = clstats__scratch(ctx, name, bytes, out);
    if (status) return status;
    return clstats__cl_check(ctx, clRetainMemObject(*out), "clRetainMemObject(PaSS)");
}

static int buffer(clstats_ctx *ctx, size_t bytes, void *host, cl_mem *out)
{
    cl_int err;
    *out = clCreateBuffer(ctx->context, host ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR
                                             : CL_MEM_READ_WRITE,
                          bytes ? bytes : 1, host, &err);
    return clstats__cl_check(ctx, err, "clCreateBuffer(PaSS)");
}

/* A part of the step's write, in the pinned memory it goes up from. */
static void *up_part(const struct device_state *st, int part)
{
    return st->up_host + st->up_at[part];
}

/* The step's inputs up, in one write (the host rewrites them only after the step's wait),
 * flushed so that it crosses while the host enqueues the kernels. */
static int send(clstats_ctx *ctx, const struct device_state *st)
{
    const int status =
        clstats__cl_check(ctx,
                          clEnqueueWriteBuffer(ctx->queue, st->up, CL_FALSE, 0, st->up_at[N_UP],
                                               st->up_host, 0, NULL, NULL),
                          "clEnqueueWriteBuffer(PaSS's step)");
    return status ? status : clstats__cl_check(ctx, clFlush(ctx->queue), "clFlush(PaSS)");
}

/* E = R^T X from the residuals of the m particles that take the argmax, and their argmaxes
 * into best[j]. */
static int argmaxes_by_residuals(struct pass_engine *e, size_t m)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const cl_uint n = (cl_uint)d->n, p = (cl_uint)d->p, mm = (cl_uint)m;
    int status;
    if ((status = SET_ARGS(ctx, st->residuals, ARG(st->x), ARG(n), ARG(p), ARG(st->y), ARG(st->idx),
                           ARG(st->beta), ARG(st->size), ARG(st->rows_dev), ARG(mm), ARG(st->r))))
        return status;
    const size_t global[2] = {m, d->n};
    if ((status = clstats__launch(ctx, st->residuals, 2, NULL, global, NULL, "pass_residuals")))
        return status;
    const struct clstats__mat r = {st->r, 0, m}, x = {st->x, 0, d->p}, ee = {st->e, 0, d->p};
    if ((status = clstats__gemm(ctx, d->f64, true, false, m, d->p, d->n, 1, r, x, 0, ee)))
        return status;
    if ((status = SET_ARGS(ctx, st->argmax, ARG(st->e), ARG(p), ARG(st->idx), ARG(st->size),
                           ARG(st->rows_dev), ARG(st->best), LOCAL_ARG(e->cap * sizeof(cl_int)),
                           LOCAL_ARG(st->wg * (d->f64 ? 8 : 4)), LOCAL_ARG(st->wg * sizeof(cl_int)))))
        return status;
    const size_t g = m * st->wg;
    return clstats__launch(ctx, st->argmax, 1, NULL, &g, &st->wg, "pass_argmax");
}

/* CLBlast's GEMM and GEMV read C even where beta is 0 (0 x NaN is NaN): what they write goes
 * to zeros. */
static int zero(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t bytes)
{
    const double z = 0;
    return clstats__cl_check(
        ctx, clEnqueueFillBuffer(ctx->queue, buf, &z, 4, offset, bytes, 0, NULL, NULL),
        "clEnqueueFillBuffer(PaSS)");
}

/* The m rows of xnew times X into the cache from element at: CLBlast's GEMM. */
static int gemm_rows(struct pass_engine *e, size_t m, size_t at)
{
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const struct clstats__mat a = {st->xnew, 0, d->n}, x = {st->x, 0, d->p},
                              g = {st->cache, at, d->p};
    const int status = zero(e->ctx, st->cache, at * (d->f64 ? 8 : 4), m * d->p * (d->f64 ? 8 : 4));
    return status ? status : clstats__gemm(e->ctx, d->f64, false, false, m, d->p, d->n, 1, a, x, 0, g);
}

/* The splits of x's rows pass_gram_rows takes for m new rows: the tuning's (pass.gram_split),
 * or on auto as many as make about SPLIT_GROUPS work-groups a compute unit (an iteration's ~60
 * rows made only 625 of 64 x 64 at p = 40 000 for the H100's 132), or for pass_gram_rows_mma's
 * tiles SPLIT_WARPS warps (its 64 x 256 tiles were fastest split in 4, RESULTS "issue 24l"), at
 * most MAX_SPLIT; none past SPLIT_ROWS rows (the partial sums' buffer: (splits - 1) m p values)
 * and at least two slices a split. */
#define SPLIT_GROUPS 16
#define SPLIT_WARPS 32
#define MAX_SPLIT 8
#define SPLIT_ROWS 128
static size_t splits_for(const struct pass_engine *e, size_t m)
{
    const struct device_state *st = e->state;
    const size_t w = tile_cols(&st->tile), h = tile_rows(&st->tile), n = e->d->n;
    if (m > SPLIT_ROWS) return 1;
    size_t s = st->split;
    if (!s) {
        const size_t groups = (e->d->p + w - 1) / w * ((m + h - 1) / h),
                     per_unit = st->tile.warps ? SPLIT_WARPS / st->tile.warps : SPLIT_GROUPS,
                     want = per_unit * (size_t)e->ctx->compute_units;
        s = (want + groups - 1) / groups;
    }
    if (s > MAX_SPLIT) s = MAX_SPLIT;
    if (s > n / (2 * st->tile.t)) s = n / (2 * st->tile.t);
    return s ? s : 1;
}

/* The same by pass_gram_rows (or pass_gram_rows_mma): tile_rows x tile_cols Gram values a
 * work-group, X read once for up to tile_rows rows, its rows split among splits_for's
 * work-groups, whose partial sums pass_gram_fold adds. */
static int own_rows(struct pass_engine *e, size_t m, size_t at)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const cl_uint n = (cl_uint)d->n, p = (cl_uint)d->p, mm = (cl_uint)m;
    const cl_ulong g0 = (cl_ulong)at, stride = (cl_ulong)(m * d->p);
    const struct gram_tile *tile = &st->tile;
    const size_t es = d->f64 ? 8 : 4, t = tile->t, halves = tile->db ? 2 : 1, w = tile_cols(tile),
                 h = tile_rows(tile);
    size_t splits = splits_for(e, m);
    /* each split's rows a whole number of slices; the splits that cover n */
    const size_t span = ((d->n + splits - 1) / splits + t - 1) / t * t;
    splits = (d->n + span - 1) / span;
    const cl_uint span32 = (cl_uint)span, splits32 = (cl_uint)splits;
    cl_mem part = st->x; /* not read where there is one split */
    int status = splits > 1
                     ? clstats__scratch(ctx, "pass.gram_part", (splits - 1) * m * d->p * es, &part)
                     : CLSTATS_OK;
    if (status ||
        (status = SET_ARGS(ctx, st->gram_rows, ARG(st->x), ARG(n), ARG(p), ARG(st->xnew), ARG(mm),
                           ARG(st->cache), ARG(g0), ARG(span32), ARG(part), ARG(stride))))
        return status;
    /* local memory: pass_gram_rows's x and xnew slices; pass_gram_rows_mma's A fragments
     * (hi and lo of h x t values), twice over */
    const size_t local_bytes[2] = {tile->warps ? 2 * 2 * h * t * (tile->f16 ? 2 : 4)
                                               : halves * t * w * es,
                                   halves * t * (h + 4) * es};
    for (cl_uint a = 0; a < (tile->warps ? 1u : 2u) && !status; a++)
        status = clstats__cl_check(ctx, clSetKernelArg(st->gram_rows, 10 + a, local_bytes[a], NULL),
                                   "clSetKernelArg(pass_gram_rows's local memory)");
    if (status) return status;
    const size_t local[3] = {tile->tx, tile->ty, 1},
                 g[3] = {(d->p + w - 1) / w * tile->tx, (m + h - 1) / h * tile->ty, splits};
    if ((status = clstats__launch(ctx, st->gram_rows, 3, NULL, g, local, st->rows_by)) ||
        splits == 1)
        return status;
    const cl_ulong count = stride;
    const size_t fold = (m * d->p + 255) / 256 * 256;
    if ((status = SET_ARGS(ctx, st->gram_fold, ARG(st->cache), ARG(g0), ARG(part), ARG(stride),
                           ARG(splits32), ARG(count))))
        return status;
    return clstats__launch(ctx, st->gram_fold, 1, NULL, &fold, NULL, "pass_gram_fold");
}

/* The Gram rows of the plan's new variables (the fresh part, already up), chunk by chunk: their
 * columns gathered, then rows first_row + f = x_v^T X by one GEMM. X^T y first, once. */
static int fresh_rows(struct pass_engine *e, const struct argmax_plan *plan)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const struct clstats__mat x = {st->x, 0, d->p};
    const size_t es = d->f64 ? 8 : 4, n_new = plan->n_new;
    int status = CLSTATS_OK;
    if (!st->have_xty) {
        if ((status = zero(ctx, st->xty, 0, d->p * es)) ||
            (status = clstats__gemv(ctx, d->f64, true, d->n, d->p, 1, x, st->y, 0, 0, st->xty, 0)))
            return status;
        st->have_xty = true;
    }
    const cl_uint n = (cl_uint)d->n, p = (cl_uint)d->p;
    for (size_t f = 0; f < n_new && !status; f += st->chunk) {
        const size_t m = n_new - f < st->chunk ? n_new - f : st->chunk;
        const cl_uint mm = (cl_uint)m;
        const cl_uint first = (cl_uint)f;
        status = SET_ARGS(ctx, st->gather, ARG(st->x), ARG(n), ARG(p), ARG(st->fresh), ARG(first),
                          ARG(mm), ARG(st->xnew));
        const size_t global[2] = {d->n, m};
        if (!status) status = clstats__launch(ctx, st->gather, 2, NULL, global, NULL, "pass_gather");
        /* The whole Gram matrix (hundreds of rows) is a GEMM CLBlast does well. */
        const bool own = st->own_rows && n_new < d->p;
        if (!status) status = own ? own_rows(e, m, (plan->first_row + f) * d->p)
                                  : gemm_rows(e, m, (plan->first_row + f) * d->p);
    }
    return status;
}

/* The host's part of the argmaxes, into the step's write: which particles take one, their
 * coefficients in the dtype, and the Gram cache's plan (each model position's row, the new
 * variables). */
static void plan_argmaxes(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                          const double *beta, const int32_t *want, struct argmax_plan *plan)
{
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const size_t K = e->k_particles, cap = e->cap;
    struct pass_cache *c = &st->book;
    int32_t *rows = up_part(st, UP_ROWS);
    *plan = (struct argmax_plan){0};
    for (size_t j = 0; j < K; j++)
        if (want[j] == PASS_ARGMAX) rows[plan->m++] = (int32_t)j;
    void *b = up_part(st, UP_BETA);
    for (size_t q = 0; q < plan->m; q++) /* the argmaxes' coefficients only, as for idx */
        for (size_t i = (size_t)rows[q] * cap, end = i + (size_t)size[rows[q]]; i < end; i++) {
            if (d->f64)
                ((double *)b)[i] = beta[i];
            else
                ((float *)b)[i] = (float)beta[i];
        }
    /* Where p is small the whole Gram matrix X^T X is one GEMM of p rows, once: the rows a
     * few at a time would be GEMMs over n ~ 10^4 with little to share among the threads. The
     * plan after it finds every variable there (slots >= p). */
    if (!c->used && c->slots >= d->p && d->p <= WHOLE_GRAM) {
        clstats__cache_take_all(c);
        plan->n_new = d->p;
    }
    if (!clstats__cache_plan(c, idx, size, rows, plan->m, cap, up_part(st, UP_SLOT)))
        plan->by_residuals = true;
    else if (!plan->n_new)
        plan->n_new = c->n_fresh, plan->first_row = c->first_fresh;
    memcpy(up_part(st, UP_FRESH), c->fresh, plan->n_new * sizeof *c->fresh);
    st->fresh_rows += plan->n_new;
}

/* The argmaxes of the particles that take one (only those), into best[j]: from the Gram cache
 * where it holds their models, else from their residuals. */
static int argmaxes(struct pass_engine *e, const struct argmax_plan *plan)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const size_t cap = e->cap, es = d->f64 ? 8 : 4;
    int status = plan->n_new || !plan->by_residuals ? fresh_rows(e, plan) : CLSTATS_OK;
    /* the Gram rows under way while the host enqueues the rest */
    if (!status && plan->n_new)
        status = clstats__cl_check(ctx, clFlush(ctx->queue), "clFlush(PaSS)");
    if (status) return status;
    if (plan->by_residuals) {
        st->by_residuals++;
        return argmaxes_by_residuals(e, plan->m);
    }
    st->mark_scan = clstats__event_mark(ctx);
    const cl_uint p = (cl_uint)d->p;
    const cl_uint span = (cl_uint)st->span, spans = (cl_uint)st->spans, mm = (cl_uint)plan->m;
    if ((status = SET_ARGS(ctx, st->scan, ARG(st->xty), ARG(st->cache), ARG(p), ARG(span),
                           ARG(st->idx), ARG(st->slot), ARG(st->beta), ARG(st->size),
                           ARG(st->rows_dev), ARG(st->part_v), ARG(st->part_i),
                           LOCAL_ARG(cap * sizeof(cl_int)), LOCAL_ARG(cap * sizeof(cl_ulong)),
                           LOCAL_ARG(cap * es), LOCAL_ARG(st->wg * es),
                           LOCAL_ARG(st->wg * sizeof(cl_int)))))
        return status;
    const size_t g[2] = {st->spans * st->wg, plan->m}, local[2] = {st->wg, 1};
    if ((status = clstats__launch(ctx, st->scan, 2, NULL, g, local, "pass_scan")) ||
        (status = SET_ARGS(ctx, st->scan_fold, ARG(st->part_v), ARG(st->part_i), ARG(spans),
                           ARG(st->rows_dev), ARG(mm), ARG(st->best))))
        return status;
    return clstats__launch(ctx, st->scan_fold, 1, NULL, &plan->m, NULL, "pass_scan_fold");
}

static int grams(struct pass_engine *e, size_t products)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const cl_uint n = (cl_uint)e->d->n, stride = (cl_uint)products;
    const int status =
        SET_ARGS(ctx, st->grams, ARG(st->xt), ARG(n), ARG(st->y64), ARG(st->idx), ARG(st->size),
                 ARG(st->want), ARG(st->best), ARG(st->add), ARG(st->gram), ARG(stride),
                 LOCAL_ARG(PASS_LANES * sizeof(cl_double)));
    if (status) return status;
    /* A work-group per particle and product, as many products as the largest model that adds
     * a variable needs (k + 2), a particle's that far apart; those past a smaller model's end at
     * once. */
    const size_t local[2] = {PASS_LANES, 1}, g[2] = {e->k_particles * PASS_LANES, products};
    return clstats__launch(ctx, st->grams, 2, NULL, g, local, "pass_grams");
}

static int read(clstats_ctx *ctx, cl_mem buf, size_t bytes, void *host, bool wait)
{
    return clstats__cl_check(ctx,
                             clEnqueueReadBuffer(ctx->queue, buf, wait ? CL_TRUE : CL_FALSE, 0,
                                                 bytes, host, 0, NULL, NULL),
                             "clEnqueueReadBuffer(PaSS)");
}

static int timed_step(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                      const double *beta, const int32_t *want, int32_t *add, double *gram,
                      size_t marks[3]);

/* A step, its wall time and its kernels' by part (their events are done after its blocking
 * read). */
static int step(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                const double *beta, const int32_t *want, int32_t *add, double *gram)
{
    struct device_state *st = e->state;
    const double t0 = clstats__pass_wall_ms();
    size_t marks[3];
    marks[0] = marks[1] = marks[2] = clstats__event_mark(e->ctx);
    const int status = timed_step(e, idx, size, beta, want, add, gram, marks);
    if (status) return status;
    const size_t end = clstats__event_mark(e->ctx);
    if (e->ctx->log) { /* a profiling query an event each time: only where it is logged */
        st->fresh_ms += clstats__events_ms(e->ctx, marks[0]) - clstats__events_ms(e->ctx, marks[1]);
        st->scan_ms += clstats__events_ms(e->ctx, marks[1]) - clstats__events_ms(e->ctx, marks[2]);
        st->grams_ms += clstats__events_ms(e->ctx, marks[2]) - clstats__events_ms(e->ctx, end);
    }
    st->wall_ms += clstats__pass_wall_ms() - t0;
    st->steps++;
    return CLSTATS_OK;
}

/* Without fp64 the inner products are the host's, for the variables the particles add (add[j]
 * holds the argmaxes where some took one). */
static int host_products(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                         const int32_t *want, int32_t *add, double *gram)
{
    struct device_state *st = e->state;
    const size_t cap = e->cap;
    for (size_t j = 0; j < e->k_particles; j++) {
        if (want[j] == PASS_NONE) continue;
        if (want[j] != PASS_ARGMAX) add[j] = want[j];
        if (add[j] >= 0)
            clstats__pass_gram(e->d, idx + j * cap, (size_t)size[j], (size_t)add[j],
                               gram + j * PASS_GRAM(cap), st->columns);
    }
    return CLSTATS_OK;
}

static int timed_step(struct pass_engine *e, const int32_t *idx, const int32_t *size,
                      const double *beta, const int32_t *want, int32_t *add, double *gram,
                      size_t marks[3])
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const size_t K = e->k_particles, cap = e->cap;
    bool any_argmax = false;
    for (size_t j = 0; j < K; j++) any_argmax |= want[j] == PASS_ARGMAX;
    if (!any_argmax && !st->grams) { /* no fp64, no argmax: nothing for the device */
        marks[1] = marks[2] = marks[0];
        return host_products(e, idx, size, want, add, gram);
    }
    const double t0 = clstats__pass_wall_ms();
    /* the models' variables only: the kernels read no further (nor the rows of particles that
     * add none) */
    int32_t *up_idx = up_part(st, UP_IDX);
    for (size_t j = 0; j < K; j++)
        if (want[j] != PASS_NONE)
            memcpy(up_idx + j * cap, idx + j * cap, (size_t)size[j] * sizeof *idx);
    memcpy(up_part(st, UP_SIZE), size, K * sizeof *size);
    memcpy(up_part(st, UP_WANT), want, K * sizeof *want);
    struct argmax_plan plan;
    if (any_argmax) plan_argmaxes(e, idx, size, beta, want, &plan);
    int status;
    const double t1 = clstats__pass_wall_ms();
    if ((status = send(ctx, st)) ||
        (any_argmax && (st->mark_scan = 0, status = argmaxes(e, &plan))))
        return status;
    marks[1] = any_argmax && st->mark_scan >= marks[0] ? st->mark_scan : marks[0];
    marks[2] = clstats__event_mark(ctx);
    if (!st->grams) { /* no fp64: the indices only, then the products here */
        if ((status = read(ctx, st->best, K * sizeof *add, add, true))) return status;
        return host_products(e, idx, size, want, add, gram);
    }
    size_t widest = 1;
    for (size_t j = 0; j < K; j++)
        if (want[j] != PASS_NONE && (size_t)size[j] + 2 > widest) widest = (size_t)size[j] + 2;
    if ((status = grams(e, widest))) return status;
    const double t2 = clstats__pass_wall_ms();
    if ((status = read(ctx, st->down, st->down_at[DOWN_GRAM] + K * widest * sizeof *gram,
                       st->down_host, true)))
        return status;
    const double t3 = clstats__pass_wall_ms();
    st->plan_ms += t1 - t0, st->enqueue_ms += t2 - t1, st->wait_ms += t3 - t2;
    const int32_t *added = (const int32_t *)(st->down_host + st->down_at[DOWN_ADD]);
    const double *products = (const double *)(st->down_host + st->down_at[DOWN_GRAM]);
    for (size_t j = 0; j < K; j++) {
        if (want[j] == PASS_NONE) continue;
        add[j] = added[j];
        if (add[j] >= 0)
            memcpy(gram + j * PASS_GRAM(cap), products + j * widest,
                   ((size_t)size[j] + 2) * sizeof *gram);
    }
    return CLSTATS_OK;
}

static void release(struct pass_engine *e)
{
    struct device_state *st = e->state;
    if (!st) return;
    if (st->steps)
        clstats__log(e->ctx,
                     "pass device: %zu steps, %.2f ms; kernels: Gram rows %.2f ms (%zu rows), "
                     "scans or residual GEMMs %.2f ms (%zu by residuals), inner products %.2f ms",
                     st->steps, st->wall_ms, st->fresh_ms, st->fresh_rows, st->scan_ms,
                     st->by_residuals, st->grams_ms);
    if (st->steps)
        clstats__log(e->ctx,
                     "pass device steps' host: the write made %.2f ms, the work enqueued "
                     "%.2f ms, the read awaited %.2f ms",
                     st->plan_ms, st->enqueue_ms, st->wait_ms);
    cl_mem *bufs[] = {&st->x,    &st->xt,   &st->y,     &st->y64,      &st->idx,  &st->beta,
                      &st->size, &st->want, &st->r,     &st->e,        &st->best, &st->add,
                      &st->gram, &st->xty,  &st->cache, &st->fresh,    &st->xnew, &st->slot,
                      &st->rows_dev, &st->part_v, &st->part_i, &st->up,
                      &st->down}; /* parts before their buffers */
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (*bufs[i]) clReleaseMemObject(*bufs[i]);
    clstats__cache_free(&st->book);
    free(st->columns);
    free(st);
    e->state = NULL;
}

/* xt = x^T, where the inner products are taken on the device. */
static int transpose(struct pass_engine *e)
{
    struct device_state *st = e->state;
    if (!st->grams) return CLSTATS_OK;
    const cl_uint n = (cl_uint)e->d->n, p = (cl_uint)e->d->p;
    const int status = SET_ARGS(e->ctx, st->transpose, ARG(st->x), ARG(n), ARG(p), ARG(st->xt));
    if (status) return status;
    const size_t local[2] = {16, 16}, g[2] = {(e->d->p + 15) / 16 * 16, (e->d->n + 15) / 16 * 16};
    return clstats__launch(e->ctx, st->transpose, 2, NULL, g, local, "pass_transpose");
}

/* One of the standardisation's two sums over the rows: in lanes, then the lanes folded. */
static int standardise_pass(struct pass_engine *e, cl_mem raw, cl_uint pass, cl_mem lanes,
                            cl_mem lane_bad, cl_mem m, cl_mem sc, cl_mem bad)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const cl_uint n = (cl_uint)e->d->n, p = (cl_uint)e->d->p;
    const size_t g[2] = {e->d->p, PASS_LANES};
    int status;
    if ((status = SET_ARGS(ctx, st->lane_sums, ARG(raw), ARG(n), ARG(p), ARG(m), ARG(pass),
                           ARG(lanes), ARG(lane_bad))) ||
        (status = clstats__launch(ctx, st->lane_sums, 2, NULL, g, NULL, "pass_lane_sums")) ||
        (status = SET_ARGS(ctx, st->lane_fold, ARG(lanes), ARG(lane_bad), ARG(n), ARG(p),
                           ARG(pass), ARG(m), ARG(sc), ARG(bad))))
        return status;
    return clstats__launch(ctx, st->lane_fold, 1, NULL, g, NULL, "pass_lane_fold");
}

/* X as the caller gave it into a device buffer *raw: on GPUs through the context's pinned slots
 * (src/core/staging.c: copy threads fill them while earlier slots cross the bus at the pinned
 * rate), the kernels after it ordered by a barrier; else as clstats__array_in makes it (the
 * caller's memory itself on CPU devices; the caller's buffer itself where X is already on the
 * device, rows packed: nothing crosses the bus). *staged says whether clstats__stage_finish is
 * due. */
static int x_up(struct pass_engine *e, const struct clstats_array *x, cl_mem *raw, bool *owned,
                bool *staged)
{
    clstats_ctx *ctx = e->ctx;
    size_t span = 0;
    int status = clstats__array_check(ctx, x, "x", &span);
    if (status) return status;
    *staged = false;
    if (!x->host || !clstats__stage_wanted(ctx) || clstats__array_stride(x) != x->nx ||
        clstats__stage_begin(ctx) != CLSTATS_OK)
        return clstats__array_in(ctx, x, true, raw, NULL, owned);
    if ((status = kept(ctx, "pass.raw", span, raw))) return status;
    *owned = *staged = true;
    if (!(status = clstats__stage_upload(ctx, *raw, 0, x->host, span)))
        status = clstats__stage_uploaded(ctx);
    return status;
}

int clstats__engine_device_load(struct pass_engine *e, const struct clstats_array *x,
                                double *mean, double *scale, int32_t *first_bad)
{
    clstats_ctx *ctx = e->ctx;
    struct device_state *st = e->state;
    const size_t n = e->d->n, p = e->d->p;
    if (!st->scale)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "standardising on the device needs fp64");
    const size_t es = e->d->f64 ? 8 : 4;
    bool owned = false, staged = false;
    cl_mem raw = NULL, m = NULL, sc = NULL, bad = NULL, lanes = NULL, lane_bad = NULL;
    char *down = NULL; /* pinned: the means, scales and first bad rows come back there */
    const double t0 = clstats__pass_wall_ms();
    /* raw may be the caller's own memory (CPU devices), read-only: the result goes apart. */
    int status = x_up(e, x, &raw, &owned, &staged);
    double t_up = 0;
    if (!status && ctx->log) { /* the upload apart from the kernels, for the log only */
        status = clstats__cl_check(ctx, clFinish(ctx->queue), "clFinish(PaSS's x)");
        t_up = clstats__pass_wall_ms();
    }
    const size_t mark = clstats__event_mark(ctx);
    /* The sums' buffers the context's, kept for the next fit: made and freed each fit they cost
     * a GPU a fraction of a millisecond. */
    if (status || (status = kept(ctx, "pass.x", n * p * es, &st->x)) ||
        (status = clstats__scratch(ctx, "pass.std_mean", p * 8, &m)) ||
        (status = clstats__scratch(ctx, "pass.std_scale", p * 8, &sc)) ||
        (status = clstats__scratch(ctx, "pass.std_bad", p * 4, &bad)) ||
        (status = clstats__scratch(ctx, "pass.std_lanes", PASS_LANES * p * 8, &lanes)) ||
        (status = clstats__scratch(ctx, "pass.std_lane_bad", PASS_LANES * p * 4, &lane_bad)) ||
        (status = clstats__scratch_pinned(ctx, "pass.std_down", p * 20, (void **)&down)))
        goto exit;
    const cl_uint n32 = (cl_uint)n, p32 = (cl_uint)p;
    const size_t g[2] = {(p + 31) / 32 * 32, (n + 31) / 32 * 8}, local[2] = {32, 8};
    const cl_uint with_xt = st->xt != NULL;
    const cl_mem xt = with_xt ? st->xt : st->x; /* an argument either way */
    /* The scaling (and the transposition) goes before the blocking read: a bad column makes a
     * wasted copy, not a wait. */
    if ((status = standardise_pass(e, raw, 0, lanes, lane_bad, m, sc, bad)) ||
        (status = standardise_pass(e, raw, 1, lanes, lane_bad, m, sc, bad)) ||
        (status = SET_ARGS(ctx, st->scale, ARG(raw), ARG(st->x), ARG(xt), ARG(with_xt), ARG(n32),
                           ARG(p32), ARG(m), ARG(sc), ARG(bad))) ||
        (status = clstats__launch(ctx, st->scale, 2, NULL, g, local, "pass_scale")) ||
        (status = read(ctx, m, p * 8, down, false)) ||
        (status = read(ctx, sc, p * 8, down + p * 8, false)))
        goto exit;
    if ((status = read(ctx, bad, p * 4, down + p * 16, true))) goto exit;
    memcpy(mean, down, p * 8);
    memcpy(scale, down + p * 8, p * 8);
    memcpy(first_bad, down + p * 16, p * 4);
    if (ctx->log) {
        const double t1 = clstats__pass_wall_ms();
        clstats__log(ctx, "pass x: %.2f ms (%zu MB up %s: %.2f ms; standardised and transposed: "
                     "%.2f ms, kernels %.2f ms)", t1 - t0, n * p * es >> 20,
                     staged ? "through pinned slots" : "as clstats__array_in", t_up - t0, t1 - t_up,
                     clstats__events_ms(ctx, mark));
    }
exit:
    if (staged) {
        const int finished = clstats__stage_finish(ctx);
        if (!status) status = finished;
    }
    if (raw && owned) clReleaseMemObject(raw);
    return status;
}

/* y in the dtype, from the host's centred doubles. */
static void *y_in_dtype(const struct pass_data *d)
{
    char *out = malloc(d->n * (d->f64 ? 8 : 4));
    for (size_t t = 0; out && t < d->n; t++)
        if (d->f64) ((double *)out)[t] = d->ys[t];
        else ((float *)out)[t] = (float)d->ys[t];
    return out;
}

/* Offsets of parts of the given sizes, each at the device's alignment for sub-buffers; at[n]
 * the whole. */
static void lay_out(size_t align, const size_t *bytes, size_t n, size_t *at)
{
    at[0] = 0;
    for (size_t i = 0; i < n; i++) at[i + 1] = (at[i] + bytes[i] + align - 1) / align * align;
}

static int parts(clstats_ctx *ctx, cl_mem whole, const size_t *at, size_t n, cl_mem **out)
{
    for (size_t i = 0; i < n; i++) {
        cl_buffer_region region = {at[i], at[i + 1] - at[i]};
        cl_int err;
        *out[i] = clCreateSubBuffer(whole, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region,
                                    &err);
        const int status = clstats__cl_check(ctx, err, "clCreateSubBuffer(PaSS)");
        if (status) return status;
    }
    return CLSTATS_OK;
}

/* The step's one write (model indices, cache rows, coefficients, new variables, sizes, wishes,
 * the particles taking the argmax) and one read (the variables added, their inner products):
 * a device buffer each way cut into the kernels' buffers, and pinned host memory the context
 * keeps for the next fit (one engine a context at a time, as pass.c makes them: a larger
 * engine's would move the smaller's). */
static int step_buffers(clstats_ctx *ctx, struct device_state *st, size_t K, size_t cap,
                        size_t slots, size_t es)
{
    cl_uint align_bits = 0;
    int status = clstats__cl_check(ctx,
                                   clGetDeviceInfo(ctx->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                                                   sizeof align_bits, &align_bits, NULL),
                                   "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)");
    const size_t align = align_bits >= 64 ? align_bits / 8 : 8;
    const size_t up[N_UP] = {[UP_IDX] = K * cap * 4, [UP_SLOT] = K * cap * 4,
                             [UP_BETA] = K * cap * es, [UP_FRESH] = slots * 4,
                             [UP_SIZE] = K * 4, [UP_WANT] = K * 4, [UP_ROWS] = K * 4};
    const size_t down[N_DOWN] = {[DOWN_ADD] = K * 4, [DOWN_GRAM] = K * PASS_GRAM(cap) * 8};
    lay_out(align, up, N_UP, st->up_at);
    lay_out(align, down, N_DOWN, st->down_at);
    cl_mem *up_parts[N_UP] = {[UP_IDX] = &st->idx, [UP_SLOT] = &st->slot, [UP_BETA] = &st->beta,
                              [UP_FRESH] = &st->fresh, [UP_SIZE] = &st->size,
                              [UP_WANT] = &st->want, [UP_ROWS] = &st->rows_dev};
    cl_mem *down_parts[N_DOWN] = {[DOWN_ADD] = &st->add, [DOWN_GRAM] = &st->gram};
    void *up_host, *down_host;
    if (status || (status = buffer(ctx, st->up_at[N_UP], NULL, &st->up)) ||
        (status = buffer(ctx, st->down_at[N_DOWN], NULL, &st->down)) ||
        (status = parts(ctx, st->up, st->up_at, N_UP, up_parts)) ||
        (status = parts(ctx, st->down, st->down_at, N_DOWN, down_parts)) ||
        (status = clstats__scratch_pinned(ctx, "pass.step_up", st->up_at[N_UP], &up_host)) ||
        (status = clstats__scratch_pinned(ctx, "pass.step_down", st->down_at[N_DOWN], &down_host)))
        return status;
    st->up_host = up_host, st->down_host = down_host;
    return CLSTATS_OK;
}

/* The Gram cache's rows: all p where they take at most an eighth of the device's memory (and
 * at most 2 GiB, and one allocation), else as many as do; never more than K cap, the most that
 * an iteration's models can hold. */
static size_t cache_rows(const clstats_ctx *ctx, const struct pass_data *d, size_t most)
{
    if (d->cache_rows) return d->cache_rows;
    cl_ulong budget = ctx->global_mem / 8;
    if (budget > ctx->max_alloc) budget = ctx->max_alloc;
    if (budget > (cl_ulong)2 << 30) budget = (cl_ulong)2 << 30;
    size_t rows = (size_t)(budget / (d->p * (d->f64 ? 8 : 4)));
    if (rows > d->p) rows = d->p;
    if (rows > most) rows = most;
    return rows ? rows : 1;
}

/* Whether pass_mma.cl may make the Gram rows: float32 on NVIDIA's devices from compute
 * capability 8 (mma.sync on TF32 and halves), unless its build has failed on this context
 * before. */
static bool tensor_cores(const clstats_ctx *ctx, const struct pass_data *d)
{
    return !d->f64 && ctx->device_class == CLASS_NVIDIA && ctx->nv_compute_major >= 8 &&
           !ctx->tensor_rows_refused;
}

/* pass_gram_rows_mma as st->gram_rows, in st->tile's shape; CLSTATS_ERR_BUILD, logged, where the
 * driver will not build it (then never tried again on this context). */
static int tensor_core_rows(clstats_ctx *ctx, struct device_state *st)
{
    char options[64];
    snprintf(options, sizeof options, "-DMM_WARPS=%u -DMM_K=%u -DMM_F16=%u", st->tile.warps,
             st->tile.t, st->tile.f16);
    cl_program prog;
    int status = clstats__program(ctx, "pass_mma.cl", options, &prog);
    if (status == CLSTATS_ERR_BUILD) {
        clstats__log(ctx, "pass_mma.cl did not build; pass_gram_rows instead: %s",
                     clstats_ctx_message(ctx));
        ctx->tensor_rows_refused = true;
        return status;
    }
    if (status || (status = clstats__kernel(ctx, prog, "pass_gram_rows_mma", &st->gram_rows)))
        return status;
    st->rows_by = "pass_gram_rows_mma";
    return CLSTATS_OK;
}

const char *clstats__engine_device_rows_by(const struct pass_engine *e)
{
    const struct device_state *st = e->state;
    return st->own_rows ? st->rows_by : "CLBlast";
}

int clstats__engine_device_gram_row(struct pass_engine *e, int32_t v, double *row)
{
    const struct device_state *st = e->state;
    const struct pass_data *d = e->d;
    const int32_t s = st->book.slot_of[v];
    if (s < 0) return clstats__fail(e->ctx, CLSTATS_ERR_ARG, "variable %d has no Gram row", v);
    const size_t es = d->f64 ? 8 : 4;
    void *got = malloc(d->p * es);
    if (!got) return clstats__fail(e->ctx, CLSTATS_ERR_NOMEM, "out of memory");
    const int status =
        clstats__cl_check(e->ctx,
                          clEnqueueReadBuffer(e->ctx->queue, st->cache, CL_TRUE,
                                              (size_t)s * d->p * es, d->p * es, got, 0, NULL, NULL),
                          "clEnqueueReadBuffer(PaSS's Gram row)");
    for (size_t i = 0; i < d->p && !status; i++)
        row[i] = d->f64 ? ((double *)got)[i] : ((float *)got)[i];
    free(got);
    return status;
}

int clstats__engine_device(clstats_ctx *ctx, const struct pass_data *d, size_t k_particles,
                           size_t cap, struct pass_engine *e)
{
    *e = (struct pass_engine){.step = step, .release = release, .ctx = ctx, .d = d,
                              .k_particles = k_particles, .cap = cap};
    if (d->f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "float64 needs a device with fp64");
    struct device_state *st = calloc(1, sizeof *st);
    if (!st) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    e->state = st;
    const size_t es = d->f64 ? 8 : 4, K = k_particles;
    st->wg = 1;
    while (st->wg * 2 <= 256 && st->wg * 2 <= ctx->max_work_group) st->wg *= 2;
    const long tile = clstats__tuned(ctx, P_PASS_GRAM_TILE);
    const bool mma = tensor_cores(ctx, d);
    st->tile = gram_tiles[tile != AUTO ? tile
                          : d->f64     ? GRAM_TILE_F64
                          : mma        ? GRAM_TILE_MMA
                                       : GRAM_TILE_F32];
    /* pass.cl's pass_gram_rows: the tile's, or, for pass_mma.cl's, auto's where it fails */
    const struct gram_tile plain =
        st->tile.warps ? gram_tiles[d->f64 ? GRAM_TILE_F64 : GRAM_TILE_F32] : st->tile;
    st->split = (size_t)clstats__tuned(ctx, P_PASS_GRAM_SPLIT);
    char options[160];
    snprintf(options, sizeof options,
             "%s%s -DWG=%zu -DCAP=%zu -DGR_TX=%u -DGR_TY=%u -DGR_T=%u -DGR_DB=%u -DGR_RN=%u",
             d->f64 ? "-DUSE_DOUBLE" : "", ctx->has_fp64 ? " -DPASS_GRAMS" : "", st->wg, cap,
             plain.tx, plain.ty, plain.t, plain.db, plain.rn);
    cl_program prog;
    int status = clstats__program(ctx, "pass.cl", options, &prog);
    if (status || (status = clstats__kernel(ctx, prog, "pass_residuals", &st->residuals)) ||
        (status = clstats__kernel(ctx, prog, "pass_argmax", &st->argmax)) ||
        (ctx->has_fp64 && (status = clstats__kernel(ctx, prog, "pass_grams", &st->grams))) ||
        (ctx->has_fp64 &&
         ((status = clstats__kernel(ctx, prog, "pass_lane_sums", &st->lane_sums)) ||
          (status = clstats__kernel(ctx, prog, "pass_lane_fold", &st->lane_fold)) ||
          (status = clstats__kernel(ctx, prog, "pass_scale", &st->scale)))) ||
        (status = clstats__kernel(ctx, prog, "pass_gather", &st->gather)) ||
        (status = clstats__kernel(ctx, prog, "pass_scan", &st->scan)) ||
        (status = clstats__kernel(ctx, prog, "pass_scan_fold", &st->scan_fold)) ||
        (status = clstats__kernel(ctx, prog, "pass_transpose", &st->transpose)) ||
        (status = clstats__kernel(ctx, prog, "pass_gram_rows", &st->gram_rows)) ||
        (status = clstats__kernel(ctx, prog, "pass_gram_fold", &st->gram_fold)))
        return status;
    st->rows_by = "pass_gram_rows";
    if (st->tile.warps) {
        if (mma) status = tensor_core_rows(ctx, st);
        if (!mma || status == CLSTATS_ERR_BUILD) st->tile = plain, status = CLSTATS_OK;
        if (status) return status;
    }
    /* auto: pass_gram_rows on NVIDIA's GPUs, CLBlast elsewhere (RESULTS "PaSS (issue 24j)"). */
    const long rows = clstats__tuned(ctx, P_PASS_GRAM_ROWS);
    st->own_rows = rows == SWITCH_ON || (rows == AUTO && ctx->device_class == CLASS_NVIDIA);
    const size_t slots = cache_rows(ctx, d, K * cap);
    st->chunk = slots < 512 ? slots : 512;
    /* Sixteen variables a work-item of pass_scan: at p = 40 000 ten work-groups a particle. */
    st->span = d->scan_span ? d->scan_span : 16 * st->wg;
    st->spans = (d->p + st->span - 1) / st->span;
    if ((status = clstats__cache_init(ctx, &st->book, d->p, slots))) return status;
    st->columns = malloc(2 * d->n * sizeof *st->columns);
    void *yh = y_in_dtype(d);
    if (!st->columns || !yh) {
        free(yh);
        return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "out of memory");
    }
    if ((status = buffer(ctx, d->p * es, NULL, &st->xty)) ||
        (status = kept(ctx, "pass.cache", slots * d->p * es, &st->cache)) ||
        (status = kept(ctx, "pass.xnew", st->chunk * d->n * es, &st->xnew)) ||
        (status = step_buffers(ctx, st, K, cap, slots, es)) ||
        (ctx->has_fp64 && (status = kept(ctx, "pass.xt", d->n * d->p * es, &st->xt)))) {
        free(yh);
        return status;
    }
    status = d->xr ? buffer(ctx, d->n * d->p * es, (void *)d->xr, &st->x) : CLSTATS_OK;
    if (!status && d->xr) status = transpose(e);
    if (!status) status = buffer(ctx, d->n * es, yh, &st->y);
    free(yh);
    if (status || (status = buffer(ctx, d->n * 8, (void *)d->ys, &st->y64)) ||
        (status = kept(ctx, "pass.r", d->n * K * es, &st->r)) ||
        (status = kept(ctx, "pass.e", K * d->p * es, &st->e)) ||
        (status = buffer(ctx, K * 4, NULL, &st->best)) ||
        (status = buffer(ctx, K * st->spans * es, NULL, &st->part_v)) ||
        (status = buffer(ctx, K * st->spans * 4, NULL, &st->part_i)))
        return status;
    return CLSTATS_OK;
}
