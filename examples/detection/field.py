"""field.py - a synthetic field for source detection with its truth: stars (Gaussian PSF) and
galaxies (elliptical exponential discs) of known positions and fluxes, on a sky with a strong
gradient and nebulosity (broad blobs and a filament), with Gaussian read noise and Poisson-like
noise from the sky."""
import numpy as np


def make_field(n=1024, n_stars=300, n_galaxies=150, seed=2026):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:n, :n].astype(np.float64)
    sky = 1000.0 + 600.0 * xx / n + 300.0 * (yy / n) ** 2  # a strong gradient
    for _ in range(6):  # nebulosity: broad blobs
        x0, y0, s = rng.uniform(0, n), rng.uniform(0, n), rng.uniform(n / 20, n / 6)
        sky += rng.uniform(100, 400) * np.exp(-((xx - x0) ** 2 + (yy - y0) ** 2) / (2 * s * s))
    d = np.abs((yy - 0.6 * xx - 0.2 * n)) / np.sqrt(1.36)  # and a filament
    sky += 250.0 * np.exp(-d ** 2 / (2 * (n / 60) ** 2))
    image = sky.copy()
    truth = []
    psf = 1.6
    for _ in range(n_stars):
        x0, y0 = rng.uniform(8, n - 8), rng.uniform(8, n - 8)
        flux = 10 ** rng.uniform(2.6, 5.0)
        image += flux / (2 * np.pi * psf ** 2) * np.exp(-((xx - x0) ** 2 + (yy - y0) ** 2)
                                                        / (2 * psf ** 2))
        truth.append((x0, y0, flux, 0))
    for _ in range(n_galaxies):
        x0, y0 = rng.uniform(15, n - 15), rng.uniform(15, n - 15)
        flux = 10 ** rng.uniform(3.0, 5.2)
        r = rng.uniform(1.5, 4.0)
        q, th = rng.uniform(0.4, 1.0), rng.uniform(0, np.pi)
        dx, dy = xx - x0, yy - y0
        u = dx * np.cos(th) + dy * np.sin(th)
        v = (-dx * np.sin(th) + dy * np.cos(th)) / q
        prof = np.exp(-np.sqrt(u * u + v * v) / r)
        image += flux * prof / prof.sum()
        truth.append((x0, y0, flux, 1))
    noise = np.sqrt(25.0 ** 2 + np.maximum(image, 0) / 4.0)  # read noise and a gain of 4
    image = image + noise * rng.normal(size=image.shape)
    # FITS pixel (1, 1) is numpy [0, 0]: truth in 0-based numpy (x, y)
    return image.astype(np.float32), sky.astype(np.float32), np.array(truth)
