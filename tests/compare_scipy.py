#!/usr/bin/env python3
"""compare_scipy.py - madfilter against the reference everyone knows: for random float32 FITS
images (ties, odd shapes, windows wider than the image, signed zeros) and every boundary mode,
the MEDIAN map must equal scipy.ndimage.median_filter bit for bit, and MAD, SIGMA and SNR must
equal a plain numpy computation over the same windows (built with np.pad's matching mode);
their zero medians are made +0 first, as the library's are (see plus_zero). Then the bundled
samples/sky.fits is filtered and its WCS and NaN pixels are checked with astropy.

Usage: compare_scipy.py MADFILTER [SKY.fits]      (exit 0 pass, 1 fail, 77 skipped)
Seed: $CLSTATS_TEST_SEED or 20261122.
"""
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
    from astropy.io import fits
    from astropy.wcs import WCS
    from scipy import ndimage
except ImportError as e:  # meson reads 77 as "skipped"
    print("skipped: this Python lacks numpy, scipy or astropy (%s)" % e)
    sys.exit(77)

# madfilter's boundary mode -> np.pad's name for the same extension.
NUMPY_PAD = {
    "reflect": "symmetric",  # d c b a | a b c d | d c b a
    "mirror": "reflect",  # d c b | a b c d | c b a
    "nearest": "edge",  # a a a | a b c d | d d d
    "wrap": "wrap",  # b c d | a b c d | a b c
    "constant": "constant",  # k k k | a b c d | k k k
}
CVAL = np.float32(1.5)

# (width, rows, columns): a trivial window, ties, single rows and columns, windows wider than the
# image (up to five times), one larger image, and last an image of signed zeros.
CASES = [
    (1, 9, 7),
    (3, 17, 23),
    (5, 1, 13),
    (7, 13, 1),
    (15, 5, 9),
    (61, 12, 11),
    (11, 64, 48),
    (3, 11, 13),
]
SIGNED_ZEROS_CASE = len(CASES) - 1


def padded_indices(n, pad, mode):
    """Source index of each of the n + 2 pad positions of an axis (-1: the constant). np.pad
    could not always pad beyond the array's own length in one call, so reflecting modes are
    padded in steps no longer than the array so far (reflecting a reflected array continues
    the same pattern); wrap is plain modular arithmetic."""
    idx = np.arange(n)
    if mode == "constant":
        return np.pad(idx, pad, mode="constant", constant_values=-1)
    if mode == "edge" or n == 1:
        return np.pad(idx, pad, mode="edge")
    if mode == "wrap":
        return np.arange(-pad, n + pad) % n
    done = 0
    while done < pad:
        step = min(pad - done, len(idx) - 1 if mode == "reflect" else len(idx))
        idx = np.pad(idx, step, mode=mode)
        done += step
    return idx


def reference_maps(data, w, mode):
    """Median and MAD of every w x w window, in float32, from the windows themselves."""
    ny, nx = data.shape
    pad = w // 2
    rows = padded_indices(ny, pad, NUMPY_PAD[mode])
    cols = padded_indices(nx, pad, NUMPY_PAD[mode])
    padded = data[np.ix_(np.maximum(rows, 0), np.maximum(cols, 0))]
    padded[rows < 0, :] = CVAL
    padded[:, cols < 0] = CVAL
    windows = np.lib.stride_tricks.sliding_window_view(padded, (w, w)).reshape(ny, nx, w * w)
    k = (w * w) // 2  # odd count, no NaN: the median is one element
    median = plus_zero(np.sort(windows, axis=-1)[..., k])
    dev = np.abs(windows - median[..., None]).astype(np.float32)
    mad = plus_zero(np.sort(dev, axis=-1)[..., k])
    return median, mad


def plus_zero(a):
    """A map with its zeros made +0. scipy's and numpy's zero medians carry the sign of whichever
    zero their selection or sort puts in the middle (scipy's is not even stable), so for -0
    beside +0 their sign is arbitrary; the library makes every zero result +0 (clstats.h), so
    the references are compared with their zeros made +0, and madfilter's must be +0 bits."""
    a = np.asarray(a, dtype=np.float32)
    return np.where(a == 0, np.float32(0.0), a)


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def mismatches(got, want):
    """Where two float32 maps differ in their bits (NaN counts as equal to NaN)."""
    got = np.asarray(got, dtype=np.float32)
    want = np.asarray(want, dtype=np.float32)
    same = (bits(got) == bits(want)) | (np.isnan(got) & np.isnan(want))
    return np.argwhere(~same)


def run_madfilter(madfilter, args):
    p = subprocess.run([madfilter] + args + ["-q"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("madfilter %s failed (%d): %s" % (" ".join(args), p.returncode,
                                                            p.stderr.strip()))


def random_image(rng, ny, nx, case):
    if case == SIGNED_ZEROS_CASE:  # zero medians whose sign scipy and numpy leave to chance
        return rng.choice(np.array([-0.0, 0.0, -0.0, 1.0, -1.0], dtype=np.float32), size=(ny, nx))
    if case % 2 == 0:  # many ties: half-integers in a narrow range (never -0.0)
        return (rng.integers(-8, 9, size=(ny, nx)) * 0.5).astype(np.float32)
    data = rng.normal(100.0, 15.0, size=(ny, nx)).astype(np.float32)
    data.flat[rng.integers(0, data.size, size=data.size // 4)] = np.float32(100.0)  # some ties
    return data


def check_random_images(madfilter, tmp, rng):
    failures = 0
    total = 0
    for case, (w, ny, nx) in enumerate(CASES):
        data = random_image(rng, ny, nx, case)
        path = os.path.join(tmp, "in_%d.fits" % case)
        fits.PrimaryHDU(data).writeto(path, overwrite=True)
        for mode in NUMPY_PAD:
            total += 1
            out = os.path.join(tmp, "out_%d_%s.fits" % (case, mode))
            args = [path, out, "-w", str(w), "--boundary", mode, "--maps", "median,mad,sigma,snr"]
            if mode == "constant":
                args += ["--cval", repr(float(CVAL))]
            label = "%-8s w=%-2d %2d x %-2d" % (mode, w, nx, ny)
            try:
                run_madfilter(madfilter, args)
            except RuntimeError as e:
                print("FAIL %s: %s" % (label, e))
                failures += 1
                continue
            with fits.open(out) as hdul:
                got = {h.name: h.data.astype(np.float32) for h in hdul}
            kw = {"cval": float(CVAL)} if mode == "constant" else {}
            scipy_median = plus_zero(ndimage.median_filter(data, size=w, mode=mode, **kw))
            median, mad = reference_maps(data, w, mode)
            sigma = np.float32(1.482602218505602) * mad  # astropy's mad_std constant
            with np.errstate(divide="ignore", invalid="ignore"):
                snr = np.where(sigma == 0, np.float32(np.nan), (data - median) / sigma)
            problems = []
            for name, g, want in [
                ("MEDIAN vs scipy", got["MEDIAN"], scipy_median),
                ("MEDIAN vs numpy", got["MEDIAN"], median),
                ("MAD", got["MAD"], mad),
                ("SIGMA", got["SIGMA"], sigma),
                ("SNR", got["SNR"], snr.astype(np.float32)),
            ]:
                bad = mismatches(g, want)
                if len(bad):
                    y, x = bad[0]
                    problems.append("%s: %d pixels differ, first (x=%d, y=%d): %r vs %r" % (
                        name, len(bad), x, y, float(g[y, x]), float(want[y, x])))
            if problems:
                failures += 1
                print("FAIL %s: %s" % (label, "; ".join(problems)))
            else:
                print("ok   %s" % label)
    return total, failures


def check_sample(madfilter, tmp, sky):
    """The bundled star field: every map keeps the WCS; dead pixels are handled as missing."""
    out = os.path.join(tmp, "sky_maps.fits")
    run_madfilter(madfilter, [sky, out, "-w", "11", "--maps", "mad,median,sigma,snr"])
    problems = []
    # astropy checks every HDU's CHECKSUM and DATASUM on opening, and warns where one fails.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with fits.open(out, checksum=True) as hout:
            for h in hout:
                h.data
            keys = [(h.name, h.header.get("MFWIDTH"), h.header.get("MFHEIGHT"),
                     h.header.get("MFFOOT"), h.header.get("MFBOUND"), h.header.get("MFMAPS"),
                     h.header.get("MFEVEN"), h.header.get("MFORIGX"), bool(h.header.get("MFDEVICE")))
                    for h in hout]
    for w in caught:
        if "checksum" in str(w.message).lower():
            problems.append("astropy: %s" % w.message)
    for k in keys:
        if k[1:] != (11, 11, "square", "reflect", "MAD,MEDIAN,SIGMA,SNR", "mean", 0, True):
            problems.append("%s: keywords %r" % (k[0], k[1:]))
    with fits.open(sky) as hin, fits.open(out) as hout:
        data = hin[0].data.astype(np.float32)
        wcs_in = WCS(hin[0].header)
        names = [h.name for h in hout]
        if names != ["MAD", "MEDIAN", "SIGMA", "SNR"]:
            problems.append("EXTNAMEs %s" % names)
        pix = np.array([[0.0, 0.0], [100.5, 200.25], [data.shape[1] - 1.0, data.shape[0] - 1.0]])
        want_world = wcs_in.all_pix2world(pix, 0)
        for h in hout:
            got_world = WCS(h.header).all_pix2world(pix, 0)
            if not np.array_equal(got_world, want_world):
                problems.append("%s: WCS differs" % h.name)
            for key in ("OBJECT", "DATE-OBS", "BUNIT" if h.name != "SNR" else "OBJECT"):
                if h.header.get(key) != hin[0].header.get(key):
                    problems.append("%s: %s not kept" % (h.name, key))
        dead = np.isnan(data)
        med = hout["MEDIAN"].data.astype(np.float32)
        snr = hout["SNR"].data
        if not (np.all(np.isfinite(med)) and np.all(np.isnan(snr[dead]))):
            problems.append("dead pixels: MEDIAN should fill them, SNR should be NaN there")
        # Away from the dead pixels no window holds NaN, so scipy is the judge there too.
        near_dead = ndimage.maximum_filter(dead, size=11, mode="reflect")
        scipy_median = ndimage.median_filter(np.where(dead, 0, data), size=11, mode="reflect")
        bad = mismatches(med[~near_dead], scipy_median[~near_dead])
        if len(bad):
            problems.append("MEDIAN differs from scipy at %d pixels" % len(bad))
    print(("FAIL sky.fits: " + "; ".join(problems)) if problems else "ok   sky.fits (w=11, WCS kept)")
    return 1 if problems else 0


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    madfilter = sys.argv[1]
    seed = int(os.environ.get("CLSTATS_TEST_SEED", "20261122"), 0)
    print("seed: %d (set CLSTATS_TEST_SEED to change)" % seed)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="madfilter_scipy_") as tmp:
        total, failures = check_random_images(madfilter, tmp, rng)
        if len(sys.argv) > 2:
            total += 1
            failures += check_sample(madfilter, tmp, sys.argv[2])
    print("madfilter vs scipy/numpy: %d of %d cases passed%s" % (
        total - failures, total, "" if failures == 0 else ", %d FAILED" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
