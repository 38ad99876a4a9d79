"""clstats.Background against SEP (sep.Background, SExtractor's background) and photutils'
Background2D: the maps and global values of float32 images, with gradients, sources, NaN,
masks, sizes not multiples of the box, boxes left out (NaN blocks, masks) at corners, edges and
inside; with clipping='sigma' the maps, meshes and global values against photutils' (every
estimator, excluded boxes filled by its inverse-distance weighting) and the estimators against
astropy's functions; skipped,
saying so, where a peer is missing."""
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


def need_photutils():
    return pytest.importorskip("photutils.background",
                               reason="photutils is not installed (tools/setup.sh --tests)")


PHOTUTILS_BKG = {"sextractor": "SExtractorBackground", "median": "MedianBackground",
                 "mean": "MeanBackground", "mmm": "MMMBackground",
                 "biweight": "BiweightLocationBackground"}
PHOTUTILS_RMS = {"std": "StdBackgroundRMS", "mad_std": "MADStdBackgroundRMS",
                 "biweight": "BiweightScaleBackgroundRMS"}


def photutils_background(img, box, estimator, rms_estimator, excluded=False, **kwargs):
    import warnings
    from astropy.stats import SigmaClip
    pb = need_photutils()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its warnings on NaN pixels
        b = pb.Background2D(img, box, sigma_clip=SigmaClip(sigma=3.0, maxiters=10),
                            bkg_estimator=getattr(pb, PHOTUTILS_BKG[estimator])(),
                            bkgrms_estimator=getattr(pb, PHOTUTILS_RMS[rms_estimator])(),
                            **kwargs)
        b.background_mesh, b.background_rms_mesh  # computed inside the filter
    # the tests say whether they mean boxes to be excluded (and filled by inverse distance)
    assert np.isnan(b.background_mesh_masked).any() == excluded, "boxes excluded or not"
    return b


def close_meshes(ours, theirs):
    close(ours.background, theirs.background)
    close(ours.rms, theirs.background_rms)
    close(ours.background_mesh, theirs.background_mesh)
    close(ours.rms_mesh, theirs.background_rms_mesh)
    close(ours.global_background, theirs.background_median)
    close(ours.global_rms, theirs.background_rms_median)


@pytest.mark.parametrize("estimator", sorted(PHOTUTILS_BKG))
@pytest.mark.parametrize("rms_estimator", sorted(PHOTUTILS_RMS))
def test_sigma_meshes_equal_photutils(rng, estimator, rms_estimator):
    img = field(rng, (256, 320))
    theirs = photutils_background(img, 32, estimator, rms_estimator, filter_size=3,
                                  exclude_percentile=50)
    ours = clstats.Background(img, 32, filter_size=3, clipping="sigma", estimator=estimator,
                              rms_estimator=rms_estimator, exclude_percentile=50)
    close_meshes(ours, theirs)


@pytest.mark.parametrize("box,filt,fthresh", [((32, 48), (5, 3), None), ((16, 16), (1, 1), None),
                                              ((40, 20), (3, 5), 260.0), ((8, 8), (3, 3), None)])
def test_sigma_other_meshes_nan_and_mask_equal_photutils(rng, box, filt, fthresh):
    img = field(rng, (240, 240), sources=15)
    img[rng.random(img.shape) < 0.01] = np.nan
    img[5, 7] = np.inf
    mask = rng.random(img.shape) < 0.02
    theirs = photutils_background(img, box, "mmm", "mad_std", mask=mask, filter_size=filt,
                                  filter_threshold=fthresh, exclude_percentile=60)
    ours = clstats.Background(img, box, filter_size=filt, mask=mask, clipping="sigma",
                              estimator="mmm", rms_estimator="mad_std", exclude_percentile=60,
                              filter_threshold=fthresh or 0.0)
    close_meshes(ours, theirs)


def test_sigma_float64_and_photutils_defaults(rng):
    img = field(rng, (192, 256), sources=5).astype(np.float64) + rng.normal(0, 1e-3, (192, 256))
    theirs = photutils_background(img, 64, "sextractor", "std")  # photutils' defaults
    close_meshes(clstats.Background(img, 64, clipping="sigma"), theirs)


def test_sigma_estimators_equal_astropy(rng):
    """One box, no filter: the mesh is the estimator over astropy's sigma-clipped pixels."""
    from astropy.stats import (SigmaClip, biweight_location, biweight_scale, mad_std)
    img = field(rng, (96, 80), sources=3, gradient=False)
    img[rng.random(img.shape) < 0.02] = np.nan
    finite = img[np.isfinite(img)].astype(np.float64)
    kept = SigmaClip(sigma=2.5, maxiters=None)(finite, masked=False, axis=None)
    med, mean = np.median(kept), np.mean(kept)
    want_bkg = {"median": med, "mean": mean, "mmm": 3 * med - 2 * mean,
                "biweight": biweight_location(kept, c=6.0)}
    want_rms = {"std": np.std(kept), "mad_std": mad_std(kept),
                "biweight": biweight_scale(kept, c=9.0)}
    for est, want in want_bkg.items():
        b = clstats.Background(img, (96, 80), filter_size=1, clipping="sigma", sigma_clip=2.5,
                               maxiters=None, estimator=est, exclude_percentile=100)
        close(b.background_mesh[0, 0], want)
    for est, want in want_rms.items():
        b = clstats.Background(img, (96, 80), filter_size=1, clipping="sigma", sigma_clip=2.5,
                               maxiters=None, rms_estimator=est, exclude_percentile=100)
        close(b.rms_mesh[0, 0], want)


def test_sigma_refuses_bad_arguments(rng):
    img = field(rng, (64, 64), sources=0)
    for kwargs in ({"estimator": "mmm"}, {"rms_estimator": "mad_std"},
                   {"clipping": "sigma", "maxiters": 0}, {"clipping": "sigma",
                                                          "exclude_percentile": 101},
                   {"clipping": "kappa"}):
        with pytest.raises(ValueError):
            clstats.Background(img, **kwargs)


def nan_blocks(img, box):
    """NaN blocks that empty whole boxes at two corners, on an edge and inside."""
    by, bx = box
    img[:by, :bx] = np.nan
    img[-by:, -2 * bx:] = np.nan
    img[:by, 3 * bx: 4 * bx] = np.nan
    img[2 * by: 3 * by, 2 * bx: 4 * bx] = np.nan


@pytest.mark.parametrize("estimator,rms_estimator,exclude", [("sextractor", "std", 10.0),
                                                             ("median", "mad_std", 0.0),
                                                             ("biweight", "biweight", 3.0)])
def test_sigma_excluded_boxes_equal_photutils(rng, estimator, rms_estimator, exclude):
    """Boxes photutils excludes (NaN blocks, a mask, a small exclude_percentile) are filled by
    its inverse-distance weighting of the good boxes, ties broken as its cKDTree breaks them."""
    img = field(rng, (330, 390), sources=20)
    nan_blocks(img, (32, 32))
    img[rng.random(img.shape) < 0.003] = np.nan
    mask = np.zeros(img.shape, bool)
    mask[:, -11:] = True  # a third of each box of the right edge
    mask[100:140, 150:160] = True
    theirs = photutils_background(img, 32, estimator, rms_estimator, excluded=True, mask=mask,
                                  filter_size=3, exclude_percentile=exclude)
    ours = clstats.Background(img, 32, filter_size=3, mask=mask, clipping="sigma",
                              estimator=estimator, rms_estimator=rms_estimator,
                              exclude_percentile=exclude)
    close_meshes(ours, theirs)


@pytest.mark.parametrize("seed", range(4))
def test_sigma_random_exclusions_equal_photutils(seed):
    """Many boxes excluded at random (most of the mesh for some seeds), small boxes, a 5x3
    filter: every tie at the tenth-nearest distance decided as photutils' cKDTree decides it."""
    rng = np.random.default_rng(1000 + seed)
    img = field(rng, (200, 264), sources=5)
    boxes = rng.random((200 // 8, 264 // 8)) < 0.2 + 0.2 * seed
    boxes[rng.integers(0, 25), rng.integers(0, 33)] = False  # at least one good box
    img[np.kron(boxes, np.ones((8, 8), bool))] = np.nan
    theirs = photutils_background(img, 8, "mmm", "std", excluded=True, filter_size=(5, 3))
    ours = clstats.Background(img, 8, filter_size=(5, 3), clipping="sigma", estimator="mmm")
    close_meshes(ours, theirs)


@pytest.mark.parametrize("shape", [(256, 320), (250, 301)])
def test_sep_excluded_boxes_at_edges_and_corners(rng, shape):
    """SEP's rule for bad boxes (the mean of the nearest good ones), NaN blocks at corners,
    on an edge and inside, and a mask."""
    need_sep()
    img = field(rng, shape)
    nan_blocks(img, (64, 64))
    mask = np.zeros(img.shape, bool)
    mask[:, -40:] = True
    ours = clstats.Background(img, mask=mask)
    theirs = sep.Background(img, mask=mask)
    close(ours.background, theirs.back())
    close(ours.rms, theirs.rms())
    close(ours.global_background, theirs.globalback)
    close(ours.global_rms, theirs.globalrms)
