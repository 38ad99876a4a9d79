/* box_stats.cl - one work-group per mesh box: SExtractor's background and RMS of the box
 * (include/clstats/background.h says the steps). The arithmetic is SEP's, operation for
 * operation: sums in double, cuts and histogram scale rounded to float, the bin of a pixel from
 * float arithmetic, the histogram clipping in double; so no FMA contraction, and float divisions
 * go through double, which rounds them exactly as an IEEE float division (a quotient of floats
 * rounded to double then to float is the correctly rounded float quotient). Sums are reduced in
 * a fixed tree, so every device gives the same bits.
 *
 * Build options: WG (work-group size, a power of two), IN_DOUBLE (float64 input), HAS_MASK. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#ifndef WG
#define WG 64
#endif

#define MAX_LEVELS 4096 /* SExtractor's QUANTIF_NMAXLEVELS */
#define BAD_BOX (-1e30f)

#include "box_pixels.cl"

/* The box's pixels of this work-item: those whose row-major index in the box is lid modulo
 * WG, in increasing order (a plain row by row walk with one work-item a box), as rows byi and
 * columns bxi of the box. */
#define BOX_PIXELS(byi, bxi)                                                                      \
    for (int byi = 0; byi < h; byi++)                                                             \
        for (int bxi = ((lid - byi * w % WG) % WG + WG) % WG; bxi < w; bxi += WG)

static float fdiv(float a, float b)
{
    return (float)((double)a / (double)b);
}

/* Sums of the group's work-items in a fixed order; every work-item gets the totals. */
static void reduce3(__local double *s, __local double *s2, __local long *c, double *a, double *a2,
                    long *n)
{
    const int lid = get_local_id(0);
    s[lid] = *a;
    s2[lid] = *a2;
    c[lid] = *n;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (lid < step) {
            s[lid] += s[lid + step];
            s2[lid] += s2[lid + step];
            c[lid] += c[lid + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *a = s[0];
    *a2 = s2[0];
    *n = c[0];
    barrier(CLK_LOCAL_MEM_FENCE);
}

static int hist_at(__local const int *h, int i, int nlevels)
{
    return i >= 0 && i < nlevels ? h[i] : 0;
}

/* SExtractor's histogram clipping (backguess): the median found by walking in from both ends,
 * the mean and sd of the bins within median +- clip sd, repeated until the sd settles. Counts
 * and moments are integers; SEP sums the moments in double, bin by bin, which is exact (so in
 * any order) while they stay below 2^53: for boxes of fewer than 2^29 pixels (n * 4095^2 <
 * 2^53) they are summed here as integers, in a loop the compiler vectorises, and give SEP's
 * doubles; bigger boxes take SEP's loop. SEP's walk (the lower end takes the next bin while its
 * count is below the upper end's, else the upper end does) is a merge of the two ends' running
 * counts, so the lower end takes exactly the bins j, in order, with 2 below(j) + h[j] < total;
 * that scan stops where the walk's ends meet, with the walk's counts and positions. */
static void histogram_guess(__local const int *histo, int nlevels, float bmean, float bsigma,
                            float qzero, float qscale, double clip, int estimator, bool exact_sums,
                            float *back_out, float *sigma_out)
{
    const int top = nlevels - 1;
    int lcut = 0, hcut = top;
    double sig = 10.0 * top, sig1 = 1.0, mea = bmean, med = bmean;
    for (int n = 100; n-- && sig >= 0.1 && fabs(sig / sig1 - 1.0) > 1e-4;) {
        sig1 = sig;
        ulong sum = 0;
        if (exact_sums) {
            ulong m1 = 0, m2 = 0;
            for (int i = lcut; i <= hcut; i++) {
                const ulong pix = (uint)histo[i], ui = (uint)i;
                sum += pix;
                m1 += pix * ui;
                m2 += pix * ui * ui;
            }
            mea = (double)m1;
            sig = (double)m2;
        } else {
            mea = sig = 0.0;
            for (int i = lcut; i <= hcut; i++) {
                const int pix = histo[i];
                sum += pix;
                const double dpix = (double)pix * i;
                mea += dpix;
                sig += dpix * i;
            }
        }
        ulong lowsum = 0, highsum = 0;
        int lo = lcut, hi = hcut;
        if (hcut >= lcut) {
            ulong below = 0;
            int j = lcut;
            while (j <= hcut && 2 * below + (uint)histo[j] < sum)
                below += (uint)histo[j++];
            lo = j, hi = j - 1, lowsum = below, highsum = sum - below;
        }
        if (hi >= 0) {
            const int a = hist_at(histo, lo, nlevels), b = hist_at(histo, hi, nlevels);
            med = hi + 0.5 + ((double)highsum - (double)lowsum) / (2.0 * (a > b ? a : b));
        } else {
            med = 0.0;
        }
        if (sum) {
            mea /= (double)sum;
            sig = sig / sum - mea * mea;
        }
        sig = sig > 0.0 ? sqrt(sig) : 0.0;
        double t = med - clip * sig;
        lcut = t > 0.0 ? (int)(t + 0.5) : 0;
        t = med + clip * sig;
        hcut = t < top ? (int)(t > 0.0 ? t + 0.5 : t - 0.5) : top;
    }
    double back;
    if (estimator == 2 || !(fabs(sig) > 0.0))
        back = qzero + mea * qscale;
    else if (estimator == 1 || !(fabs((mea - med) / sig) < 0.3))
        back = qzero + med * qscale;
    else
        back = qzero + (2.5 * med - 1.5 * mea) * qscale;
    (void)bsigma;
    *back_out = (float)back;
    *sigma_out = (float)(sig * qscale);
}

/* Box (group 0, group 1) of a width x height image at img + offset, rows `stride` apart.
 * step is SExtractor's levels per pixel, sqrt(2/pi) 5/4; clip its histogram clipping; estimator
 * 0 SExtractor's mode, 1 median, 2 mean. out: every box's background, then every box's RMS.
 * The local arrays (s, s2 and c WG each, histo MAX_LEVELS) are arguments, not arrays declared
 * in the kernel: PoCL 3.1's pthread device (Debian 12) lets the work-groups that its threads run
 * at once share this kernel's kernel-scope local arrays (pocl/pocl#1218 shows the same on the
 * CTS's local_kernel_scope test), so boxes came out wrong now and then with several work-items
 * a box; local memory set by clSetKernelArg is each work-group's own on every runtime. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
box_stats(__global const in_t *img, ulong offset, ulong stride, int width, int height, int bw,
          int bh, __global const uchar *mask, double step, double clip, int estimator,
          __global float *out, __local double *s, __local double *s2, __local long *c,
          __local int *histo)
{
    const int bx = get_group_id(0), by = get_group_id(1), lid = get_local_id(0);
    const int nbx = get_num_groups(0);
    const int x0 = bx * bw, y0 = by * bh;
    const int w = min(bw, width - x0), h = min(bh, height - y0);
    const int box = by * nbx + bx;
    /* backgrounds first, then RMS values */
    __global float *back = out, *sigma = out + nbx * get_num_groups(1);

    /* 1. mean and sd of the valid pixels */
    double a = 0.0, a2 = 0.0;
    long cnt = 0;
    BOX_PIXELS(byi, bxi) {
        const int y = y0 + byi, x = x0 + bxi;
        const long m = (long)y * width + x;
        const double pix = (float)img[offset + (ulong)y * stride + (ulong)x];
        if (!missing(mask, m) && pix > -1e30) {
            a += pix;
            a2 += pix * pix;
            cnt++;
        }
    }
    reduce3(s, s2, c, &a, &a2, &cnt);
    /* A bad box goes on through every step, so that every barrier is met by the whole group
     * with no return before it; its numbers are discarded at the end. */
    const bool bad = (float)cnt < (float)(w * h * 0.5);
    double mean = a / (double)cnt, sd, v = a2 / cnt - mean * mean;
    sd = v > 0.0 ? sqrt(v) : 0.0;
    const float lcut = (float)(mean - 2.0 * sd), hcut = (float)(mean + 2.0 * sd);

    /* 2. the same within the 2-sd cuts */
    a = a2 = 0.0;
    cnt = 0;
    BOX_PIXELS(byi, bxi) {
        const int y = y0 + byi, x = x0 + bxi;
        const long m = (long)y * width + x;
        const float pix = (float)img[offset + (ulong)y * stride + (ulong)x];
        if (!missing(mask, m) && pix <= hcut && pix >= lcut) {
            a += (double)pix;
            a2 += (double)pix * pix;
            cnt++;
        }
    }
    reduce3(s, s2, c, &a, &a2, &cnt);
    mean = a / (double)cnt;
    v = a2 / cnt - mean * mean;
    sd = v > 0.0 ? sqrt(v) : 0.0;
    const float bmean = (float)mean, bsigma = (float)sd;
    int nlevels = (int)(step * cnt + 1);
    if (nlevels > MAX_LEVELS) nlevels = MAX_LEVELS;
    const float qscale = sd > 0.0 ? (float)(2 * 5 * sd / nlevels) : 1.0f;
    const float qzero = (float)(mean - 5 * sd);
    const float cste = (float)(0.499999 - (double)fdiv(qzero, qscale));

    /* 3. the histogram; the bin is SEP's (int)(pix / qscale + cste), kept when in range */
    for (int i = lid; i < nlevels; i += WG)
        histo[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    BOX_PIXELS(byi, bxi) {
        const int y = y0 + byi, x = x0 + bxi;
        const long m = (long)y * width + x;
        const float pix = (float)img[offset + (ulong)y * stride + (ulong)x];
        const float t = fdiv(pix, qscale) + cste;
        if (!missing(mask, m) && t > -1.0f && t < (float)nlevels) {
#if WG == 1
            histo[(int)t]++; /* one work-item a box (CPU devices): no atomic needed */
#else
            atomic_inc(&histo[(int)t]);
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 4. the clipping on the histogram */
    if (lid == 0 && bad) {
        back[box] = sigma[box] = BAD_BOX;
    } else if (lid == 0) {
        float b, sg;
        histogram_guess(histo, nlevels, bmean, bsigma, qzero, qscale, clip, estimator,
                        (long)w * h < (1L << 29), &b, &sg);
        back[box] = b;
        sigma[box] = sg;
    }
}
