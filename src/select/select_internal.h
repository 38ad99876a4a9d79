/* select_internal.h - what src/select/select.c shares with src/select/select_columns.c and the benchmark:
 * one selection run on device data, and the key/value helpers that define the results. */
#ifndef CLSTATS_SELECT_INTERNAL_H
#define CLSTATS_SELECT_INTERNAL_H

#include "internal.h"

/* An array split into parts, each selected by its own run on its own device (src/mpi/): at
 * every radix pass each part's run hands its counts (counts[0] its NaNs in the first pass over
 * the data, else 0; then the histogram's bins) to sum_counts, which replaces them by their sums
 * over all parts, so that every run finds the same digits and the same answer. status is the
 * part's own: a part that failed calls with it (counts NULL) instead, and every part then
 * returns the status sum_counts answers, which is that of every part. The runs take the radix
 * path whatever the method asks (its messages are a histogram, whatever n), except where
 * plane asks for the cutting plane (its messages a few words a pass). */
struct select_parts {
    int (*sum_counts)(void *user, uint64_t *counts, size_t n, int status);
    void *user;
    uint64_t n_total; /* values in all parts, NaNs included */
    /* Bracket first (the sample method over the parts): every part's share of one sample of the
     * whole array gathered through sum_counts (each part its own slots), the bracket picked
     * from it alike by every part, one pass counting and gathering each part's values inside
     * it, whose counts are summed in one message with the first radix pass's histogram of the
     * gathered values; the radix passes then go on from those (or, where the bracket missed,
     * start again on the data). part is this part's index of `parts` (at most 2^bits). */
    bool bracket;
    int part, parts;
    /* The cutting plane over the parts (plane: every part asked for it): each pass gathers
     * SELECT_PLANE_WORDS words from every part into all[q * words ..] for part q, in part
     * order; status as sum_counts's (a part that fails while a gather is the others' next
     * message sends its failure in one, mine and all unused). */
    bool plane;
    int (*gather)(void *user, const uint64_t *mine, size_t words, uint64_t *all, int status);
};

/* Words a part's record holds in a cutting-plane pass over parts (src/select/select.c). */
enum { SELECT_PLANE_WORDS = 10 };

/* Counts a bracket's message carries past the NaNs and the first radix pass's histogram (the
 * values below the bracket, inside it, and the parts whose gathered keys overflowed): a
 * sum_counts user takes 1 + 2^bits + SELECT_PARTS_EXTRA counts a message. */
enum { SELECT_PARTS_EXTRA = 3 };

struct select_request {
    enum clstats_select_method method;
    const struct select_parts *parts; /* NULL: the array is whole */
    int mode;           /* 0: rank k; 1: the median pair; 2: ranks r0, r1 as given */
    uint64_t k, r0, r1; /* ranks among the valid values, 0-based */
    double *kernel_ms;  /* optional: profiling time of the run's kernels is added here */
};

struct select_result {
    uint64_t nan, nv;    /* NaNs and valid values */
    uint64_t key0, key1; /* keys of ranks r0 and r1 (r1 = r0 + 1 for an even median) */
    unsigned passes;     /* reduction passes over the data (sample: 1 when its bracket held) */
    uint64_t gathered;   /* sample and cutting plane: values inside the final bracket */
    bool empty, out_of_range;
};

/* Runs kernels/select.cl over n values (float32, or float64 when f64) from element `offset`
 * of data. */
int clstats__select_run(clstats_ctx *ctx, cl_mem data, size_t offset, uint64_t n, bool f64,
                        const struct select_request *req, struct select_result *res);

/* The whole-array selections (src/select/select.c) on one part of an array split into parts,
 * the rest as clstats_select_kth_array, clstats_median_array and clstats_percentiles_array
 * (scale 100) or clstats_quantiles_array (scale 1): src/mpi/'s distributed forms. A part may
 * be empty (nx or ny 0). */
int clstats__select_kth_parts(clstats_ctx *ctx, const struct clstats_array *part, uint64_t k,
                              const struct clstats_select_options *opts,
                              const struct select_parts *parts, double *out);
int clstats__median_parts(clstats_ctx *ctx, const struct clstats_array *part,
                          const struct clstats_select_options *opts,
                          const struct select_parts *parts, double *out);
int clstats__percentiles_parts(clstats_ctx *ctx, const struct clstats_array *part, const double *q,
                               size_t nq, double scale, const struct clstats_select_options *opts,
                               const struct select_parts *parts, double *out);

/* Value of an order-preserving key (the inverse of the kernels' key_of_bits). */
double clstats__value_of_key(uint64_t key, bool f64);

/* What the column bracket path (src/select/select_columns_bracket.c) did: columns whose bracket
 * missed a middle rank or listed more keys than fit (the caller takes theirs from the radix
 * kernel), and the keys the others listed, which the tests hold to the sample's promise. */
struct column_bracket_report {
    size_t missed;
    uint64_t listed;
};

/* A sample path's run: column medians of the rows x cols matrix at element `offset` of buf
 * (ld elements a row) into keys3[3 c .. 3 c + 2] as kernels/select_columns.cl's results, except
 * where missed[c] is set (the radix kernel must give those); *ms, when not NULL, gains the
 * kernels' time. */
typedef int (*clstats__column_path)(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows,
                                    size_t cols, size_t ld, cl_uint *keys3, bool *missed,
                                    struct column_bracket_report *report, double *ms);

/* A sample path's results, four words a column (the key of rank (nv - 1) / 2, that of rank
 * nv / 2, the NaN count, and the keys listed or NO_KEY where the column was missed), into
 * keys3, missed and report. */
void clstats__column_results(const cl_uint *out, size_t cols, cl_uint *keys3, bool *missed,
                             struct column_bracket_report *report);

/* Whether the bracket path's buffers and kernels fit this device for the shape. */
bool clstats__column_bracket_fits(clstats_ctx *ctx, size_t rows, size_t cols);

/* The bracket path (a clstats__column_path). */
int clstats__column_bracket(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows, size_t cols,
                            size_t ld, cl_uint *keys3, bool *missed,
                            struct column_bracket_report *report, double *ms);

/* The one-launch path (src/select/select_columns_registers.c), alike: whether it fits, and the run
 * (a clstats__column_path), whose missed columns are those it left open. */
bool clstats__column_registers_fits(clstats_ctx *ctx, size_t rows, size_t cols);
int clstats__column_registers(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows, size_t cols,
                              size_t ld, cl_uint *keys3, bool *missed,
                              struct column_bracket_report *report, double *ms);

/* The same kernel streaming (src/select/select_columns_registers.c): a sample held in registers, the
 * matrix read in passes, so that a group takes eight columns and any number of rows. */
/* Columns a streamed group takes where the matrix's groups fill most of the GPU's compute units
 * in one wave (8, or 4), or 0 where they would not. */
size_t clstats__column_streamed_group(clstats_ctx *ctx, size_t cols);
bool clstats__column_streamed_fits(clstats_ctx *ctx, size_t rows, size_t cols);
int clstats__column_streamed(clstats_ctx *ctx, cl_mem buf, size_t offset, size_t rows, size_t cols,
                             size_t ld, cl_uint *keys3, bool *missed,
                             struct column_bracket_report *report, double *ms);

/* Batched selection (src/select/column_ranks.c): for each of `cols` columns, column c's element
 * r at buf[off + c cstep + r rstep] (float64 when f64), the valid value of rank ranks[c]
 * (device, cl_ulong a column) into stats[4 c ..] = its key (all ones where the column has too
 * few valid values), NaN count, count below it, count equal; sums[c] (the dtype) the sum of the
 * values below it. Enqueued only: the caller reads the results. */
int clstats__column_ranks(clstats_ctx *ctx, bool f64, cl_mem buf, size_t off, size_t cstep,
                          size_t rstep, size_t rows, size_t cols, cl_mem ranks, cl_mem stats,
                          cl_mem sums);

/* The sums below the k-th values of a part's whole blocks (the one-device sums' blocks of
 * COLUMN_BLOCK rows, counted over all parts' rows: src/select/column_ranks.c), summed on the
 * part's device in the one-device order. In: row0, the part's first row among all parts'. Out:
 * head, the part's rows before its first whole block (those of a block that began on an
 * earlier part, or the whole part where it holds no whole block); blocks, its whole blocks;
 * sums[c blocks + b] (malloc'd, NULL where there are none, the caller's to free) block b's sum
 * below column c's k-th value (the dtype's value as a double); below[c] (cols entries, the
 * caller's) the count below it in those blocks. */
#define COLUMN_BLOCK 4096
struct column_block_sums {
    uint64_t row0;
    size_t head, blocks;
    double *sums;
    uint64_t *below;
};

/* The batched selection over parts (src/mpi/): every part's rows of the same columns (part:
 * part->nx columns, part->ny rows, float32 or float64, host or device), the NaN counts and each
 * pass's histograms (256 counts a column) summed over the parts through parts->sum_counts, so
 * that every part walks to the same key: keys[c] that of rank ranks[c] (0-based among column
 * c's valid values of all parts; ranks NULL: the median's, median 1 its lower and 2 its upper
 * middle), all ones where the column has too few; nans[c] its NaNs in all parts; where bs is
 * not NULL, the sums below those keys of the part's whole blocks (struct column_block_sums),
 * with no message more. A part that fails before the first message returns without one (the
 * caller sends its failure). */
int clstats__column_ranks_parts(clstats_ctx *ctx, const struct clstats_array *part,
                                const struct select_parts *parts, const uint64_t *ranks,
                                int median, uint64_t *keys, uint64_t *nans,
                                struct column_block_sums *bs);

/* The batched selection's status once its columns are done: CLSTATS_ERR_NAN where NaNs were
 * found and the policy refuses them, else CLSTATS_ERR_EMPTY where short_cols columns had too few
 * valid values (NaN there). */
int clstats__columns_status(clstats_ctx *ctx, uint64_t nan, enum clstats_nan_policy policy,
                            uint64_t short_cols);

/* The sum of the k smallest values of a column from its stats (of rank k - 1) and its sum below:
 * section VI's multiplicity rule. */
double clstats__smallest_sum(const uint64_t *stats, double sum_below, uint64_t k, bool f64);

/* A result as the caller gets it: +0 for a zero of either sign (include/clstats.h). Zeros are
 * equal as numbers, but keys order -0 below +0, so the sign of a zero result would otherwise
 * follow how many of each the data holds, a rule the caller could not see. */
double clstats__plus_zero(double v);

/* The documented means of two middle values (clstats.h: clstats_median), NaN as one NaN; the
 * float32 mean is kernels/even_mean.h's, which the filter kernels use too. */
float clstats__mean_f32(float a, float b);
double clstats__mean_f64(double a, double b);

#endif
