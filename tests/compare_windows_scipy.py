#!/usr/bin/env python3
"""compare_windows_scipy.py - the library's filter (through tests/filter_raw) against the peers
users know, for every window besides odd squares: rectangles (1 x N, N x 1, even x odd), origins,
circles, rings and random footprints, in every boundary mode, float32 and float64, on random
images with ties, signed zeros and +-inf (no NaN: scipy has no missing values).

- with the upper even rule, the MEDIAN equals scipy.ndimage.median_filter(size=(h, w) or
  footprint=, origin=(oy, ox), mode=, cval=) bit for bit (zeros made +0, as the library's are);
- with the mean rule, MEDIAN and MAD equal numpy's median and nanmedian(|x - m|) in the data's
  own precision over the same windows (scipy.ndimage.generic_filter).

Usage: compare_windows_scipy.py FILTER_RAW      (exit 0 pass, 1 fail, 77 skipped)
Seed: $CLSTATS_TEST_SEED or 20261122.
"""
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
    from scipy import ndimage
except ImportError as e:  # meson reads 77 as "skipped"
    print("skipped: this Python lacks numpy or scipy (%s)" % e)
    sys.exit(77)

MODES = ["reflect", "mirror", "nearest", "constant", "wrap"]
EVEN_MEAN, EVEN_UPPER = 0, 2


def circle(r, r_in=None):
    """The library's circle (and ring r_in < d <= r) footprints, from filter.h's words."""
    half = int(np.floor(r))
    dy, dx = np.mgrid[-half : half + 1, -half : half + 1]
    d2 = dx * dx + dy * dy
    inside = d2 <= r * r
    return inside & (d2 > r_in * r_in) if r_in is not None else inside


def windows(rng):
    """(label, size (h, w) or None, footprint or None, origin (oy, ox))."""
    yield "1x7", (7, 1), None, (0, 0)
    yield "9x1", (1, 9), None, (0, 0)
    yield "4x3", (3, 4), None, (0, 0)
    yield "2x2", (2, 2), None, (0, 0)
    yield "6x5 origin", (5, 6), None, (-2, 2)
    yield "4x4 origin", (4, 4), None, (1, -1)
    yield "circle 2.5", None, circle(2.5), (0, 0)
    yield "circle 1", None, circle(1.0), (1, 0)
    yield "ring 1-3", None, circle(3.0, 1.0), (0, 0)
    yield "ring 2-4", None, circle(4.0, 2.0), (0, -1)
    for t in range(3):
        h, w = rng.integers(1, 7, size=2)
        fp = rng.random((h, w)) < 0.5
        fp[rng.integers(h), rng.integers(w)] = True
        yield "random %dx%d" % (w, h), None, fp, (int(rng.integers(h)) - h // 2, 0)


def image(rng, ny, nx, kind, dtype):
    if kind == 0:
        a = rng.integers(0, 5, size=(ny, nx)).astype(dtype)  # ties everywhere
    elif kind == 1:
        a = rng.normal(100, 10, size=(ny, nx)).astype(dtype)
        a[rng.random((ny, nx)) < 0.1] = np.inf
        a[rng.random((ny, nx)) < 0.1] = -np.inf
    else:
        a = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0], dtype=dtype), size=(ny, nx))
    return np.ascontiguousarray(a, dtype=dtype)


def plus_zero(a):
    a = a.copy()
    a[a == 0] = 0
    return a


def run(tool, tmp, img, size, fp, origin, mode, cval, even):
    ny, nx = img.shape
    kind = "f64" if img.dtype == np.float64 else "f32"
    paths = [os.path.join(tmp, n) for n in ("in", "med", "mad", "fp")]
    img.tofile(paths[0])
    h, w = size if size is not None else (0, 0)
    args = [tool, kind, str(nx), str(ny), str(w), str(h), str(origin[1]), str(origin[0]), mode,
            repr(cval), str(even), paths[0], paths[1], paths[2]]
    if fp is not None:
        fp.astype(np.uint8).tofile(paths[3])
        args += [paths[3], str(fp.shape[1]), str(fp.shape[0])]
    subprocess.run(args, check=True)
    med = np.fromfile(paths[1], dtype=img.dtype).reshape(ny, nx)
    mad = np.fromfile(paths[2], dtype=img.dtype).reshape(ny, nx)
    return med, mad


def numpy_maps(img, size, fp, origin, mode, cval):
    dtype = img.dtype

    def med(v):
        return np.median(v.astype(dtype))

    def mad(v):
        v = v.astype(dtype)
        m = np.median(v)
        return np.nanmedian(np.abs(v - m))

    kw = dict(size=size, footprint=fp, origin=origin, mode=mode, cval=cval)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return (ndimage.generic_filter(img, med, output=dtype, **kw),
                ndimage.generic_filter(img, mad, output=dtype, **kw))


def same_bits(got, want, what):
    g = got.view(np.uint64 if got.dtype == np.float64 else np.uint32)
    nan = np.isnan(want)
    w = want.copy()
    w[nan] = np.nan  # the library's one NaN
    w = w.view(g.dtype)
    bad = (g != w) & ~(nan & np.isnan(got))
    if bad.any():
        y, x = np.argwhere(bad)[0]
        print("FAIL %s: %d pixels differ, first (%d, %d): got %r, want %r"
              % (what, bad.sum(), x, y, got[y, x], want[y, x]))
        return 1
    return 0


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tool = sys.argv[1]
    seed = int(os.environ.get("CLSTATS_TEST_SEED", "20261122"))
    rng = np.random.default_rng(seed)
    print("seed: %d" % seed)
    fails = cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, size, fp, origin) in enumerate(windows(rng)):
            for dtype in (np.float32, np.float64):
                mode = MODES[(i + (dtype == np.float64)) % 5]
                cval = 0.1 if dtype == np.float64 else 1.5
                img = image(rng, 13, 11, i % 3, dtype)
                what = "%s %s %s" % (label, np.dtype(dtype).name, mode)
                med, _ = run(tool, tmp, img, size, fp, origin, mode, cval, EVEN_UPPER)
                want = ndimage.median_filter(img, size=size, footprint=fp, origin=origin,
                                             mode=mode, cval=cval)
                fails += same_bits(med, plus_zero(want), what + " upper vs scipy")
                med, mad = run(tool, tmp, img, size, fp, origin, mode, cval, EVEN_MEAN)
                nmed, nmad = numpy_maps(img, size, fp, origin, mode, cval)
                fails += same_bits(med, plus_zero(nmed), what + " mean median vs numpy")
                fails += same_bits(mad, plus_zero(nmad), what + " mean MAD vs numpy")
                cases += 1
    print("%d cases, %d failures" % (cases, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
