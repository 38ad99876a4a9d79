"""pipeline.py - the detection example: one synthetic field (field.py) run through SExtractor
three ways and through SEP, each judged against the truth.

  sextractor-auto      SExtractor's own background (BACK_TYPE AUTO, 64-pixel mesh, 3x3 filter)
  sextractor-skymap    our mesh maps (skymap): the image less BACKGROUND with BACK_TYPE MANUAL
                       0, and RMS as WEIGHT_TYPE MAP_RMS
  sextractor-madfilter our per-pixel maps (madfilter --maps residual,sigma, a 31-pixel window):
                       RESIDUAL with BACK_TYPE MANUAL 0, SIGMA as MAP_RMS
  sep                  SEP's background and extract (the same thresholds), Kron fluxes

Every method detects at 3 sigma over 5 pixels with a 3x3 Gaussian filter and measures FLUX_AUTO.
Usage: python3 pipeline.py [--size 1024] [--out DIR] [--plot completeness.png]
Writes the catalogues and the completeness plot (OUT/completeness.png unless --plot says where)
into --out. Needs source-extractor, numpy, astropy; SEP and matplotlib where installed; skymap and madfilter
from the build (--bin, default ../../build/apps)."""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
from astropy.io import fits

from field import make_field

HERE = os.path.dirname(os.path.abspath(__file__))
PARAMS = ["NUMBER", "X_IMAGE", "Y_IMAGE", "FLUX_AUTO"]


def sextractor(image, out, name, extra):
    """Runs source-extractor on image and returns its catalogue as rows (x, y, flux), 0-based."""
    param = os.path.join(out, "example.param")
    with open(param, "w") as f:
        f.write("\n".join(PARAMS) + "\n")
    cat = os.path.join(out, f"{name}.cat")
    conv = "/usr/share/source-extractor/gauss_2.0_3x3.conv"
    cmd = ["source-extractor", image, "-c", "/usr/share/source-extractor/default.sex",
           "-CATALOG_NAME", cat, "-CATALOG_TYPE", "ASCII", "-PARAMETERS_NAME", param,
           "-FILTER_NAME", conv, "-DETECT_THRESH", "3", "-ANALYSIS_THRESH", "3",
           "-DETECT_MINAREA", "5", "-BACK_SIZE", "64", "-BACK_FILTERSIZE", "3",
           "-CHECKIMAGE_TYPE", "NONE", "-VERBOSE_TYPE", "QUIET", "-GAIN", "4",
           "-MAG_ZEROPOINT", "25", *extra]
    subprocess.run(cmd, check=True)
    rows = np.loadtxt(cat, comments="#", ndmin=2)
    return np.column_stack([rows[:, 1] - 1, rows[:, 2] - 1, rows[:, 3]])


def run_sep(image):
    import sep
    data = image.astype(np.float32)
    bkg = sep.Background(data, bw=64, bh=64, fw=3, fh=3)
    sub = data - bkg.back()
    kernel = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32)
    objs = sep.extract(sub, 3.0, err=bkg.rms(), minarea=5, filter_kernel=kernel)
    kr, _ = sep.kron_radius(sub, objs["x"], objs["y"], objs["a"], objs["b"], objs["theta"], 6.0)
    flux, _, _ = sep.sum_ellipse(sub, objs["x"], objs["y"], objs["a"], objs["b"], objs["theta"],
                                 2.5 * kr, err=bkg.rms(), subpix=1)
    return np.column_stack([objs["x"], objs["y"], flux])


def judge(cat, truth, radius=2.0):
    """Completeness (truths found), purity (detections that are true) and flux errors, each
    truth matched to its nearest detection within radius pixels (each detection used once)."""
    found = np.zeros(len(truth), bool)
    used = np.zeros(len(cat), bool)
    ferr = np.full(len(truth), np.nan)
    order = np.argsort(-truth[:, 2])  # bright truths claim their detection first
    for i in order:
        d2 = (cat[:, 0] - truth[i, 0]) ** 2 + (cat[:, 1] - truth[i, 1]) ** 2
        d2[used] = np.inf
        j = int(np.argmin(d2)) if len(cat) else -1
        if j >= 0 and d2[j] <= radius ** 2:
            found[i] = used[j] = True
            ferr[i] = cat[j, 2] / truth[i, 2] - 1
    return found, used, ferr


def draw_completeness(path, results, logf, bins, size):
    """Completeness against log10(true flux), a line a method, with binomial error bars."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("pipeline: matplotlib is not installed (Debian: python3-matplotlib); no plot")
        return
    mids = 0.5 * (bins[:-1] + bins[1:])
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for k, (name, found) in enumerate(results.items()):
        comp, err = [], []
        for lo, hi in zip(bins[:-1], bins[1:]):
            inside = (logf >= lo) & (logf < hi)
            c = found[inside].mean() if inside.any() else np.nan
            comp.append(c)
            err.append(np.sqrt(c * (1 - c) / inside.sum()) if inside.any() else np.nan)
        # methods nudged apart along x so that their error bars do not hide each other
        ax.errorbar(mids + (k - 1.5) * 0.015, comp, yerr=err, marker="o", ms=4, capsize=2,
                    label=name)
    ax.set_xlabel("log10 true flux (counts)")
    ax.set_ylabel("completeness")
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.set_title(f"{size}x{size} synthetic field, 3 sigma over 5 pixels")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print("pipeline: plot written to", path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--stars", type=int, default=300)
    p.add_argument("--galaxies", type=int, default=150)
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "apps"))
    p.add_argument("--plot", default=None,
                   help="the completeness plot's PNG (default OUT/completeness.png; '' for none)")
    p.add_argument("--device", default=None)
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless every method finds most bright sources, and truly")
    a = p.parse_args()
    if not shutil.which("source-extractor"):
        print("pipeline: source-extractor is not installed (Debian: source-extractor)")
        return 77
    os.makedirs(a.out, exist_ok=True)
    image, sky, truth = make_field(a.size, a.stars, a.galaxies)
    src = os.path.join(a.out, "field.fits")
    fits.PrimaryHDU(image).writeto(src, overwrite=True)
    dev = ["--device", a.device] if a.device else []

    maps = os.path.join(a.out, "skymap.fits")
    subprocess.run([os.path.join(a.bin, "skymap", "skymap"), "-q", "--overwrite", src, maps,
                    "--mesh", "64", "--filter", "3", *dev], check=True)
    back, rms = fits.getdata(maps, "BACKGROUND"), fits.getdata(maps, "RMS")
    fits.PrimaryHDU(image - back).writeto(os.path.join(a.out, "sub.fits"), overwrite=True)
    fits.PrimaryHDU(rms).writeto(os.path.join(a.out, "rms.fits"), overwrite=True)

    mad = os.path.join(a.out, "madfilter.fits")
    if os.path.exists(mad):
        os.remove(mad)
    subprocess.run([os.path.join(a.bin, "madfilter", "madfilter"), "-q", src, mad, "-w", "31",
                    "--maps", "residual,sigma", *dev], check=True)
    fits.PrimaryHDU(fits.getdata(mad, "RESIDUAL")).writeto(os.path.join(a.out, "res.fits"),
                                                             overwrite=True)
    fits.PrimaryHDU(fits.getdata(mad, "SIGMA")).writeto(os.path.join(a.out, "sig.fits"),
                                                          overwrite=True)
    manual = ["-BACK_TYPE", "MANUAL", "-BACK_VALUE", "0", "-WEIGHT_TYPE", "MAP_RMS"]
    cats = {
        "sextractor-auto": sextractor(src, a.out, "auto", []),
        "sextractor-skymap": sextractor(os.path.join(a.out, "sub.fits"), a.out, "skymap",
                                        manual + ["-WEIGHT_IMAGE",
                                                  os.path.join(a.out, "rms.fits")]),
        "sextractor-madfilter": sextractor(os.path.join(a.out, "res.fits"), a.out, "madfilter",
                                           manual + ["-WEIGHT_IMAGE",
                                                     os.path.join(a.out, "sig.fits")]),
    }
    try:
        cats["sep"] = run_sep(image)
    except ImportError:
        print("pipeline: SEP is not installed; its row is left out")

    bright = truth[:, 2] >= 10 ** 3.5
    back_err = np.median(np.abs(back - sky))
    print(f"field {a.size}x{a.size}: {len(truth)} sources ({int(bright.sum())} with flux >= "
          f"10^3.5); skymap background vs true sky: median |error| {back_err:.2f} "
          f"(noise ~{np.median(rms):.1f})")
    print(f"{'method':22s} {'detections':>10s} {'complete':>9s} {'complete>=10^3.5':>17s} "
          f"{'purity':>7s} {'|flux err| median':>18s} {'flux bias':>10s}")
    results, failed = {}, []
    for name, cat in cats.items():
        found, used, ferr = judge(cat, truth)
        results[name] = found
        fe = ferr[found & bright]
        if a.check and (found[bright].mean() < 0.6 or (len(cat) and used.mean() < 0.85)
                        or not np.median(np.abs(fe)) < 0.35):
            failed.append(name)
        print(f"{name:22s} {len(cat):10d} {found.mean():9.3f} {found[bright].mean():17.3f} "
              f"{used.mean() if len(cat) else 0:7.3f} {np.median(np.abs(fe)):18.3f} "
              f"{np.median(fe):10.3f}")
    bins = np.arange(2.5, 5.5, 0.25)
    print("completeness by log10(flux):", " ".join(f"{b:.2f}" for b in bins[:-1]))
    logf = np.log10(truth[:, 2])
    for name, found in results.items():
        comp = [found[(logf >= lo) & (logf < hi)].mean() if np.any((logf >= lo) & (logf < hi))
                else np.nan for lo, hi in zip(bins[:-1], bins[1:])]
        print(f"  {name:22s}", " ".join(f"{c:4.2f}" for c in comp))
    plot = a.plot if a.plot is not None else os.path.join(a.out, "completeness.png")
    if plot:
        draw_completeness(plot, results, logf, bins, a.size)
    if failed:
        print("pipeline: FAILED for", ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
