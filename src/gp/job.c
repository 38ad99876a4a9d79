/* job.c - a Gaussian-process design checked, uploaded and its program built: what every GP call
 * starts from, and the model's defaults. */
#include "gp_internal.h"

#include <math.h>
#include <stdio.h>

void clstats_gp_model_init(struct clstats_gp_model *model)
{
    model->corr = CLSTATS_GP_POWER_EXPONENTIAL;
    model->power = 1.95;
    model->nugget = NAN;
    model->nug_thres = 20;
}

void clstats__gp_theta(const double *beta, size_t d, double *theta)
{
    for (size_t k = 0; k < d; k++) theta[k] = pow(10.0, beta[k]);
}

static int check_values(clstats_ctx *ctx, const double *v, size_t count, const char *what)
{
    for (size_t i = 0; i < count; i++)
        if (!isfinite(v[i]))
            return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: %s[%zu] is %g, not finite", what, i,
                                 v[i]);
    return CLSTATS_OK;
}

int clstats__gp_open(clstats_ctx *ctx, const struct clstats_gp_model *model, const double *x,
                     const double *y, size_t n, size_t d, struct gp_job *job)
{
    *job = (struct gp_job){.ctx = ctx, .x = x, .y = y, .n = n, .d = d};
    if (!model || !x || !y) return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: NULL argument");
    job->model = *model;
    if (n < 2) return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: n = %zu, a fit needs 2 rows", n);
    if (d == 0) return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: d = 0, the design has no column");
    if (d > 64) return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: d = %zu, more than 64 columns", d);
    if (n > UINT32_MAX / 2 || n > (size_t)1 << 20)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: n = %zu is too large", n);
    const struct clstats_gp_model *m = model;
    if (m->corr == CLSTATS_GP_POWER_EXPONENTIAL && !(m->power > 0 && m->power <= 2))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: power %g is not in (0, 2]", m->power);
    if (m->corr != CLSTATS_GP_POWER_EXPONENTIAL && m->corr != CLSTATS_GP_MATERN32 &&
        m->corr != CLSTATS_GP_MATERN52)
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: unknown correlation %d", (int)m->corr);
    if (!isnan(m->nugget) && !(m->nugget >= 0 && isfinite(m->nugget)))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: nugget %g is not >= 0", m->nugget);
    if (isnan(m->nugget) && !(m->nug_thres > 0 && m->nug_thres < 700))
        return clstats__fail(ctx, CLSTATS_ERR_ARG, "gp: nug_thres %g is not in (0, 700)",
                             m->nug_thres);
    int status = check_values(ctx, x, n * d, "x");
    if (status == CLSTATS_OK) status = check_values(ctx, y, n, "y");
    if (status != CLSTATS_OK) return status;
    bool constant = true;
    for (size_t i = 1; i < n && constant; i++) constant = y[i] == y[0];
    if (constant)
        return clstats__fail(ctx, CLSTATS_ERR_ARG,
                             "gp: y is constant (%g): its deviance is -inf", y[0]);
    if (!ctx->has_fp64)
        return clstats__fail(ctx, CLSTATS_ERR_UNSUPPORTED,
                             "gp: the device has no float64, which the likelihoods need");
    char options[128];
    snprintf(options, sizeof options, "-D CORR=%d -D POWER=%.17g -D D=%zu", (int)m->corr,
             m->corr == CLSTATS_GP_POWER_EXPONENTIAL ? m->power : 1.0, d);
    status = clstats__program(ctx, "gp.cl", options, &job->prog);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, x, n * d * sizeof *x, "gp x", &job->xbuf);
    if (status == CLSTATS_OK) status = clstats__upload(ctx, y, n * sizeof *y, "gp y", &job->ybuf);
    return status;
}

void clstats__gp_close(struct gp_job *job)
{
    if (job->xbuf) clReleaseMemObject(job->xbuf);
    if (job->ybuf) clReleaseMemObject(job->ybuf);
    if (job->table) clReleaseMemObject(job->table);
    job->xbuf = job->ybuf = job->table = NULL;
}
