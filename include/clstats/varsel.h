/* clstats/varsel.h - variable selection by an information criterion in the linear model
 * y = intercept + X beta + e with p up to tens of thousands of candidate columns: the Particle
 * Swarm Stepwise algorithm (PaSS; Chen, Huang and Wang; its GPU form in "Particle Swarm
 * Stepwise Algorithm (PaSS) on Multicore Hybrid CPU-GPU Clusters", section III) (src/varsel/).
 *
 * Standardisation: every column of X and y are centred (the intercept, never selected and not
 * counted in k) and each column scaled to unit Euclidean norm, as the paper assumes (in double,
 * each column's sums in 64 lanes of interleaved rows, then rounded to the dtype; on a device
 * with fp64 X goes up as given and is standardised there, to the same values); coef and
 * intercept are given back on the caller's scale.
 * sigma^2 = RSS / n of the centred fit. A NaN or infinity in X is reported at its first place in
 * row order.
 *
 * Criteria (section III-D), k the model's size: AIC n log s2 + 2k; BIC n log s2 + k log n;
 * EBIC(gamma) BIC + 2 gamma log C(p, k); HDBIC n log s2 + k log n log p; HDHQC
 * n log s2 + 2 k log log n log p. Always in double.
 *
 * The swarm: K particles start from one variable each, drawn without repetition while K <= p.
 * Each iteration every particle takes a forward step (add: with probability p_b^f a random
 * variable of the best model not in its own, with p_i^f the one of largest |X_i^T R| outside
 * its model, with p_r^f a random one) or a backward step (remove: with p_i^b the one whose
 * removal raises RSS least, with p_r^b a random one). A particle goes forward in the first
 * iteration and whenever its model has one variable, backward when its model has max_size; else
 * it keeps its direction while its criterion does not rise and switches when it rises. Where
 * the best model offers nothing new, the forward step takes |X_i^T R|'s argmax. A variable
 * (numerically) in the span of the model is not added: the particle stands still. Ties go to the
 * lowest variable index. The swarm's best model (the first particle's at equal criteria) is
 * the answer.
 *
 * Each particle's fit is an upper-triangular U with U^T U = X_T^T X_T and c with U^T c = X_T^T y,
 * updated as variables enter (one new column) and leave (Givens rotations), never refitted:
 * RSS = y^T y - |c|^2. The device holds X, X^T y and a cache of Gram rows x_v^T X for the
 * variables that have been in a model (those new to it made by one product an iteration: our
 * tiled kernel for float32 on NVIDIA's GPUs, CLBlast's GEMM elsewhere; tuning pass.gram_rows),
 * forms E = X^T R for the particles that take the argmax as X^T y - sum_m (X^T x_m)
 * beta_m (the identity X^T (y - X_T beta) holds for the standardised columns as held; the
 * residuals' GEMM where an iteration's models outgrow the cache), finds each particle's argmax
 * outside its model and computes, in double, the inner products the fits need for the variable
 * each particle adds; the coefficients go up and only the chosen indices and those products come
 * back. The plain C path takes E from the residuals in double. Those products are summed in one fixed order on every device and in the plain C path,
 * so both give the same fits bit for bit. Draws come from
 * the library's xoshiro256** seeded by `seed` on the host: a seed gives the same selection on
 * every run and device, up to argmaxes that differ only by rounding. */
#ifndef CLSTATS_VARSEL_H
#define CLSTATS_VARSEL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum clstats_varsel_criterion {
    CLSTATS_VARSEL_HDBIC = 0,
    CLSTATS_VARSEL_HDHQC,
    CLSTATS_VARSEL_EBIC,
    CLSTATS_VARSEL_BIC,
    CLSTATS_VARSEL_AIC,
};

/* clstats_pass_default_options fills these with the defaults (NULL options mean them). */
struct clstats_pass_options {
    enum clstats_varsel_criterion criterion; /* HDBIC */
    double gamma;         /* EBIC's, in [0, 1]: 1 */
    unsigned n_particles; /* K: 256 */
    unsigned n_iter;      /* 16 */
    /* (p_b^f, p_i^f, p_r^f) summing to 1 and (p_i^b, p_r^b) summing to 1: (0, 0.8, 0.2) and
     * (0.8, 0.2), a row of the paper's Table II with PSR 1 and FDR 0 at 256 particles and 16
     * iterations, and its advice (high p_i^f, some randomness). */
    double p_forward[3];
    double p_backward[2];
    unsigned max_size;    /* the largest model; 0: min(p, n - 2, 100) */
    uint64_t seed;        /* 0 */
};

/* What a fit gives; coef (p entries), support (p bytes) and history (n_iter + 1 entries: the
 * best criterion after the start and after each iteration) are the caller's, history optional. */
struct clstats_pass_result {
    double *coef;
    double intercept;
    unsigned char *support;
    double criterion;
    size_t n_selected;
    double *history;
};

CLSTATS_API void clstats_pass_default_options(struct clstats_pass_options *opts);

/* Selects columns of x (n rows of p columns, float32 or float64: the device works in that
 * dtype, the fits and criteria in double) for y (n values). Either may be in host memory or in
 * a buffer of the context (struct clstats_array's buffer, offset and stride): X already on the
 * device skips the bus (on a device with fp64 it is standardised where it lies, into the
 * engine's own copy; the caller's buffer is only read), y and, without fp64, X are read down.
 * Errors: CLSTATS_ERR_ARG for p = 0, fewer than 3 rows, bad options or arrays (neither or both
 * of host and buffer); CLSTATS_ERR_NAN for a NaN or
 * infinity in x or y; CLSTATS_ERR_SINGULAR for a constant column or a constant y (the column's
 * index in the message); CLSTATS_ERR_UNSUPPORTED for float64 on a device without it. */
CLSTATS_API int clstats_pass_fit(clstats_ctx *ctx, const struct clstats_array *x,
                                 const struct clstats_array *y,
                                 const struct clstats_pass_options *opts,
                                 struct clstats_pass_result *result);

/* The same selection by plain C on the host, no device (ctx may be NULL: errors then go to the
 * process-wide message; arrays in buffers, read down, need it): the reference the tests judge
 * the device path by. */
CLSTATS_API int clstats_pass_fit_host(clstats_ctx *ctx, const struct clstats_array *x,
                                      const struct clstats_array *y,
                                      const struct clstats_pass_options *opts,
                                      struct clstats_pass_result *result);

#ifdef __cplusplus
}
#endif

#endif
