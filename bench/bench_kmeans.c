/* bench_kmeans.c - Lloyd's loop on synthetic float32 blobs from given centres (the first k rows),
 * tol 0, timed from the host call to its return, beside the call's kernel_ms (device time):
 * `seed` the seed's whole run (n = 10^5, d = 2, k = 5, 300 iterations), `big` and `wide` per
 * iteration as the difference of two runs (LO and HI iterations) over their difference, so that
 * uploads and setup cancel. With `buffer` the data is uploaded once, before the runs, and the
 * fits read it from the device buffer (as torch's Lloyd loop in bench/peers_kmeans.py does), so
 * that a whole fit over its iterations is also a fair figure. Peers: scikit-learn
 * and torch in bench/peers_kmeans.py, run beside it (bench/RESULTS.md).
 * Usage: bench_kmeans [seed|big|wide|N:D:K] [REPS] [LO] [HI] [buffer]; CLSTATS_DEVICE picks the
 * device, CLSTATS_TUNE the tuning (bench_context.h), BENCH_XGEMM CLBlast's Xgemm parameters
 * (override_xgemm below). */
#include "bench_context.h"

#include <clblast_c.h>

#include <math.h>
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

/* k blobs of unit normal scatter about centres uniform in [-10, 10)^d, from a 64-bit LCG. */
static float *blobs(size_t n, size_t d, size_t k)
{
    float *x = malloc(n * d * sizeof *x), *c = malloc(k * d * sizeof *c);
    uint64_t s = 42;
#define NEXT() (s = s * 6364136223846793005ull + 1442695040888963407ull, ((s >> 11) + 0.5) / 9007199254740992.0)
    for (size_t e = 0; e < k * d; e++)
        c[e] = (float)(20 * NEXT() - 10);
    for (size_t p = 0; p < n; p++) {
        const size_t b = (size_t)(NEXT() * k) % k;
        for (size_t j = 0; j < d; j++) {
            const double u1 = NEXT(), u2 = NEXT();
            x[p * d + j] = c[b * d + j] + (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
        }
    }
#undef NEXT
    free(c);
    return x;
}

/* BENCH_XGEMM: 16 values of CLBlast's Xgemm parameters (GEMMK KREG KWG KWI MDIMA MDIMC MWG
 * NDIMB NDIMC NWG SA SB STRM STRN VWM VWN) to try in place of its database's for the device (a
 * benchmark's experiment: the library sets none). */
static int override_xgemm(clstats_ctx *ctx)
{
    const char *text = getenv("BENCH_XGEMM");
    if (!text || !*text) return 0;
    static const char *names[16] = {"GEMMK", "KREG", "KWG", "KWI", "MDIMA", "MDIMC", "MWG", "NDIMB",
                                    "NDIMC", "NWG",  "SA",  "SB",  "STRM",  "STRN",  "VWM", "VWN"};
    size_t values[16];
    const char *at = text;
    for (int i = 0; i < 16; i++) {
        char *end;
        values[i] = strtoul(at, &end, 10);
        if (end == at) {
            fprintf(stderr, "BENCH_XGEMM: 16 numbers\n");
            return 1;
        }
        at = end;
    }
    const CLBlastStatusCode st = CLBlastOverrideParameters(
        clstats_ctx_cl_device(ctx), "Xgemm", CLBlastPrecisionSingle, 16, names, values);
    printf("Xgemm parameters overridden: %s (status %d)\n", text, (int)st);
    return st != CLBlastSuccess;
}

static int fit(clstats_ctx *ctx, const float *x, cl_mem xbuf, size_t n, size_t d, size_t k,
               int iters, double *seconds, int *n_iter, double *inertia, double *kernel_ms)
{
    float *c = malloc(k * d * sizeof *c);
    struct clstats_array xa = {.host = xbuf ? NULL : (void *)x,
                               .buffer = xbuf,
                               .dtype = CLSTATS_FLOAT32,
                               .nx = d,
                               .ny = n},
                         ia = {.host = (void *)x, .dtype = CLSTATS_FLOAT32, .nx = d, .ny = k},
                         ca = {.host = c, .dtype = CLSTATS_FLOAT32, .nx = d, .ny = k};
    struct clstats_kmeans_options o;
    clstats_kmeans_options_init(&o);
    o.init = CLSTATS_KMEANS_GIVEN;
    o.init_centers = &ia;
    o.max_iter = iters;
    o.tol = 0.0;
    o.n_iter = n_iter;
    o.inertia = inertia;
    o.kernel_ms = kernel_ms;
    const double t0 = now();
    const int st = clstats_kmeans(ctx, &xa, k, &o, &ca, NULL);
    *seconds = now() - t0;
    free(c);
    if (st != CLSTATS_OK) fprintf(stderr, "%s\n", clstats_ctx_message(ctx));
    return st;
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "seed";
    const int reps = argc > 2 ? atoi(argv[2]) : 3;
    size_t n = 100000, d = 2, k = 5;
    int lo = argc > 3 ? atoi(argv[3]) : 2, hi = argc > 4 ? atoi(argv[4]) : 12;
    const int whole = strcmp(which, "seed") == 0;
    if (strcmp(which, "big") == 0)
        n = 10000000, d = 3, k = 16;
    else if (strcmp(which, "wide") == 0)
        n = 1000000, d = 256, k = 1024;
    else if (!whole && sscanf(which, "%zu:%zu:%zu", &n, &d, &k) != 3) {
        fprintf(stderr, "usage: bench_kmeans [seed|big|wide|N:D:K] [REPS] [LO] [HI]\n");
        return 2;
    }
    clstats_ctx *ctx = bench_context(getenv("CLSTATS_DEVICE"));
    if (!ctx || override_xgemm(ctx)) return 1;
    float *x = blobs(n, d, k);
    cl_mem xbuf = NULL;
    if (argc > 5 && strcmp(argv[5], "buffer") == 0) {
        cl_int err;
        xbuf = clCreateBuffer(clstats_ctx_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              n * d * sizeof *x, x, &err);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "clCreateBuffer: %d\n", err);
            return 1;
        }
    }
    printf("device: %s\nn %zu d %zu k %zu%s\n", clstats_ctx_device_name(ctx), n, d, k,
           xbuf ? ", data in a device buffer" : "");
    for (int r = 0; r <= reps; r++) {
        double t_lo = 0, t_hi, in_lo = 0, in_hi, k_lo = 0, k_hi;
        int it_lo = 0, it_hi;
        if ((!whole && fit(ctx, x, xbuf, n, d, k, lo, &t_lo, &it_lo, &in_lo, &k_lo)) ||
            fit(ctx, x, xbuf, n, d, k, whole ? 300 : hi, &t_hi, &it_hi, &in_hi, &k_hi))
            return 1;
        if (whole)
            printf("%s: %.1f ms for %d iterations (kernels %.1f ms), inertia %.17g\n",
                   r ? "run" : "warm-up (kernel builds)", 1e3 * t_hi, it_hi, k_hi, in_hi);
        else
            printf("%s: %.2f ms per iteration, kernels %.2f (%d its %.1f ms, %d its %.1f ms: "
                   "%.2f ms an iteration in all) inertia %.17g\n",
                   r ? "run" : "warm-up (kernel builds)", 1e3 * (t_hi - t_lo) / (it_hi - it_lo),
                   (k_hi - k_lo) / (it_hi - it_lo), it_lo, 1e3 * t_lo, it_hi, 1e3 * t_hi,
                   1e3 * t_hi / it_hi, in_hi);
    }
    free(x);
    if (xbuf) clReleaseMemObject(xbuf);
    clstats_ctx_destroy(ctx);
    return 0;
}
