#!/usr/bin/env python3
"""compare_stats.py - imstats against numpy and astropy on the same FITS images: n, missing,
median (numpy.nanmedian), MAD (the nanmedian of |x - median|) and percentiles
(numpy.nanpercentile, 'linear') must match exactly as float32; the sigma-clipped mean, median
and std must match astropy.stats.sigma_clipped_stats (which sums in float32: the mean and std
to a relative 1e-5). Images: float32 with NaNs and ties, an int16 image with BLANK and
BSCALE/BZERO, and an all-equal one.

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
    from astropy.stats import sigma_clipped_stats
except ImportError as e:  # meson reads 77 as "skipped"
    print("skipped: this Python lacks numpy or astropy (%s)" % e)
    sys.exit(77)

SEED = int(os.environ.get("CLSTATS_TEST_SEED", "20261122"))


def run(imstats, path, *args):
    out = subprocess.run([imstats, *args, path], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"imstats failed on {path}: {out.stderr.strip()}")
    return dict(line.split(" = ", 1) for line in out.stdout.splitlines())


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


def compare(imstats, path, data, args=(), q=(5, 25, 75, 95), sigma=3.0, maxiters=5):
    s = run(imstats, path, *args)
    valid = data[~np.isnan(data)]
    ok = check("n", s["n"], valid.size) & check("missing", s["missing"], data.size - valid.size)
    med = np.float32(np.nanmedian(data))
    ok &= check("median", s["median"], med)
    dev = np.where(data == med, np.float32(0), np.abs(data - med)).astype(np.float32)
    ok &= check("mad", s["mad"], np.float32(np.nanmedian(dev)))
    for p in q:
        ok &= check(f"p{p:g}", s[f"p{p:g}"], np.float32(np.nanpercentile(data, p)))
    mean, cmed, std = sigma_clipped_stats(data, sigma=sigma, maxiters=maxiters)
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
        # No valid pixel: one clear error, exit 1.
        fits.PrimaryHDU(np.full((3, 3), np.nan, dtype=np.float32)).writeto(f"{tmp}/d.fits")
        r = subprocess.run([imstats, f"{tmp}/d.fits"], capture_output=True, text=True)
        empty_ok = r.returncode == 1 and r.stderr.count("\n") == 1 and "no valid" in r.stderr
        print(("ok  " if empty_ok else "BAD ") + f"all NaN: exit {r.returncode}, {r.stderr!r}")
        ok &= empty_ok
        r = subprocess.run([imstats, "--sigma", "-1", f"{tmp}/a.fits"], capture_output=True,
                           text=True)
        usage_ok = r.returncode == 2 and r.stderr.startswith("imstats: ")
        print(("ok  " if usage_ok else "BAD ") + f"bad --sigma: exit {r.returncode}")
        ok &= usage_ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
