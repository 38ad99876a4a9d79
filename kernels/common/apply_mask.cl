/* apply_mask.cl - a packed copy of an array with its masked elements made NaN: how every module
 * takes a mask (uint8, non-zero = missing), so that each design leaves them out exactly as it
 * leaves out NaN. Elements are copied as bits (uint or ulong), so float64 needs no fp64 here. */

#define MASKED_COPY(name, T, NAN_BITS)                                                         \
    __kernel void name(__global const T *in, long in_offset, long in_stride,                  \
                       __global const uchar *mask, long mask_offset, long mask_stride, long nx,  \
                       __global T *out)                                                        \
    {                                                                                          \
        const long x = get_global_id(0), y = get_global_id(1);                                    \
        if (x >= nx) return;                                                                   \
        const T v = in[in_offset + y * in_stride + x];                                   \
        out[y * nx + x] = mask[mask_offset + y * mask_stride + x] ? NAN_BITS : v;  \
    }

MASKED_COPY(masked_copy_f32, uint, 0x7fc00000u)
MASKED_COPY(masked_copy_f64, ulong, 0x7ff8000000000000ul)
