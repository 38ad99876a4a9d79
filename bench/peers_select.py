#!/usr/bin/env python3
"""peers_select.py - peers of bench_select on the same data: numpy.median on the CPU, and
cupy.median, torch.median, torch.topk(n/2) and torch.median(dim=0) on the GPU when importable;
for tile medians numpy.median and torch.median over the tiles made an axis (reshape, transpose).
Prints "RESULT device=... op=... method=... n=... what=... ms=..." lines like bench_select, and
VALUE lines to check that both see the same data (splitmix64 uniforms, as bench_select's gen()).

Usage: peers_select.py [--log2n 20,25,28] [--reps N] [--dist uniform|normal]
                       [--columns ROWSxCOLS|none] [--tiles NXxNY/TWxTH,...|none] [--no-numpy]
"""
import argparse
import time

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def gen(n, normal, seed):
    """The float32 values of bench_select.c's gen(): element i from splitmix64 of 2i+1, 2i+2."""
    out = np.empty(n, dtype=np.float32)
    chunk = 1 << 22
    with np.errstate(over="ignore"):
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            idx = np.arange(2 * start, 2 * (start + m), dtype=np.uint64)
            s = np.uint64(seed) + (idx + np.uint64(1)) * GOLDEN
            s = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            s = (s ^ (s >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = s ^ (s >> np.uint64(31))
            u = (z[0::2] >> np.uint64(11)).astype(np.float64) * 2.0**-53
            v = (z[1::2] >> np.uint64(11)).astype(np.float64) * 2.0**-53
            if normal:
                out[start:start + m] = (np.sqrt(-2.0 * np.log(1.0 - u)) *
                                        np.cos(6.283185307179586 * v)).astype(np.float32)
            else:
                out[start:start + m] = u.astype(np.float32)
    return out


def result(device, op, method, n, what, ms):
    print(f"RESULT device={device} op={op} method={method} n={n} what={what} ms={ms:.5f}",
          flush=True)


def time_cpu(fn, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        v = fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts)), v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", default="20,25,28")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--dist", default="uniform")
    ap.add_argument("--columns", default="10000x1000")
    ap.add_argument("--tiles", default="none")
    ap.add_argument("--no-numpy", action="store_true")
    a = ap.parse_args()
    normal = a.dist == "normal"
    try:
        import torch
        has_torch = torch.cuda.is_available()
    except ImportError:
        has_torch = False
    try:
        import cupy
        has_cupy = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        has_cupy = False
    gpu = "gpu"
    if has_torch:
        gpu = torch.cuda.get_device_name(0).replace(" ", "_")

    def time_gpu(fn, reps):
        fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            v = fn()
            e1.record()
            torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1))
        return float(np.median(ts)), v

    for lg in [int(s) for s in a.log2n.split(",") if s]:
        n = 1 << lg
        x = gen(n, normal, 12345)
        if not a.no_numpy:
            ms, v = time_cpu(lambda: np.median(x), max(1, min(a.reps, 3 if lg >= 25 else a.reps)))
            result("cpu_numpy", "median", "numpy.median", n, "host", ms)
            print(f"VALUE n={n} method=numpy median={float(v):.9g}", flush=True)
        if has_torch:
            t = torch.from_numpy(x).cuda()
            ms, v = time_gpu(lambda: torch.median(t), a.reps)
            result(gpu, "median", "torch.median", n, "device", ms)
            print(f"VALUE n={n} method=torch.median median={float(v):.9g}", flush=True)
            ms, _ = time_gpu(lambda: torch.topk(t, n // 2, sorted=False), a.reps)
            result(gpu, "median", "torch.topk_n/2", n, "device", ms)
            ms, _ = time_gpu(lambda: torch.kthvalue(t, n // 2), a.reps)
            result(gpu, "median", "torch.kthvalue", n, "device", ms)
            del t
        if has_cupy:
            c = cupy.asarray(x)
            ms, v = time_gpu(lambda: cupy.median(c), a.reps)
            result(gpu, "median", "cupy.median", n, "device", ms)
            print(f"VALUE n={n} method=cupy.median median={float(v):.9g}", flush=True)
            del c
    if a.columns != "none":
        rows, cols = (int(s) for s in a.columns.split("x"))
        m = gen(rows * cols, normal, 777).reshape(rows, cols)
        if not a.no_numpy:
            ms, _ = time_cpu(lambda: np.median(m, axis=0), 3)
            result("cpu_numpy", "column_medians", "numpy.median_axis0", f"{rows}x{cols}",
                   "host", ms)
        if has_torch:
            t = torch.from_numpy(m).cuda()
            ms, _ = time_gpu(lambda: torch.median(t, dim=0), a.reps)
            result(gpu, "column_medians", "torch.median_dim0", f"{rows}x{cols}", "device", ms)
    for spec in [] if a.tiles == "none" else a.tiles.split(","):
        size, tile = spec.split("/")
        nx, ny = (int(s) for s in size.split("x"))
        tw, th = (int(s) for s in tile.split("x"))
        if nx % tw or ny % th:
            print(f"# {spec}: the peers need whole tiles, skipped", flush=True)
            continue
        m = gen(nx * ny, normal, 777).reshape(ny, nx)

        def tiles_numpy():
            t = m.reshape(ny // th, th, nx // tw, tw).transpose(0, 2, 1, 3)
            return np.median(t.reshape(ny // th, nx // tw, th * tw), axis=2)

        if not a.no_numpy:
            ms, v = time_cpu(tiles_numpy, 3)
            result("cpu_numpy", "tile_medians", "numpy.median_tiles", spec, "host", ms)
            print(f"VALUE tiles={spec} method=numpy first={float(v[0, 0]):.9g}", flush=True)
        if has_torch:
            t = torch.from_numpy(m).cuda()

            def tiles_torch():
                u = t.reshape(ny // th, th, nx // tw, tw).permute(0, 2, 1, 3)
                return torch.median(u.reshape(ny // th, nx // tw, th * tw), dim=2)

            ms, _ = time_gpu(tiles_torch, a.reps)
            result(gpu, "tile_medians", "torch.median_tiles", spec, "device", ms)


if __name__ == "__main__":
    main()
