/* float_keys.cl - float helpers the filter and column kernels share; pulled in with #include,
 * which tools/embed_kernels.py expands when the kernels are embedded. */
#ifndef FLOAT_KEYS_CL
#define FLOAT_KEYS_CL

#include "even_mean.h"

#define CANONICAL_NAN 0x7fc00000u
#define NO_KEY 0xffffffffu /* above every number's key: a NaN's, or none */

/* Order-preserving map of float bits to uint: total order, -0 just below +0, NaNs on top. */
inline uint key_of_bits(uint b)
{
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

inline uint key_of(float v)
{
    return key_of_bits(as_uint(v));
}

inline float value_of(uint k)
{
    return as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

/* Bit test, so that no compiler option can turn it into "never NaN". */
inline bool bits_nan(uint b)
{
    return (b & 0x7fffffffu) > 0x7f800000u;
}

inline bool is_nan(float v)
{
    return bits_nan(as_uint(v));
}

inline bool is_inf(float v)
{
    return (as_uint(v) & 0x7fffffffu) == 0x7f800000u;
}

/* The MAD is numpy's nanmedian(|x - m|): a deviation inf - inf is NaN, and so missing. The
 * designs select it only where the median m is finite, so no deviation of a valid value is
 * NaN there; this gives the others without a selection, for a window whose valid values all
 * equal m (all_equal) or whose median m is infinite. A finite constant window: 0. An infinite
 * m: its copies drop out and every other value lies +inf from it, so +inf, or NaN where
 * nothing is left. */
inline float mad_without_selection(float m, bool all_equal)
{
    if (!is_inf(m)) return 0.0f;
    return all_equal ? as_float(CANONICAL_NAN) : INFINITY;
}

/* A result as the filter stores it: one NaN on every device (hardware NaNs differ in sign and
 * payload), and +0 for a zero of either sign. Zeros are equal as numbers, but keys order -0
 * below +0, so the sign of a zero median would follow how many of each the window holds:
 * a rule the caller could not see, and not numpy's or scipy's (which differ from each other). */
inline float stored_result(float v)
{
    const uint b = as_uint(v);
    return bits_nan(b) ? as_float(CANONICAL_NAN) : as_float(b == 0x80000000u ? 0u : b);
}

/* |v - m| for the MAD, as IEEE computes it (m is finite: see mad_without_selection). */
inline float deviation(float v, float m)
{
    return fabs(v - m);
}

/* The same rules for float64 data, where the including kernel enabled fp64 (-D FP64). */
#ifdef FP64
#define CANONICAL_NAN_F64 0x7ff8000000000000ul

inline ulong key_of_f64(double v)
{
    const ulong b = as_ulong(v);
    return (b & 0x8000000000000000ul) ? ~b : (b | 0x8000000000000000ul);
}

inline double value_of_f64(ulong k)
{
    return as_double((k & 0x8000000000000000ul) ? (k & 0x7ffffffffffffffful) : ~k);
}

inline bool is_nan_f64(double v)
{
    return (as_ulong(v) & 0x7ffffffffffffffful) > 0x7ff0000000000000ul;
}

inline bool is_inf_f64(double v)
{
    return (as_ulong(v) & 0x7ffffffffffffffful) == 0x7ff0000000000000ul;
}

inline double mad_without_selection_f64(double m, bool all_equal)
{
    if (!is_inf_f64(m)) return 0.0;
    return all_equal ? as_double(CANONICAL_NAN_F64) : (double)INFINITY;
}

inline double stored_result_f64(double v)
{
    const ulong b = as_ulong(v);
    return is_nan_f64(v) ? as_double(CANONICAL_NAN_F64)
                         : as_double(b == 0x8000000000000000ul ? 0ul : b);
}

inline double deviation_f64(double v, double m)
{
    return fabs(v - m);
}
#endif

#endif
