#!/usr/bin/python3
"""same_maps.py MADFILTER INTEL_VENDORS - madfilter's MEDIAN and MAD maps from Intel's OpenCL
runtime (the ICD directory INTEL_VENDORS, tools/intel_opencl.sh) and from PoCL (the system's
ICDs) must be the same bytes: one image with NaNs, integer ties, a constant block, infinities,
huge values and -0, widths 3, 11, 31 and 101, every boundary mode. Exits 1 on any difference.
Needs numpy and astropy (tools/setup.sh installs them)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
from astropy.io import fits

WIDTHS = (3, 11, 31, 101)
MODES = ("reflect", "mirror", "nearest", "constant", "wrap")


def image():
    """1001 x 777 (no power of two, so tiles and groups end part-way), fixed seed."""
    rng = np.random.default_rng(20261124)
    ny, nx = 777, 1001
    img = (100 + 5 * rng.standard_normal((ny, nx))).astype(np.float32)
    img[:, :300] = rng.integers(0, 20, (ny, 300))  # ties
    img[100:300, 400:700] = 42.0
    img[rng.random((ny, nx)) < 0.05] = np.nan
    img[500:540, 800:840] = np.nan  # windows with no valid value
    img[rng.random((ny, nx)) < 0.002] = np.inf
    img[rng.random((ny, nx)) < 0.002] = -np.inf
    img[rng.random((ny, nx)) < 0.002] = 1e30
    img[rng.random((ny, nx)) < 0.01] = -0.0
    return img


def run(madfilter, src, out, w, mode, device, env):
    args = [madfilter, src, out, "-w", str(w), "--boundary", mode, "--maps", "median,mad",
            "-d", device, "--overwrite"]
    if mode == "constant":
        args += ["--cval", "2.5"]
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"same_maps: madfilter on {device} failed: {done.stderr.strip()}")
    return done.stderr


def main():
    madfilter, intel_vendors = sys.argv[1], sys.argv[2]
    pocl_env = {k: v for k, v in os.environ.items() if k not in ("OCL_ICD_VENDORS",
                                                                 "CLSTATS_DEVICE")}
    intel_env = dict(pocl_env, OCL_ICD_VENDORS=intel_vendors)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.fits")
        fits.PrimaryHDU(image()).writeto(src)
        for w in WIDTHS:
            for mode in MODES:
                maps = {}
                for name, device, env in (("pocl", "portable", pocl_env),
                                          ("intel", "intel", intel_env)):
                    out = os.path.join(tmp, f"{name}.fits")
                    said = run(madfilter, src, out, w, mode, device, env)
                    if ("Intel" if name == "intel" else "Portable") not in said:
                        sys.exit(f"same_maps: not {name}'s runtime: {said.strip()}")
                    with fits.open(out) as h:
                        maps[name] = {hdu.name: hdu.data.view(np.uint32).copy() for hdu in h}
                for ext in ("MEDIAN", "MAD"):
                    a, b = maps["pocl"][ext], maps["intel"][ext]
                    if a.shape != b.shape or not np.array_equal(a, b):
                        diff = np.argwhere(a != b) if a.shape == b.shape else []
                        print(f"same_maps: w={w} {mode} {ext}: Intel differs from PoCL at "
                              f"{len(diff)} pixels, first (y, x) {diff[:3].tolist()}")
                        bad += 1
    cases = len(WIDTHS) * len(MODES)
    if bad:
        sys.exit(f"same_maps: {bad} maps of {2 * cases} differ")
    print(f"same_maps: MEDIAN and MAD from Intel equal PoCL's byte for byte ({cases} runs each, "
          f"1001 x 777, widths {', '.join(map(str, WIDTHS))}, all boundary modes)")


if __name__ == "__main__":
    main()
