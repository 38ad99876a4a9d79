#!/usr/bin/env python3
"""compare_stats.py - imstats against numpy and astropy on the same FITS images: n, missing,
median (numpy.nanmedian), MAD (numpy.nanmedian of |x - median|, where inf - inf is NaN and so
left out) and percentiles (numpy.nanpercentile, 'linear') must match exactly as float32, NaN
where numpy gives NaN; the sigma-clipped mean, median and std must match
astropy.stats.sigma_clipped_stats (which sums in float32: the mean and std to a relative 1e-5),
its count too. Images: float32 with NaNs and ties, an int16 image with BLANK and BSCALE/BZERO,
an all-equal one, infinities, images where nothing is valid or everything is clipped, 1-D and
4-D images, and the same image through a pipe.

Usage: compare_stats.py IMSTATS      (exit 0 pass, 1 fail, 77 skipped)
"""
import os
import subprocess
import warnings
import sys
import tempfile

try:
    import numpy as np
    from astropy.io import fits
    from astropy.stats import mad_std, sigma_clip, sigma_clipped_stats
except ImportError as e:  # meson reads 77 as "skipped"
    print("skipped: this Python lacks numpy or astropy (%s)" % e)
    sys.exit(77)

SEED = int(os.environ.get("CLSTATS_TEST_SEED", "20261122"))


def run(imstats, path, *args, stdin=None):
    out = subprocess.run([imstats, *args, path], capture_output=True, text=True, stdin=stdin)
    if out.returncode != 0:
        raise SystemExit(f"imstats failed on {path}: {out.stderr.strip()}")
    return dict(line.split(" = ", 1) for line in out.stdout.splitlines())


def label(q):
    """imstats' label for percentile q: the shortest %g text that reads back as q."""
    for digits in range(1, 18):
        text = "%.*g" % (digits, q)
        if float(text) == q:
            return "p" + text


def check(name, got, want, rel=0.0):
    """Exact (as float32: imstats prints 9 digits, enough to give the float back) unless rel."""
    got, want = float(got), float(want)
    if not rel:
        got, want = float(np.float32(got)), float(np.float32(want))
    same = (got == want) or (np.isnan(got) and np.isnan(want))
    if not same and rel and abs(got - want) <= rel * max(abs(want), 1e-30):
        same = True
    print(("ok  " if same else "BAD ") + f"{name}: imstats {got!r}, reference {want!r}")
    return same


def compare(imstats, path, data, args=(), q=(5, 25, 75, 95), sigma=3.0, maxiters=5, stdin=None):
    s = run(imstats, path, *args, stdin=stdin)
    data = np.asarray(data, dtype=np.float32)
    valid = data[~np.isnan(data)]
    ok = check("n", s["n"], valid.size) & check("missing", s["missing"], data.size - valid.size)
    med = np.float32(np.nanmedian(data)) if valid.size else np.float32(np.nan)
    ok &= check("median", s["median"], med)
    dev = np.abs(data - med)  # inf - inf is NaN: left out, as numpy's nanmedian leaves it
    ok &= check("mad", s["mad"], np.nanmedian(dev) if np.any(~np.isnan(dev)) else np.nan)
    # sigma: astropy's mad_std (its constant, 1 / Phi^-1(3/4)), where the MAD is finite.
    if valid.size and np.all(np.isfinite(valid)):
        ok &= check("sigma", s["sigma"], mad_std(valid), rel=1e-6)
    for p in q:
        want = np.nanpercentile(data, p) if valid.size else np.nan
        ok &= check(label(p), s[label(p)], np.float32(want))
    mean, cmed, std = sigma_clipped_stats(data, sigma=sigma, maxiters=maxiters)
    # astropy 5.2's sigma_clip hands the data back unmasked when a round would clip every value,
    # where sigma_clipped_stats gives NaN: imstats follows the statistics (nothing kept).
    kept = np.ma.count(sigma_clip(data, sigma=sigma, maxiters=maxiters, masked=True))
    ok &= check("clipped_n", s["clipped_n"], 0 if np.isnan(cmed) else kept)
    ok &= check("clipped_median", s["clipped_median"], np.float32(cmed))
    ok &= check("clipped_mean", s["clipped_mean"], mean, rel=1e-5)
    ok &= check("clipped_std", s["clipped_std"], std, rel=1e-5)
    return ok


def main():
    imstats = sys.argv[1]
    warnings.filterwarnings("ignore")  # astropy says NaNs were left out: they are meant to be
    rng = np.random.default_rng(SEED)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        # Noise with outliers, ties and NaNs, odd shape.
        a = (100 + 5 * rng.standard_normal((123, 77))).astype(np.float32)
        a[rng.random(a.shape) < 0.02] = 1e4
        a[rng.random(a.shape) < 0.05] = np.nan
        a[:10] = np.round(a[:10])
        fits.PrimaryHDU(a).writeto(f"{tmp}/a.fits")
        print("float32 noise, outliers, NaNs:")
        ok &= compare(imstats, f"{tmp}/a.fits", a)
        ok &= compare(imstats, f"{tmp}/a.fits", a, ("-p", "0,50,100,33.3", "--sigma", "2"),
                      q=(0, 50, 100, 33.3), sigma=2.0)
        # int16 with BLANK and scaling: BLANK is missing, the rest scaled.
        raw = rng.integers(-300, 300, (64, 50)).astype(np.int16)
        raw[5, :] = -32768
        hdu = fits.PrimaryHDU(raw)
        hdu.header["BLANK"] = -32768
        hdu.header["BSCALE"] = 0.5
        hdu.header["BZERO"] = 1000.0
        hdu.writeto(f"{tmp}/b.fits")
        b = np.where(raw == -32768, np.nan, raw * 0.5 + 1000.0).astype(np.float32)
        print("int16 with BLANK, BSCALE, BZERO:")
        ok &= compare(imstats, f"{tmp}/b.fits", b)
        c = np.full((9, 9), 3.25, dtype=np.float32)
        fits.PrimaryHDU(c).writeto(f"{tmp}/c.fits")
        print("all equal:")
        ok &= compare(imstats, f"{tmp}/c.fits", c)
        # Where numpy and astropy give NaN, so does imstats, with exit 0: no valid pixel, an
        # empty image, infinite middles, infinite medians (MAD: inf - inf is NaN), every value
        # clipped; astropy drops infinities before clipping (its test_invalid_sigma_clip).
        invalid = np.ones((5, 5), dtype=np.float32)
        invalid[2, 2], invalid[3, 4], invalid[1, 1] = 1000, np.nan, np.inf
        nan_cases = {
            "all NaN": (np.full((3, 3), np.nan, dtype=np.float32), ()),
            "-inf and inf": (np.array([[-np.inf, np.inf]], dtype=np.float32), ()),
            "sigma 0.1 on 1, 2": (np.array([[1, 2]], dtype=np.float32), ("--sigma", "0.1")),
            "one inf": (np.array([[np.inf]], dtype=np.float32), ()),
            "1, inf, inf": (np.array([[1, np.inf, np.inf]], dtype=np.float32), ()),
            "-inf, -inf, 2, nan": (np.array([[-np.inf, -np.inf, 2, np.nan]], np.float32), ()),
            "astropy's invalid values": (invalid, ()),
            "1-D": (rng.standard_normal(17).astype(np.float32), ()),
            "4-D": (rng.standard_normal((2, 3, 4, 5)).astype(np.float32), ()),
        }
        for i, (what, (data, args)) in enumerate(nan_cases.items()):
            fits.PrimaryHDU(data).writeto(f"{tmp}/n{i}.fits")
            print(what + ":")
            sigma = float(args[1]) if args else 3.0
            ok &= compare(imstats, f"{tmp}/n{i}.fits", data, args, sigma=sigma)
        # An empty image (NAXIS 0): no pixel, NaN statistics, exit 0.
        fits.PrimaryHDU().writeto(f"{tmp}/empty.fits")
        print("empty:")
        s = run(imstats, f"{tmp}/empty.fits")
        empty_ok = s["n"] == "0" and s["median"] == "nan" and s["clipped_n"] == "0"
        print(("ok  " if empty_ok else "BAD ") + f"empty image: {s}")
        ok &= empty_ok
        # More than 32 percentiles, two of them alike in six digits: each has its own line.
        q = [i * 2.5 for i in range(41)] + [33.33333333, 33.33333334]
        print("43 percentiles:")
        ok &= compare(imstats, f"{tmp}/a.fits", a, ("-p", ",".join(repr(x) for x in q)), q=q)
        # The option forms madfilter takes: --sigma=2, -q; and the image through a pipe.
        print("--sigma=2 -q, from standard input:")
        with open(f"{tmp}/a.fits", "rb") as f:
            ok &= compare(imstats, "-", a, ("--sigma=2", "-q"), sigma=2.0, stdin=f)
        # --mask FILE[EXT]: a DQ extension of the same file; non-zero (and NaN) pixels are missing,
        # as madfilter's --mask; a one-plane mask serves every plane of a cube.
        dq = (rng.random(a.shape) < 0.3).astype(np.int16) * 4
        fits.HDUList([fits.PrimaryHDU(a), fits.ImageHDU(dq, name="DQ")]).writeto(f"{tmp}/m.fits")
        masked = a.copy()
        masked[dq != 0] = np.nan
        print("--mask 'm.fits[DQ]':")
        ok &= compare(imstats, f"{tmp}/m.fits", masked, ("--mask", f"{tmp}/m.fits[DQ]"))
        cube = np.stack([a, a * 2])
        fits.PrimaryHDU(cube).writeto(f"{tmp}/cube.fits")
        masked_cube = cube.copy()
        masked_cube[:, dq != 0] = np.nan
        print("--mask of one plane on a cube:")
        ok &= compare(imstats, f"{tmp}/cube.fits", masked_cube, ("--mask", f"{tmp}/m.fits[DQ]"))
        wrong = subprocess.run([imstats, "--mask", f"{tmp}/cube.fits", f"{tmp}/m.fits"],
                               capture_output=True, text=True)
        wrong_ok = wrong.returncode == 1 and "mask" in wrong.stderr
        print(("ok  " if wrong_ok else "BAD ") + f"a mask of another shape: {wrong.stderr.strip()}")
        ok &= wrong_ok
        r = subprocess.run([imstats, "--sigma", "-1", f"{tmp}/a.fits"], capture_output=True,
                           text=True)
        usage_ok = r.returncode == 2 and r.stderr.startswith("imstats: ")
        print(("ok  " if usage_ok else "BAD ") + f"bad --sigma: exit {r.returncode}")
        ok &= usage_ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
