/* kmeans_scan.cl - the label counts' scan into offsets and the sums' layout (pulled in with
 * #include after kmeans_common.cl): by scan_clusters and scan_runs (kmeans_lloyd.cl), and by the
 * last group of assign_tiled, which makes the whole scan in its launch where one group does
 * (kmeans_assign.cl: a launch an iteration fewer). */

/* By every item of a group, once start[j + 1] holds the rows labelled j: start[j] = rows with a
 * label below j (start[K] all); seg0[j] = segments of 256 members before cluster j's, and for
 * each later level of the sums (levels in all) the same count of its segments of 256 rows of
 * the level below: every level's layout follows from the counts alone, a cluster's segments at
 * each level from its count, so all levels are one scan over the clusters, `items` clusters at
 * a time in local memory (sc: 5 x WG ints). */
inline void layout(__global int *start, __global int *seg0, __global int *seg1,
                   __global int *seg2, __global int *seg3, int levels, __local int *sc)
{
    const int i = get_local_id(0), items = get_local_size(0);
#ifdef SERIAL_HALVE
    /* CPU devices: item 0 walks the clusters alone (each barrier is a pass over the items). */
    if (i == 0) {
        start[0] = 0;
        seg0[0] = 0;
        for (int j = 0; j < K; j++) {
            const int count = start[j + 1];
            start[j + 1] = start[j] + count;
            seg0[j + 1] = seg0[j] + (count + WG - 1) / WG;
        }
        __global int *segs[4] = {seg0, seg1, seg2, seg3};
        for (int level = 1; level < levels; level++) {
            __global const int *below = segs[level - 1];
            __global int *next = segs[level];
            next[0] = 0;
            for (int j = 0; j < K; j++)
                next[j + 1] = next[j] + (below[j + 1] - below[j] + WG - 1) / WG;
        }
    }
#else
    __global int *out[5] = {start, seg0, seg1, seg2, seg3};
    int carry[5] = {0, 0, 0, 0, 0};
    for (int l = 0; i == 0 && l <= levels; l++)
        out[l][0] = 0;
    for (int j0 = 0; j0 < K; j0 += items) {
        const int j = j0 + i;
        int v = j < K ? start[j + 1] : 0;
        for (int l = 0; l <= levels; l++) {
            sc[l * WG + i] = v;
            v = (v + WG - 1) / WG;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = 1; s < items; s <<= 1) {
            int t[5];
            for (int l = 0; l <= levels; l++)
                t[l] = i >= s ? sc[l * WG + i - s] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int l = 0; l <= levels; l++)
                sc[l * WG + i] += t[l];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        for (int l = 0; l <= levels; l++) {
            if (j < K) out[l][j + 1] = carry[l] + sc[l * WG + i];
            carry[l] += sc[l * WG + items - 1];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
}

/* The scans of scan_clusters for few clusters (src/cluster/lloyd.c), with every item busy: a
 * group's items split each cluster's column of in[rows][K] into `parts` runs, so that an item walks a run of
 * its rows, not all of them. Group g takes rows [g * per_group, ...): prefix[r][j] = the column's
 * sum over the group's rows before r; then either totals[g][j] = the group's sums (several
 * groups: counts to the chunks' totals), or, for a group that takes every row (`whole`),
 * start[j + 1] = the column's sum and the layout, as scan_clusters. With in = the blocks' counts
 * and one group, chunk_offset must hold zeros (the scatter adds it). `in` is read through a
 * volatile pointer: assign_tiled's last group reads the counts the other groups wrote in the
 * same launch (kmeans_assign.cl), past any cached copy. Group g of the launch, `stop` (the
 * state's stop word) doing nothing. */
inline void scan_runs_group(volatile __global const int *in, int rows, int per_group,
                            __global int *prefix, __global int *totals, int whole,
                            __global int *start, __global int *seg0, __global int *seg1,
                            __global int *seg2, __global int *seg3, int levels, int stop, int g,
                            __local int *run)
{
    __local int *sc = run + WG; /* run: 6 x WG ints, the runs then layout's 5 x WG */
    const int i = get_local_id(0), items = get_local_size(0);
    const int parts = max(1, items / K), width = items / parts; /* clusters a pass */
    const int r0 = g * per_group, r1 = min(rows, r0 + per_group);
    const int len = (r1 - r0 + parts - 1) / parts;
    for (int j0 = 0; !stop && j0 < K; j0 += width) {
        const int jj = i / parts, part = i % parts, j = j0 + jj;
        const int active = jj < width && j < K;
        const int first = r0 + part * len, last = min(r1, first + len);
        int sum = 0;
        for (int r = first; active && r < last; r++)
            sum += in[(size_t)r * K + j];
        run[i] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        int before = 0;
        for (int q = jj * parts; active && q < i; q++)
            before += run[q];
        for (int r = first; active && r < last; r++) {
            prefix[(size_t)r * K + j] = before;
            before += in[(size_t)r * K + j];
        }
        if (active && part == parts - 1) {
            if (whole) start[j + 1] = before;
            else totals[(size_t)g * K + j] = before;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (whole && !stop) layout(start, seg0, seg1, seg2, seg3, levels, sc);
}

