/* select_columns.cl - exact median of every tile of a float32 image, one work-group per tile:
 * a radix select on order-preserving keys with the histograms in local memory, so a tile
 * needs no host round trip and no global scratch. A matrix's columns are its tiles of one
 * pixel by all the rows (or, transposed, of all the columns by one row).
 *
 * A tile of at most LOCAL_ROWS values is read from global memory once, into local memory,
 * and the later passes read it there; that read also finds the tile's key range, so the
 * digits start below the prefix all its keys share. On GPUs the host may first transpose a
 * matrix (kernel transpose) so that a column's values are contiguous rather than a row apart.
 *
 * Build options: -D WG=work-group size, -D RADIX_BITS=digit width (histograms of 2^RADIX_BITS
 * bins, two of them: an even count wants ranks r0 and r0 + 1, which may part ways),
 * -D LOCAL_ROWS=values of a tile kept in local memory (0: none; `rows` below is a tile's
 * number of values, a column's rows).
 */
#pragma OPENCL FP_CONTRACT OFF

#ifndef WG
#define WG 256
#endif
#ifndef RADIX_BITS
#define RADIX_BITS 8
#endif

#ifndef LOCAL_ROWS
#define LOCAL_ROWS 0
#endif

#define NB (1 << RADIX_BITS)

#define LR_WG WG
#define LR_BITS RADIX_BITS
#include "local_radix.cl"
#include "../common/float_keys.cl"

/* Digits: the keys' low `top` bits, RADIX_BITS at a time from the top; the bits above are a
 * prefix every key of the column shares. Pass p's digit is bits [shift, top - p RADIX_BITS). */
inline int pass_shift(int top, int p)
{
    return max(top - (p + 1) * RADIX_BITS, 0);
}

inline uint pass_dmask(int top, int p)
{
    return (1u << (top - p * RADIX_BITS - pass_shift(top, p))) - 1u;
}

inline uint pass_hmask(int top, int p)
{
    const int above = top - p * RADIX_BITS;
    return above >= 32 ? 0u : ~((1u << above) - 1u);
}

/* Bits left to resolve in keys from kmin to kmax (kmin <= kmax): those above are the prefix
 * they all share, which *prefix receives. */
inline int bits_below_shared_prefix(uint kmin, uint kmax, uint *prefix)
{
    const int top = kmin == kmax ? 0 : 32 - (int)clz(kmin ^ kmax);
    *prefix = top == 32 ? 0u : kmin & ~((1u << top) - 1u);
    return top;
}

/* t[c rows + r] = m[off + r ld + c]: the columns made contiguous, through a 32 x 32 tile in
 * local memory so that both the reads and the writes are whole memory transactions. */
__kernel __attribute__((reqd_work_group_size(32, 8, 1))) void
transpose(__global const uint *m, ulong off, uint rows, uint cols, ulong ld, __global uint *t)
{
    __local uint tile[32][33]; /* 33: a tile column's words fall in different banks */
    const uint c0 = get_group_id(0) * 32, r0 = get_group_id(1) * 32;
    const uint lx = get_local_id(0), ly = get_local_id(1);
    for (uint j = ly; j < 32; j += 8) {
        const uint r = r0 + j, c = c0 + lx;
        if (r < rows && c < cols) tile[j][lx] = m[off + (ulong)r * ld + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = ly; j < 32; j += 8) {
        const uint c = c0 + j, r = r0 + lx;
        if (r < rows && c < cols) t[(ulong)c * rows + r] = tile[lx][j];
    }
}

/* Tiles of tw x th pixels of an nx x ny image (pixel (x, y) at m[off + y stride + x]) from
 * (0, 0), the last in each direction cut short by the edge; work-group g takes tile
 * (g % ntx, g / ntx), ntx = ceil(nx / tw). out[3 g .. 3 g + 2] = key of rank (nv - 1) / 2,
 * key of rank nv / 2, NaN count of the tile's pixels; nv == 0 gives keys 0. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
tile_select(__global const uint *m, ulong off, uint nx, uint ny, ulong stride, uint tw, uint th,
            __global uint *out)
{
    const int lid = get_local_id(0);
    const ulong g = get_group_id(0);
    const uint ntx = (nx + tw - 1) / tw, tx = (uint)(g % ntx), ty = (uint)(g / ntx);
    const uint run = min(tw, nx - tx * tw), rows = run * min(th, ny - ty * th);
    /* Pixel r of the tile, row-major within it, is p[AT(r)]: a division only where the tile
     * has several rows of several pixels. */
#define AT(r)                                                                                  \
    (run == 1      ? (ulong)(r) * stride                                                       \
     : rows == run ? (ulong)(r)                                                                \
                   : (ulong)((r) / run) * stride + (r) % run)
    __local uint lh[2 * NB];
    __local uint csum[2 * LR_NCHUNK];
    __local uint found[8];
    __local uint lnan, lmin, lmax;
    __global const uint *p = m + off + (ulong)ty * th * stride + (ulong)tx * tw;
#if LOCAL_ROWS > 0
    __local uint staged[LOCAL_ROWS];
    const bool stage = rows <= LOCAL_ROWS;
#define STAGED stage
#else
#define STAGED false
#endif
    uint pa = 0, pb = 0, ra = 0, rb = 0, nv = 0;
    int top = 32; /* bits to resolve; those above are shared by every key */
    if (lid == 0) {
        lnan = 0;
        lmin = 0xffffffffu;
        lmax = 0;
    }
#if LOCAL_ROWS > 0
    /* Staged: one read of the column, with its NaN count and key range, so that the digits
     * start below the prefix that all its keys share. Clustered values (a sky tile, [0, 1))
     * then spread over the first digit's bins instead of piling into one, whose local atomics
     * would serialise. */
    if (stage) {
        uint nan = 0, kmin = 0xffffffffu, kmax = 0;
        LR_BARRIER(CLK_LOCAL_MEM_FENCE);
        for (uint r = lid; r < rows; r += WG) {
            const uint b = p[AT(r)];
            const uint k = bits_nan(b) ? NO_KEY : key_of_bits(b);
            staged[r] = k;
            if (k == NO_KEY) {
                nan++;
            } else {
                kmin = min(kmin, k);
                kmax = max(kmax, k);
            }
        }
#if WG == 1
        lnan = nan, lmin = kmin, lmax = kmax;
#else
        if (nan) atomic_add(&lnan, nan);
        atomic_min(&lmin, kmin);
        atomic_max(&lmax, kmax);
#endif
        LR_BARRIER(CLK_LOCAL_MEM_FENCE);
        nv = rows - lnan;
        if (nv > 0) {
            top = bits_below_shared_prefix(lmin, lmax, &pa);
            pb = pa;
            ra = (nv - 1) / 2;
            rb = nv / 2;
        } else {
            top = 0;
        }
    }
#endif
    for (int pass = 0; pass * RADIX_BITS < top; pass++) {
        for (int b = lid; b < 2 * NB; b += WG) lh[b] = 0;
        LR_BARRIER(CLK_LOCAL_MEM_FENCE);
        const uint hmask = pass_hmask(top, pass), dmask = pass_dmask(top, pass);
        const int shift = pass_shift(top, pass);
        uint nan = 0;
        for (uint r = lid; r < rows; r += WG) {
            uint k;
#if LOCAL_ROWS > 0
            if (stage) {
                k = staged[r];
                if (k == NO_KEY) continue;
            } else
#endif
            {
                const uint b = p[AT(r)];
                k = bits_nan(b) ? NO_KEY : key_of_bits(b);
                if (k == NO_KEY) {
                    nan++;
                    continue;
                }
            }
            const uint h = k & hmask;
            if (h == pa) LR_INC(lh[(k >> shift) & dmask]);
            else if (h == pb) LR_INC(lh[NB + ((k >> shift) & dmask)]);
        }
        if (pass == 0 && !STAGED) { /* the unstaged first pass counts the NaNs */
            if (nan) atomic_add(&lnan, nan);
            LR_BARRIER(CLK_LOCAL_MEM_FENCE);
            nv = rows - lnan;
            if (nv == 0) break;
            ra = (nv - 1) / 2;
            rb = nv / 2;
        }
        if (nv == 0) break;
        uint da, db;
        find_bins(lh, pa != pb, &ra, &rb, &da, &db, csum, found, lid, WG);
        pa |= da << shift;
        pb |= db << shift;
    }
    if (lid == 0) {
        out[3 * g] = nv ? pa : 0u;
        out[3 * g + 1] = nv ? pb : 0u;
        out[3 * g + 2] = lnan;
    }
}
