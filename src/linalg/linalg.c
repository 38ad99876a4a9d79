/* linalg.c - the public linear-algebra calls (include/clstats/linalg.h): each checks its arrays
 * (device buffers of one dtype, shapes that agree) and runs one routine of src/linalg/blas.c or
 * src/linalg/cholesky.c between clstats__begin and clstats__end. */
#include "linalg_internal.h"

#include <math.h>
#include <stdlib.h>

/* Rows and columns of op(a). */
#define ROWS(a, t) ((t) ? (a)->nx : (a)->ny)
#define COLS(a, t) ((t) ? (a)->ny : (a)->nx)

static struct clstats__mat mat(const struct clstats_array *a)
{
    return (struct clstats__mat){a->buffer, a->offset, clstats__array_stride(a)};
}

/* Every array in a device buffer, checked, with the dtype of the first; *f64 that dtype. */
static int check(clstats_ctx *ctx, const struct clstats_array *const *arrays, int n,
                 const char *const *names, bool *f64)
{
    if (!ctx) return clstats__fail(NULL, CLSTATS_ERR_ARG, "context is NULL");
    for (int i = 0; i < n; i++) {
        const struct clstats_array *a = arrays[i];
        if (!a) return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s is NULL", names[i]);
        if (!a->buffer)
            return clstats__fail(ctx, CLSTATS_ERR_ARG,
                                 "%s is in host memory: linalg works on device buffers", names[i]);
        if (a->dtype != arrays[0]->dtype)
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s and %s differ in dtype", names[0],
                                 names[i]);
        int status = clstats__array_check(ctx, a, names[i], NULL);
        if (status != CLSTATS_OK) return status;
    }
    *f64 = arrays[0]->dtype == CLSTATS_FLOAT64;
    if (*f64 && !ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED, "the device has no float64");
    return CLSTATS_OK;
}

static int shapes(clstats_ctx *ctx, const char *what, size_t want_r, size_t want_c, size_t r,
                  size_t c)
{
    if (want_r == r && want_c == c) return CLSTATS_OK;
    return clstats__fail(ctx, CLSTATS_ERR_ARG, "%s is %zu x %zu where %zu x %zu is needed", what,
                         r, c, want_r, want_c);
}

int clstats_gemm(clstats_ctx *ctx, enum clstats_op op_a, enum clstats_op op_b, double alpha,
                 const struct clstats_array *a, const struct clstats_array *b, double beta,
                 const struct clstats_array *c)
{
    return clstats_gemm_batched(ctx, op_a, op_b, alpha, a, 0, b, 0, beta, c, 0, 1);
}

int clstats_gemm_batched(clstats_ctx *ctx, enum clstats_op op_a, enum clstats_op op_b,
                         double alpha, const struct clstats_array *a, size_t a_step,
                         const struct clstats_array *b, size_t b_step, double beta,
                         const struct clstats_array *c, size_t c_step, size_t count)
{
    bool f64;
    const struct clstats_array *arr[] = {a, b, c};
    int status = check(ctx, arr, 3, (const char *const[]){"A", "B", "C"}, &f64);
    if (status != CLSTATS_OK) return status;
    const bool ta = op_a == CLSTATS_OP_T, tb = op_b == CLSTATS_OP_T;
    const size_t m = ROWS(a, ta), k = COLS(a, ta), n = COLS(b, tb);
    if ((status = shapes(ctx, "op(B)", k, n, ROWS(b, tb), n)) ||
        (status = shapes(ctx, "C", m, n, c->ny, c->nx)))
        return status;
    if (count == 0) return clstats__fail(ctx, CLSTATS_ERR_ARG, "no matrices (count 0)");
    /* The last matrix of each operand must lie in its buffer too. */
    const struct clstats_array *ops[] = {a, b, c};
    const size_t steps[] = {a_step, b_step, c_step};
    for (int i = 0; i < 3 && count > 1; i++) {
        if (steps[i] && count - 1 > (SIZE_MAX - ops[i]->offset) / steps[i])
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "batch steps overflow");
        struct clstats_array last = *ops[i];
        last.offset += (count - 1) * steps[i];
        if ((status = clstats__array_check(ctx, &last, "the batch's last matrix", NULL)))
            return status;
    }
    size_t *offs = malloc(3 * count * sizeof *offs);
    if (!offs) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "batched GEMM offsets");
    for (size_t i = 0; i < count; i++) {
        offs[i] = i * a_step;
        offs[count + i] = i * b_step;
        offs[2 * count + i] = i * c_step;
    }
    clstats__begin(ctx);
    if (count == 1)
        status = clstats__gemm(ctx, f64, ta, tb, m, n, k, alpha, mat(a), mat(b), beta, mat(c));
    else
        status = clstats__gemm_batched(ctx, f64, ta, tb, m, n, k, alpha, mat(a), offs, mat(b),
                                       offs + count, beta, mat(c), offs + 2 * count, count);
    free(offs);
    return clstats__end(ctx, status);
}

int clstats_syrk(clstats_ctx *ctx, enum clstats_op op_a, double alpha,
                 const struct clstats_array *a, double beta, const struct clstats_array *c)
{
    bool f64;
    const struct clstats_array *arr[] = {a, c};
    int status = check(ctx, arr, 2, (const char *const[]){"A", "C"}, &f64);
    if (status != CLSTATS_OK) return status;
    const bool ta = op_a == CLSTATS_OP_T;
    const size_t n = ROWS(a, ta), k = COLS(a, ta);
    if ((status = shapes(ctx, "C", n, n, c->ny, c->nx))) return status;
    clstats__begin(ctx);
    status = clstats__syrk(ctx, f64, ta, n, k, alpha, mat(a), beta, mat(c));
    return clstats__end(ctx, status);
}

int clstats_trsm(clstats_ctx *ctx, int right, enum clstats_op op_l, double alpha,
                 const struct clstats_array *l, const struct clstats_array *b)
{
    bool f64;
    const struct clstats_array *arr[] = {l, b};
    int status = check(ctx, arr, 2, (const char *const[]){"L", "B"}, &f64);
    if (status != CLSTATS_OK) return status;
    const size_t side = right ? b->nx : b->ny;
    if ((status = shapes(ctx, "L", side, side, l->ny, l->nx))) return status;
    clstats__begin(ctx);
    status = clstats__trsm(ctx, f64, right != 0, op_l == CLSTATS_OP_T, b->ny, b->nx, alpha,
                           mat(l), mat(b));
    return clstats__end(ctx, status);
}

int clstats_gemv(clstats_ctx *ctx, enum clstats_op op_a, double alpha,
                 const struct clstats_array *a, const struct clstats_array *x, double beta,
                 const struct clstats_array *y)
{
    bool f64;
    const struct clstats_array *arr[] = {a, x, y};
    int status = check(ctx, arr, 3, (const char *const[]){"A", "x", "y"}, &f64);
    if (status != CLSTATS_OK) return status;
    const bool ta = op_a == CLSTATS_OP_T;
    if ((status = shapes(ctx, "x", 1, COLS(a, ta), x->ny, x->nx)) ||
        (status = shapes(ctx, "y", 1, ROWS(a, ta), y->ny, y->nx)))
        return status;
    clstats__begin(ctx);
    status = clstats__gemv(ctx, f64, ta, a->ny, a->nx, alpha, mat(a), x->buffer, x->offset, beta,
                           y->buffer, y->offset);
    return clstats__end(ctx, status);
}

int clstats_cholesky(clstats_ctx *ctx, const struct clstats_array *a, double *logdet,
                     size_t *bad_row)
{
    bool f64;
    int status = check(ctx, &a, 1, (const char *const[]){"A"}, &f64);
    if (status != CLSTATS_OK) return status;
    if ((status = shapes(ctx, "A", a->ny, a->ny, a->ny, a->nx))) return status;
    if (a->nx > UINT32_MAX) return clstats__fail(ctx, CLSTATS_ERR_ARG, "A is too large");
    clstats__begin(ctx);
    int bad = 0;
    double ld = NAN;
    status = clstats__potrf(ctx, f64, mat(a), a->nx, 0, &bad, &ld);
    status = clstats__end(ctx, status);
    if (logdet) *logdet = ld;
    if (bad_row) *bad_row = bad ? (size_t)bad - 1 : 0;
    if (status == CLSTATS_OK && bad)
        status = clstats__fail(ctx, CLSTATS_ERR_SINGULAR,
                               "not positive definite: pivot of row %d is not positive", bad - 1);
    return status;
}

int clstats_cholesky_batched(clstats_ctx *ctx, const struct clstats_array *a, size_t count,
                             int32_t *info, double *logdet)
{
    bool f64;
    int status = check(ctx, &a, 1, (const char *const[]){"A"}, &f64);
    if (status != CLSTATS_OK) return status;
    if (!info) return clstats__fail(ctx, CLSTATS_ERR_ARG, "info is NULL");
    if (count == 0 || a->ny % count || a->ny / count != a->nx || count > UINT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "%zu x %zu is not %zu square matrices stacked", a->ny, a->nx, count);
    const size_t es = f64 ? 8 : 4;
    cl_mem info_buf, ld_buf;
    void *ld_host = malloc(count * es);
    if (!ld_host) return clstats__fail(ctx, CLSTATS_ERR_NOMEM, "logdet");
    clstats__begin(ctx);
    status = clstats__scratch(ctx, "linalg.info", count * sizeof(cl_int), &info_buf);
    if (status == CLSTATS_OK)
        status = clstats__scratch(ctx, "linalg.logdets", count * es, &ld_buf);
    const size_t p = a->nx;
    if (status == CLSTATS_OK)
        status = clstats__potrf_batched(ctx, f64, mat(a), p * clstats__array_stride(a), p, count,
                                        info_buf, ld_buf);
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, info_buf, CL_FALSE, 0,
                                                       count * sizeof(cl_int), info, 0, NULL,
                                                       NULL),
                                   "clEnqueueReadBuffer(info)");
    if (status == CLSTATS_OK)
        status = clstats__cl_check(ctx,
                                   clEnqueueReadBuffer(ctx->queue, ld_buf, CL_TRUE, 0, count * es,
                                                       ld_host, 0, NULL, NULL),
                                   "clEnqueueReadBuffer(logdet)");
    status = clstats__end(ctx, status);
    if (status == CLSTATS_OK && logdet)
        for (size_t i = 0; i < count; i++)
            logdet[i] = f64 ? ((double *)ld_host)[i] : (double)((float *)ld_host)[i];
    free(ld_host);
    return status;
}

int clstats_cholesky_solve(clstats_ctx *ctx, const struct clstats_array *l,
                           const struct clstats_array *b)
{
    bool f64;
    const struct clstats_array *arr[] = {l, b};
    int status = check(ctx, arr, 2, (const char *const[]){"L", "B"}, &f64);
    if (status != CLSTATS_OK) return status;
    if ((status = shapes(ctx, "L", b->ny, b->ny, l->ny, l->nx))) return status;
    clstats__begin(ctx);
    /* L Y = B, then L^T X = Y. */
    status = clstats__trsm(ctx, f64, false, false, b->ny, b->nx, 1.0, mat(l), mat(b));
    if (status == CLSTATS_OK)
        status = clstats__trsm(ctx, f64, false, true, b->ny, b->nx, 1.0, mat(l), mat(b));
    return clstats__end(ctx, status);
}

int clstats_cholesky_solve_batched(clstats_ctx *ctx, const struct clstats_array *l,
                                   const struct clstats_array *b, size_t count)
{
    bool f64;
    const struct clstats_array *arr[] = {l, b};
    int status = check(ctx, arr, 2, (const char *const[]){"L", "B"}, &f64);
    if (status != CLSTATS_OK) return status;
    if (count == 0 || l->ny % count || l->ny / count != l->nx || b->ny != l->ny ||
        count > UINT32_MAX)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "L (%zu x %zu) and B (%zu x %zu) are not %zu stacked systems", l->ny,
                             l->nx, b->ny, b->nx, count);
    const size_t p = l->nx;
    clstats__begin(ctx);
    status = clstats__potrs_batched(ctx, f64, mat(l), p * clstats__array_stride(l), p, mat(b),
                                    p * clstats__array_stride(b), b->nx, count);
    return clstats__end(ctx, status);
}
