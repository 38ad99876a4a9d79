"""bench_background.py - the mesh background and RMS at full resolution from Python:
clstats.Background (SExtractor's histogram clipping and photutils' sigma clipping) beside
sep.Background (back() and rms()) and photutils' Background2D (its defaults, the maps) in the
same run, where they are installed, on bench_python.py's float32 sky (gradient, noise, stars).
Also the library's device time of the last call's kernels. A benchmark, not a test.

    python3 bench/bench_background.py [--size 4096] [--mesh 64] [--filter 3] [--device cpu]
                                      [--repeat 3]
Prints one "RESULT background ..." line per measurement (best of --repeat, ms)."""
import argparse
import os
import sys

import clstats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_python import best_ms, sky  # noqa: E402  the same timing and the same sky


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--mesh", type=int, default=64)
    p.add_argument("--filter", type=int, default=3)
    p.add_argument("--device", default=None)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    image = sky(a.size)
    ctx = clstats.Context(a.device or "auto")
    print(f"device: {ctx.device_name}")
    clstats.Background(image[:256, :256], box_size=a.mesh, device=ctx)  # kernels built
    ms = best_ms(lambda: clstats.Background(image, box_size=a.mesh, filter_size=a.filter,
                                            device=ctx), a.repeat)
    print(f"RESULT background clstats size={a.size} mesh={a.mesh} filter={a.filter} "
          f"ms={ms:.1f} kernel_ms={ctx.last_kernel_ms:.2f}")
    ms = best_ms(lambda: clstats.Background(image, box_size=a.mesh, filter_size=a.filter,
                                            clipping="sigma", device=ctx), a.repeat)
    print(f"RESULT background clstats-sigma size={a.size} mesh={a.mesh} filter={a.filter} "
          f"ms={ms:.1f} kernel_ms={ctx.last_kernel_ms:.2f}")
    try:
        import sep
    except ImportError:
        print("RESULT background sep skipped (not installed)")
    else:
        def run_sep():
            b = sep.Background(image, bw=a.mesh, bh=a.mesh, fw=a.filter, fh=a.filter)
            b.back(), b.rms()
        ms = best_ms(run_sep, a.repeat)
        print(f"RESULT background sep size={a.size} mesh={a.mesh} filter={a.filter} "
              f"ms={ms:.1f}")
    try:
        from photutils.background import Background2D
    except ImportError:
        print("RESULT background photutils skipped (not installed)")
    else:
        def run_photutils():
            b = Background2D(image, a.mesh, filter_size=a.filter)
            b.background, b.background_rms
        ms = best_ms(run_photutils, 1)
        print(f"RESULT background photutils size={a.size} mesh={a.mesh} filter={a.filter} "
              f"ms={ms:.1f}")


if __name__ == "__main__":
    main()
