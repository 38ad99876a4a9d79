/* pass_mma.cl - pass_gram_rows (pass.cl, which says what the rows are and how x's rows are
 * split among work-groups) on NVIDIA's tensor cores, float32 only: src/varsel/engine_device.c
 * builds it only for NVIDIA devices of compute capability 8 or more, and takes pass_gram_rows
 * where its build fails. Inline PTX mma.sync on pieces of 11 significant bits: each value v is
 * split as v = hi + lo, hi = v rounded to 11 bits, lo = v - hi rounded to 11 bits, and a b
 * summed as a_lo b_hi + a_hi b_lo + a_hi b_hi (what is dropped, a_lo b_lo and lo's own rounding,
 * is ~2^-22 of a b; small terms first), each product exact in the float32 accumulators. The
 * pieces go to the tensor cores as TF32 (m16n8k8, k-steps of 8) or, with MM_F16, as half
 * precision (m16n8k16: twice the products an instruction at the same rate), scaled by 2^MM_S
 * so that the pieces of the values of a standardised X (|v| <= 1) stay normal halves (the
 * values must stay under 2^(16 - MM_S) in magnitude), the sums scaled back at the end.
 * The tensor cores' float32 sums truncate (round toward zero): chained over all k-steps they
 * pulled sums of like-signed terms toward zero, to 8 times pass_gram_rows's error in test_pass
 * (RESULTS "issue 24l"); so each k-step's three products start from zero and are added to the
 * accumulators by ordinary (rounded to nearest) adds, as pass_gram_rows's FMAs round. The
 * values (the engine's X) are finite, as the pieces' rounding assumes.
 *
 * A work-group of MM_WARPS warps makes a 64 x 32 MM_WARPS tile of the rows (rows q, columns i of
 * x), each warp 64 x 32 of it: 4 x 4 mma tiles of 16 x 8, 64 accumulators a work-item. Their
 * products run over x's rows MM_K at a time (a slice of k-steps). xnew's 64 x MM_K slice goes
 * through local memory, split and laid out as the A fragments (one 16-byte load of hi and one of
 * lo a tile and k-step), twice over, one barrier a slice; x's values go from global memory
 * straight into the work-item that takes them as B fragments (each is used by one warp only),
 * the next slice's loaded into the registers the current one's leave as it is split. The B
 * fragment's column n (lane / 4 of 8) of mma tile j is x's column 4 n + j of the warp's 32, so
 * that a work-item's four tiles take four adjacent columns, one 16-byte load. Every sum runs over
 * the same k-steps in the same order whatever its column, so equal columns make equal rows. */
#ifndef MM_WARPS
#define MM_WARPS 4
#endif
#ifndef MM_K
#define MM_K 32
#endif
#ifndef MM_F16
#define MM_F16 0
#endif
#define MM_NT (32 * MM_WARPS)        /* work-items */
#define MM_BM 64                     /* rows q a work-group */
#define MM_BN (32 * MM_WARPS)        /* columns i a work-group */
#define MM_AL (MM_BM * MM_K / MM_NT) /* xnew's values a work-item loads a slice */
#if MM_F16
#define MM_KK 16 /* k a k-step */
#define MM_S 10
#else
#define MM_KK 8
#endif
#define MM_KS (MM_K / MM_KK) /* k-steps a slice */
/* a slice's A fragments (16 bytes each): k-steps x row tiles x (hi, lo) x lanes */
#define MM_SIDE (MM_KS * 4 * 2 * 32)

/* v rounded to 11 significant bits (TF32's, and half precision's), to nearest, ties away from
 * zero (cvt.rna.tf32.f32's rounding, without needing that instruction), on finite values. */
inline float piece(float v)
{
    return as_float((as_uint(v) + 0x1000u) & 0xffffe000u);
}

/* The A fragments of a slice in local memory: for k-step s and row tile a, 32 lanes' hi (16
 * bytes a lane, one load), then their lo. Value e of the slice's 64 x MM_K (e < 64 MM_K) is row
 * a_row(e), column (x's row) a_col(e), at element a_at(e) of the hi; e's order makes a warp's
 * stores adjacent and its loads a few rows' runs. The A fragment's register r of lane 4 g + c
 * holds row g + 8 (r % 2) and, in TF32, k = c + 4 (r / 2); in half precision, k = 2 c + 8 (r /
 * 2) in its low half and k + 1 in its high half. */
#if MM_F16
/* e's bits: 0 the half, 1 row + 8, 2 k + 8, 3-4 c, 5-7 row % 8, 8-9 the row tile, then the
 * k-step: bits 0-7 are the half within the tile's 256 (a half index) */
inline uint a_row(uint e)
{
    return 16 * ((e >> 8) & 3) + 8 * ((e >> 1) & 1) + ((e >> 5) & 7);
}

inline uint a_col(uint e)
{
    return 16 * (e >> 10) + 8 * ((e >> 2) & 1) + 2 * ((e >> 3) & 3) + (e & 1);
}

inline uint a_at(uint e)
{
    return (e >> 8) * 512 + (e & 255);
}
#else
/* e's bits: 0 row + 8, 1 k + 4, 2-3 k % 4 (c), 4-6 row % 8, 7-8 the row tile, then the k-step:
 * bits 0-6 are the word within the tile's 128 */
inline uint a_row(uint e)
{
    return 16 * ((e >> 7) & 3) + 8 * (e & 1) + ((e >> 4) & 7);
}

inline uint a_col(uint e)
{
    return 8 * (e >> 9) + 4 * ((e >> 1) & 1) + ((e >> 2) & 3);
}

inline uint a_at(uint e)
{
    return (e >> 7) * 256 + (e & 127);
}
#endif

/* d += a b for one 16 x 8 tile over one k-step: a the A fragment, b0 b1 the B fragment. */
#if MM_F16
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#else
#define MMA_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
#endif
#define MMA(d, a, b0, b1)                                                                          \
    asm(MMA_OP "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"              \
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                          \
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1), "f"(d[0]), "f"(d[1]),         \
          "f"(d[2]), "f"(d[3]))

/* A B fragment register from its values (pieces): TF32's one, or the halves of two (k, k + 1). */
#if MM_F16
inline uint b_reg(float k0, float k1)
{
    uint r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(k1), "f"(k0));
    return r;
}
#endif

/* x's columns i .. i + 3 of row t (zeros past p, and for t past the split's end tb). */
inline float4 x_four(__global const float *x, uint t, uint tb, uint i, uint p, bool whole)
{
    if (t >= tb) return (float4)(0);
    __global const float *at = x + (ulong)t * p + i;
    if (whole) return *(__global const float4 *)at;
    float4 v = (float4)(0);
    if (i < p) v.x = at[0];
    if (i + 1 < p) v.y = at[1];
    if (i + 2 < p) v.z = at[2];
    if (i + 3 < p) v.w = at[3];
    return v;
}

/* B's rows of k-step s a work-item holds, at offsets from the slice's first: TF32 c and c + 4;
 * half precision 2 c, 2 c + 1, 2 c + 8, 2 c + 9. */
#if MM_F16
#define MM_BR 4
#define B_ROW(s, c, h) (16 * (s) + 2 * (c) + ((h) & 1) + 8 * ((h) >> 1))
#else
#define MM_BR 2
#define B_ROW(s, c, h) (8 * (s) + (c) + 4 * (h))
#endif

__kernel __attribute__((reqd_work_group_size(MM_NT, 1, 1))) void
pass_gram_rows_mma(__global const float *x, uint n, uint p, __global const float *xnew, uint m,
                   __global float *g, ulong g0, uint span, __global float *part, ulong stride,
                   __local uint4 *frag)
{
    const uint l = get_local_id(0), lane = l % 32, warp = l / 32, gq = lane / 4, c = lane % 4;
    const uint q0 = get_group_id(1) * MM_BM, z = get_group_id(2);
    const uint ib = get_group_id(0) * MM_BN + warp * 32; /* the warp's columns */
    const uint ta = z * span, tb = min(n, ta + span);    /* this split's rows of x */
    /* 16-byte loads and stores where every row starts on 16 bytes */
    const bool aligned = p % 4 == 0 && g0 % 4 == 0 && stride % 4 == 0;
    const bool whole = aligned && ib + 4 * gq + 3 < p;
#if MM_F16
    __local half *fa = (__local half *)frag;
    const float scale = 0x1p10f, unscale = 0x1p-20f; /* 2^MM_S, 2^-2 MM_S */
#else
    __local uint *fa = (__local uint *)frag;
    const float scale = 1, unscale = 1;
#endif
    float acc[4][4][4]; /* [row tile][column tile][fragment register] */
#pragma unroll
    for (uint a = 0; a < 4; a++)
#pragma unroll
        for (uint j = 0; j < 4; j++)
#pragma unroll
            for (uint r = 0; r < 4; r++) acc[a][j][r] = 0;
    /* The slice ahead: xnew's values e = l + MM_NT r, and x's rows B_ROW(s, c, h) of it
     * (bx[s][h]), columns ib + 4 gq .. + 3. */
    float ax[MM_AL];
    float4 bx[MM_KS][MM_BR];
#pragma unroll
    for (uint r = 0; r < MM_AL; r++) {
        const uint e = l + MM_NT * r, q = q0 + a_row(e), t = ta + a_col(e);
        ax[r] = q < m && t < tb ? xnew[(ulong)q * n + t] : 0;
    }
#pragma unroll
    for (uint s = 0; s < MM_KS; s++)
#pragma unroll
        for (uint h = 0; h < MM_BR; h++)
            bx[s][h] = x_four(x, ta + B_ROW(s, c, h), tb, ib + 4 * gq, p, whole);
    for (uint t0 = ta, side = 0; t0 < tb; t0 += MM_K, side ^= 1) {
        /* xnew's slice t0 into this side as A fragments, split; its last readers (slice
         * t0 - 2 MM_K) have all passed the last barrier. */
#pragma unroll
        for (uint r = 0; r < MM_AL; r++) {
            const uint e = l + MM_NT * r;
            const float v = ax[r] * scale, hi = piece(v), lo = piece(v - hi);
#if MM_F16
            const uint at = side * 8 * MM_SIDE + a_at(e);
            vstore_half_rte(hi, at, fa);
            vstore_half_rte(lo, at + 256, fa);
#else
            const uint at = side * 4 * MM_SIDE + a_at(e);
            fa[at] = as_uint(hi);
            fa[at + 128] = as_uint(lo);
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint t1 = t0 + MM_K;
        const bool more = t1 < tb;
        if (more) {
#pragma unroll
            for (uint r = 0; r < MM_AL; r++) {
                const uint e = l + MM_NT * r, q = q0 + a_row(e), t = t1 + a_col(e);
                ax[r] = q < m && t < tb ? xnew[(ulong)q * n + t] : 0;
            }
        }
#pragma unroll
        for (uint s = 0; s < MM_KS; s++) {
            /* column tile j's B fragment, hi and lo; then this k-step's registers take the
             * next slice's */
            uint bh[4][2], bl[4][2];
            float vh[4][MM_BR], vl[4][MM_BR];
#pragma unroll
            for (uint h = 0; h < MM_BR; h++) {
                const float v[4] = {bx[s][h].x, bx[s][h].y, bx[s][h].z, bx[s][h].w};
#pragma unroll
                for (uint j = 0; j < 4; j++) {
                    vh[j][h] = piece(v[j] * scale);
                    vl[j][h] = piece(v[j] * scale - vh[j][h]);
                }
                if (more) bx[s][h] = x_four(x, t1 + B_ROW(s, c, h), tb, ib + 4 * gq, p, whole);
            }
#pragma unroll
            for (uint j = 0; j < 4; j++)
#pragma unroll
                for (uint h = 0; h < 2; h++) {
#if MM_F16
                    bh[j][h] = b_reg(vh[j][2 * h], vh[j][2 * h + 1]);
                    bl[j][h] = b_reg(vl[j][2 * h], vl[j][2 * h + 1]);
#else
                    bh[j][h] = as_uint(vh[j][h]);
                    bl[j][h] = as_uint(vl[j][h]);
#endif
                }
            __local const uint4 *fs = frag + (side * MM_KS + s) * 4 * 2 * 32 + lane;
            /* a row tile's four column tiles a product at a time */
#pragma unroll
            for (uint a = 0; a < 4; a++) {
                const uint4 ah = fs[a * 64], al = fs[a * 64 + 32];
                float d[4][4];
#pragma unroll
                for (uint j = 0; j < 4; j++)
#pragma unroll
                    for (uint r = 0; r < 4; r++) d[j][r] = 0;
#pragma unroll
                for (uint j = 0; j < 4; j++) MMA(d[j], al, bh[j][0], bh[j][1]);
#pragma unroll
                for (uint j = 0; j < 4; j++) MMA(d[j], ah, bl[j][0], bl[j][1]);
#pragma unroll
                for (uint j = 0; j < 4; j++) MMA(d[j], ah, bh[j][0], bh[j][1]);
#pragma unroll
                for (uint j = 0; j < 4; j++)
#pragma unroll
                    for (uint r = 0; r < 4; r++) acc[a][j][r] += d[j][r];
            }
        }
    }
    /* Accumulator r of tiles (a, j): row 16 a + gq + 8 (r / 2), column 2 c + r % 2 of the tile,
     * x's column 4 (2 c + r % 2) + j of the warp's: a work-item's eight adjacent columns
     * ib + 8 c .. + 7 of each of its rows. */
    __global float *out = z ? part + (z - 1) * stride : g + g0;
    const uint i = ib + 8 * c;
#pragma unroll
    for (uint a = 0; a < 4; a++)
#pragma unroll
        for (uint h = 0; h < 2; h++) {
            const uint q = q0 + 16 * a + gq + 8 * h;
            if (q >= m) continue;
            float v[8];
#pragma unroll
            for (uint j = 0; j < 4; j++) {
                v[j] = acc[a][j][2 * h] * unscale;
                v[4 + j] = acc[a][j][2 * h + 1] * unscale;
            }
            __global float *row = out + (ulong)q * p + i;
            if (aligned && i + 7 < p) {
                *(__global float4 *)row = (float4)(v[0], v[1], v[2], v[3]);
                *(__global float4 *)(row + 4) = (float4)(v[4], v[5], v[6], v[7]);
            } else {
#pragma unroll
                for (uint b = 0; b < 8; b++)
                    if (i + b < p) row[b] = v[b];
            }
        }
}
