/* maps.c - the maps derived from the median and MAD: SIGMA, the standard deviation a MAD
 * stands for under Gaussian noise, SNR, a pixel's departure from its window's median in
 * sigmas, and RESIDUAL, that departure in the image's units. Plain arithmetic on the host in the
 * data's precision (float32 or float64), so that any numpy reference repeats it bit for bit. */
#include "internal.h"

#include <math.h>

/* Whether the pointers a call needs are there: sigma needs mad and an output, snr also the
 * pixels and the median. */
static bool have_inputs(const void *pixels, const void *median, const void *mad,
                        const void *sigma_out, const void *snr_out)
{
    return mad && sigma_out && (!snr_out || (pixels && median));
}

static int inputs_missing(void)
{
    return clstats__fail(NULL, CLSTATS_ERR_ARG,
                         "sigma needs mad and an output; snr also needs the pixels and the median");
}

int clstats_sigma_snr(const float *pixels, const float *median, const float *mad, size_t n,
                      float *sigma_out, float *snr_out)
{
    if (!have_inputs(pixels, median, mad, sigma_out, snr_out)) return inputs_missing();
    const float k = (float)CLSTATS_MAD_TO_SIGMA;
    for (size_t i = 0; i < n; i++)
        sigma_out[i] = k * mad[i];
    /* sigma 0 means a flat window: any departure would be infinitely significant and none is
     * undefined, so the map says "no measure" (NaN) rather than inventing +-inf or 0. */
    for (size_t i = 0; snr_out && i < n; i++)
        snr_out[i] = sigma_out[i] == 0.0f ? NAN : (pixels[i] - median[i]) / sigma_out[i];
    return CLSTATS_OK;
}

int clstats_sigma_snr_f64(const double *pixels, const double *median, const double *mad, size_t n,
                          double *sigma_out, double *snr_out)
{
    if (!have_inputs(pixels, median, mad, sigma_out, snr_out)) return inputs_missing();
    for (size_t i = 0; i < n; i++)
        sigma_out[i] = CLSTATS_MAD_TO_SIGMA * mad[i];
    for (size_t i = 0; snr_out && i < n; i++)
        snr_out[i] = sigma_out[i] == 0.0 ? NAN : (pixels[i] - median[i]) / sigma_out[i];
    return CLSTATS_OK;
}

int clstats_residual(const float *pixels, const float *median, size_t n, float *residual_out)
{
    if (!pixels || !median || !residual_out)
        return clstats__fail(NULL, CLSTATS_ERR_ARG, "residual needs pixels, median and an output");
    for (size_t i = 0; i < n; i++)
        residual_out[i] = pixels[i] - median[i];
    return CLSTATS_OK;
}

int clstats_residual_f64(const double *pixels, const double *median, size_t n,
                         double *residual_out)
{
    if (!pixels || !median || !residual_out)
        return clstats__fail(NULL, CLSTATS_ERR_ARG, "residual needs pixels, median and an output");
    for (size_t i = 0; i < n; i++)
        residual_out[i] = pixels[i] - median[i];
    return CLSTATS_OK;
}
