"""clstats.Background against SEP (sep.Background, SExtractor's background) and photutils'
Background2D: the maps and global values of float32 images, with gradients, sources, NaN,
masks, sizes not multiples of the box; skipped, saying so, where a peer is missing."""
import numpy as np
import pytest

import clstats

RTOL = 1e-5  # issue 27's tolerance; the library gives SEP's bits on every image tried


def field(rng, shape, sources=40, gradient=True, nan_block=False):
    """Noise on a sky with a strong gradient and bright sources (Gaussian stars)."""
    ny, nx = shape
    yy, xx = np.mgrid[:ny, :nx]
    sky = 200.0 + (0.5 * xx + 0.3 * yy if gradient else 0.0)
    img = sky + rng.normal(0.0, 7.0, shape)
    for _ in range(sources):
        x0, y0 = rng.uniform(0, nx), rng.uniform(0, ny)
        img += rng.uniform(500, 50000) * np.exp(-((xx - x0) ** 2 + (yy - y0) ** 2) / 4.5)
    img = img.astype(np.float32)
    if nan_block:
        img[ny // 4: ny // 2, nx // 5: nx // 2] = np.nan
    return img


def close(ours, theirs):
    theirs = np.asarray(theirs, np.float64)
    diff = np.abs(np.asarray(ours, np.float64) - theirs)
    assert np.all(diff <= RTOL * np.abs(theirs)), f"max relative {np.max(diff / abs(theirs))}"


sep = None


def need_sep():
    global sep
    sep = pytest.importorskip("sep", reason="SEP (python3-sep) is not installed")


@pytest.mark.parametrize("shape", [(256, 256), (300, 421), (64, 64), (100, 33), (37, 500),
                                   (130, 129)])
def test_background_equals_sep(rng, shape):
    need_sep()
    img = field(rng, shape)
    ours = clstats.Background(img)
    theirs = sep.Background(img, bw=64, bh=64, fw=3, fh=3)
    close(ours.background, theirs.back())
    close(ours.rms, theirs.rms())
    close(ours.global_background, theirs.globalback)
    close(ours.global_rms, theirs.globalrms)


@pytest.mark.parametrize("box,filt,fthresh", [((32, 48), (5, 3), 0.0), ((16, 16), (1, 1), 0.0),
                                              ((50, 20), (3, 5), 2.0), ((7, 9), (3, 3), 0.0)])
def test_background_equals_sep_other_meshes(rng, box, filt, fthresh):
    need_sep()
    img = field(rng, (211, 187))
    ours = clstats.Background(img, box_size=box, filter_size=filt, filter_threshold=fthresh)
    theirs = sep.Background(img, bh=box[0], bw=box[1], fh=filt[0], fw=filt[1], fthresh=fthresh)
    close(ours.background, theirs.back())
    close(ours.rms, theirs.rms())
    close(ours.global_background, theirs.globalback)


def test_background_nan_and_mask_are_missing(rng):
    need_sep()
    img = field(rng, (320, 400), nan_block=True)
    mask = np.zeros(img.shape, bool)
    mask[200:, 250:] = True  # whole boxes bad: filled from their neighbours
    mask[10:20, 10:300] = True
    ours = clstats.Background(img, mask=mask)
    theirs = sep.Background(img, mask=mask)
    close(ours.background, theirs.back())
    close(ours.rms, theirs.rms())
    close(ours.global_rms, theirs.globalrms)


def test_background_one_row_or_column_of_boxes(rng):
    need_sep()
    for shape in [(40, 300), (300, 40), (50, 50)]:
        img = field(rng, shape, sources=3)
        ours = clstats.Background(img)
        theirs = sep.Background(img)
        close(ours.background, theirs.back())
        close(ours.rms, theirs.rms())


def test_background_constant_and_tied_pixels(rng):
    need_sep()
    flat = np.full((130, 140), 3.25, np.float32)
    ours, theirs = clstats.Background(flat), sep.Background(flat)
    close(ours.background, theirs.back())
    assert ours.global_rms == theirs.globalrms
    ties = np.round(rng.normal(0, 2, (200, 200))).astype(np.float32)
    ours, theirs = clstats.Background(ties), sep.Background(ties)
    close(ours.background, theirs.back())
    close(ours.rms, theirs.rms())


def test_background_float64_is_rounded_to_float32_as_sep_does(rng):
    need_sep()
    img = field(rng, (150, 170)).astype(np.float64) + 1e-4
    ours = clstats.Background(img)
    theirs = sep.Background(img)
    close(ours.background, theirs.back(dtype=np.float32))


def test_background_estimators_and_subtract(rng):
    img = field(rng, (200, 200), sources=0, gradient=False)
    for est in ("sextractor", "median", "mean"):
        b = clstats.Background(img, estimator=est)
        assert abs(b.global_background - 200.0) < 1.0
        assert abs(b.global_rms - 7.0) < 0.5
    b = clstats.Background(img)
    np.testing.assert_array_equal(b.subtract(img), img - b.background)
    assert b.background_mesh.shape == (4, 4)


def test_background_refuses_bad_arguments(rng):
    img = field(rng, (64, 64), sources=0)
    for kwargs in ({"filter_size": 2}, {"box_size": 0}, {"estimator": "mode"},
                   {"rms_estimator": "biweight"}, {"sigma_clip": 0}, {"mask": np.zeros((3, 3))}):
        with pytest.raises(ValueError):
            clstats.Background(img, **kwargs)
    with pytest.raises(ValueError):
        clstats.Background(np.zeros(10, np.float32))


def test_background_close_to_photutils(rng):
    photutils = pytest.importorskip("photutils.background",
                                    reason="photutils is not installed (not in Debian 12)")
    from astropy.stats import SigmaClip
    img = field(rng, (256, 256))
    theirs = photutils.Background2D(img, 64, filter_size=3, sigma_clip=SigmaClip(sigma=3.0),
                                    bkg_estimator=photutils.SExtractorBackground())
    ours = clstats.Background(img)
    # photutils clips and takes the mode on the pixels, not on SExtractor's histogram, and
    # interpolates by zoom: the same background to well within the noise, not the same bits.
    assert np.max(np.abs(ours.background - theirs.background)) < 0.2 * ours.global_rms
