/* bench_regress.c - LTS on synthetic data (y = 1 + sum_j x_j + N(0,1), 20 % vertical outliers),
 * n rows and p features from the command line, timed from the host call to its return, with the
 * device kernels' share (clstats_ctx_last_kernel_ms); `bench_regress N P REPS log` also prints
 * the stages' times the library logs. Peers: robustbase's ltsReg in the same run
 * (bench/README.md, bench/RESULTS.md). */
#include "clstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The library's log lines (the regression's stages, RESULTS' "what bounds it"), with "log"
 * as the fourth argument. */
static void print_line(void *user, const char *line)
{
    (void)user;
    printf("  %s\n", line);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    const size_t p = argc > 2 ? strtoull(argv[2], NULL, 10) : 10;
    const int reps = argc > 3 ? atoi(argv[3]) : 3;
    double *x = malloc(n * p * 8), *y = malloc(n * 8), *coef = malloc(p * 8);
    uint64_t s = 42;
    for (size_t i = 0; i < n; i++) {
        y[i] = 1;
        for (size_t j = 0; j <= p; j++) {
            /* Box-Muller from a 64-bit LCG: the data need not be fancy, only the same each run */
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            const double u1 = ((s >> 11) + 0.5) / 9007199254740992.0;
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            const double u2 = (s >> 11) / 9007199254740992.0;
            const double g = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
            if (j < p) x[i * p + j] = g, y[i] += g;
            else y[i] += g;
        }
        if (i % 5 == 0) y[i] += 100;
    }
    clstats_ctx *ctx;
    if (clstats_ctx_create(&ctx, NULL) != CLSTATS_OK) {
        fprintf(stderr, "%s\n", clstats_ctx_message(NULL));
        return 1;
    }
    struct clstats_array X = {.host = x, .dtype = CLSTATS_FLOAT64, .nx = p, .ny = n},
                         Y = {.host = y, .dtype = CLSTATS_FLOAT64, .nx = n, .ny = 1};
    if (argc > 4 && argv[4][0] == 'l') clstats_ctx_set_log(ctx, print_line, NULL);
    printf("device: %s\nn %zu p %zu\n", clstats_ctx_device_name(ctx), n, p);
    for (int r = 0; r <= reps; r++) {
        struct clstats_regress_result res = {.coef = coef};
        struct clstats_regress_options o = {.seed = 1};
        const double t0 = now();
        const int st = clstats_lts_fit(ctx, &X, &Y, &o, &res);
        const double t1 = now();
        if (st != CLSTATS_OK) {
            fprintf(stderr, "%s\n", clstats_ctx_message(ctx));
            return 1;
        }
        printf("%s: %.3f s (kernels %.1f ms) intercept %.4f coef[0] %.4f crit %.6g\n",
               r ? "run" : "warm-up (kernel builds)", t1 - t0, clstats_ctx_last_kernel_ms(ctx),
               res.intercept, coef[0], res.crit);
    }
    clstats_ctx_destroy(ctx);
    return 0;
}
