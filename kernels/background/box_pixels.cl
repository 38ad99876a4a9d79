/* box_pixels.cl - how the mesh kernels (box_stats.cl, clipped_stats.cl) read an image's pixels;
 * pulled in with #include. Build options: IN_DOUBLE (float64 input), HAS_MASK. */
#ifndef BOX_PIXELS_CL
#define BOX_PIXELS_CL

#ifndef IN_DOUBLE
#define IN_DOUBLE 0
#endif
#ifndef HAS_MASK
#define HAS_MASK 0
#endif

#if IN_DOUBLE
typedef double in_t;
#else
typedef float in_t;
#endif

/* Whether pixel m (row-major, packed) is masked out; without a mask none is. */
static bool missing(__global const uchar *mask, long m)
{
#if HAS_MASK
    return mask[m] != 0;
#else
    (void)mask;
    (void)m;
    return false;
#endif
}

#endif
