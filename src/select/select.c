/* select.c - exact whole-array order statistics (clstats_select_kth, clstats_median,
 * clstats_percentiles and their float64 and cl_mem forms): enqueues the radix-select or
 * cutting-plane kernels of kernels/select.cl, which keep their state on the device, and reads
 * back one small state block per call (the cutting plane reads again only if it needs more
 * passes than a batch holds). Column medians live in src/select/select_columns.c. */
#include "../../kernels/common/even_mean.h"
#include "internal.h"
#include "select_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* State words and flags: the ST_ and FLAG_ names of kernels/select.cl. */
enum {
    ST_N = 0,
    ST_NAN = 1,
    ST_NV = 2,
    ST_R0 = 3,
    ST_R1 = 4,
    ST_FLAGS = 5,
    ST_MODE = 6,
    ST_K = 7,
    ST_COMPACT = 8,
    ST_CAP = 9,
    ST_PA = 10,
    ST_PB = 11,
    ST_RES0 = 14,
    ST_RES1 = 15,
    ST_LO = 16,
    ST_HI = 17,
    ST_T = 18,
    ST_L = 19,
    ST_C = 20,
    ST_ITERS = 24,
    ST_TAIL = 25,
    ST_WORDS = 32
};
enum { FLAG_DONE = 1, FLAG_EMPTY = 2, FLAG_RANGE = 4 };
/* Counter words of kernels/select.cl (uint pairs, low then high). */
enum { CTR_NAN = 0, CTR_KEYS = 2, CTR_IN = 4, CTR_BELOW = 6, CTR_WORDS = 8 };
enum { MODE_KTH = 0, MODE_MEDIAN = 1, MODE_GIVEN = 2 };

/* Cutting-plane passes enqueued between reads of the state: most inputs finish in one batch,
 * and a skipped pass costs only a launch. */
#define CP_BATCH 16
#define CP_MAX_PASSES 1024

/* Tuning: the context's table (src/core/tuning.c: select.wg, .vpt, .bits, .groups work-groups
 * per compute unit, .sample_wg the work-group that picks the sample bracket, .sample its sample
 * size, .stage_tiles the gathering passes' local stage in tiles; 0: the kernel's default), with
 * the groups capped at the device's largest. */
struct tuning {
    int wg, vpt, bits, groups_per_cu, sample_wg, sample, stage_tiles;
};

static struct tuning tuning_for(clstats_ctx *ctx)
{
    struct tuning t = {
        (int)clstats__tuned(ctx, P_SELECT_WG),         (int)clstats__tuned(ctx, P_SELECT_VPT),
        (int)clstats__tuned(ctx, P_SELECT_BITS),       (int)clstats__tuned(ctx, P_SELECT_GROUPS),
        (int)clstats__tuned(ctx, P_SELECT_SAMPLE_WG),  (int)clstats__tuned(ctx, P_SELECT_SAMPLE),
        (int)clstats__tuned(ctx, P_SELECT_STAGE_TILES)};
    if (ctx->max_work_group < (size_t)t.wg) t.wg = (int)ctx->max_work_group;
    if (ctx->max_work_group < (size_t)t.sample_wg) t.sample_wg = (int)ctx->max_work_group;
    return t;
}

/* Everything one selection run uses: kernels and buffers are the context's, kept between
 * calls. */
struct run {
    clstats_ctx *ctx;
    cl_kernel k_hist, k_scan, k_cp_reduce, k_cp_update, k_cp_gather;
    cl_mem st, hist, ctr, kbuf, pc, ps;
    size_t wg, groups;
    int npass, bits;
    const struct select_parts *parts; /* NULL: the array is whole */
    /* The parts' host copies of the histograms (both halves, in the context's pinned memory)
     * and of the counts a message carries: the queue writes them back while the host goes on. A
     * host copy a write that is not waited for reads must stay as it is until a command that waits
     * for the queue (a blocking read, clFinish): a blocking write is not one, as it returns
     * once its own data is copied (OpenCL 1.2, clEnqueueWriteBuffer), and Intel's CPU runtime
     * does return before the writes enqueued ahead of it have read theirs. */
    cl_uint *part_hist, nan_words[2];
    uint64_t *part_counts;
    /* The sample bracket's summed counters and capacities over parts, and the cutting plane's
     * combined partials, kept for the run for the same reason. */
    cl_uint bracket_ctr[CTR_WORDS];
    cl_ulong bracket_cap[2], compact, relative[3];
    /* Over parts, the radix passes the host knows to run (the others launch nothing, read
     * nothing and send nothing): from first_pass (1 where the bracket's message carried pass
     * 0's histogram) to last_pass (the bracket's digits end sooner; -1: the run is done). */
    int first_pass, last_pass;
    cl_ulong *plane_pc, plane_cap;
    void *plane_ps;
};

static int launch_sized(struct run *r, cl_kernel k, size_t groups, size_t wg, const char *what)
{
    size_t global = groups * wg, local = wg;
    return clstats__launch(r->ctx, k, 1, NULL, &global, &local, what);
}

static int launch(struct run *r, cl_kernel k, size_t groups, const char *what)
{
    return launch_sized(r, k, groups, r->wg, what);
}

/* A part that failed on its own tells the others, and every part returns the status they
 * agree on (struct select_parts); once agreed, sum_counts answers it without a message. */
static int parts_agree(const struct select_parts *parts, int status)
{
    if (!parts || status == CLSTATS_OK) return status;
    if (parts->plane) return parts->gather(parts->user, NULL, SELECT_PLANE_WORDS, NULL, status);
    return parts->sum_counts(parts->user, NULL, 0, status);
}

/* The arguments every kernel that reads the data starts with: data, off, n, st. */
static int data_args(clstats_ctx *ctx, cl_kernel k, cl_mem data, cl_ulong off, cl_ulong n,
                     cl_mem st)
{
    return CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(the data's)", KERNEL_ARG(data),
                            KERNEL_ARG(off), KERNEL_ARG(n), KERNEL_ARG(st));
}

/* A part's histograms (and its NaN count, in the first pass) replaced by their sums over all
 * parts (struct select_parts), between the pass's histogram and its scan. The state tells
 * whether the pass runs and whether it has two histograms (an even median's middles in
 * different bins): the same in every part, since it follows from the sums alone. */
static int sum_over_parts(struct run *r, cl_int pass)
{
    clstats_ctx *ctx = r->ctx;
    const size_t nb = (size_t)1 << r->bits;
    cl_ulong st[ST_WORDS];
    cl_uint *nan_words = r->nan_words, *hist = r->part_hist;
    uint64_t *counts = r->part_counts;
    int status = CLSTATS_OK;
    CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, r->st, CL_FALSE, 0, sizeof st, st, 0, NULL, NULL),
           "clEnqueueReadBuffer(select state)");
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, r->ctr, CL_FALSE, 0, 2 * sizeof *nan_words, nan_words,
                               0, NULL, NULL),
           "clEnqueueReadBuffer(select counters)");
    /* The first histogram (2 nb words) with the state, the second only where the state says
     * the pass has two (an even median's middles in different bins): one wait a pass. */
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, r->hist, CL_TRUE, 0, 2 * nb * sizeof *hist, hist, 0,
                               NULL, NULL),
           "clEnqueueReadBuffer(select histogram)");
    if ((st[ST_FLAGS] & FLAG_DONE) || pass > r->npass - 1 - (int)st[ST_TAIL]) goto fail;
    const bool first = pass == 0 && st[ST_COMPACT] == 0, two = st[ST_PA] != st[ST_PB];
    if (two)
        CL_TRY(ctx,
               clEnqueueReadBuffer(ctx->queue, r->hist, CL_TRUE, 2 * nb * sizeof *hist,
                                   2 * nb * sizeof *hist, hist + 2 * nb, 0, NULL, NULL),
               "clEnqueueReadBuffer(select histogram)");
    /* Counts are (low, high) pairs of 32-bit words, as the kernels' add64 keeps them. */
    for (size_t half = 0; half < (two ? 2u : 1u); half++) {
        cl_uint *h = hist + half * 2 * nb;
        counts[0] = first && half == 0 ? ((uint64_t)nan_words[1] << 32) | nan_words[0] : 0;
        for (size_t b = 0; b < nb; b++)
            counts[1 + b] = ((uint64_t)h[2 * b + 1] << 32) | h[2 * b];
        status = r->parts->sum_counts(r->parts->user, counts, 1 + nb, CLSTATS_OK);
        if (status != CLSTATS_OK) goto fail;
        for (size_t b = 0; b < nb; b++) {
            h[2 * b] = (cl_uint)counts[1 + b];
            h[2 * b + 1] = (cl_uint)(counts[1 + b] >> 32);
        }
        if (first && half == 0) {
            nan_words[0] = (cl_uint)counts[0];
            nan_words[1] = (cl_uint)(counts[0] >> 32);
        }
    }
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->hist, CL_FALSE, 0, (two ? 4 : 2) * nb * sizeof *hist,
                                hist, 0, NULL, NULL),
           "clEnqueueWriteBuffer(select histogram)");
    /* Not waited for: the queue runs in order, and the run's last read waits for all. */
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->ctr, CL_FALSE, 0, 2 * sizeof *nan_words, nan_words,
                                0, NULL, NULL),
           "clEnqueueWriteBuffer(select counters)");
fail:
    return status;
}

static int radix_pass(struct run *r, cl_int pass)
{
    clstats_ctx *ctx = r->ctx;
    int status = CLSTATS_OK;
    if (r->parts && (pass < r->first_pass || pass > r->last_pass)) return CLSTATS_OK;
    CL_ARG(r->k_hist, 7, pass);
    status = launch(r, r->k_hist, r->groups, "radix_hist");
    if (status) return status;
    if (r->parts && (status = sum_over_parts(r, pass))) return status;
    CL_ARG(r->k_scan, 3, pass);
    status = launch(r, r->k_scan, 1, "radix_scan");
fail:
    return status;
}

/* ---- A bracket over parts (struct select_parts's bracket) ------------------------------- */

static int get_kernel(struct run *r, cl_program program, const char *name, cl_kernel *k);

static uint64_t key_of_value_bits(uint64_t b, bool f64)
{
    const uint64_t sign = f64 ? 0x8000000000000000ull : 0x80000000u;
    const uint64_t all = f64 ? ~0ull : 0xffffffffu;
    return (b & sign) ? (~b & all) : (b | sign);
}

static bool bits_are_nan(uint64_t b, bool f64)
{
    return f64 ? (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull
               : (b & 0x7fffffffu) > 0x7f800000u;
}

static int cmp_key(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Keys S of the whole array's sample: this part's share, S n / n_total, read strided from its
 * data by a small kernel into the run's pinned host copy, gathered with the others' by one
 * message (each part its own slots; a float64 key in two 32-bit halves), as the one-device
 * sample_bracket kernel reads its own. */
static int gather_sample(struct run *r, cl_program program, cl_mem data, size_t offset, uint64_t n,
                         bool f64, size_t total, uint64_t *keys)
{
    clstats_ctx *ctx = r->ctx;
    const struct select_parts *pp = r->parts;
    uint64_t *counts = r->part_counts;
    const size_t words = (size_t)1 << r->bits, per = f64 ? 2 : 1, elem = f64 ? 8 : 4;
    int status = CLSTATS_OK;
    /* Every part's values, so that every part knows every share and where its slots start. */
    memset(counts, 0, (1 + words) * sizeof *counts);
    counts[1 + pp->part] = n;
    if ((status = pp->sum_counts(pp->user, counts, 1 + words, CLSTATS_OK))) return status;
    size_t first = 0, mine = 0;
    for (int q = 0; q < pp->parts; q++) {
        const size_t share = (size_t)((double)total * (double)counts[1 + q] / (double)pp->n_total);
        if (q == pp->part) mine = share;
        if (q < pp->part) first += share;
    }
    memset(counts, 0, (1 + words) * sizeof *counts);
    if (mine) {
        /* At most 2^bits / per values: the pinned histograms' copy (4 2^bits words) holds them. */
        cl_kernel k;
        cl_mem out;
        const cl_ulong off = offset, stride = n / mine, m = mine;
        const size_t wg = 64, global = (mine + wg - 1) / wg * wg;
        if ((status = get_kernel(r, program, "sample_values", &k)) ||
            (status = clstats__scratch(ctx, "select.sample", mine * elem, &out)))
            return status;
        status = CLSTATS_SET_ARGS(ctx, k, "clSetKernelArg(sample_values)", KERNEL_ARG(data),
                                  KERNEL_ARG(off), KERNEL_ARG(stride), KERNEL_ARG(m),
                                  KERNEL_ARG(out));
        if (status != CLSTATS_OK) goto fail;
        status = clstats__launch(ctx, k, 1, NULL, &global, &wg, "sample_values");
        if (status != CLSTATS_OK) return status;
        void *raw = r->part_hist;
        CL_TRY(ctx,
               clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0, mine * elem, raw, 0, NULL, NULL),
               "clEnqueueReadBuffer(sample)");
        for (size_t i = 0; i < mine; i++) {
            const uint64_t bits = f64 ? ((const uint64_t *)raw)[i] : ((const uint32_t *)raw)[i];
            const uint64_t k = bits_are_nan(bits, f64) ? ~0ull : key_of_value_bits(bits, f64);
            counts[1 + (first + i) * per] = f64 ? k & 0xffffffffu : k;
            if (f64) counts[2 + (first + i) * per] = k >> 32;
        }
    }
    if ((status = pp->sum_counts(pp->user, counts, 1 + words, CLSTATS_OK))) return status;
    for (size_t i = 0; i < total; i++)
        keys[i] = f64 ? counts[1 + 2 * i] | counts[2 + 2 * i] << 32 : counts[1 + i];
fail:
    return status;
}

/* The bracket every part picks alike from the gathered sample: the kernel's rule
 * (sample_bracket) in double on the host, where all parts compute the same. */
static void pick_bracket(const struct select_request *req, uint64_t n_total, uint64_t *keys,
                         size_t total, bool f64, uint64_t *lo, uint64_t *hi)
{
    size_t sv = 0;
    for (size_t i = 0; i < total; i++)
        sv += keys[i] != ~0ull;
    qsort(keys, total, sizeof *keys, cmp_key);
    const double nv_est = (double)n_total * (double)sv / (double)total;
    double p = 0.5;
    if (req->mode == MODE_KTH) p = nv_est > 0 ? ((double)req->k + 0.5) / nv_est : 0.5;
    if (req->mode == MODE_GIVEN) p = nv_est > 0 ? ((double)req->r0 + 0.5) / nv_est : 0.5;
    p = p < 0 ? 0 : (p > 1 ? 1 : p);
    const double margin = 5.0 * sqrt((double)total * p * (1.0 - p)) + 4.0;
    const double lo_i = floor(p * (double)sv - margin), hi_i = ceil(p * (double)sv + margin);
    const bool open_lo = sv == 0 || lo_i <= 0, open_hi = sv == 0 || hi_i >= (double)sv - 1;
    *lo = open_lo ? 0 : keys[(size_t)lo_i];
    *hi = open_hi ? (f64 ? ~0ull : 0xffffffffull) : keys[(size_t)hi_i];
}

/* The bracket's digits as kernels/select.cl's digits_relative_to sets them (st[ST_TAIL],
 * st[ST_BASE], st[ST_SHIFT]): the key less lo, shifted up so that the width's top bit is the
 * first digit's, and only the passes that cover hi - lo. */
static void digits_relative_to(uint64_t lo, uint64_t hi, int key_bits, int bits, int npass,
                               cl_ulong *tail_base_shift)
{
    uint64_t width = hi - lo;
    if (key_bits == 32) width &= 0xffffffffu;
    int used = 0;
    for (uint64_t w = width; w; w >>= 1)
        used++;
    if (width == 0) used = 1;
    tail_base_shift[0] = (cl_ulong)(npass - (used + bits - 1) / bits);
    tail_base_shift[1] = lo;
    tail_base_shift[2] = (cl_ulong)(key_bits - used);
}

/* The sample method over parts: the bracket, one pass over this part's data counting and
 * gathering inside it, and at once the first radix pass's histogram of the gathered keys
 * (relative to the bracket, as if it held), so that the counts and that histogram cross in
 * one message; then the kernel that decides whether the radix passes go on from the gathered
 * keys. Every part takes the same branch: the sums decide, and a part whose gathered keys
 * overflowed its buffer makes all fall back, the histogram unused and the state as it was. */
static int parts_bracket(struct run *r, cl_program program, cl_mem data, size_t offset,
                         uint64_t n, bool f64, const struct select_request *req, uint64_t cap)
{
    clstats_ctx *ctx = r->ctx;
    const size_t nb = (size_t)1 << r->bits;
    const size_t total = r->parts->n_total / 4 < nb / (f64 ? 2 : 1)
                             ? (size_t)(r->parts->n_total / 4)
                             : nb / (f64 ? 2 : 1);
    if (total < 16) return CLSTATS_OK; /* too few values to sample: radix alone, on every part */
    uint64_t *keys = malloc(total * sizeof *keys);
    if (!keys) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate a sample");
    int status = gather_sample(r, program, data, offset, n, f64, total, keys);
    cl_kernel k_pass, k_update, k_init;
    cl_ulong lohi[2] = {0, 0};
    if (status == CLSTATS_OK) {
        uint64_t lo, hi;
        pick_bracket(req, r->parts->n_total, keys, total, f64, &lo, &hi);
        lohi[0] = lo;
        lohi[1] = hi;
    }
    free(keys);
    if (status != CLSTATS_OK) return status;
    const cl_ulong off = offset, nn = n;
    const cl_int pass0 = 0;
    if ((status = get_kernel(r, program, "bracket_pass", &k_pass)) ||
        (status = get_kernel(r, program, "bracket_update", &k_update)) ||
        (status = get_kernel(r, program, "select_init", &k_init)) ||
        (status = data_args(ctx, k_pass, data, off, nn, r->st)))
        return status;
    CL_ARG(k_pass, 4, r->ctr);
    CL_ARG(k_pass, 5, r->kbuf);
    CL_ARG(k_update, 0, r->st);
    CL_ARG(k_update, 1, r->ctr);
    CL_ARG(k_init, 0, r->hist);
    CL_ARG(k_init, 1, r->ctr);
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_LO * sizeof(cl_ulong),
                                sizeof lohi, lohi, 0, NULL, NULL),
           "clEnqueueWriteBuffer(select bracket)");
    if ((status = launch(r, k_pass, r->groups, "bracket_pass"))) return status;
    /* The first radix pass on this part's gathered keys, digits relative to the bracket
     * (bracket_update's setting where it holds; every part's bracket is the same). */
    r->compact = 2;
    digits_relative_to(lohi[0], lohi[1], f64 ? 64 : 32, r->bits, r->npass, r->relative);
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_COMPACT * sizeof(cl_ulong),
                                sizeof(cl_ulong), &r->compact, 0, NULL, NULL),
           "clEnqueueWriteBuffer(select compact)");
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_TAIL * sizeof(cl_ulong),
                                sizeof r->relative, r->relative, 0, NULL, NULL),
           "clEnqueueWriteBuffer(select digits)");
    CL_ARG(r->k_hist, 7, pass0);
    if ((status = launch(r, r->k_hist, r->groups, "radix_hist"))) return status;
    cl_uint ctr[CTR_WORDS];
    cl_uint *hist = r->part_hist;
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, r->ctr, CL_FALSE, 0, sizeof ctr, ctr, 0, NULL, NULL),
           "clEnqueueReadBuffer(select counters)");
    CL_TRY(ctx,
           clEnqueueReadBuffer(ctx->queue, r->hist, CL_TRUE, 0, 2 * nb * sizeof *hist, hist, 0,
                               NULL, NULL),
           "clEnqueueReadBuffer(select histogram)");
    uint64_t *c = r->part_counts;
    const uint64_t in = (uint64_t)ctr[CTR_IN + 1] << 32 | ctr[CTR_IN];
    c[0] = (uint64_t)ctr[CTR_NAN + 1] << 32 | ctr[CTR_NAN];
    for (size_t b = 0; b < nb; b++)
        c[1 + b] = ((uint64_t)hist[2 * b + 1] << 32) | hist[2 * b];
    c[1 + nb] = (uint64_t)ctr[CTR_BELOW + 1] << 32 | ctr[CTR_BELOW];
    c[2 + nb] = in;
    c[3 + nb] = in > cap; /* this part's gathered keys did not all fit */
    if ((status = r->parts->sum_counts(r->parts->user, c, 1 + nb + SELECT_PARTS_EXTRA,
                                       CLSTATS_OK)))
        return status;
    const uint64_t nan = c[0], below = c[1 + nb], in_all = c[2 + nb], over = c[3 + nb];
    const uint64_t at[3] = {CTR_NAN, CTR_BELOW, CTR_IN}, sum[3] = {nan, below, in_all};
    for (int i = 0; i < 3; i++) {
        ctr[at[i]] = (cl_uint)sum[i];
        ctr[at[i] + 1] = (cl_uint)(sum[i] >> 32);
    }
    /* bracket_update's decision, which every part makes alike from the sums. */
    const uint64_t nv = r->parts->n_total - nan;
    uint64_t r0 = req->r0, r1 = req->r1;
    if (req->mode == MODE_KTH) r0 = r1 = req->k;
    if (req->mode == MODE_MEDIAN) r0 = nv ? (nv - 1) / 2 : 0, r1 = nv / 2;
    const bool done = nv == 0 || r1 >= nv;
    const bool holds = !done && !over && below <= r0 && r1 < below + in_all;
    /* From the run's copies, not waited for (struct run). The kernel holds the summed count
     * inside to the capacity: any part's overflow makes it fall back, a capacity of 0, else
     * none binds; the true one comes back after. */
    memcpy(r->bracket_ctr, ctr, sizeof ctr);
    r->bracket_cap[0] = over ? 0 : ~(cl_ulong)0;
    r->bracket_cap[1] = cap;
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->ctr, CL_FALSE, 0, sizeof ctr, r->bracket_ctr, 0,
                                NULL, NULL),
           "clEnqueueWriteBuffer(select counters)");
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_CAP * sizeof(cl_ulong),
                                sizeof(cl_ulong), &r->bracket_cap[0], 0, NULL, NULL),
           "clEnqueueWriteBuffer(select capacity)");
    if ((status = launch_sized(r, k_update, 1, 1, "bracket_update"))) return status;
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_CAP * sizeof(cl_ulong),
                                sizeof(cl_ulong), &r->bracket_cap[1], 0, NULL, NULL),
           "clEnqueueWriteBuffer(select capacity)");
    if (holds) {
        /* The summed histogram, and the first pass's scan: the radix passes go on from 1. */
        for (size_t b = 0; b < nb; b++) {
            hist[2 * b] = (cl_uint)c[1 + b];
            hist[2 * b + 1] = (cl_uint)(c[1 + b] >> 32);
        }
        CL_TRY(ctx,
               clEnqueueWriteBuffer(ctx->queue, r->hist, CL_FALSE, 0, 2 * nb * sizeof *hist, hist,
                                    0, NULL, NULL),
               "clEnqueueWriteBuffer(select histogram)");
        CL_ARG(r->k_scan, 3, pass0);
        if ((status = launch(r, r->k_scan, 1, "radix_scan"))) return status;
        r->first_pass = 1;
        r->last_pass = r->npass - 1 - (int)r->relative[0];
    } else if (done) {
        r->last_pass = -1; /* bracket_update marked the run done: no pass runs */
    } else {
        /* Missed: the data's passes from the start, as if no bracket had been. */
        static const cl_ulong zeros[3] = {0, 0, 0};
        CL_TRY(ctx,
               clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_COMPACT * sizeof(cl_ulong),
                                    sizeof(cl_ulong), zeros, 0, NULL, NULL),
               "clEnqueueWriteBuffer(select compact)");
        CL_TRY(ctx,
               clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_TAIL * sizeof(cl_ulong),
                                    sizeof zeros, zeros, 0, NULL, NULL),
               "clEnqueueWriteBuffer(select digits)");
        if ((status = launch(r, k_init, 4, "select_init"))) return status;
    }
fail:
    return status;
}

/* ---- The cutting plane over parts (struct select_parts's gather) --------------------------
 * Each pass, every part reduces its own data (cp_reduce), reduces its groups' partials on the
 * host into one record, and every part's record is gathered to all: the counts summed, the
 * min and max keys combined and the objective's sums added in part order, alike on every part,
 * then handed to cp_update as one group's. Counts decide the bracket, so the answer is the
 * one-device answer; the sums only steer. A record also carries the trial its part reduced at
 * and its key buffer's capacity: all take the smallest capacity (so all gather at the same
 * pass), and trials that differ (devices that round the step apart) make every part fail
 * alike rather than go on in different brackets. */
enum { CPR_CL, CPR_CR, CPR_MINL, CPR_MAXL, CPR_MINR, CPR_MAXR, CPR_SL, CPR_SR, CPR_T, CPR_CAP,
       CPR_WORDS };
_Static_assert((int)CPR_WORDS == (int)SELECT_PLANE_WORDS, "a record's words");

static int cp_pass_over_parts(struct run *r, bool real64, cl_ulong cap, const cl_ulong *st,
                              bool *stop)
{
    clstats_ctx *ctx = r->ctx;
    const struct select_parts *pp = r->parts;
    const size_t g = r->groups;
    /* The run's (not freed before its last wait): the combined partials are written back from
     * them without waiting (see the run's host copies). */
    if (!r->plane_pc) r->plane_pc = malloc(g * 6 * sizeof *r->plane_pc);
    if (!r->plane_ps) r->plane_ps = malloc(g * 2 * (real64 ? 8 : 4));
    cl_ulong *pc = r->plane_pc;
    void *ps = r->plane_ps;
    uint64_t *all = malloc((size_t)pp->parts * CPR_WORDS * sizeof *all);
    int status = CLSTATS_OK;
    if (!pc || !ps || !all) {
        status = clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate the partials");
        goto fail;
    }
    CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, r->pc, CL_FALSE, 0, g * 6 * sizeof *pc, pc, 0,
                                    NULL, NULL),
           "clEnqueueReadBuffer(cutting-plane partials)");
    CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, r->ps, CL_TRUE, 0, g * 2 * (real64 ? 8 : 4), ps,
                                    0, NULL, NULL),
           "clEnqueueReadBuffer(cutting-plane sums)");
    /* The trial word also says whether this part's passes are over (the last update's). */
    const bool over = (st[ST_FLAGS] & FLAG_DONE) || st[ST_COMPACT] == 2;
    uint64_t mine[CPR_WORDS] = {0, 0, ~0ull, 0, ~0ull, 0, 0, 0, over ? ~0ull : st[ST_T], cap};
    double sl = 0, sr = 0;
    for (size_t i = 0; i < g; i++) {
        const cl_ulong *q = pc + 6 * i;
        mine[CPR_CL] += q[0];
        mine[CPR_CR] += q[1];
        if (q[2] < mine[CPR_MINL]) mine[CPR_MINL] = q[2];
        if (q[3] > mine[CPR_MAXL]) mine[CPR_MAXL] = q[3];
        if (q[4] < mine[CPR_MINR]) mine[CPR_MINR] = q[4];
        if (q[5] > mine[CPR_MAXR]) mine[CPR_MAXR] = q[5];
        sl += real64 ? ((double *)ps)[2 * i] : ((float *)ps)[2 * i];
        sr += real64 ? ((double *)ps)[2 * i + 1] : ((float *)ps)[2 * i + 1];
    }
    memcpy(&mine[CPR_SL], &sl, 8);
    memcpy(&mine[CPR_SR], &sr, 8);
    if ((status = pp->gather(pp->user, mine, CPR_WORDS, all, CLSTATS_OK))) goto fail;
    *stop = over;
    uint64_t q[6] = {0, 0, ~0ull, 0, ~0ull, 0};
    cl_ulong agreed_cap = cap;
    sl = sr = 0;
    for (int p = 0; p < pp->parts; p++) {
        const uint64_t *w = all + (size_t)p * CPR_WORDS;
        double a, b;
        memcpy(&a, &w[CPR_SL], 8);
        memcpy(&b, &w[CPR_SR], 8);
        q[0] += w[CPR_CL];
        q[1] += w[CPR_CR];
        q[2] = w[CPR_MINL] < q[2] ? w[CPR_MINL] : q[2];
        q[3] = w[CPR_MAXL] > q[3] ? w[CPR_MAXL] : q[3];
        q[4] = w[CPR_MINR] < q[4] ? w[CPR_MINR] : q[4];
        q[5] = w[CPR_MAXR] > q[5] ? w[CPR_MAXR] : q[5];
        sl += a;
        sr += b;
        if (w[CPR_CAP] < agreed_cap) agreed_cap = w[CPR_CAP];
        if (w[CPR_T] != all[CPR_T]) { /* also where some parts' passes ended and not others' */
            status = clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                                   "the ranks' devices stepped the cutting plane apart: use the "
                                   "radix method across them");
            goto fail;
        }
    }
    /* The rest of the groups' partials no longer count: cp_update reads one group. */
    for (int i = 0; i < 6; i++) pc[i] = q[i];
    if (real64) {
        ((double *)ps)[0] = sl;
        ((double *)ps)[1] = sr;
    } else {
        ((float *)ps)[0] = (float)sl;
        ((float *)ps)[1] = (float)sr;
    }
    if (over) goto fail; /* every part's passes are over (the trials agree): nothing to write */
    CL_TRY(ctx, clEnqueueWriteBuffer(ctx->queue, r->pc, CL_FALSE, 0, 6 * sizeof *pc, pc, 0, NULL,
                                     NULL),
           "clEnqueueWriteBuffer(cutting-plane partials)");
    CL_TRY(ctx, clEnqueueWriteBuffer(ctx->queue, r->ps, CL_FALSE, 0, 2 * (real64 ? 8 : 4), ps, 0,
                                     NULL, NULL),
           "clEnqueueWriteBuffer(cutting-plane sums)");
    r->plane_cap = agreed_cap;
    CL_TRY(ctx,
           clEnqueueWriteBuffer(ctx->queue, r->st, CL_FALSE, ST_CAP * sizeof(cl_ulong),
                                sizeof(cl_ulong), &r->plane_cap, 0, NULL, NULL),
           "clEnqueueWriteBuffer(select capacity)");
fail:
    free(all);
    return status;
}

/* Kernels of the program, each with the arguments that never change within a run. */
static int get_kernel(struct run *r, cl_program program, const char *name, cl_kernel *k)
{
    return clstats__kernel(r->ctx, program, name, k);
}

static int select_run(clstats_ctx *ctx, cl_mem data, size_t offset, uint64_t n, bool f64,
                      const struct select_request *req, struct select_result *res)
{
    struct run r = {0};
    cl_program program;
    int status;
    const size_t first_event = clstats__event_mark(ctx);
    const struct tuning tu = tuning_for(ctx);
    const size_t key_size = f64 ? 8 : 4;
    const int key_bits = f64 ? 64 : 32;
    enum clstats_select_method method = req->method;
    /* The sample bracket pays a fixed cost (a sample's quantiles, picked by one work-group) to
     * save a pass over the data: on GPUs worth it from about 2^21 values; on CPU devices, where
     * a pass is cheap next to that cost, not at all (bench/RESULTS.md). */
    if (method == CLSTATS_SELECT_AUTO)
        method =
            !ctx->is_cpu && n >= ((uint64_t)1 << 21) ? CLSTATS_SELECT_SAMPLE : CLSTATS_SELECT_RADIX;
    if (method == CLSTATS_SELECT_SAMPLE && n < 16384) method = CLSTATS_SELECT_RADIX;
    if (req->parts)
        method = req->parts->plane ? CLSTATS_SELECT_CUTTING_PLANE : CLSTATS_SELECT_RADIX;
    /* Over parts, a failure is sent in the message the others make next: a gather until the
     * cutting plane's passes end, else a count message (struct select_parts). */
    bool gather_next = req->parts && req->parts->plane;

    memset(res, 0, sizeof *res);
    if (f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "%s has no fp64: float64 data cannot be used there", ctx->device_name);
    if (tu.bits < 4 || tu.bits > 12 || tu.wg < 1 || (tu.wg & (tu.wg - 1)) || tu.vpt < 1 ||
        tu.sample_wg < 1 || tu.groups_per_cu < 1)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "bad select.* tuning");

    const size_t sample_wg = (size_t)tu.sample_wg;
    char options[200];
    int len =
        snprintf(options, sizeof options,
                 "-D KEY64=%d -D WG=%d -D VPT=%d -D RADIX_BITS=%d -D HAVE_FP64=%d -D SAMPLE_WG=%zu",
                 f64 ? 1 : 0, tu.wg, tu.vpt, tu.bits, ctx->has_fp64 ? 1 : 0, sample_wg);
    if (tu.sample) len += snprintf(options + len, sizeof options - len, " -D SAMPLE=%d", tu.sample);
    if (tu.stage_tiles && !f64)
        snprintf(options + len, sizeof options - len, " -D STAGE_TILES=%d", tu.stage_tiles);
    status = clstats__program(ctx, "select.cl", options, &program);
    if (status != CLSTATS_OK) return status;

    r.ctx = ctx;
    r.wg = (size_t)tu.wg;
    r.npass = (key_bits + tu.bits - 1) / tu.bits;
    r.bits = tu.bits;
    r.first_pass = 0;
    r.last_pass = r.npass - 1;
    r.parts = req->parts;
    if (r.parts) {
        /* The histograms' host copy pinned (the context's): read and written back each pass. */
        const size_t nb = (size_t)1 << tu.bits;
        void *pinned = NULL;
        status = clstats__scratch_pinned(ctx, "select.parts_hist", 4 * nb * sizeof *r.part_hist,
                                         &pinned);
        if (status != CLSTATS_OK) return status;
        r.part_hist = pinned;
        r.part_counts = malloc((1 + nb + SELECT_PARTS_EXTRA) * sizeof *r.part_counts);
        if (!r.part_counts)
            return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate a histogram");
    }
    const uint64_t tile = (uint64_t)tu.wg * (uint64_t)tu.vpt;
    const uint64_t ntiles = (n + tile - 1) / tile;
    r.groups = (size_t)ctx->compute_units * (size_t)tu.groups_per_cu;
    if (r.groups > ntiles) r.groups = ntiles ? (size_t)ntiles : 1;

    /* kbuf: the radix path copies a pass-0 bin there when it holds at most a quarter of the
     * values; the sample bracket holds about 6% (8192 samples, 5 sd either side); the cutting
     * plane gathers its bracket once it holds at most 1/32. */
    uint64_t cap;
    if (method == CLSTATS_SELECT_RADIX || method == CLSTATS_SELECT_SAMPLE) {
        cap = n <= (1u << 20) ? n : (n / 4 > (1u << 20) ? n / 4 : (1u << 20));
    } else {
        /* Over parts, every part gathers when the whole bracket fits: the whole array's cap. */
        const uint64_t all = req->parts ? req->parts->n_total : n;
        cap = all / 32 > (1u << 16) ? all / 32 : (all < (1u << 16) ? all : (1u << 16));
    }
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    while (cap > 1 && cap * key_size > ctx->max_alloc)
        cap /= 2;
    if (cap < 1) cap = 1;

    cl_ulong st[ST_WORDS] = {0};
    st[ST_N] = req->parts ? req->parts->n_total : n; /* the valid values are all parts' */
    st[ST_MODE] = (cl_ulong)req->mode;
    st[ST_K] = req->k;
    st[ST_R0] = req->r0;
    st[ST_R1] = req->r1;
    st[ST_CAP] = cap;
    const size_t nb = (size_t)1 << tu.bits;
    if ((status = clstats__scratch(ctx, "select.state", sizeof st, &r.st)) ||
        (status = clstats__scratch(ctx, "select.hist", 4 * nb * sizeof(cl_uint), &r.hist)) ||
        (status = clstats__scratch(ctx, "select.counters", 8 * sizeof(cl_uint), &r.ctr)) ||
        (status = clstats__scratch(ctx, "select.keys", (size_t)cap * key_size, &r.kbuf)))
        goto fail;
    CL_TRY(ctx, clEnqueueWriteBuffer(ctx->queue, r.st, CL_FALSE, 0, sizeof st, st, 0, NULL, NULL),
           "clEnqueueWriteBuffer(select state)");
    if (method != CLSTATS_SELECT_SAMPLE) { /* sample_bracket does this itself */
        cl_kernel k_init;
        if ((status = get_kernel(&r, program, "select_init", &k_init))) goto fail;
        CL_ARG(k_init, 0, r.hist);
        CL_ARG(k_init, 1, r.ctr);
        if ((status = launch(&r, k_init, 4, "select_init"))) goto fail;
    }

    const cl_ulong off = offset, nn = n;
    if ((status = get_kernel(&r, program, "radix_hist", &r.k_hist)) ||
        (status = get_kernel(&r, program, "radix_scan", &r.k_scan)))
        goto fail;
    if ((status = data_args(ctx, r.k_hist, data, off, nn, r.st))) goto fail;
    CL_ARG(r.k_hist, 4, r.hist);
    CL_ARG(r.k_hist, 5, r.ctr);
    CL_ARG(r.k_hist, 6, r.kbuf);
    CL_ARG(r.k_scan, 0, r.st);
    CL_ARG(r.k_scan, 1, r.hist);
    CL_ARG(r.k_scan, 2, r.ctr);

    if (method == CLSTATS_SELECT_SAMPLE) {
        cl_kernel k_sample, k_pass, k_update;
        if ((status = get_kernel(&r, program, "sample_bracket", &k_sample)) ||
            (status = get_kernel(&r, program, "bracket_pass", &k_pass)) ||
            (status = get_kernel(&r, program, "bracket_update", &k_update)))
            goto fail;
        if ((status = data_args(ctx, k_sample, data, off, nn, r.st))) goto fail;
        CL_ARG(k_sample, 4, r.hist);
        CL_ARG(k_sample, 5, r.ctr);
        if ((status = data_args(ctx, k_pass, data, off, nn, r.st))) goto fail;
        CL_ARG(k_pass, 4, r.ctr);
        CL_ARG(k_pass, 5, r.kbuf);
        CL_ARG(k_update, 0, r.st);
        CL_ARG(k_update, 1, r.ctr);
        if ((status = launch_sized(&r, k_sample, 1, sample_wg, "sample_bracket")) ||
            (status = launch(&r, k_pass, r.groups, "bracket_pass")) ||
            (status = launch_sized(&r, k_update, 1, 1, "bracket_update")))
            goto fail;
    }
    if (method == CLSTATS_SELECT_RADIX || method == CLSTATS_SELECT_SAMPLE) {
        if (r.parts && r.parts->bracket &&
            (status = parts_bracket(&r, program, data, offset, n, f64, req, cap)))
            goto fail;
        for (cl_int p = 0; p < r.npass; p++)
            if ((status = radix_pass(&r, p))) goto fail;
        CL_TRY(ctx, clEnqueueReadBuffer(ctx->queue, r.st, CL_TRUE, 0, sizeof st, st, 0, NULL, NULL),
               "clEnqueueReadBuffer(select state)");
    } else {
        const size_t real_size = ctx->has_fp64 ? 8 : 4;
        const cl_uint groups = (cl_uint)r.groups;
        if ((status = clstats__scratch(ctx, "select.partials", r.groups * 6 * sizeof(cl_ulong),
                                       &r.pc)) ||
            (status = clstats__scratch(ctx, "select.sums", r.groups * 2 * real_size, &r.ps)) ||
            (status = get_kernel(&r, program, "cp_reduce", &r.k_cp_reduce)) ||
            (status = get_kernel(&r, program, "cp_update", &r.k_cp_update)) ||
            (status = get_kernel(&r, program, "cp_gather", &r.k_cp_gather)))
            goto fail;
        if ((status = data_args(ctx, r.k_cp_reduce, data, off, nn, r.st))) goto fail;
        CL_ARG(r.k_cp_reduce, 4, r.pc);
        CL_ARG(r.k_cp_reduce, 5, r.ps);
        CL_ARG(r.k_cp_update, 0, r.st);
        CL_ARG(r.k_cp_update, 1, r.pc);
        CL_ARG(r.k_cp_update, 2, r.ps);
        CL_ARG(r.k_cp_update, 3, groups);
        if ((status = data_args(ctx, r.k_cp_gather, data, off, nn, r.st))) goto fail;
        CL_ARG(r.k_cp_gather, 4, r.ctr);
        CL_ARG(r.k_cp_gather, 5, r.kbuf);
        if (r.parts) { /* a message a pass, its state read back each time */
            const cl_uint one = 1;
            CL_ARG(r.k_cp_update, 3, one);
            bool stop = false;
            for (int p = 0;; p++) {
                if (p > CP_MAX_PASSES) {
                    status = clstats__fail(ctx, CLSTATS_ERR_OPENCL,
                                           "cutting plane did not converge in %d passes",
                                           CP_MAX_PASSES);
                    goto fail;
                }
                /* cp_reduce skips itself once the passes are over; the gather says so */
                if ((status = launch(&r, r.k_cp_reduce, r.groups, "cp_reduce")) ||
                    (status = cp_pass_over_parts(&r, real_size == 8, cap, st, &stop)))
                    goto fail;
                if (stop) break;
                if ((status = launch(&r, r.k_cp_update, 1, "cp_update"))) goto fail;
                CL_TRY(ctx,
                       clEnqueueReadBuffer(ctx->queue, r.st, CL_TRUE, 0, sizeof st, st, 0, NULL,
                                           NULL),
                       "clEnqueueReadBuffer(select state)");
            }
            gather_next = false;
            if (!(st[ST_FLAGS] & FLAG_DONE)) {
                if ((status = launch(&r, r.k_cp_gather, r.groups, "cp_gather"))) goto fail;
                for (cl_int p = 0; p < r.npass; p++)
                    if ((status = radix_pass(&r, p))) goto fail;
                CL_TRY(ctx,
                       clEnqueueReadBuffer(ctx->queue, r.st, CL_TRUE, 0, sizeof st, st, 0, NULL,
                                           NULL),
                       "clEnqueueReadBuffer(select state)");
            }
        }
        for (int done_passes = 0; !r.parts && !(st[ST_FLAGS] & FLAG_DONE);
             done_passes += CP_BATCH) {
            if (done_passes >= CP_MAX_PASSES) {
                status =
                    clstats__fail(ctx, CLSTATS_ERR_OPENCL,
                                  "cutting plane did not converge in %d passes", CP_MAX_PASSES);
                goto fail;
            }
            for (int i = 0; i < CP_BATCH; i++) {
                if ((status = launch(&r, r.k_cp_reduce, r.groups, "cp_reduce"))) goto fail;
                if ((status = launch(&r, r.k_cp_update, 1, "cp_update"))) goto fail;
            }
            /* These skip unless the bracket became small enough in this batch. */
            if ((status = launch(&r, r.k_cp_gather, r.groups, "cp_gather"))) goto fail;
            for (cl_int p = 0; p < r.npass; p++)
                if ((status = radix_pass(&r, p))) goto fail;
            CL_TRY(ctx,
                   clEnqueueReadBuffer(ctx->queue, r.st, CL_TRUE, 0, sizeof st, st, 0, NULL, NULL),
                   "clEnqueueReadBuffer(select state)");
        }
    }
    res->nan = st[ST_NAN];
    res->nv = st[ST_NV];
    res->key0 = st[ST_RES0];
    res->key1 = st[ST_RES1];
    res->passes = method == CLSTATS_SELECT_RADIX ? (unsigned)r.npass : (unsigned)st[ST_ITERS];
    res->gathered = st[ST_C];
    clstats__log(ctx,
                 "select: n=%llu method=%d passes=%u bracket [%#llx, %#llx] of %llu values, "
                 "%llu below, compact=%llu, %llu trailing passes skipped",
                 (unsigned long long)n, (int)method, res->passes, (unsigned long long)st[ST_LO],
                 (unsigned long long)st[ST_HI], (unsigned long long)st[ST_C],
                 (unsigned long long)st[ST_L], (unsigned long long)st[ST_COMPACT],
                 (unsigned long long)st[ST_TAIL]);
    if (st[ST_FLAGS] & FLAG_EMPTY) res->empty = true;
    if (st[ST_FLAGS] & FLAG_RANGE) res->out_of_range = true;

fail:
    if (status != CLSTATS_OK && gather_next)
        status = req->parts->gather(req->parts->user, NULL, SELECT_PLANE_WORDS, NULL, status);
    else if (status != CLSTATS_OK && r.parts)
        status = req->parts->sum_counts(req->parts->user, NULL, 0, status);
    if (status != CLSTATS_OK || r.parts) clFinish(ctx->queue); /* before the host copies go */
    free(r.part_counts);
    free(r.plane_pc);
    free(r.plane_ps);
    if (req->kernel_ms) {
        clFinish(ctx->queue);
        *req->kernel_ms += clstats__events_ms(ctx, first_event);
    }
    return status;
}

int clstats__select_run(clstats_ctx *ctx, cl_mem data, size_t offset, uint64_t n, bool f64,
                        const struct select_request *req, struct select_result *res)
{
    int status = select_run(ctx, data, offset, n, f64, req, res);
    return parts_agree(req->parts, status);
}

/* ---- Keys and values ---------------------------------------------------------------------- */

double clstats__value_of_key(uint64_t key, bool f64)
{
    if (f64) {
        uint64_t b = (key & 0x8000000000000000ull) ? (key & 0x7fffffffffffffffull) : ~key;
        double v;
        memcpy(&v, &b, sizeof v);
        return v;
    }
    uint32_t k = (uint32_t)key;
    uint32_t b = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

double clstats__plus_zero(double v)
{
    return v == 0.0 ? 0.0 : v;
}

float clstats__mean_f32(float a, float b)
{
    float m = mean_of_middles(a, b);
    if (isnan(m)) {
        uint32_t nan = 0x7fc00000u;
        memcpy(&m, &nan, sizeof m);
    }
    return m;
}

double clstats__mean_f64(double a, double b)
{
    if (a == b) return a;
    double s = mean_of_middles_f64(a, b);
    if (isnan(s)) {
        uint64_t nan = 0x7ff8000000000000ull;
        memcpy(&s, &nan, sizeof s);
    }
    return s;
}

/* ---- Public API --------------------------------------------------------------------------- */

static const struct clstats_select_options default_options = {0};

/* The data as the kernels read it: the caller's buffer at its offset where it holds one run of
 * elements, else a copy (host data uploaded, strided rows packed); *n is its element count. An
 * empty part of an array in parts reads no element of a small scratch buffer. */
static int data_in(clstats_ctx *ctx, const struct clstats_array *a,
                   const struct clstats_select_options *o, const struct select_parts *parts,
                   cl_mem *buf, size_t *offset, bool *owned, size_t *n)
{
    *buf = NULL;
    *owned = false;
    if ((a->nx == 0 || a->ny == 0) && parts) {
        *n = 0;
        return clstats__scratch(ctx, "select.no_part", 8, buf);
    }
    if (a->nx == 0 || a->ny == 0) {
        if (o->nan_count) *o->nan_count = 0;
        return clstats__fail(ctx, CLSTATS_ERR_EMPTY, "the array is empty");
    }
    if (a->dtype == CLSTATS_UINT8)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "the data must be float32 or float64");
    *n = a->nx * a->ny; /* below 2^62: clstats__array_in checks the span first */
    if (o->mask) return clstats__array_in_masked(ctx, a, o->mask, buf, owned);
    return clstats__array_in(ctx, a, true, buf, offset, owned);
}

static int check_common(clstats_ctx *ctx, const struct clstats_select_options *o, const void *p,
                        const void *out)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    if (!p || !out) return clstats__fail(ctx, CLSTATS_ERR_ARG, "data or out is NULL");
    if ((unsigned)o->method > CLSTATS_SELECT_SAMPLE ||
        (unsigned)o->nan_policy > CLSTATS_NAN_ERROR || (unsigned)o->even > CLSTATS_EVEN_UPPER)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "unknown selection option value");
    return CLSTATS_OK;
}

/* Runs one request on device data and applies the NaN policy and the error cases. */
static int select_device(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t n, bool f64,
                         const struct clstats_select_options *o, struct select_request *req,
                         struct select_result *res)
{
    if (n == 0 && !req->parts) {
        if (o->nan_count) *o->nan_count = 0;
        return clstats__fail(ctx, CLSTATS_ERR_EMPTY, "the array is empty");
    }
    req->method = o->method;
    req->kernel_ms = o->kernel_ms;
    if (o->kernel_ms) *o->kernel_ms = 0;
    int status = clstats__select_run(ctx, buf, offset, n, f64, req, res);
    if (status != CLSTATS_OK) return status;
    if (o->nan_count) *o->nan_count = res->nan;
    if (o->nan_policy == CLSTATS_NAN_ERROR && res->nan)
        return clstats__fail(ctx, CLSTATS_ERR_NAN, "%llu NaN values in the data",
                             (unsigned long long)res->nan);
    if (res->empty) return clstats__fail(ctx, CLSTATS_ERR_EMPTY, "no valid (non-NaN) value");
    if (res->out_of_range)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "k = %llu but only %llu valid values",
                             (unsigned long long)req->k, (unsigned long long)res->nv);
    return CLSTATS_OK;
}

/* Value of a median request from its two keys, by the even-count option. */
static double median_value(const struct select_result *res, bool f64, enum clstats_even even)
{
    double a = clstats__value_of_key(res->key0, f64), b = clstats__value_of_key(res->key1, f64);
    if (res->key0 == res->key1 || even == CLSTATS_EVEN_LOWER) return a;
    if (even == CLSTATS_EVEN_UPPER) return b;
    return f64 ? clstats__mean_f64(a, b) : (double)clstats__mean_f32((float)a, (float)b);
}

/* One selection, a k-th value (MODE_KTH) or the median (MODE_MEDIAN), of an array. */
static int select_one(clstats_ctx *ctx, const struct clstats_array *a, struct select_request req,
                      const struct clstats_select_options *o, double *out)
{
    clstats__begin(ctx);
    *out = NAN;
    cl_mem buf;
    size_t offset = 0, n = 0;
    bool owned;
    int status = parts_agree(req.parts, data_in(ctx, a, o, req.parts, &buf, &offset, &owned, &n));
    if (status == CLSTATS_OK) {
        const bool f64 = a->dtype == CLSTATS_FLOAT64;
        struct select_result res;
        status = select_device(ctx, buf, offset, n, f64, o, &req, &res);
        if (status == CLSTATS_OK)
            *out = clstats__plus_zero(req.mode == MODE_MEDIAN
                                          ? median_value(&res, f64, o->even)
                                          : clstats__value_of_key(res.key0, f64));
    }
    status = clstats__end(ctx, status);
    if (owned) clReleaseMemObject(buf);
    return status;
}

static int kth_any(clstats_ctx *ctx, const struct clstats_array *a, uint64_t k,
                   const struct clstats_select_options *o, double *out)
{
    return select_one(ctx, a, (struct select_request){.mode = MODE_KTH, .k = k}, o, out);
}

static int median_any(clstats_ctx *ctx, const struct clstats_array *a,
                      const struct clstats_select_options *o, double *out)
{
    return select_one(ctx, a, (struct select_request){.mode = MODE_MEDIAN}, o, out);
}

int clstats__select_kth_parts(clstats_ctx *ctx, const struct clstats_array *part, uint64_t k,
                              const struct clstats_select_options *opts,
                              const struct select_parts *parts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    return select_one(ctx, part, (struct select_request){.mode = MODE_KTH, .k = k, .parts = parts},
                      o, out);
}

int clstats__median_parts(clstats_ctx *ctx, const struct clstats_array *part,
                          const struct clstats_select_options *opts,
                          const struct select_parts *parts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    return select_one(ctx, part, (struct select_request){.mode = MODE_MEDIAN, .parts = parts}, o,
                      out);
}

/* The caller's n values of dtype: in host memory, or in buf from element offset. */
static struct clstats_array vector(const void *host, cl_mem buf, size_t offset, size_t n,
                                   enum clstats_dtype dtype)
{
    return (struct clstats_array){
        .host = (void *)host, .buffer = buf, .offset = offset, .dtype = dtype, .nx = n, .ny = 1};
}

int clstats_select_kth(clstats_ctx *ctx, const float *data, size_t n, uint64_t k,
                       const struct clstats_select_options *opts, float *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    double v;
    const struct clstats_array a = vector(data, NULL, 0, n, CLSTATS_FLOAT32);
    status = kth_any(ctx, &a, k, o, &v);
    *out = (float)v;
    return status;
}

int clstats_select_kth_f64(clstats_ctx *ctx, const double *data, size_t n, uint64_t k,
                           const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    const struct clstats_array a = vector(data, NULL, 0, n, CLSTATS_FLOAT64);
    return kth_any(ctx, &a, k, o, out);
}

int clstats_median(clstats_ctx *ctx, const float *data, size_t n,
                   const struct clstats_select_options *opts, float *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    double v;
    const struct clstats_array a = vector(data, NULL, 0, n, CLSTATS_FLOAT32);
    status = median_any(ctx, &a, o, &v);
    *out = (float)v;
    return status;
}

int clstats_median_f64(clstats_ctx *ctx, const double *data, size_t n,
                       const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    const struct clstats_array a = vector(data, NULL, 0, n, CLSTATS_FLOAT64);
    return median_any(ctx, &a, o, out);
}

int clstats_select_kth_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t n,
                              enum clstats_dtype dtype, uint64_t k,
                              const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, buf, out);
    if (status != CLSTATS_OK) return status;
    const struct clstats_array a = vector(NULL, buf, offset, n, dtype);
    return kth_any(ctx, &a, k, o, out);
}

int clstats_median_buffer(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t n,
                          enum clstats_dtype dtype, const struct clstats_select_options *opts,
                          double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, buf, out);
    if (status != CLSTATS_OK) return status;
    const struct clstats_array a = vector(NULL, buf, offset, n, dtype);
    return median_any(ctx, &a, o, out);
}

/* numpy's _lerp (numpy/lib/function_base.py), its arithmetic exactly: exact at both ends,
 * monotone in g, and NaN wherever numpy's is, which is wherever an infinite order statistic
 * takes part (inf - inf, or inf * 0 at g = 0): numpy gives NaN for any percentile of [inf].
 * numpy takes b - a in the data's type (float32 data: rounded to float, overflowing to inf)
 * and the rest in double. NaN comes back as the one quiet NaN every device gives. */
static double lerp(double a, double b, double g, bool f64)
{
    const double d = f64 ? b - a : (double)(float)(b - a);
    const double v = g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
    return isnan(v) ? (double)NAN : v;
}

/* Percentiles (scale 100) or quantiles (scale 1): q[i] / scale is the fraction, divided as
 * numpy's percentile divides before it calls quantile, so that each gives numpy's bits. */
static int percentiles_any(clstats_ctx *ctx, const struct clstats_array *a, const double *q,
                           size_t nq, double scale, const struct clstats_select_options *o,
                           const struct select_parts *parts, double *out)
{
    clstats__begin(ctx);
    for (size_t i = 0; i < nq; i++) {
        out[i] = NAN;
        if (!(q[i] >= 0.0 && q[i] <= scale))
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s q[%zu] = %g is not in [0, %g]",
                                 scale == 1.0 ? "quantile" : "percentile", i, q[i], scale);
    }
    cl_mem buf;
    size_t offset = 0, n = 0;
    bool owned;
    const bool f64 = a->dtype == CLSTATS_FLOAT64;
    int status = parts_agree(parts, data_in(ctx, a, o, parts, &buf, &offset, &owned, &n));
    if (status != CLSTATS_OK) return clstats__end(ctx, status);
    double *kt = o->kernel_ms, total = 0, ms = 0;
    struct clstats_select_options oo = *o;
    oo.kernel_ms = kt ? &ms : NULL;
    /* The first run (the minimum) tells how many values are valid; each q then asks for its
     * two order statistics by rank. */
    struct select_request req = {.mode = MODE_KTH, .k = 0, .parts = parts};
    struct select_result res = {0};
    status = select_device(ctx, buf, offset, n, f64, &oo, &req, &res);
    total += ms;
    const uint64_t nv = res.nv;
    for (size_t i = 0; i < nq && status == CLSTATS_OK; i++) {
        const double h = (double)(nv - 1) * (scale == 1.0 ? q[i] : q[i] / scale);
        double lo = floor(h);
        if (lo > (double)(nv - 1)) lo = (double)(nv - 1);
        const uint64_t r0 = (uint64_t)lo, r1 = r0 + 1 < nv ? r0 + 1 : r0;
        struct select_request rq = {.mode = MODE_GIVEN, .r0 = r0, .r1 = r1, .parts = parts};
        status = select_device(ctx, buf, offset, n, f64, &oo, &rq, &res);
        total += ms;
        if (status != CLSTATS_OK) break;
        const double a = clstats__value_of_key(res.key0, f64);
        const double b = clstats__value_of_key(res.key1, f64);
        out[i] = clstats__plus_zero(lerp(a, b, h - lo, f64));
    }
    if (kt) *kt = total;
    status = clstats__end(ctx, status);
    if (owned) clReleaseMemObject(buf);
    return status;
}

int clstats_percentiles(clstats_ctx *ctx, const float *data, size_t n, const double *q, size_t nq,
                        const struct clstats_select_options *opts, float *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    if (!q && nq) return clstats__fail(ctx, CLSTATS_ERR_ARG, "q is NULL");
    size_t q_bytes;
    if (!clstats__array_bytes(nq, sizeof(double), &q_bytes))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "%zu percentiles are more than any array holds",
                             nq);
    double *tmp = malloc(nq ? q_bytes : sizeof *tmp);
    if (!tmp) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot allocate %zu results", nq);
    const struct clstats_array a = vector(data, NULL, 0, n, CLSTATS_FLOAT32);
    status = percentiles_any(ctx, &a, q, nq, 100.0, o, NULL, tmp);
    for (size_t i = 0; i < nq; i++)
        out[i] = (float)tmp[i];
    free(tmp);
    return status;
}

int clstats_percentiles_f64(clstats_ctx *ctx, const double *data, size_t n, const double *q,
                            size_t nq, const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    if (!q && nq) return clstats__fail(ctx, CLSTATS_ERR_ARG, "q is NULL");
    const struct clstats_array a = vector(data, NULL, 0, n, CLSTATS_FLOAT64);
    return percentiles_any(ctx, &a, q, nq, 100.0, o, NULL, out);
}

int clstats_select_kth_array(clstats_ctx *ctx, const struct clstats_array *data, uint64_t k,
                             const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    return status == CLSTATS_OK ? kth_any(ctx, data, k, o, out) : status;
}

int clstats_median_array(clstats_ctx *ctx, const struct clstats_array *data,
                         const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    return status == CLSTATS_OK ? median_any(ctx, data, o, out) : status;
}

int clstats_percentiles_array(clstats_ctx *ctx, const struct clstats_array *data, const double *q,
                              size_t nq, const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    if (!q && nq) return clstats__fail(ctx, CLSTATS_ERR_ARG, "q is NULL");
    return percentiles_any(ctx, data, q, nq, 100.0, o, NULL, out);
}

int clstats_quantiles_array(clstats_ctx *ctx, const struct clstats_array *data, const double *q,
                            size_t nq, const struct clstats_select_options *opts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    int status = check_common(ctx, o, data, out);
    if (status != CLSTATS_OK) return status;
    if (!q && nq) return clstats__fail(ctx, CLSTATS_ERR_ARG, "q is NULL");
    return percentiles_any(ctx, data, q, nq, 1.0, o, NULL, out);
}

int clstats__percentiles_parts(clstats_ctx *ctx, const struct clstats_array *part, const double *q,
                               size_t nq, double scale, const struct clstats_select_options *opts,
                               const struct select_parts *parts, double *out)
{
    const struct clstats_select_options *o = opts ? opts : &default_options;
    return percentiles_any(ctx, part, q, nq, scale, o, parts, out);
}
