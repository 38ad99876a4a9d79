/* bench_pass.c - PaSS (src/varsel/) on the seed paper's simulated problems, device path beside
 * the plain C path: bench_pass ing-lai|chen-chen [N P] [K ITER] [f32|f64] [PATHS].
 * Defaults: Ing and Lai n 400, p 4000 (HDBIC), Chen and Chen n 200, p 50 (EBIC gamma 1), 256
 * particles, 16 iterations, float32; the paper's huge problems are `ing-lai 4000 40000` and
 * `chen-chen 20000 500`. PATHS, a comma-separated list (default "both" = device,host):
 * `device`, X in host memory: each fit sends it up (its bus crossing timed with the fit);
 * `resident`, X already on the device: it goes up once into a buffer before the timed fits
 * (that upload timed apart) and every fit reads it there; `host`, the plain C path. Times are
 * whole fits from the host call over the iterations, and the device kernels' share; after the
 * device's warm-up fit PASS_REPEAT fits are timed (1 unless set), and the last again stopped
 * after one iteration, which parts the setup from
 * the iterations. With PASS_LOG set the library's log lines say where the time goes;
 * PASS_TUNE="name=value,..." sets the library's tuning first (clstats_ctx_tune); several such
 * sets separated by ';' run the paths once under each, in turn, on the same data (and the
 * same resident X). */
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

static uint64_t state = 42;
static double gauss(void)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u1 = ((state >> 11) + 0.5) / 9007199254740992.0;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u2 = (state >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Section IV-B's two designs (examples/pass/simulations.py says the same in numpy). */
static void make(bool ing_lai, size_t n, size_t p, double *x, double *y)
{
    const double chen_beta[8] = {0.7, 0.9, 0.4, 0.3, 1.0, 0.2, 0.2, 0.1}, rho = 0.2;
    const size_t r = ing_lai ? 10 : 8;
    for (size_t t = 0; t < n; t++) {
        double *row = x + t * p, sum = 0, prev = 0;
        y[t] = gauss();
        for (size_t i = 0; i < p; i++) {
            if (ing_lai) row[i] = i < r ? gauss() : 0.5 * gauss() + sqrt(3.0 / (4.0 * r)) * sum;
            else row[i] = prev = i ? rho * prev + sqrt(1 - rho * rho) * gauss() : gauss();
            if (ing_lai && i < r) sum += row[i];
            if (i < r) y[t] += (ing_lai ? 3 + 0.75 * (double)i : chen_beta[i]) * row[i];
        }
    }
}

/* The library's log lines (where the time goes), with PASS_LOG set. */
static void print_line(void *user, const char *line)
{
    (void)user;
    printf("  log: %s\n", line);
}

int main(int argc, char **argv)
{
    const bool ing_lai = argc < 2 || strcmp(argv[1], "chen-chen") != 0;
    const size_t n = argc > 3 ? strtoull(argv[2], NULL, 10) : ing_lai ? 400 : 200;
    const size_t p = argc > 3 ? strtoull(argv[3], NULL, 10) : ing_lai ? 4000 : 50;
    struct clstats_pass_options o;
    clstats_pass_default_options(&o);
    o.criterion = ing_lai ? CLSTATS_VARSEL_HDBIC : CLSTATS_VARSEL_EBIC;
    if (argc > 5) o.n_particles = (unsigned)atoi(argv[4]), o.n_iter = (unsigned)atoi(argv[5]);
    const bool f64 = argc > 6 && strcmp(argv[6], "f64") == 0;
    const char *which = argc > 7 ? argv[7] : "both";
    double *x = malloc(n * p * 8), *y = malloc(n * 8), *coef = malloc(p * 8);
    unsigned char *support = malloc(p);
    float *xf = malloc(n * p * 4), *yf = malloc(n * 4);
    if (!x || !y || !coef || !support || !xf || !yf) return 1;
    make(ing_lai, n, p, x, y);
    for (size_t i = 0; i < n * p; i++) xf[i] = (float)x[i];
    for (size_t t = 0; t < n; t++) yf[t] = (float)y[t];
    const enum clstats_dtype dt = f64 ? CLSTATS_FLOAT64 : CLSTATS_FLOAT32;
    struct clstats_array X = {.host = f64 ? (void *)x : xf, .dtype = dt, .nx = p, .ny = n},
                         Y = {.host = f64 ? (void *)y : yf, .dtype = dt, .nx = n, .ny = 1};
    clstats_ctx *ctx;
    if (clstats_ctx_create(&ctx, NULL) != CLSTATS_OK) {
        fprintf(stderr, "%s\n", clstats_ctx_message(NULL));
        return 1;
    }
    if (getenv("PASS_LOG")) clstats_ctx_set_log(ctx, print_line, NULL);
    printf("device: %s\n%s n %zu p %zu K %u iterations %u %s\n", clstats_ctx_device_name(ctx),
           ing_lai ? "ing-lai HDBIC" : "chen-chen EBIC(1)", n, p, o.n_particles, o.n_iter,
           f64 ? "float64" : "float32");
    const char *paths = strcmp(which, "both") == 0 ? "device,host" : which;
    /* PASS_REPEAT: timed fits a path after its warm-up (1 unless set) */
    const int timed = getenv("PASS_REPEAT") && atoi(getenv("PASS_REPEAT")) > 0
                          ? atoi(getenv("PASS_REPEAT"))
                          : 1;
    const char *names[3] = {"device", "resident", "host"};
    struct clstats_array XX = X; /* X on the device before the fits, as a caller's own buffer */
    if (strstr(paths, "resident")) {
        const double u0 = now();
        cl_int err;
        XX.host = NULL;
        XX.buffer = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY,
                                   n * p * (f64 ? 8 : 4), NULL, &err);
        if (err == CL_SUCCESS)
            err = clEnqueueWriteBuffer(clstats_ctx_cl_queue(ctx), XX.buffer, CL_TRUE, 0,
                                       n * p * (f64 ? 8 : 4), X.host, 0, NULL, NULL);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "X into a buffer: OpenCL error %d\n", err);
            return 1;
        }
        printf("resident: X (%zu MB) up once, before the timed fits: %.1f ms\n",
               n * p * (f64 ? 8 : 4) >> 20, 1e3 * (now() - u0));
    }
    /* PASS_TUNE="name=value,...[;name=value,...]": the library's tuning (e.g.
     * transfer.stream=off, pass.gram_rows=off), a set at a time. */
    char tunes[4096];
    snprintf(tunes, sizeof tunes, "%s", getenv("PASS_TUNE") ? getenv("PASS_TUNE") : "");
    char *next_set = tunes;
    do {
        char *set = next_set, *semi = strchr(set, ';');
        next_set = semi ? semi + 1 : NULL;
        if (semi) *semi = 0;
        if (*set) printf("== tuning %s\n", set);
        char *save = NULL;
        for (char *item = strtok_r(set, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(item, '=');
            if (!eq) continue;
            *eq = 0;
            if (clstats_ctx_tune(ctx, item, eq + 1) != CLSTATS_OK) {
                fprintf(stderr, "%s\n", clstats_ctx_message(ctx));
                return 1;
            }
        }
        for (int path = 0; path < 3; path++) {
            const bool device = path < 2;
            if (!strstr(paths, names[path])) continue;
            const struct clstats_array *xp = path == 1 ? &XX : &X;
            for (int r = 0; r < (device ? 1 + timed : 1); r++) {
                struct clstats_pass_result res = {.coef = coef, .support = support};
                const double t0 = now();
                const int st = device ? clstats_pass_fit(ctx, xp, &Y, &o, &res)
                                      : clstats_pass_fit_host(ctx, xp, &Y, &o, &res);
                const double t1 = now();
                if (st != CLSTATS_OK) {
                    fprintf(stderr, "%s\n", clstats_ctx_message(ctx));
                    return 1;
                }
                size_t hits = 0;
                for (size_t i = 0; i < (ing_lai ? 10u : 8u); i++) hits += support[i];
                printf("%s%s: %.3f s (%.2f ms), %.1f ms an iteration%s; selected %zu (%zu true), "
                       "criterion %.6f\n",
                       device ? names[path] : "plain C", device && !r ? " (warm-up: builds)" : "",
                       t1 - t0, 1e3 * (t1 - t0), 1e3 * (t1 - t0) / o.n_iter, device ? "" : " (one host thread)",
                       res.n_selected, hits, res.criterion);
                if (device)
                    printf("  kernels and GEMMs %.1f ms an iteration\n",
                           clstats_ctx_last_kernel_ms(ctx) / o.n_iter);
                if (device && r == timed && o.n_iter > 1) { /* the same fit stopped after one iteration */
                    struct clstats_pass_options one = o;
                    one.n_iter = 1;
                    const double u0 = now();
                    if (clstats_pass_fit(ctx, xp, &Y, &one, &res) != CLSTATS_OK) return 1;
                    const double u1 = now();
                    printf("  one iteration: %.3f s (x up, standardised, the start and one "
                           "iteration); the other %u: %.2f ms each\n",
                           u1 - u0, o.n_iter - 1,
                           1e3 * ((t1 - t0) - (u1 - u0)) / (o.n_iter - 1));
                }
            }
        }
    } while (next_set);
    if (XX.buffer) clReleaseMemObject(XX.buffer);
    clstats_ctx_destroy(ctx);
    free(x), free(y), free(coef), free(support), free(xf), free(yf);
    return 0;
}
