/* float_keys.cl - float helpers every filter kernel shares; pulled in with #include, which
 * tools/embed_kernels.py expands when the kernels are embedded. */
#ifndef FLOAT_KEYS_CL
#define FLOAT_KEYS_CL

#define CANONICAL_NAN 0x7fc00000u

/* Order-preserving map of float bits to uint: total order, -0 just below +0, NaNs on top. */
inline uint key_of(float v)
{
    uint u = as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

inline float value_of(uint k)
{
    return as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

/* Bit test, so that no compiler option can turn it into "never NaN". */
inline bool is_nan(float v)
{
    return (as_uint(v) & 0x7fffffffu) > 0x7f800000u;
}

/* |v - m| for the MAD; exactly 0 where v == m, so that inf - inf never makes a NaN. */
inline float deviation(float v, float m)
{
    return v == m ? 0.0f : fabs(v - m);
}

#endif
