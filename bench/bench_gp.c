/* bench_gp.c - GPfit's deviance on the device: `bench_gp one N D [REPS]` times one evaluation
 * (correlation matrix, blocked Cholesky, solves) at n x d, `bench_gp batch N COUNT D [REPS]` a
 * population of COUNT parameter vectors at n in one call, `bench_gp grad N D [REPS]` one
 * evaluation with its gradient, `bench_gp predict N M D [REPS]` prediction (mean and MSE) at
 * M uniform new points (GRID=1: a square grid of them) from an n-point design, `bench_gp fit N
 * D [REPS]` the seed's fit by its genetic algorithm (population 100, 20 generations: 2 000
 * deviances) of Hartman-6 (d = 6; other d the smooth response). Uniform designs, a
 * Hartman-like smooth response, a given nugget (1e-8, or NUGGET=value; NUGGET=rule: GPfit's
 * rule, timed too, and the nuggets printed; CLSTATS_TUNE=gp.nugget=eigen|shift its path). Host wall time per call and the kernels' share
 * (clstats_ctx_last_kernel_ms); CLSTATS_TUNE=linalg.potrf_update=tiles|rows picks the
 * factorisation's trailing update; CLSTATS_LOG=1 adds the kernels' times by name. Peers:
 * bench/peers_gp.py. */
#include "bench_context.h"
#include "clstats.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The seed's Hartman-6 (its second example). */
static double hartman6(const double *x)
{
    static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                   {0.05, 10, 17, 0.1, 8, 14},
                                   {3, 3.5, 1.7, 10, 17, 8},
                                   {17, 8, 0.05, 10, 0.1, 14}};
    static const double p[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                   {2329, 4135, 8307, 3736, 1004, 9991},
                                   {2348, 1451, 3522, 2883, 3047, 6650},
                                   {4047, 8828, 8732, 5743, 1091, 381}};
    static const double c[4] = {1.0, 1.2, 3.0, 3.2};
    double f = 0;
    for (int i = 0; i < 4; i++) {
        double s = 0;
        for (int k = 0; k < 6; k++)
            s += a[i][k] * (x[k] - 1e-4 * p[i][k]) * (x[k] - 1e-4 * p[i][k]);
        f -= c[i] * exp(-s);
    }
    return f;
}

static double uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (*s >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_gp one N D [REPS] | batch N COUNT D [REPS] | grad N D "
                        "[REPS] | predict N M D [REPS] | fit N D [REPS]\n");
        return 2;
    }
    const bool batch = strcmp(argv[1], "batch") == 0, grad = strcmp(argv[1], "grad") == 0;
    const bool predict = strcmp(argv[1], "predict") == 0, fit = strcmp(argv[1], "fit") == 0;
    const size_t n = strtoull(argv[2], NULL, 10);
    const size_t count = batch || predict ? strtoull(argv[3], NULL, 10) : 1;
    const size_t d = strtoull(argv[batch || predict ? 4 : 3], NULL, 10);
    const int reps = argc > (batch || predict ? 5 : 4) ? atoi(argv[batch || predict ? 5 : 4]) : 3;
    double *x = malloc(n * d * 8), *y = malloc(n * 8), *beta = malloc(count * d * 8);
    double *dev = malloc(count * 8), *g = malloc(d * 8);
    uint64_t s = 42;
    for (size_t i = 0; i < n; i++) {
        double v = 0;
        for (size_t k = 0; k < d; k++) {
            x[i * d + k] = uniform(&s);
            v += (k + 1) * (x[i * d + k] - 0.5) * (x[i * d + k] - 0.5);
        }
        y[i] = d == 6 && fit ? hartman6(x + i * d) : -exp(-v);
    }
    /* BETA_LO=b: the population's log10 theta in [b, b + 1.5] (default -1; lower, smoother R
     * that GPfit's rule gives a nugget). */
    const double beta_lo = getenv("BETA_LO") ? atof(getenv("BETA_LO")) : -1;
    for (size_t i = 0; i < count * d; i++) beta[i] = beta_lo + 1.5 * uniform(&s);
    clstats_ctx *ctx = bench_context(NULL); /* $CLSTATS_DEVICE, $CLSTATS_TUNE */
    if (!ctx) return 1;
    struct clstats_gp_model m;
    clstats_gp_model_init(&m);
    const char *nug = getenv("NUGGET");
    m.nugget = !nug ? 1e-8 : strcmp(nug, "rule") == 0 ? NAN : atof(nug);
    printf("device: %s\n%s n %zu d %zu count %zu nugget %s\n", clstats_ctx_device_name(ctx),
           argv[1], n, d, count, nug ? nug : "1e-8");
    double *nugget = malloc(count * sizeof *nugget);
    const struct clstats_gp_eval out = {.deviance = dev, .gradient = grad ? g : NULL,
                                        .nugget = nugget};
    double *xnew = predict ? malloc(count * d * 8) : NULL;
    double *mean = predict ? malloc(count * 8) : NULL, *mse = predict ? malloc(count * 8) : NULL;
    /* GRID=1: the new points a square grid in the first two columns (a sky's pixels). */
    const size_t side = (size_t)ceil(sqrt((double)count));
    for (size_t i = 0; predict && i < count * d; i++)
        xnew[i] = !getenv("GRID") ? uniform(&s)
                  : i % d == 0    ? (double)(i / d % side) / side
                  : i % d == 1    ? (double)(i / d / side) / side
                                  : 0.5;
    for (int r = 0; r <= reps; r++) {
        const double t0 = now();
        struct clstats_gp_fit_options fo;
        clstats_gp_fit_options_init(&fo);
        fo.method = CLSTATS_GP_GENETIC;
        struct clstats_gp_fit_result fr = {.beta = beta};
        const int st =
            fit       ? clstats_gp_fit(ctx, &m, x, y, n, d, &fo, &fr)
            : predict ? clstats_gp_predict(ctx, &m, x, y, n, d, beta, m.nugget, xnew, count, mean,
                                           mse)
                      : clstats_gp_deviance(ctx, &m, x, y, n, d, beta, count, &out);
        if (predict && st == CLSTATS_OK) dev[0] = mean[count - 1] + mse[count - 1];
        if (fit && st == CLSTATS_OK) {
            dev[0] = fr.deviance;
            printf("fit: %zu evaluations, mu %.6g, sigma2 %.6g, nugget %.3g, beta", fr.evaluations,
                   fr.mu, fr.sigma2, fr.nugget);
            for (size_t k = 0; k < d; k++) printf(" %.4f", beta[k]);
            printf("\n");
        }
        const double t1 = now();
        if (st != CLSTATS_OK) {
            fprintf(stderr, "%s\n", clstats_ctx_message(ctx));
            return 1;
        }
        printf("%s: %.2f ms (kernels %.2f ms) deviance[0] %.10g\n",
               r ? "run" : "warm-up (kernel builds)", 1e3 * (t1 - t0),
               clstats_ctx_last_kernel_ms(ctx), dev[0]);
        /* The rule's nuggets, to compare one gp.nugget path with another. */
        if (nug && strcmp(nug, "rule") == 0 && !fit && !predict && r == reps) {
            printf("nuggets:");
            for (size_t c = 0; c < count; c++) printf(" %.10g", nugget[c]);
            printf("\n");
        }
    }
    clstats_ctx_destroy(ctx);
    free(x);
    free(y);
    free(beta);
    free(dev);
    free(g);
    free(xnew);
    free(mean);
    free(mse);
    free(nugget);
    return 0;
}
