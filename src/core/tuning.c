/* tuning.c - the tuning table: for each parameter a value per class of device (NVIDIA, AMD,
 * other GPUs, CPU devices), copied into a context when it is made, and clstats_ctx_tune, the one
 * way to force a value (tests force every path on CI's CPU device; benchmarks sweep shapes).
 * The library reads no environment variable for tuning. 0 is "auto": the module derives the
 * value from the device and the shape, and its comment says how. Each value's measurement is in
 * bench/RESULTS.md under the entry named beside it. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct param {
    const char *name;
    long value[CLASSES];        /* NVIDIA, AMD, other GPUs, CPU devices */
    long max;                   /* largest value clstats_ctx_tune takes */
    const char *const *choices; /* names of the values 0, 1, ...; NULL for a number */
};

static const char *const switches[] = {"auto", "off", "on", NULL};
static const char *const filter_paths[] = {"auto", "sorted", "bisect", "binned", "rank", "runs", "bracket", NULL};
static const char *const regress_products[] = {"auto", "pairs", "rows", NULL};
static const char *const kmeans_assign[] = {"auto", "direct", "tiled", "gemm", "serial", "fused", NULL};
static const char *const kmeans_sums[] = {"auto", "groups", "serial", NULL};
static const char *const potrf_updates[] = {"auto", "tiles", "rows", NULL};
static const char *const potrf_steps[] = {"auto", "solve", "inverse", "ahead", NULL};
static const char *const eigen_places[] = {"auto", "device", "host", NULL};
static const char *const nugget_rules[] = {"auto", "eigen", "shift", NULL};
static const char *const gram_tiles[] = {
    "auto",       "64x64",      "64x128",     "128x128",    "64x64x32",  "64x64x8",
    "64x32x8",    "64x64x8d",   "64x64x16d",  "64x128x8d",  "64x128x8w", "64x256x8w",
    "64x128x32m", "64x256x32m", "64x128x32h", "64x256x32h", NULL};
static const char *const column_methods[] = {"auto",     "radix",   "registers",
                                             "streamed", "bracket", NULL};

#define ALL(v)                                                                                     \
    {                                                                                              \
        v, v, v, v                                                                                 \
    }
#define GPUS_CPU(g, c)                                                                             \
    {                                                                                              \
        g, g, g, c                                                                                 \
    }

static const struct param params[PARAMS] = {
    /* Filter designs: sorted runs on GPUs, rank sets on CPU devices (auto; RESULTS
     * "2026-11-23 — median/MAD filter: sorted column runs on the GPU" and "... on 2 CPU cores:
     * rank design on PoCL"); windows of 36 or more rows or columns on GPUs the runs design
     * (RESULTS "... median/MAD filter: large windows on the H100 and PoCL (issue 20)"), and for
     * a median without a MAD from 31 the bracket design (RESULTS "... the bracket design"); the
     * sorted design's group shape is the first of its list that fits local memory (auto);
     * shape_px is also the runs design's output rows a work-item and the rank design's output
     * rows a sweep, shape_tx the rank design's tile side and the bracket design's list capacity
     * (where filter.path forces it). */
    [P_FILTER_PATH] = {"filter.path", ALL(0), 6, filter_paths},
    [P_FILTER_SHAPE_TX] = {"filter.shape_tx", ALL(0), 1024, NULL},
    [P_FILTER_SHAPE_TY] = {"filter.shape_ty", ALL(0), 1024, NULL},
    [P_FILTER_SHAPE_PX] = {"filter.shape_px", ALL(0), 64, NULL},
    /* Host arrays to and from GPUs through a ring of pinned slots, overlapping the bus with the
     * kernels; CPU devices use the caller's arrays in place (RESULTS "2026-11-24 — host to host
     * and madfilter end to end (issue 20)"). */
    [P_TRANSFER_STREAM] = {"transfer.stream", ALL(0), 2, switches},
    [P_TRANSFER_SLOT_KB] = {"transfer.slot_kb", ALL(4096), 1 << 20, NULL},
    [P_TRANSFER_SLOTS] = {"transfer.slots", ALL(8), 32, NULL},
    [P_TRANSFER_THREADS] = {"transfer.threads", ALL(0), 16, NULL},
    /* Copy threads wait for the next slot's copy spinning this many microseconds before they
     * sleep (0: they sleep at once), so that a streamed call's back-to-back copies do not each
     * pay a wake-up (RESULTS "issue 20f: the bus and the files"). */
    [P_TRANSFER_SPIN_US] = {"transfer.spin_us", ALL(200), 100000, NULL},
    /* Whole-array selection: 256-item groups with local atomics on GPUs, one work-item
     * walking 4096 values on CPU devices (several times faster there); NVIDIA stages three
     * tiles in the gathering passes, where its 228 KB of shared memory holds eight such groups
     * a multiprocessor (RESULTS "2026-11-23 — whole-array order statistics on the H200" and
     * "(fourth session) ... the targets of issue 4"). Groups are capped at the device's
     * largest work-group. */
    [P_SELECT_WG] = {"select.wg", GPUS_CPU(256, 1), 1024, NULL},
    [P_SELECT_VPT] = {"select.vpt", GPUS_CPU(8, 4096), 1 << 20, NULL},
    [P_SELECT_BITS] = {"select.bits", ALL(11), 16, NULL},
    [P_SELECT_GROUPS] = {"select.groups", ALL(8), 1024, NULL},
    [P_SELECT_SAMPLE_WG] = {"select.sample_wg", GPUS_CPU(1024, 1), 1024, NULL},
    [P_SELECT_SAMPLE] = {"select.sample", ALL(0), 1 << 24, NULL}, /* auto: the kernel's */
    [P_SELECT_STAGE_TILES] = {"select.stage_tiles", {3, 0, 0, 0}, 8, NULL},
    /* Column and tile medians: the path by shape (auto: src/select/select_columns.c); 512
     * work-items a column on GPUs (10^4 x 1000 0.095 ms against 0.101 with 256 and 0.111 with
     * 1024 on the H100), one on CPU devices; the local-memory stage fills what the histograms
     * leave (auto); the transposition for wide matrices on GPUs (auto). */
    [P_COLUMNS_METHOD] = {"columns.method", ALL(0), 4, column_methods},
    [P_COLUMNS_TRANSPOSE] = {"columns.transpose", ALL(0), 2, switches},
    [P_COLUMNS_WG] = {"columns.wg", GPUS_CPU(512, 1), 1024, NULL},
    /* Batched selection (the regression's residuals): a few long columns split over many
     * work-groups (auto: src/select/column_ranks.c; RESULTS "LTS regression (issue 21): split
     * columns"). */
    [P_COLUMNS_SPLIT] = {"columns.split", ALL(0), 2, switches},
    [P_COLUMNS_BITS] = {"columns.bits", ALL(8), 12, NULL},
    [P_COLUMNS_LOCAL_ROWS] = {"columns.local_rows", ALL(0), 1 << 16, NULL},
    /* The bracket path for long columns (RESULTS "(second session) ... bracket digits, tile
     * medians" and "(fourth session)"): its sample grows with the rows (auto), the group that
     * sorts it is half the sample, at most 256 (auto). */
    [P_BRACKET_SAMPLE] = {"bracket.sample", ALL(0), 1 << 16, NULL},
    [P_BRACKET_SAMPLE_WG] = {"bracket.sample_wg", ALL(0), 1024, NULL},
    [P_BRACKET_CELLS] = {"bracket.cells", ALL(256), 4096, NULL},
    [P_BRACKET_LANES] = {"bracket.lanes", ALL(8), 64, NULL},
    [P_BRACKET_CHUNK] = {"bracket.chunk", ALL(256), 1 << 16, NULL},
    [P_BRACKET_FINISH_WG] = {"bracket.finish_wg", ALL(256), 1024, NULL},
    [P_BRACKET_FINISH_CAP] = {"bracket.finish_cap", ALL(1024), 1 << 16, NULL},
    [P_BRACKET_GROUPS] = {"bracket.groups", ALL(4096), 1 << 20, NULL},
    /* The one-launch registers and streamed paths, for 10^4 rows on the H100 (RESULTS
     * "(eighth session) — column medians: 0.049 ms at 10^4 x 1000"): columns a group takes,
     * its size (the device's largest, at most 1024), bins, sigmas and list caps differ between
     * the two paths (auto), the sample's size follows the rows (auto). */
    [P_REGISTERS_COLS] = {"registers.cols", ALL(0), 64, NULL},
    [P_REGISTERS_WG] = {"registers.wg", ALL(0), 1024, NULL},
    [P_REGISTERS_SAMPLE_STRIDE] = {"registers.sample_stride", ALL(4), 64, NULL},
    [P_REGISTERS_LOG2_BINS] = {"registers.log2_bins", ALL(0), 12, NULL},
    [P_REGISTERS_SIGMAS] = {"registers.sigmas", ALL(0), 16, NULL},
    [P_REGISTERS_CAP] = {"registers.cap", ALL(0), 1 << 16, NULL},
    [P_REGISTERS_ROUNDS] = {"registers.rounds", ALL(8), 64, NULL},
    [P_REGISTERS_STREAM] = {"registers.stream", ALL(8), 16, NULL},
    [P_REGISTERS_PASS_CAP] = {"registers.pass_cap", ALL(1024), 1 << 16, NULL},
    [P_REGISTERS_HELD] = {"registers.held", ALL(0), 64, NULL},
    [P_REGISTERS_INDEX64] = {"registers.index64", ALL(0), 2, switches},
    [P_REGISTERS_L2_HINT] = {"registers.l2_hint", ALL(0), 2, switches},
    [P_REGISTERS_STOP] = {"registers.stop", ALL(0), 6, NULL},
    /* The regression's sums of column products over each subset: a work-item a pair of columns
     * on GPUs, a work-item a chunk of rows on CPU devices (RESULTS "LTS regression (issue 21):
     * nested stages, chunked sums"); both give the same bits. */
    [P_REGRESS_PRODUCTS] = {"regress.products", GPUS_CPU(1, 2), 2, regress_products},
    /* The regression's data set from the caller's host arrays: built on GPUs from x and y
     * uploaded as they are (no host copy), on CPU devices by the host, which reads them as fast
     * and whose copy the device then uses in place (RESULTS "LTS regression (issue 21): split
     * columns"); both give the same bits. */
    [P_REGRESS_DESIGN] = {"regress.design", GPUS_CPU(2, 1), 2, switches},
    /* A work-group per mesh box. CPU devices: one work-item walks its box, the fastest of 1, 8
     * and 64 (RESULTS "2026-11-24 — mesh background (issue 27)"). GPUs: 256 work-items share a
     * box's pixels, a first guess not yet measured. */
    [P_BACKGROUND_WG] = {"background.wg", GPUS_CPU(256, 1), 1024, NULL},
    /* photutils' boxes sort their pixels in a scratch buffer a band of box rows at a time: auto
     * holds at most 256 MiB or half the device's largest buffer (tests take small bands). */
    [P_BACKGROUND_BAND_KIB] = {"background.band_kib", ALL(0), 1 << 22, NULL},
    /* SEP's maps: a work-item a pixel on GPUs; on CPU devices a work-item a row, walking its
     * columns in one contiguous loop and writing into the caller's arrays in place (RESULTS
     * "mesh background on 2 CPU cores (issue 27d)"); both give the same bits. */
    [P_BACKGROUND_ROWS] = {"background.rows", GPUS_CPU(1, 2), 2, switches},
    /* k-means' nearest centres: auto takes the GEMM screen from 32 features and 32 clusters
     * (on NVIDIA's GPUs from 64 clusters, float32, the screen fused into our own tiled
     * products: RESULTS "k-means on the H100 (issue 22r)"), else the one-item serial kernel
     * where the sums are serial (below), else the tiled kernel where the centres fit in local
     * memory (src/cluster/assign.c); every path gives the same labels. */
    [P_KMEANS_ASSIGN] = {"kmeans.assign", ALL(0), 5, kmeans_assign},
    /* k-means' fixed-order sums: auto takes a 256-item group halving a segment on GPUs and one
     * work-item forming the same tree alone on CPU devices, where each of a group's barriers is
     * a pass over its items (src/cluster/job.c; RESULTS "k-means on 2 CPU cores (issue 22)");
     * the same bits either way. */
    [P_KMEANS_SUMS] = {"kmeans.sums", ALL(0), 2, kmeans_sums},
    /* k-means' iteration in fewer launches (src/cluster/lloyd.c): the counts' scan by runs of
     * blocks for up to 64 clusters (one launch where the runs are short), and the upper levels
     * of the sums inside the finishing kernel where they are few (on GPUs the top level alone).
     * On (auto) everywhere: on the H100 the seed case took 4.9-5.1 ms (kernels 3.1-3.2) against
     * 6.0-6.2 (4.4-4.5) off, 10^7 x 3 0.88 against 0.98 ms of kernels an iteration (RESULTS
     * "k-means on the H100 (issue 22), twelfth session"); off is the launch a step. */
    [P_KMEANS_FUSE] = {"kmeans.fuse", ALL(0), 2, switches},
    /* ... and how many (row, column) trees of those levels at most (auto 1024, four a
     * work-item; tests force small values to split the levels between the two kernels). */
    [P_KMEANS_FINISH_TREES] = {"kmeans.finish_trees", ALL(0), 1 << 20, NULL},
    /* ... and the level below them halved there too, 16 (row, column) sums at a time (row_sums'
     * bits), a launch saved where that level has few rows: auto on GPUs up to 64 rows (the seed
     * case's level 1: one a cluster), never on CPU devices, whose halving is serial
     * (src/cluster/lloyd.c: plan; RESULTS "k-means on the H100 (issue 22q)"). 1: never. */
    [P_KMEANS_FINISH_HALVE] = {"kmeans.finish_halve", ALL(0), 1 << 20, NULL},
    /* Lloyd's iterations enqueued a batch at most, between reads of the loop's state (auto 4;
     * 2 on the GEMM path; 8 and 16 no different on the H100's seed case, issue 22q). */
    [P_KMEANS_BATCH] = {"kmeans.batch", ALL(0), 64, NULL},
    /* The GEMM path's products of a chunk of rows with every centre, MiB at most (auto: 64 on
     * CPU devices, 2048 on GPUs, where 512 took 27.0 against 24.1 ms of kernels an iteration at
     * 10^6 x 256, k 1024: src/cluster/assign.c; RESULTS "(issue 22q)"). */
    [P_KMEANS_DOTS_MIB] = {"kmeans.dots_mib", ALL(0), 1 << 20, NULL},
    /* The counts' scan made by the tiled assignment's last group where one group makes it
     * (src/cluster/lloyd.c: SCAN_RUNS_WHOLE), a launch an iteration fewer; auto on. With the
     * next, the H100's seed case took 3.6-3.8 ms against 4.3-4.7 off (RESULTS "(issue 22q)").
     * The last group sees the others' counts through a fence and an atomic counter, which OpenCL
     * 1.2 does not promise across groups: on where it was checked (NVIDIA; CPU devices), off on
     * other GPUs until it is. */
    [P_KMEANS_SCAN_IN_ASSIGN] = {"kmeans.scan_in_assign", {0, 1, 1, 0}, 2, switches},
    /* ... and finish made by the last group of member_sums where no row_sums level lies between
     * them and the scan is made in the assignment (the seed's case); auto on, off on AMD's and
     * other GPUs for the same reason. */
    [P_KMEANS_FINISH_IN_SUMS] = {"kmeans.finish_in_sums", {0, 1, 1, 0}, 2, switches},
    /* The blocked Cholesky's trailing update (src/linalg/cholesky.c), auto: 64 x 64 tiles a
     * work-group in local memory and registers on GPUs (2.7 ms of 17 at n = 4064 on the
     * H100, where 128 x 128 tiles of 8 x 8 an item took 5.0: RESULTS "(twelfth session) —
     * Gaussian processes (issue 23): where the large deviance's time goes"), a work-item a
     * piece of row over the transposed panel on CPU devices, where the tiles ran about 5 times
     * slower (RESULTS "Gaussian processes (issue 23): our own blocked Cholesky"). */
    [P_LINALG_POTRF_UPDATE] = {"linalg.potrf_update", ALL(0), 2, potrf_updates},
    /* The blocked Cholesky's diagonal block and panel (src/linalg/cholesky.c), auto: ahead
     * (3) on GPUs, each block factored and inverted in local memory by the first group of the
     * update launch before it, beside the other tiles, the panel a product with the inverse in
     * a launch of its own (kernels 5.6 ms at n = 4064 on the H100 against inverse's 7.7:
     * RESULTS "issue 23j"); inverse (2) is the same block and panel in one launch after the
     * update, the same bits; on CPU devices the block, then the panel by substitution a row
     * an item (solve, 1), whose serial loops PoCL runs faster than the group's barriers. */
    [P_LINALG_POTRF_STEP] = {"linalg.potrf_step", GPUS_CPU(3, 1), 3, potrf_steps},
    /* Where the extreme eigenvalues' tridiagonal reduction runs (src/linalg/extremes.c), auto:
     * on the host for CPU devices, where PoCL's build of the kernel ran about 3 times slower
     * than the host's loop (RESULTS "the nugget rule's eigenvalues"), on the device elsewhere. */
    [P_LINALG_EIGEN] = {"linalg.eigen", ALL(0), 2, eigen_places},
    /* GPfit's nugget rule (src/gp/nugget.c), auto: on GPUs by shift and invert (2,
     * src/gp/nugget_shift.c: lambda_max by Lanczos, then lambda_min by Lanczos on the inverse
     * of R + s I through its Cholesky factor; RESULTS "issue 23l"), on CPU devices from both
     * extreme eigenvalues of the tridiagonal reduction (1, src/linalg/extremes.c). */
    [P_GP_NUGGET] = {"gp.nugget", GPUS_CPU(2, 1), 2, nugget_rules},
    /* PaSS's Gram rows for the few variables new to its cache an iteration (tens of rows of
     * X^T X over p columns): off, CLBlast's GEMM; on, pass_gram_rows (small tiles, many
     * work-groups); auto, pass_gram_rows on NVIDIA's GPUs, where in 64x64x8 tiles it took the
     * rows of Ing & Lai (n 4000, p 40000) in 18.5 ms against CLBlast's 21-29 (float32) and
     * 34.5 against 46-59 (float64), and CLBlast elsewhere (RESULTS "PaSS (issue 24j)"). */
    [P_PASS_GRAM_ROWS] = {"pass.gram_rows", ALL(0), 2, switches},
    /* pass_gram_rows's tile, rows x columns of Gram rows a work-group, x slice rows (16 where
     * not named); "d": local memory twice over, a barrier a slice; "w": 16 columns a work-item
     * (float32 only: in float64 its registers spill, 100 times slower on the H100); "m" and
     * "h": pass_mma.cl's tensor-core kernel on TF32 or half-precision pieces (float32 on NVIDIA
     * from compute capability 8; elsewhere, in float64, or where its build fails, auto's
     * pass_gram_rows tile instead). auto: 64x256x32h where the tensor cores may be used (RESULTS
     * "issue 24l": the rows of Ing & Lai in 9.1-9.2 ms against 13.7 for 64x128x8d, TF32's
     * 64x256x32m 12.2), else 64x128x8d, the fastest pass_gram_rows tile on the H100 in both
     * dtypes (RESULTS "PaSS (issue 24k)": 13.6-13.8 ms against 18.3 for 64x64x8 in float32,
     * 26.6 against 30.9 in float64). */
    [P_PASS_GRAM_TILE] = {"pass.gram_tile", ALL(0), 15, gram_tiles},
    /* pass_gram_rows's splits of x's rows among work-groups, whose partial sums pass_gram_fold
     * adds (at most 8; rows past 128 an iteration never split); auto (0): about 16 work-groups
     * a compute unit (pass_mma.cl's tiles: 32 warps). */
    [P_PASS_GRAM_SPLIT] = {"pass.gram_split", ALL(0), 8, NULL},
};

void clstats__tuning_init(clstats_ctx *ctx)
{
    for (int i = 0; i < PARAMS; i++)
        ctx->tuning[i] = params[i].value[ctx->device_class];
}

long clstats__tuned(const clstats_ctx *ctx, enum clstats__param_id id)
{
    return ctx->tuning[id];
}

/* A value as the parameter takes it: one of its names, or a number from 0 to its largest. */
static bool parse_value(const struct param *p, const char *text, long *out)
{
    for (int i = 0; p->choices && p->choices[i]; i++) {
        if (strcmp(text, p->choices[i]) == 0) {
            *out = i;
            return true;
        }
    }
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 0);
    if (end == text || *end != '\0' || errno == ERANGE || v < 0 || v > p->max) return false;
    *out = v;
    return true;
}

int clstats_ctx_tune(clstats_ctx *ctx, const char *name, const char *value)
{
    if (!ctx || !name) return clstats__fail(ctx, CLSTATS_ERR_ARG, "context or name is NULL");
    if (strcmp(name, "build.options") == 0) {
        char *copy = value && value[0] ? strdup(value) : NULL;
        if (value && value[0] && !copy)
            return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "cannot keep build options");
        free(ctx->build_options);
        ctx->build_options = copy;
        return CLSTATS_OK;
    }
    for (int i = 0; i < PARAMS; i++) {
        if (strcmp(name, params[i].name) != 0) continue;
        if (!value) {
            ctx->tuning[i] = params[i].value[ctx->device_class];
            return CLSTATS_OK;
        }
        long v;
        if (!parse_value(&params[i], value, &v))
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s takes %s, not \"%s\"", name,
                                 params[i].choices ? "one of its names" : "a number from 0", value);
        ctx->tuning[i] = v;
        return CLSTATS_OK;
    }
    return clstats__fail(ctx, CLSTATS_ERR_ARG, "no tuning parameter is named \"%s\"", name);
}
