"""imcluster end to end: the LABELS and CENTRES of a written file against scikit-learn's KMeans
(algorithm='lloyd') from the same initial centres (labels equal, centres within 1e-5 relative for
float32 data and 1e-12 for float64), against Lloyd's fixed point for k-means++ (each label the
nearest centre, each centre its members' mean) and inertia no worse than scikit-learn's own
k-means++ with the same n_init; NaN, BLANK and transparent pixels -1; the header and the WCS of
the first two axes kept; --standardise as scikit-learn's StandardScaler; an RGB PNG's palette
PNG (indices = labels, colours = centres); bad inputs refused with nothing written. Exits 77
(skipped) without numpy, astropy or scikit-learn.

Usage: compare_imcluster.py IMCLUSTER"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    import numpy as np
    from astropy.io import fits
    from sklearn.cluster import KMeans
except ImportError as e:
    print(f"compare_imcluster: skipped, {e.name} is not installed (astropy, scikit-learn)")
    sys.exit(77)

failures = 0


def check(ok, what):
    global failures
    if not ok:
        print(f"FAIL {what}")
        failures += 1


def run(exe, *args, code=0):
    r = subprocess.run([exe, "-q", *map(str, args)], capture_output=True, text=True)
    check(r.returncode == code, f"imcluster {' '.join(map(str, args))}: exit {r.returncode}, "
                                f"wanted {code}: {r.stderr.strip()}")
    return r


def blobs_cube(rng, k, bands, ny, nx, dtype):
    """k well-separated blobs in `bands` features, one plane a band."""
    centres = rng.uniform(-50, 50, (k, bands))
    which = rng.integers(0, k, (ny, nx))
    cube = centres[which].transpose(2, 0, 1) + rng.normal(0, 1.0, (bands, ny, nx))
    return cube.astype(dtype)


def table(cube):
    """The pixels as rows of bands, FITS order (the order of the label image's pixels)."""
    return cube.reshape(cube.shape[0], -1).T


def write_init(path, centres):
    with open(path, "w") as f:
        f.write("# initial centres\n")
        for c in centres:
            f.write(" ".join(repr(float(v)) for v in c) + "\n")


def read_png(path):
    """A palette PNG's indices (rows top to bottom), palette and transparency, by zlib alone."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, plte, trns = 8, b"", None, None
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        at += 12 + n
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"PLTE":
            plte = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"tRNS":
            trns = np.frombuffer(body, np.uint8)
        elif kind == b"IDAT":
            idat += body
    assert depth == 8 and colour == 3, (depth, colour)
    raw = zlib.decompress(idat)
    out = np.zeros((h, w), np.int64)
    prev = np.zeros(w, np.int64)
    for y in range(h):
        f, row = raw[y * (w + 1)], np.frombuffer(raw[y * (w + 1) + 1:(y + 1) * (w + 1)], np.uint8).astype(np.int64)
        cur = np.zeros(w, np.int64)
        for x in range(w):
            a = cur[x - 1] if x else 0
            b, c = prev[x], prev[x - 1] if x else 0
            if f == 0: p = 0
            elif f == 1: p = a
            elif f == 2: p = b
            elif f == 3: p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else b if pb <= pc else c
            cur[x] = (row[x] + p) & 255
        out[y], prev = cur, cur
    return out, plte, trns


def write_rgba_png(path, rgba):
    """An 8-bit RGBA PNG of rgba (rows top to bottom), unfiltered."""
    h, w, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def given_centres(exe, tmp, rng):
    """From given centres: scikit-learn's labels and centres, float32 and float64, NaN and BLANK."""
    for dtype, rel in ((np.float32, 1e-5), (np.float64, 1e-12)):
        k, bands = 7, 4
        cube = blobs_cube(rng, k, bands, 45, 61, dtype)
        cube[2, 3, 4] = np.nan
        cube[0, 10, 20] = np.inf
        x = table(cube)
        ok = np.isfinite(x).all(1)
        init = x[ok][rng.choice(ok.sum(), k, replace=False)].astype(np.float64)
        src, out, ini = (os.path.join(tmp, n) for n in ("g.fits", "g_out.fits", "g_init.txt"))
        fits.PrimaryHDU(cube).writeto(src, overwrite=True)
        write_init(ini, init)
        run(exe, src, out, "--init", ini, "--tol", "0", "--overwrite")
        km = KMeans(k, init=init.astype(dtype), n_init=1, tol=0, algorithm="lloyd").fit(x[ok])
        with fits.open(out) as f:
            labels, centres = f["LABELS"].data.ravel(), f["CENTRES"].data
            check(f["LABELS"].data.dtype.kind == "i", "labels are integers")
            check(f["LABELS"].header["KMNITER"] == km.n_iter_,
                  f"{dtype.__name__}: {f['LABELS'].header['KMNITER']} iterations, sklearn {km.n_iter_}")
        check((labels[~ok] == -1).all(), f"{dtype.__name__}: NaN and inf pixels get -1")
        check((labels[ok] == km.labels_).all(),
              f"{dtype.__name__}: {(labels[ok] != km.labels_).sum()} labels differ from sklearn's")
        err = np.abs(centres - km.cluster_centers_) / np.maximum(np.abs(km.cluster_centers_), 1)
        check(err.max() <= rel, f"{dtype.__name__}: centres differ from sklearn's by {err.max():.3g}")
    # BLANK in an integer cube
    icube = np.clip(blobs_cube(rng, 3, 2, 30, 40, np.float64) * 100, -30000, 30000).astype(np.int16)
    icube[1, 7, 9] = -32768
    h = fits.Header()
    h["BLANK"] = -32768
    src, out = os.path.join(tmp, "int.fits"), os.path.join(tmp, "int_out.fits")
    fits.PrimaryHDU(icube, h).writeto(src, overwrite=True)
    run(exe, src, out, "-k", "3")
    labels = fits.getdata(out, "LABELS")
    check(labels[7, 9] == -1 and (labels >= 0).sum() == labels.size - 1, "a BLANK pixel gets -1")


def plusplus(exe, tmp, rng):
    """k-means++: a fixed point of Lloyd's, the header kept, no worse than scikit-learn's."""
    k, bands = 6, 3
    cube = blobs_cube(rng, k, bands, 50, 70, np.float32)
    h = fits.Header()
    h["OBJECT"] = "imcluster test"
    for key, v in (("CTYPE1", "RA---TAN"), ("CTYPE2", "DEC--TAN"), ("CRVAL1", 150.0),
                   ("CRVAL2", 2.0), ("CRPIX1", 35.0), ("CRPIX2", 25.0), ("CDELT1", -1e-4),
                   ("CDELT2", 1e-4), ("CTYPE3", "WAVE"), ("CRVAL3", 5e-7), ("CDELT3", 1e-7),
                   ("PC1_3", 0.0), ("PC3_3", 1.0)):
        h[key] = v
    src, out = os.path.join(tmp, "pp.fits"), os.path.join(tmp, "pp_out.fits")
    fits.PrimaryHDU(cube, h).writeto(src, overwrite=True)
    run(exe, src, out, "-k", k, "--n-init", 3, "--seed", 11)
    x = table(cube).astype(np.float64)
    with fits.open(out) as f:
        labels, centres, hd = f["LABELS"].data.ravel(), f["CENTRES"].data, f["LABELS"].header
        check(hd.get("OBJECT") == "imcluster test" and hd.get("CTYPE1") == "RA---TAN"
              and hd.get("CRVAL2") == 2.0, "the input's header and sky WCS are kept")
        check("CTYPE3" not in hd and "PC3_3" not in hd and "PC1_3" not in hd,
              "the band axis's WCS is left out of the 2-D label image")
        check(hd["NAXIS"] == 2 and hd["KMK"] == k and hd["KMSEED"] == 11, "shape and keywords")
        check([f[0].verify_checksum(), f[1].verify_checksum()] == [1, 1], "checksums")
        inertia = hd["KMINERT"]
    d2 = ((x[:, None, :] - centres[None]) ** 2).sum(2)
    check((d2.argmin(1) == labels).all(), "k-means++: each label is the nearest centre")
    for j in range(k):
        m = x[labels == j].mean(0)
        check(np.abs(m - centres[j]).max() <= 1e-4 * max(1, np.abs(m).max()),
              f"k-means++: centre {j} is its members' mean")
    check(abs(d2.min(1).sum() - inertia) <= 1e-4 * inertia, "KMINERT is the inertia")
    ref = KMeans(k, n_init=3, random_state=0, algorithm="lloyd").fit(x.astype(np.float32))
    check(inertia <= ref.inertia_ * (1 + 1e-5),
          f"k-means++ inertia {inertia} is worse than sklearn's {ref.inertia_}")
    out2 = os.path.join(tmp, "pp_again.fits")
    run(exe, src, out2, "-k", k, "--n-init", 3, "--seed", 11)
    check((fits.getdata(out2) == fits.getdata(out)).all()
          and (fits.getdata(out2, 1) == fits.getdata(out, 1)).all(), "the same seed, the same result")


def standardised(exe, tmp, rng):
    """--standardise: sklearn on StandardScaler's table from the same (scaled) centres."""
    k = 4
    cube = blobs_cube(rng, k, 3, 40, 50, np.float64)
    cube[1] *= 1000.0
    cube[2] = 7.0  # a constant band: centred only
    x = table(cube)
    init = x[rng.choice(len(x), k, replace=False)]
    src, out, ini = (os.path.join(tmp, n) for n in ("s.fits", "s_out.fits", "s_init.txt"))
    fits.PrimaryHDU(cube).writeto(src, overwrite=True)
    write_init(ini, init)
    run(exe, src, out, "--init", ini, "--standardise", "--tol", "0")
    mean, sd = x.mean(0), x.std(0)
    sd[sd == 0] = 1
    km = KMeans(k, init=(init - mean) / sd, n_init=1, tol=0, algorithm="lloyd").fit((x - mean) / sd)
    with fits.open(out) as f:
        labels, centres = f[0].data.ravel(), f[1].data
        check(abs(f[1].header.get("KMSCAL2") - sd[1]) <= 1e-12 * sd[1] and f[0].header["KMSTAND"],
              "scale keywords")
    check((labels == km.labels_).all(), "--standardise: labels equal sklearn's")
    want = km.cluster_centers_ * sd + mean
    check(np.abs(centres - want).max() <= 1e-9 * np.abs(want).max(),
          "--standardise: centres in the input's units")


def png_colours(exe, tmp, rng):
    """An RGBA PNG: its classes as a palette PNG in the centres' colours, transparent -1."""
    k = 5
    palette = rng.integers(0, 256, (k, 3))
    which = rng.integers(0, k, (33, 47))
    rgba = np.concatenate([np.clip(palette[which] + rng.integers(-3, 4, (33, 47, 3)), 0, 255),
                           np.full((33, 47, 1), 255)], axis=2)
    rgba[0, 0, 3] = 0  # the top left pixel is transparent
    src = os.path.join(tmp, "rgb.png")
    write_rgba_png(src, rgba)
    out, png, txt = (os.path.join(tmp, n) for n in ("rgb_out.fits", "rgb_out.png", "rgb.txt"))
    run(exe, src, out, "-k", k, "--png", png, "--centres", txt)
    labels = fits.getdata(out)
    centres = fits.getdata(out, "CENTRES")
    check(labels.shape == (33, 47) and labels[-1, 0] == -1,
          "a PNG's top row is the label image's last, its transparent pixel -1")
    idx, plte, trns = read_png(png)
    want = np.where(labels[::-1] < 0, k, labels[::-1])
    check((idx == want).all(), "the palette PNG's indices are the labels")
    check(len(plte) == k + 1 and (np.abs(plte[:k] - centres).max() <= 0.5 + 1e-9)
          and trns is not None and trns[k] == 0 and (trns[:k] == 255).all(),
          "the palette holds the centres' colours and a transparent no-class entry")
    rows = np.loadtxt(txt)
    check(rows.shape == (k, 5) and (rows[:, 1] == np.bincount(labels[labels >= 0], minlength=k)).all()
          and np.array_equal(rows[:, 2:], centres), "--centres: labels, counts and centres")
    x = rgba[::-1, :, :3].reshape(-1, 3).astype(np.float64)
    ok = rgba[::-1, :, 3].ravel() > 0
    d2 = ((x[ok][:, None] - centres[None]) ** 2).sum(2)
    check((d2.argmin(1) == labels.ravel()[ok]).all(), "RGB: each label is the nearest centre")


def refusals(exe, tmp, rng):
    """Bad inputs: clear errors, usage errors exit 2, and nothing half-written."""
    cube = blobs_cube(rng, 2, 2, 4, 5, np.float32)
    src, out = os.path.join(tmp, "bad.fits"), os.path.join(tmp, "bad_out.fits")
    fits.PrimaryHDU(cube).writeto(src, overwrite=True)
    before = sorted(os.listdir(tmp))
    run(exe, src, out, "-k", "21", code=1)           # k more than the pixels
    run(exe, src, out, "-k", "0", code=2)
    run(exe, src, out, "--tol", "-1", code=2)
    run(exe, src, code=2)
    run(exe, os.path.join(tmp, "missing.fits"), out, code=1)
    run(exe, src, src, "--overwrite", code=1)        # the output is the input
    ini = os.path.join(tmp, "bad_init.txt")
    write_init(ini, np.zeros((2, 3)))
    run(exe, src, out, "--init", ini, code=1)         # 3 values a centre, 2 bands
    run(exe, src, out, "--init", ini, "-k", "3", code=1)
    nan = np.full((2, 4, 5), np.nan, np.float32)
    fits.PrimaryHDU(nan).writeto(os.path.join(tmp, "nan.fits"))
    r = run(exe, os.path.join(tmp, "nan.fits"), out, code=1)
    check("no pixel" in r.stderr, "an all-NaN image says why")
    check(sorted(os.listdir(tmp)) == sorted(before + ["bad_init.txt", "nan.fits"]),
          "failed runs leave no file behind")
    run(exe, src, out, "-k", "2")
    stamp = open(out, "rb").read()
    run(exe, src, out, "-k", "2", code=1)             # exists
    check(open(out, "rb").read() == stamp, "an existing output is kept")
    r = subprocess.run([exe, "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and "Usage: imcluster" in r.stdout, "--help")


def main():
    exe = sys.argv[1]
    rng = np.random.default_rng(20261124)
    with tempfile.TemporaryDirectory() as tmp:
        for part in (given_centres, plusplus, standardised, png_colours):
            part(exe, tmp, rng)
    with tempfile.TemporaryDirectory() as tmp:
        refusals(exe, tmp, rng)
    print(f"compare_imcluster: {'FAILED ' + str(failures) if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
