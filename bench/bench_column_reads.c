/* bench_column_reads.c - how fast one wave of work-groups reads a row-major float matrix when
 * each group takes a strip of adjacent columns, as the streamed column-median kernel does
 * (kernels/column_registers.cl), and what moves that: loads in flight, vector loads, group
 * size, strip width, groups splitting the rows, NVIDIA's L2 fetch-size hint and prefetches,
 * and the kernel's own counting work (a benchmark, not a test; GPUs only).
 *
 *   bench_column_reads [ROWSxCOLS]   (default 10000x1000)
 * Prints, for each variant, the median profiling-event time of 30 launches (µs) three ways:
 * after a host sync with the matrix out of L2 (a 40 MB fill in between), after that fill
 * without a sync, and launched again at once (the matrix mostly in L2). Variants with inline
 * PTX build only on NVIDIA; elsewhere they say so. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each group reads COLS adjacent columns (ROWSPLIT groups share them, a part of the rows each):
 * work-item lid takes VEC of them (q = lid % (COLS / VEC)) in rows lane, lane + ROW_LANES, ...,
 * STREAM loads in flight. The sum only keeps the loads from being dropped. */
static const char *kernel_source =
    "#define QPR (COLS / VEC)\n"
    "#define ROW_LANES (WG / QPR)\n"
    "#if HINT == 1\n"
    "#define LOAD(p, x) asm(\"ld.global.L2::128B.u32 %0, [%1];\" : \"=r\"(x) : \"l\"(p))\n"
    "#elif HINT == 2\n"
    "#define LOAD(p, x) asm(\"ld.global.L2::256B.u32 %0, [%1];\" : \"=r\"(x) : \"l\"(p))\n"
    "#else\n"
    "#define LOAD(p, x) x = *(p)\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void\n"
    "reads(__global const uint *m, uint rows, uint ld, __global uint *res)\n"
    "{\n"
    "    const uint lid = get_local_id(0), q = lid % QPR, lane = lid / QPR;\n"
    "    const uint set = get_group_id(0) / ROWSPLIT, part = get_group_id(0) % ROWSPLIT;\n"
    "    const uint c = set * COLS + q * VEC;\n"
    "    const uint begin = (uint)((ulong)rows * part / ROWSPLIT);\n"
    "    const uint end = (uint)((ulong)rows * (part + 1) / ROWSPLIT);\n"
    "    uint acc = 0;\n"
    "#if WORK /* the streamed kernel's per-key work: a count below, bins and a list inside */\n"
    "    __local uint hist[COLS][128], listed[COLS], list[COLS][1024];\n"
    "    for (uint i = lid; i < COLS * 128; i += WG) hist[i / 128][i % 128] = 0;\n"
    "    if (lid < COLS) listed[lid] = 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    const uint lo = 0xf8000000u, hi = lo + (1u << 27) - 1;\n"
    "#endif\n"
    "#if PREFETCH /* every row of the strip asked into L2 first, then a stall */\n"
    "    for (uint r = begin + lane; q == 0 && r < end; r += ROW_LANES)\n"
    "        asm volatile(\"prefetch.global.L2 [%0];\" ::\"l\"(m + (ulong)r * ld + c));\n"
    "#endif\n"
    "    uint z = lid;\n"
    "    for (int i = 0; i < SPIN; i++) z = z * 1664525u + 1013904223u;\n"
    "    acc += z;\n"
    "    for (uint r0 = begin + lane; !EMPTY && r0 < end; r0 += STREAM * ROW_LANES) {\n"
    "#if VEC == 1\n"
    "        uint v[STREAM];\n"
    "        for (int u = 0; u < STREAM; u++) {\n"
    "            const uint r = r0 + u * ROW_LANES;\n"
    "            v[u] = 0;\n"
    "            if (r < end) LOAD(m + (ulong)r * ld + c, v[u]);\n"
    "        }\n"
    "        for (int u = 0; u < STREAM; u++) {\n"
    "#if WORK\n"
    "            const uint x = v[u] ^ 0x80000000u;\n"
    "            if (x < lo) acc++;\n"
    "            else if (x <= hi) {\n"
    "                atomic_inc(&hist[q][(x - lo) >> 20]);\n"
    "                const uint at = atomic_inc(&listed[q]);\n"
    "                if (at < 1024) list[q][at] = x;\n"
    "            }\n"
    "#else\n"
    "            acc += v[u] * (v[u] >> 7);\n"
    "#endif\n"
    "        }\n"
    "#else\n"
    "        for (int u = 0; u < STREAM; u++) { /* one vector load a row */\n"
    "            const uint r = r0 + u * ROW_LANES;\n"
    "            if (r >= end) continue;\n"
    "#if VEC == 4\n"
    "            const uint4 v = *(__global const uint4 *)(m + (ulong)r * ld + c);\n"
    "            acc += v.x * v.y + v.z * v.w;\n"
    "#else\n"
    "            const uint8 v = *(__global const uint8 *)(m + (ulong)r * ld + c);\n"
    "            acc += v.s0 * v.s1 + v.s2 * v.s3 + v.s4 * v.s5 + v.s6 * v.s7;\n"
    "#endif\n"
    "        }\n"
    "#endif\n"
    "    }\n"
    "#if WORK\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    acc += hist[q][lane % 128] + listed[q] + list[q][lane % 1024];\n"
    "#endif\n"
    "    if (acc == 0x12345678u) res[get_global_id(0)] = acc;\n"
    "}\n";

/* Variants: -D settings past the defaults (EMPTY 0, VEC 1, WORK 0, HINT 0, PREFETCH 0, SPIN 0,
 * ROWSPLIT 1). */
static const char *variants[] = {
    "EMPTY=1 WG=1024 COLS=8 STREAM=8",
    "WG=1024 COLS=8 STREAM=8",
    "WG=1024 COLS=8 STREAM=16",
    "WG=1024 COLS=8 STREAM=4",
    "WG=1024 COLS=8 STREAM=2 VEC=4",
    "WG=1024 COLS=8 STREAM=1 VEC=8",
    "WG=512 COLS=8 STREAM=8",
    "WG=256 COLS=8 STREAM=8",
    "WG=1024 COLS=16 STREAM=8",
    "WG=1024 COLS=32 STREAM=8",
    "WG=1024 COLS=4 STREAM=8",
    "WG=1024 COLS=8 STREAM=8 WORK=1",
    "WG=1024 COLS=8 STREAM=8 HINT=1",
    "WG=1024 COLS=8 STREAM=8 HINT=2",
    "WG=1024 COLS=32 STREAM=8 ROWSPLIT=4",
    "WG=1024 COLS=16 STREAM=8 ROWSPLIT=2",
    "WG=1024 COLS=8 STREAM=8 SPIN=3000",
    "WG=1024 COLS=8 STREAM=8 SPIN=3000 PREFETCH=1",
};

static const char *defaults = "-D EMPTY=0 -D VEC=1 -D WORK=0 -D HINT=0 -D PREFETCH=0 -D SPIN=0 "
                              "-D ROWSPLIT=1";

static unsigned setting(const char *variant, const char *name, unsigned fallback)
{
    const char *at = strstr(variant, name);
    unsigned v = fallback;
    if (at) sscanf(at + strlen(name), "=%u", &v);
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median µs of 30 launches; mode 0 after a fill and a sync, 1 after a fill, 2 back to back. */
static double time_launches(cl_command_queue q, cl_kernel k, size_t global, size_t local,
                            cl_mem junk, size_t junk_bytes, int mode)
{
    double t[30];
    for (int r = 0; r < 30; r++) {
        const cl_uint zero = 0;
        if (mode < 2) clEnqueueFillBuffer(q, junk, &zero, 4, 0, junk_bytes, 0, NULL, NULL);
        if (mode == 0) clFinish(q);
        cl_event e;
        clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &e);
        clFinish(q);
        cl_ulong a = 0, b = 0;
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        t[r] = (double)(b - a) / 1e3;
        clReleaseEvent(e);
    }
    qsort(t, 30, sizeof t[0], cmp_double);
    return t[15];
}

int main(int argc, char **argv)
{
    unsigned rows = 10000, cols = 1000;
    if (argc > 1 && sscanf(argv[1], "%ux%u", &rows, &cols) != 2) {
        fprintf(stderr, "usage: bench_column_reads [ROWSxCOLS]\n");
        return 2;
    }
    cl_platform_id platforms[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    clGetPlatformIDs(8, platforms, &np);
    for (cl_uint i = 0; i < np && !dev; i++)
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    if (!dev) {
        fprintf(stderr, "bench_column_reads: no GPU\n");
        return 1;
    }
    char name[256] = "";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    const size_t n = (size_t)rows * cols;
    cl_uint *host = malloc(n * sizeof *host);
    if (!host) return 1;
    for (size_t i = 0; i < n; i++)
        host[i] = (cl_uint)(i * 2654435761u);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, host, &err);
    cl_mem res = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)1 << 24, NULL, &err);
    cl_mem junk = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, NULL, &err);
    free(host);
    printf("# %s, %ux%u; µs: after a sync / after a fill / again at once\n", name, rows, cols);
    for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
        char options[512], copy[128];
        int len = snprintf(options, sizeof options, "%s", defaults);
        snprintf(copy, sizeof copy, "%s", variants[vi]);
        for (char *t = strtok(copy, " "); t; t = strtok(NULL, " "))
            len += snprintf(options + len, sizeof options - (size_t)len, " -D %s", t);
        cl_program p = clCreateProgramWithSource(ctx, 1, &kernel_source, NULL, &err);
        if (clBuildProgram(p, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
            printf("%-40s does not build here\n", variants[vi]);
            clReleaseProgram(p);
            continue;
        }
        cl_kernel k = clCreateKernel(p, "reads", &err);
        clSetKernelArg(k, 0, sizeof m, &m);
        clSetKernelArg(k, 1, sizeof rows, &rows);
        clSetKernelArg(k, 2, sizeof cols, &cols);
        clSetKernelArg(k, 3, sizeof res, &res);
        const unsigned wg = setting(variants[vi], "WG", 1024),
                       strip = setting(variants[vi], "COLS", 8),
                       split = setting(variants[vi], "ROWSPLIT", 1);
        const size_t groups = (cols + strip - 1) / strip * split;
        double us[3];
        for (int mode = 0; mode < 3; mode++)
            us[mode] = time_launches(q, k, groups * wg, wg, junk, n * 4, mode);
        printf("%-40s %4zu groups %7.1f %7.1f %7.1f\n", variants[vi], groups, us[0], us[1], us[2]);
        printf("RESULT device=\"%s\" op=column_reads variant=\"%s\" shape=%ux%u us=%.1f\n", name,
               variants[vi], rows, cols, us[0]);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    clReleaseMemObject(junk);
    clReleaseMemObject(res);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
