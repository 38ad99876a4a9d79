"""bench_background.py - the mesh background and RMS at full resolution from Python:
clstats.Background (SExtractor's histogram clipping and photutils' sigma clipping) beside
sep.Background (back() and rms()) and photutils' Background2D (its defaults, the maps) in the
same run, where they are installed, on bench_python.py's float32 sky (gradient, noise, stars).
Also the library's device time of the last call's kernels. A benchmark, not a test.

    python3 bench/bench_background.py [--size 4096] [--mesh 64] [--filter 3] [--device cpu]
                                      [--repeat 3] [--interleave N]
Prints one "RESULT background ..." line per measurement (best of --repeat, ms). --interleave N
first runs clstats.Background and SEP alternately N times each and prints every round's wall
and CPU time (the process's, every thread: PoCL's workers too), so that a machine other work
loads judges both alike."""
import argparse
import os
import sys
import time

import clstats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_python import best_ms, sky  # noqa: E402  the same timing and the same sky


def timed(function):
    """Wall and CPU time (ms) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    function()
    return 1e3 * (time.perf_counter() - w0), 1e3 * (time.process_time() - c0)


def interleave(image, a, ctx):
    """clstats.Background and sep.Background (+ back() + rms()) alternately, round by round."""
    import sep

    def ours():
        b = clstats.Background(image, box_size=a.mesh, filter_size=a.filter, device=ctx)
        b.background, b.rms

    def theirs():
        b = sep.Background(image, bw=a.mesh, bh=a.mesh, fw=a.filter, fh=a.filter)
        b.back(), b.rms()

    rows = []
    for r in range(a.interleave):
        (ow, oc), (sw, sc) = timed(ours), timed(theirs)
        rows.append((ow, oc, sw, sc))
        print(f"ROUND {r} clstats wall_ms={ow:.1f} cpu_ms={oc:.1f}  sep wall_ms={sw:.1f} "
              f"cpu_ms={sc:.1f}  wall sep/clstats={sw / ow:.2f}")
    ow, oc, sw, sc = (min(x[i] for x in rows) for i in range(4))
    print(f"RESULT background interleaved size={a.size} mesh={a.mesh} filter={a.filter} "
          f"rounds={a.interleave} best clstats wall_ms={ow:.1f} cpu_ms={oc:.1f} sep "
          f"wall_ms={sw:.1f} cpu_ms={sc:.1f} sep/clstats wall={sw / ow:.2f} cpu={sc / oc:.2f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--mesh", type=int, default=64)
    p.add_argument("--filter", type=int, default=3)
    p.add_argument("--device", default=None)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--interleave", type=int, default=0)
    a = p.parse_args()
    image = sky(a.size)
    ctx = clstats.Context(a.device or "auto")
    print(f"device: {ctx.device_name}")
    clstats.Background(image[:256, :256], box_size=a.mesh, device=ctx)  # kernels built
    if a.interleave:
        interleave(image, a, ctx)
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
