"""bench_python.py - what calling from Python costs: clstats.median_filter / mad_filter /
filter_maps on one float32 image, end to end (numpy array in, numpy array out), beside
scipy.ndimage.median_filter and cupyx.scipy.ndimage.median_filter in the same run. The C call's
figures come from bench_filter in the same run (bench/run_gpu.sh, stage python). A benchmark,
not a test.

    python3 bench/bench_python.py [--size 4096] [--widths 5,11] [--device gpu] [--repeat 5]
                                  [--scipy-widths 5]
Prints one "RESULT python ..." line per measurement (best of --repeat, ms)."""
import argparse
import time

import numpy as np

import clstats


def best_ms(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def sky(n):
    """The image bench_filter filters: background, gradient, noise and a few stars."""
    rng = np.random.default_rng(12345)
    image = 100.0 + 0.001 * np.arange(n)[None, :] + 5.0 * rng.normal(size=(n, n))
    stars = rng.random((n, n)) < 0.0005
    image[stars] += 500.0 * rng.random(stars.sum())
    return image.astype(np.float32)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--widths", default="5,11")
    p.add_argument("--scipy-widths", default="5")
    p.add_argument("--device", default=None)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    image = sky(a.size)
    ctx = clstats.Context(a.device)
    print(f"device: {ctx.device_name}; numpy {np.__version__}; image {a.size}^2 float32")
    for w in (int(x) for x in a.widths.split(",")):
        clstats.median_filter(image, w, device=ctx)  # builds the kernels
        rows = {
            "median_filter": lambda: clstats.median_filter(image, w, device=ctx),
            "mad_filter": lambda: clstats.mad_filter(image, w, device=ctx),
            "filter_maps(median,mad)": lambda: clstats.filter_maps(image, w, ("median", "mad"),
                                                                   device=ctx),
        }
        out = np.empty_like(image)
        rows["median_filter(output=)"] = lambda: clstats.median_filter(image, w, output=out,
                                                                       device=ctx)
        as_int16 = image.astype(np.int16)
        rows["median_filter(int16 input)"] = lambda: clstats.median_filter(as_int16, w,
                                                                           device=ctx)
        for name, function in rows.items():
            ms = best_ms(function, a.repeat)
            kernel = ctx.last_kernel_ms
            print(f"RESULT python call={name} width={w} ms={ms:.2f} kernel_ms={kernel:.2f}")
    try:
        import cupy
        import cupyx.scipy.ndimage as cndi
        g = cupy.asarray(image)
        for w in (int(x) for x in a.widths.split(",")):
            cndi.median_filter(g, w)
            cupy.cuda.Device().synchronize()

            def run():
                cndi.median_filter(g, w)
                cupy.cuda.Device().synchronize()

            print(f"RESULT python call=cupyx.median_filter(device array) width={w} "
                  f"ms={best_ms(run, a.repeat):.2f}")

            def run_host():
                cupy.asnumpy(cndi.median_filter(cupy.asarray(image), w))

            print(f"RESULT python call=cupyx.median_filter(host in/out) width={w} "
                  f"ms={best_ms(run_host, a.repeat):.2f}")
    except ImportError:
        print("cupyx: not installed here")
    import scipy.ndimage as ndi
    for w in (int(x) for x in a.scipy_widths.split(",") if x):
        ms = best_ms(lambda: ndi.median_filter(image, w), 1)
        print(f"RESULT python call=scipy.ndimage.median_filter width={w} ms={ms:.2f}")


if __name__ == "__main__":
    main()
