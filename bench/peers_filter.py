#!/usr/bin/env python3
"""peers_filter.py - the peers of bench_filter on the same image and windows, same output format:
scipy.ndimage.median_filter and a generic_filter MAD on the CPU; cupyx.scipy.ndimage.median_filter
on the GPU when CuPy imports. CPU peers are slow: they run on a smaller image (--cpu-size) and
report Mpixel/s, which does not depend on the size.

  peers_filter.py [--sizes 1024,4096] [--widths 3,11] [--cpu-size 512] [--mad-size 128]"""
import argparse
import math
import time

import numpy as np


def make_image(n):
    """The same recipe as bench_filter.c's make_image (not the same bits: speed does not care)."""
    rng = np.random.default_rng(12345)
    img = 100.0 + 0.001 * np.arange(n)[None, :] + 5.0 * rng.standard_normal((n, n))
    stars = rng.random((n, n)) < 1.0 / 2048
    img[stars] += 500.0 * rng.random(stars.sum())
    return img.astype(np.float32)


def report(device, impl, op, n, w, ms):
    mpx = n * n * 1e-6
    print(f'RESULT device="{device}" impl={impl} op={op} n={n} w={w} kernel_ms={ms:.4f} '
          f'total_ms={ms:.4f} kernel_mpix_s={mpx / (ms * 1e-3):.2f} '
          f'total_mpix_s={mpx / (ms * 1e-3):.2f}', flush=True)


def best_ms(fn, repeat, budget_s=20.0):
    best, spent = math.inf, 0.0
    for i in range(repeat):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
        if spent > budget_s:
            break
    return best * 1e3


def cpu_peers(args, widths):
    import scipy.ndimage as ndi
    import platform
    device = f"CPU {platform.processor() or platform.machine()} (numpy/scipy, 1 thread)"
    img = make_image(args.cpu_size)
    for w in widths:
        report(device, "scipy.ndimage.median_filter", "median", args.cpu_size, w,
               best_ms(lambda: ndi.median_filter(img, size=w, mode="reflect"), args.repeat))
    small = make_image(args.mad_size)

    def mad(values):
        return np.median(np.abs(values - np.median(values)))

    for w in widths:
        report(device, "scipy.ndimage.generic_filter(numpy MAD)", "mad", args.mad_size, w,
               best_ms(lambda: ndi.generic_filter(small, mad, size=w, mode="reflect"), 1))


def gpu_peers(args, sizes, widths):
    try:
        import cupy as cp
        import cupyx.scipy.ndimage as cndi
    except Exception as e:  # no CuPy: no GPU peer here
        print(f"# cupy not available: {e}")
        return
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    for n in sizes:
        img = cp.asarray(make_image(n))
        for w in widths:
            if w > 31 or (w >= 31 and n > 4096):
                continue  # minutes per call: the curve is clear without it
            cndi.median_filter(img, size=w, mode="reflect")  # compile and warm up
            cp.cuda.Device().synchronize()
            start, end = cp.cuda.Event(), cp.cuda.Event()

            def run():
                start.record()
                cndi.median_filter(img, size=w, mode="reflect")
                end.record()
                end.synchronize()

            best = math.inf
            for _ in range(args.repeat):
                run()
                best = min(best, cp.cuda.get_elapsed_time(start, end))
                if best > 5000:
                    break
            report(device, "cupyx.scipy.ndimage.median_filter", "median", n, w, best)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1024,4096")
    ap.add_argument("--widths", default="3,5,11,21")
    ap.add_argument("--cpu-size", type=int, default=512)
    ap.add_argument("--mad-size", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--no-gpu", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    widths = [int(s) for s in args.widths.split(",")]
    if not args.no_gpu:
        gpu_peers(args, sizes, widths)
    if not args.no_cpu:
        cpu_peers(args, widths)


if __name__ == "__main__":
    main()
