"""skymap end to end against SEP: the BACKGROUND and RMS HDUs of a written file equal
sep.Background's back() and rms() (within issue 27's 1e-5; the same bits in practice), the input's
header is kept, an existing output is refused, bad options are usage errors; with --clipping sigma
they equal photutils' Background2D background and background_rms (that part skipped, saying so,
without photutils). Exits 77 (skipped) without numpy, astropy or SEP.

Usage: compare_skymap.py SKYMAP"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import sep
    from astropy.io import fits
except ImportError as e:
    print(f"compare_skymap: skipped, {e.name} is not installed (python3-sep, astropy)")
    sys.exit(77)


def compare_photutils(skymap, img, tmp):
    """skymap --clipping sigma against photutils' Background2D with the same parameters."""
    try:
        import warnings
        from astropy.stats import SigmaClip
        from photutils import background as pb
    except ImportError:
        print("compare_skymap: the photutils part skipped, photutils is not installed "
              "(tools/setup.sh --tests)")
        return 0
    src, out = os.path.join(tmp, "crop.fits"), os.path.join(tmp, "crop_maps.fits")
    fits.PrimaryHDU(img).writeto(src, overwrite=True)
    failures = 0
    for est, rms, pest, prms in (("sextractor", "std", "SExtractorBackground",
                                  "StdBackgroundRMS"),
                                 ("mmm", "mad_std", "MMMBackground", "MADStdBackgroundRMS"),
                                 ("biweight", "biweight", "BiweightLocationBackground",
                                  "BiweightScaleBackgroundRMS")):
        r = subprocess.run([skymap, "-q", "--overwrite", "--clipping", "sigma", "--mesh", "32",
                            "--estimator", est, "--rms-estimator", rms,
                            "--exclude-percentile", "50", src, out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL skymap --clipping sigma --estimator {est}: {r.stderr}")
            failures += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = pb.Background2D(img, 32, sigma_clip=SigmaClip(sigma=3.0, maxiters=10),
                                   bkg_estimator=getattr(pb, pest)(),
                                   bkgrms_estimator=getattr(pb, prms)(), exclude_percentile=50)
            refs = (("BACKGROUND", want.background), ("RMS", want.background_rms))
        with fits.open(out) as f:
            for name, ref in refs:
                got = f[name].data.astype(np.float64)
                bad = np.abs(got - ref) > 1e-5 * np.abs(ref)
                if got.shape != ref.shape or bad.any():
                    print(f"FAIL {name} --estimator {est}: {np.count_nonzero(bad)} pixels differ "
                          "from photutils")
                    failures += 1
    return failures


def main():
    skymap = sys.argv[1]
    rng = np.random.default_rng(20261124)
    yy, xx = np.mgrid[:333, :270]
    img = 500 + 0.8 * xx - 0.4 * yy + 30 * np.sin(xx / 40.0) + rng.normal(0, 9, xx.shape)
    for _ in range(30):
        x0, y0 = rng.uniform(0, 270), rng.uniform(0, 333)
        img += rng.uniform(1e3, 1e5) * np.exp(-((xx - x0) ** 2 + (yy - y0) ** 2) / 6.0)
    img = img.astype(np.float32)
    img[50:60, 100:200] = np.nan
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "in.fits"), os.path.join(tmp, "out.fits")
        header = fits.Header()
        header["OBJECT"] = "skymap test"
        header["EXPTIME"] = 30.0
        fits.PrimaryHDU(img, header).writeto(src)
        for mesh, filt, sep_args in (("64", "3", {}), ("40x24", "5x3",
                                                        dict(bw=40, bh=24, fw=5, fh=3))):
            r = subprocess.run([skymap, "-q", src, out, "--mesh", mesh, "--filter", filt,
                                "--overwrite"], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL skymap --mesh {mesh}: {r.stderr}")
                failures += 1
                continue
            want = sep.Background(img, **sep_args)
            with fits.open(out) as f:
                names = [h.name for h in f]
                if names != ["BACKGROUND", "RMS"]:
                    print(f"FAIL HDUs {names}")
                    failures += 1
                for name, ref in (("BACKGROUND", want.back()), ("RMS", want.rms())):
                    got = f[name].data
                    bad = np.abs(got.astype(np.float64) - ref) > 1e-5 * np.abs(ref)
                    if got.shape != ref.shape or bad.any():
                        print(f"FAIL {name} mesh {mesh}: {np.count_nonzero(bad)} pixels differ")
                        failures += 1
                    if f[name].header.get("OBJECT") != "skymap test" or \
                            f[name].header.get("EXPTIME") != 30.0:
                        print(f"FAIL {name}: the input's header is not kept")
                        failures += 1
        failures += compare_photutils(skymap, img[:256, :256], tmp)
        r = subprocess.run([skymap, src, out], capture_output=True, text=True)
        if r.returncode != 1 or "exists" not in r.stderr:
            print(f"FAIL an existing output: rc {r.returncode}, {r.stderr!r}")
            failures += 1
        for bad in (["--filter", "2"], ["--mesh", "0"], ["--estimator", "mode"],
                    ["--estimator", "mmm"], ["--clipping", "sigma", "--maxiters", "-1"],
                    ["--clipping", "sigma", "--exclude-percentile", "101"]):
            r = subprocess.run([skymap, *bad, src, out + "2"], capture_output=True, text=True)
            if r.returncode != 2 or os.path.exists(out + "2"):
                print(f"FAIL {bad}: rc {r.returncode}, want 2 and no file")
                failures += 1
    print("compare_skymap:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
