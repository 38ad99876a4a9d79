"""median_filter, mad_filter and filter_maps against scipy.ndimage and a plain numpy
reference, bit for bit."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import clstats
from conftest import hard_image

MODES = ["reflect", "mirror", "nearest", "constant", "wrap"]


def reference_maps(image, width, mode, cval):
    """numpy's nanmedian of each window and nanmedian(|x - m|), one window at a time."""
    h = width // 2
    if mode == "constant":
        padded = np.pad(image.astype(np.float64), h, mode="constant", constant_values=cval)
    else:
        np_mode = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge",
                   "wrap": "wrap"}[mode]
        padded = np.pad(image.astype(np.float64), h, mode=np_mode)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (width, width))
    windows = windows.reshape(image.shape + (-1,)).astype(np.float32)
    median = np.empty(image.shape, np.float32)
    mad = np.empty(image.shape, np.float32)
    with np.errstate(invalid="ignore"), _quiet():
        for idx in np.ndindex(image.shape):
            w = windows[idx]
            m = np.nanmedian(w)
            median[idx] = m
            mad[idx] = np.nanmedian(np.abs(w - m))
    median[median == 0] = 0
    mad[mad == 0] = 0
    return median, mad


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        a.view(np.uint32) if a.dtype == np.float32 else a, b.view(np.uint32)
        if b.dtype == np.float32 else b)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", [1, 3, 5, 9])
def test_median_filter_is_scipys(rng, mode, width):
    image = hard_image(rng, (37, 53), nan=0, infs=True)
    for cval in (0.0, -2.5):
        ours = clstats.median_filter(image, size=width, mode=mode, cval=cval)
        theirs = ndi.median_filter(image, size=width, mode=mode, cval=cval)
        assert ours.dtype == theirs.dtype
        assert np.array_equal(ours, theirs), (mode, width, cval)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.int32, bool])
def test_median_filter_keeps_scipys_dtype(rng, dtype):
    image = (rng.integers(0, 200, (20, 31)) % (2 if dtype is bool else 200)).astype(dtype)
    ours = clstats.median_filter(image, 5, mode="nearest")
    theirs = ndi.median_filter(image, 5, mode="nearest")
    assert ours.dtype == theirs.dtype
    assert np.array_equal(ours, theirs)


def test_float16_as_float32(rng):
    image = hard_image(rng, (16, 16), nan=0, infs=False).astype(np.float16)
    ours = clstats.median_filter(image, 5)
    assert ours.dtype == np.float16
    assert np.array_equal(ours, ndi.median_filter(image.astype(np.float32), 5).astype(np.float16))


def test_scipy_grid_modes_and_footprint(rng):
    image = hard_image(rng, (24, 24), nan=0)
    for grid, plain in (("grid-mirror", "reflect"), ("grid-wrap", "wrap"),
                        ("grid-constant", "constant")):
        assert np.array_equal(clstats.median_filter(image, 5, mode=grid),
                              ndi.median_filter(image, 5, mode=plain))
    fp = np.ones((7, 7), bool)
    assert np.array_equal(clstats.median_filter(image, footprint=fp),
                          ndi.median_filter(image, footprint=fp))
    assert np.array_equal(clstats.median_filter(image, size=(3, 3)),
                          ndi.median_filter(image, size=(3, 3)))


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (6, 1), (2, 3), (5, 5)])
def test_windows_wider_than_the_image(rng, shape):
    image = hard_image(rng, shape, nan=0, infs=False)
    for mode in MODES:
        assert np.array_equal(clstats.median_filter(image, 11, mode=mode),
                              ndi.median_filter(image, 11, mode=mode)), (shape, mode)


def test_layouts_need_no_change(rng):
    image = hard_image(rng, (40, 50), nan=0)
    expect = ndi.median_filter(image, 5)
    fortran = np.asfortranarray(image)
    strided = np.zeros((80, 100), np.float32)[::2, ::2]
    strided[...] = image
    rows = np.zeros((40, 64), np.float32)[:, 7:57]
    rows[...] = image
    big_endian = image.astype(">f4")
    for layout in (fortran, strided, rows, big_endian, image.T.copy().T):
        assert np.array_equal(clstats.median_filter(layout, 5), expect)


def test_nan_is_missing_and_mad_is_numpys(rng):
    image = hard_image(rng, (23, 29), nan=0.2)
    for mode in MODES:
        for cval in (0.25, np.nan):
            median, mad = reference_maps(image, 5, mode, cval)
            maps = clstats.filter_maps(image, 5, maps=("median", "mad"), mode=mode, cval=cval)
            assert same_bits(maps["median"], median), (mode, cval)
            assert same_bits(maps["mad"], mad), (mode, cval)
            assert same_bits(clstats.mad_filter(image, 5, mode=mode, cval=cval), mad)


def test_masks_are_missing_data(rng):
    image = hard_image(rng, (30, 30), nan=0)
    mask = rng.random(image.shape) < 0.2
    with_nan = image.copy()
    with_nan[mask] = np.nan
    expect = clstats.median_filter(with_nan, 7)
    assert np.isnan(expect).sum() < expect.size
    assert same_bits(clstats.median_filter(image, 7, mask=mask), expect)
    assert same_bits(clstats.median_filter(np.ma.MaskedArray(image, mask), 7), expect)
    assert not np.isnan(image).any()


def test_sigma_and_snr_maps(rng):
    image = hard_image(rng, (32, 32), nan=0.05)
    maps = clstats.filter_maps(image, 7)
    assert list(maps) == ["median", "mad", "sigma", "snr"]
    sigma = np.float32(clstats.MAD_TO_SIGMA) * maps["mad"]
    assert same_bits(maps["sigma"], sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        snr = (image - maps["median"]) / sigma
    snr[sigma == 0] = np.nan
    assert np.array_equal(maps["snr"], snr, equal_nan=True)
    wide = image.astype(np.float64) * 1.1
    maps64 = clstats.filter_maps(wide, 7)
    sigma64 = clstats.MAD_TO_SIGMA * maps64["mad"]
    assert maps64["sigma"].dtype == np.float64 and np.array_equal(maps64["sigma"], sigma64)
    with np.errstate(divide="ignore", invalid="ignore"):
        snr64 = (wide - maps64["median"]) / sigma64
    snr64[sigma64 == 0] = np.nan
    assert np.array_equal(maps64["snr"], snr64, equal_nan=True)


def test_output_argument(rng):
    image = hard_image(rng, (20, 20), nan=0)
    expect = ndi.median_filter(image, 3)
    out = np.empty_like(image)
    assert clstats.median_filter(image, 3, output=out) is out
    assert np.array_equal(out, expect)
    strided_out = np.zeros((20, 40), np.float32)[:, ::2]
    assert clstats.median_filter(image, 3, output=strided_out) is strided_out
    assert np.array_equal(strided_out, expect)
    wide = np.empty((20, 20))
    clstats.median_filter(image, 3, output=wide)
    assert np.array_equal(wide, expect.astype(np.float64))
    assert clstats.median_filter(image, 3, output=np.float64).dtype == np.float64


def test_bad_arguments_are_clear(rng):
    image = hard_image(rng, (10, 10), nan=0)
    bad = [
        dict(input=np.zeros(10, np.float32), size=3),
        dict(input=np.zeros((3, 3, 3), np.float32), size=3),
        dict(input=np.array([["a"]], object), size=3),
        dict(input=image.astype(complex), size=3),
        dict(input=image, size=0),
        dict(input=image, size=(3, 0)),
        dict(input=image, size=(3, 3, 3)),
        dict(input=image, size=257),
        dict(input=image, size=3.5),
        dict(input=image),
        dict(input=image, footprint=np.zeros((3, 3))),
        dict(input=image, footprint=np.ones((3, 3, 3))),
        dict(input=image, footprint=np.ones((256, 1))),
        dict(input=image, size=3, mode="bogus"),
        dict(input=image, size=3, origin=2),
        dict(input=image, size=3, origin=(0, 0, 0)),
        dict(input=image, size=3, even="middle"),
        dict(input=image, size=3, cval="x"),
        dict(input=image, size=3, output=np.empty((9, 10), np.float32)),
        dict(input=image, size=3, output=np.empty((10, 10), np.int32)),
        dict(input=np.zeros((10, 10), np.int32), size=3, mode="constant", cval=np.nan),
        dict(input=image, size=3, mask=np.zeros((9, 9), bool)),
    ]
    for kwargs in bad:
        with pytest.raises(ValueError):
            clstats.median_filter(**kwargs)
    read_only = np.empty_like(image)
    read_only.flags.writeable = False
    with pytest.raises(ValueError):
        clstats.median_filter(image, 3, output=read_only)
    with pytest.raises(ValueError):
        clstats.filter_maps(image, 3, maps=("median", "bogus"))
    assert np.array_equal(clstats.median_filter(image, 3), ndi.median_filter(image, 3))


@pytest.mark.parametrize("size", [(1, 7), (9, 1), (4, 3), (3, 4), (2, 2), (6, 5)])
@pytest.mark.parametrize("mode", MODES)
def test_rectangles_and_even_sizes_are_scipys(rng, size, mode):
    image = hard_image(rng, (29, 31), nan=0)
    assert np.array_equal(clstats.median_filter(image, size, mode=mode, cval=0.5),
                          ndi.median_filter(image, size, mode=mode, cval=0.5))


@pytest.mark.parametrize("origin", [(0, 1), (-1, 0), (1, -1), 1])
def test_origins_are_scipys(rng, origin):
    image = hard_image(rng, (20, 24), nan=0)
    for size in ((3, 3), (4, 5)):
        assert np.array_equal(clstats.median_filter(image, size, origin=origin),
                              ndi.median_filter(image, size, origin=origin)), (size, origin)


def test_footprints_circles_and_rings_are_scipys(rng):
    image = hard_image(rng, (33, 27), nan=0)
    yy, xx = np.mgrid[-5:6, -5:6]
    circle = xx**2 + yy**2 <= 16
    ring = (xx**2 + yy**2 > 4) & (xx**2 + yy**2 <= 25)
    random_fp = rng.random((5, 6)) < 0.5
    random_fp[0, 0] = True
    for fp in (circle, ring, random_fp, np.eye(4, dtype=bool)):
        for mode in MODES:
            assert np.array_equal(clstats.median_filter(image, footprint=fp, mode=mode),
                                  ndi.median_filter(image, footprint=fp, mode=mode)), mode
    with pytest.warns(UserWarning, match="ignoring size"):
        clstats.median_filter(image, size=3, footprint=circle)


def test_float64_and_wide_integers_keep_their_precision(rng):
    image = rng.normal(size=(25, 30))
    for size in (3, (4, 5)):
        ours = clstats.median_filter(image, size)
        assert ours.dtype == np.float64
        assert np.array_equal(ours, ndi.median_filter(image, size))
    big = np.full((6, 6), 16777217, np.int32)
    big[::2] = 16777219
    assert np.array_equal(clstats.median_filter(big, 3), ndi.median_filter(big, 3))
    image[3, 4] = np.nan
    median, mad = reference_maps_f64(image, 5)
    maps = clstats.filter_maps(image, 5, maps=("median", "mad"))
    assert np.array_equal(maps["median"], median, equal_nan=True)
    assert np.array_equal(maps["mad"], mad, equal_nan=True)
    assert maps["mad"].dtype == np.float64


def reference_maps_f64(image, width):
    h = width // 2
    padded = np.pad(image, h, mode="symmetric")
    windows = np.lib.stride_tricks.sliding_window_view(padded, (width, width))
    windows = windows.reshape(image.shape + (-1,))
    with _quiet():
        median = np.nanmedian(windows, axis=-1)
        mad = np.nanmedian(np.abs(windows - median[..., None]), axis=-1)
    return median + 0.0, mad + 0.0


def test_even_rules(rng):
    image = hard_image(rng, (16, 18), nan=0.3)
    width = 4
    upper = clstats.median_filter(image, width)
    lower = clstats.median_filter(image, width, even="lower")
    mean = clstats.median_filter(image, width, even="mean")
    with np.errstate(invalid="ignore"):
        assert np.all((lower <= mean) | np.isnan(mean))
        assert np.all((mean <= upper) | np.isnan(mean))
    assert not np.array_equal(lower, upper, equal_nan=True)
    no_nan = hard_image(rng, (16, 18), nan=0)
    assert np.array_equal(clstats.median_filter(no_nan, width),
                          ndi.median_filter(no_nan, width))
    assert np.array_equal(clstats.median_filter(no_nan, width, even="lower"),
                          ndi.rank_filter(no_nan, width * width // 2 - 1, width))


def test_empty_image():
    out = clstats.median_filter(np.zeros((0, 5), np.float32), 3)
    assert out.shape == (0, 5)


def test_cases_from_scipys_suite():
    # scipy.ndimage's tests filter these small integer arrays (test_rank06, test_median...):
    # every mode, against scipy's own answer.
    arrays = [np.array([[3, 2, 5, 1, 4], [5, 8, 3, 7, 1], [5, 6, 9, 3, 5]]),
              np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32),
              np.array([[1.0, 2.0], [3.0, 4.0]])[..., :1].astype(np.float32)]
    for a in arrays:
        for mode in MODES:
            for size in (1, 3, 5):
                assert np.array_equal(clstats.median_filter(a, size, mode=mode),
                                      ndi.median_filter(a, size, mode=mode)), (a, mode, size)


def test_residual_map_is_pixel_minus_median(rng):
    image = hard_image(rng, (21, 26), nan=0.1)
    mask = rng.random(image.shape) < 0.1
    maps = clstats.filter_maps(image, 5, maps=("residual", "median"), mask=mask)
    with np.errstate(invalid="ignore"):
        want = image - maps["median"]
    want[mask] = np.nan
    assert maps["residual"].dtype == np.float32
    assert np.array_equal(maps["residual"], want, equal_nan=True)
    double = clstats.filter_maps(image.astype(np.float64) * 1.1, (4, 3), maps=("residual",))
    assert double["residual"].dtype == np.float64
