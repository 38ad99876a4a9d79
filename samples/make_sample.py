#!/usr/bin/env python3
"""make_sample.py - makes samples/sky.fits, the small synthetic star field bundled for trying
madfilter: a sky background with a smooth gradient, Gaussian read and photon noise, a few
hundred Gaussian stars and two NaN (dead) pixels, with a realistic header and a TAN WCS.

Fixed seed, so running it again gives the same file:  /usr/bin/python3 samples/make_sample.py
Needs numpy and astropy.
"""
import os

import numpy as np
from astropy.io import fits
from astropy.time import Time
from astropy.wcs import WCS

SEED = 20261122
NX, NY = 256, 384  # NAXIS1 (columns), NAXIS2 (rows): float32, about 400 KB
N_STARS = 300


def star_field(rng):
    y, x = np.mgrid[0:NY, 0:NX].astype(np.float64)
    # Sky: 1000 ADU with a gentle tilt and curvature, as scattered moonlight gives.
    sky = 1000.0 + 0.4 * x + 0.25 * y + 2e-4 * (x - NX / 2) ** 2
    image = sky.copy()
    # Stars: fluxes from a steep power law (many faint, few bright), seeing FWHM about 2.8 px.
    flux = 300.0 * (1.0 - rng.random(N_STARS)) ** (-1.0 / 1.3)
    flux = np.minimum(flux, 2e6)
    sx = rng.uniform(-5, NX + 5, N_STARS)
    sy = rng.uniform(-5, NY + 5, N_STARS)
    sigma = rng.normal(1.2, 0.08, N_STARS)
    for f, cx, cy, s in zip(flux, sx, sy, sigma):
        x0, x1 = int(max(cx - 8 * s, 0)), int(min(cx + 8 * s + 1, NX))
        y0, y1 = int(max(cy - 8 * s, 0)), int(min(cy + 8 * s + 1, NY))
        if x0 >= x1 or y0 >= y1:
            continue
        r2 = (x[y0:y1, x0:x1] - cx) ** 2 + (y[y0:y1, x0:x1] - cy) ** 2
        image[y0:y1, x0:x1] += f / (2 * np.pi * s * s) * np.exp(-r2 / (2 * s * s))
    # Noise: Poisson in electrons (gain 2 e-/ADU) plus 5 ADU read noise.
    gain = 2.0
    image = rng.poisson(image * gain) / gain + rng.normal(0.0, 5.0, image.shape)
    image = image.astype(np.float32)
    image[100, 50] = np.nan  # dead pixels
    image[250, 200] = np.nan
    return image


def header():
    h = fits.Header()
    h["OBJECT"] = ("SYNTHETIC-FIELD", "synthetic star field (not a real object)")
    h["TELESCOP"] = ("libclstats", "no telescope: made by samples/make_sample.py")
    h["INSTRUME"] = ("SIMCAM", "simulated CCD")
    h["FILTER"] = "R"
    h["DATE-OBS"] = ("2025-10-14T22:31:07.250", "UTC start of exposure")
    h["MJD-OBS"] = (round(Time(h["DATE-OBS"], scale="utc").mjd, 8), "[d] MJD of DATE-OBS")
    h["EXPTIME"] = (120.0, "[s] exposure time")
    h["GAIN"] = (2.0, "[e-/ADU]")
    h["RDNOISE"] = (5.0, "[ADU] read noise")
    h["BUNIT"] = "adu"
    # TAN projection near M31, 0.6 arcsec pixels, north up and east left, rotated 1.5 degrees:
    # written as CD matrix, as most observatory pipelines do.
    scale, rot = 0.6 / 3600.0, np.deg2rad(1.5)
    h["WCSAXES"] = 2
    h["CTYPE1"] = ("RA---TAN", "gnomonic projection")
    h["CTYPE2"] = ("DEC--TAN", "gnomonic projection")
    h["CRVAL1"] = (10.684708, "[deg] RA at the reference pixel")
    h["CRVAL2"] = (41.268750, "[deg] Dec at the reference pixel")
    h["CRPIX1"] = (NX / 2 + 0.5, "reference pixel: the image centre")
    h["CRPIX2"] = (NY / 2 + 0.5, "reference pixel: the image centre")
    h["CD1_1"] = (round(-scale * np.cos(rot), 12), "[deg/px]")
    h["CD1_2"] = (round(scale * np.sin(rot), 12), "[deg/px]")
    h["CD2_1"] = (round(scale * np.sin(rot), 12), "[deg/px]")
    h["CD2_2"] = (round(scale * np.cos(rot), 12), "[deg/px]")
    h["CUNIT1"] = "deg"
    h["CUNIT2"] = "deg"
    h["RADESYS"] = "ICRS"
    h["COMMENT"] = "Synthetic: sky 1000 ADU + gradient, 300 Gaussian stars, Poisson and"
    h["COMMENT"] = "read noise; dead (NaN) pixels at 1-based (x, y) = (51, 101), (201, 251)."
    h["HISTORY"] = "made by samples/make_sample.py, seed %d" % SEED
    WCS(h)  # fails loudly if the WCS is not valid
    return h


def main():
    rng = np.random.default_rng(SEED)
    image = star_field(rng)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sky.fits")
    fits.PrimaryHDU(image, header()).writeto(out, overwrite=True)
    print("wrote %s (%d x %d, float32)" % (out, NX, NY))


if __name__ == "__main__":
    main()
