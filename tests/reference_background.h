/* reference_background.h - a plain, sequential reference of the mesh background (one box after
 * another, one pixel after another), the judge of kernels/background/ and src/background/. */
#ifndef REFERENCE_BACKGROUND_H
#define REFERENCE_BACKGROUND_H

#include <stddef.h>
#include <stdint.h>

/* The maps (width x height float32 each) and global values of a float32 image (rows `stride`
 * apart) with SExtractor's steps as include/clstats/background.h states them; a box's sums made
 * in the order of `group` work-items a box (a power of two; 1 is plain order, SEP's). */
void reference_background(const float *img, size_t width, size_t height, size_t stride,
                          const uint8_t *mask, size_t bw, size_t bh, size_t fw, size_t fh,
                          double fthresh, double clip, int estimator, size_t group, float *back,
                          float *rms, float *global_back, float *global_rms);

/* The mesh steps from measured boxes (bad ones -1e30; bk and sg nx x ny, filtered in place): bad
 * boxes filled, the median filter (SEP's windows, or with `photutils` photutils' windows and
 * threshold rule), the globals. */
void reference_mesh_filter(float *bk, float *sg, size_t nx, size_t ny, size_t fw, size_t fh,
                           double fthresh, int photutils, float *global_back, float *global_rms);

/* The same with SEP's windows, then the maps by SEP's splines. */
void reference_mesh_maps(float *bk, float *sg, size_t nx, size_t ny, size_t bw, size_t bh,
                         size_t width, size_t height, size_t fw, size_t fh, double fthresh,
                         float *back, float *rms, float *global_back, float *global_rms);

#endif
