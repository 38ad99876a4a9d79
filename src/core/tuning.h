/* tuning.h - the library's tuning parameters: one table, a value for each class of device, read
 * into a context when it is made (src/core/tuning.c); tests and benchmarks force a value with
 * clstats_ctx_tune. A value of 0 is "auto": the module derives it from the device and the shape,
 * as its comment says. Adding a parameter: an id here, a row in tuning.c with the measurement
 * behind its values (bench/RESULTS.md). */
#ifndef CLSTATS_TUNING_H
#define CLSTATS_TUNING_H

/* Classes of device, each with its own column of defaults. */
enum clstats__class {
    CLASS_NVIDIA, /* NVIDIA GPUs */
    CLASS_AMD,    /* AMD GPUs */
    CLASS_GPU,    /* other GPUs and accelerators */
    CLASS_CPU,    /* CPU devices (PoCL, Intel's runtime) */
    CLASSES
};

enum clstats__param_id {
    /* filter (src/filter/) */
    P_FILTER_PATH,     /* design: auto, sorted, bisect, binned, rank, runs, bracket */
    P_FILTER_SHAPE_TX, /* sorted design's work-group: x, y, pixels per work-item (0: auto) */
    P_FILTER_SHAPE_TY,
    P_FILTER_SHAPE_PX,
    /* host arrays streamed through pinned slots (src/core/staging.c) */
    P_TRANSFER_STREAM,  /* auto (GPUs), off, on */
    P_TRANSFER_SLOT_KB, /* one pinned slot */
    P_TRANSFER_SLOTS,   /* slots in the ring */
    P_TRANSFER_THREADS, /* threads copying into and out of the slots (0: auto) */
    P_TRANSFER_SPIN_US, /* how long idle copy threads and the caller spin before sleeping */
    /* whole-array selection (src/select/select.c) */
    P_SELECT_WG,
    P_SELECT_VPT,
    P_SELECT_BITS,
    P_SELECT_GROUPS, /* work-groups per compute unit */
    P_SELECT_SAMPLE_WG,
    P_SELECT_SAMPLE,
    P_SELECT_STAGE_TILES,
    /* column and tile medians (src/select/select_columns*.c) */
    P_COLUMNS_METHOD, /* auto, radix, registers, streamed, bracket */
    P_COLUMNS_TRANSPOSE,
    P_COLUMNS_WG,
    P_COLUMNS_SPLIT, /* batched selection: auto, off, on (src/select/column_ranks.c) */
    P_COLUMNS_BITS,
    P_COLUMNS_LOCAL_ROWS,
    P_BRACKET_SAMPLE,
    P_BRACKET_SAMPLE_WG,
    P_BRACKET_CELLS,
    P_BRACKET_LANES,
    P_BRACKET_CHUNK,
    P_BRACKET_FINISH_WG,
    P_BRACKET_FINISH_CAP,
    P_BRACKET_GROUPS,
    P_REGISTERS_COLS,
    P_REGISTERS_WG,
    P_REGISTERS_SAMPLE_STRIDE,
    P_REGISTERS_LOG2_BINS,
    P_REGISTERS_SIGMAS,
    P_REGISTERS_CAP,
    P_REGISTERS_ROUNDS,
    P_REGISTERS_STREAM,
    P_REGISTERS_PASS_CAP,
    P_REGISTERS_HELD,
    P_REGISTERS_INDEX64, /* auto, off, on */
    P_REGISTERS_L2_HINT, /* auto, off, on */
    P_REGISTERS_STOP,    /* timing probes: the kernel stops after this step (0: never) */
    /* regression (src/regress/csteps.c) */
    P_REGRESS_PRODUCTS, /* auto, pairs, rows */
    P_REGRESS_DESIGN,   /* the data set built from host arrays: auto, off (host), on (device) */
    /* mesh background (src/background/) */
    P_BACKGROUND_WG,       /* work-items a box */
    P_BACKGROUND_BAND_KIB, /* photutils' boxes: sorted pixels a launch holds (0: auto) */
    P_BACKGROUND_ROWS,     /* SEP's maps a work-item a row: auto, off (a pixel), on */
    /* k-means (src/cluster/assign.c) */
    P_KMEANS_ASSIGN, /* auto, direct, tiled, gemm, serial, fused */
    P_KMEANS_SUMS,   /* auto, groups, serial */
    P_KMEANS_FUSE,   /* auto, off, on: the fewer-launch scans and sums (src/cluster/lloyd.c) */
    P_KMEANS_FINISH_TREES,   /* upper levels' trees the finishing kernel makes at most (0: auto) */
    P_KMEANS_FINISH_HALVE,   /* the level below those halved in the finishing kernel: its rows at
                                most (0: auto, 1: never) */
    P_KMEANS_BATCH,          /* Lloyd's iterations a batch between reads of the state (0: auto) */
    P_KMEANS_DOTS_MIB,       /* the GEMM path's products of a chunk of rows, MiB (0: auto) */
    P_KMEANS_SCAN_IN_ASSIGN, /* auto, off, on: the tiled assignment's last group scans */
    P_KMEANS_FINISH_IN_SUMS, /* auto, off, on: member_sums' last group finishes */
    /* the blocked Cholesky (src/linalg/cholesky.c) */
    P_LINALG_POTRF_UPDATE, /* the blocked Cholesky's trailing update: 1 tiles, 2 columns */
    P_LINALG_POTRF_STEP,   /* its block and panel: 1 solve, 2 inverse (one launch), 3 ahead */
    P_LINALG_EIGEN,        /* eigenvalues' reduction (src/linalg/extremes.c): 1 device, 2 host */
    /* GPfit's nugget rule (src/gp/nugget.c): 1 both eigenvalues (extremes.c), 2 shift-invert */
    P_GP_NUGGET,
    /* PaSS (src/varsel/engine_device.c) */
    P_PASS_GRAM_ROWS,    /* new Gram rows: off (CLBlast), on (pass_gram_rows), auto (by device) */
    P_PASS_GRAM_TILE,    /* pass_gram_rows's tile: auto or one of tuning.c's gram_tiles */
    P_PASS_GRAM_SPLIT,   /* pass_gram_rows's splits of x's rows (0: auto) */
    PARAMS
};

/* The choices of the parameters that take names; the value is the name's index. */
enum { AUTO = 0 };
enum { SWITCH_OFF = 1, SWITCH_ON = 2 };
enum { FILTER_SORTED = 1, FILTER_BISECT, FILTER_BINNED, FILTER_RANK, FILTER_RUNS, FILTER_BRACKET };
enum { COLUMNS_RADIX = 1, COLUMNS_REGISTERS, COLUMNS_STREAMED, COLUMNS_BRACKET };

#endif
