"""median, percentile, quantile, select_kth and tile_medians against numpy's nan-functions,
bit for bit (cases after numpy's own tests of nanmedian and nanpercentile)."""
import warnings

import numpy as np
import pytest

import clstats
from conftest import hard_image


def same(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    return (ours.shape == theirs.shape and ours.dtype == theirs.dtype
            and np.array_equal(ours, theirs, equal_nan=True)
            and np.array_equal(np.signbit(ours) & ~np.isnan(ours),
                               np.signbit(theirs) & ~np.isnan(theirs)))


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64, np.uint8])
@pytest.mark.parametrize("shape", [(1,), (2,), (7,), (1000,), (31, 17), (4, 5, 6)])
def test_median_whole_array(rng, dtype, shape):
    if np.dtype(dtype).kind == "f":
        a = hard_image(rng, shape, dtype=dtype, nan=0.1) if len(shape) >= 2 else \
            rng.normal(size=shape).astype(dtype)
    else:
        a = rng.integers(0, 100, shape).astype(dtype)
    assert same(clstats.median(a), np.nanmedian(a))


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 1), None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_median_along_axes(rng, axis, dtype):
    a = hard_image(rng, (23, 41), dtype=np.float64, nan=0.1)
    if np.dtype(dtype).kind == "i":
        a = rng.integers(-5, 5, a.shape)
    a = a.astype(dtype)
    assert same(clstats.median(a, axis=axis), np.nanmedian(a, axis=axis))
    assert same(clstats.median(a, axis=axis, keepdims=True),
                np.nanmedian(a, axis=axis, keepdims=True))
    assert same(clstats.median(np.asfortranarray(a), axis=axis), np.nanmedian(a, axis=axis))


def test_median_of_a_3d_cube_along_each_axis(rng):
    a = hard_image(rng, (5, 6, 7), nan=0.2)
    for axis in (0, 1, 2, (1, 2), (0, 2)):
        assert same(clstats.median(a, axis=axis), np.nanmedian(a, axis=axis)), axis


def test_all_nan_slices_warn_as_numpy(rng):
    a = rng.normal(size=(4, 6)).astype(np.float32)
    a[:, 2] = np.nan
    a[1, :] = np.nan
    for axis in (0, 1):
        with pytest.warns(RuntimeWarning, match="All-NaN slice"):
            ours = clstats.median(a, axis=axis)
        assert same(ours, quiet(np.nanmedian, a, axis=axis))
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        assert np.isnan(clstats.median(np.full(5, np.nan)))
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        assert same(clstats.percentile(a, [10, 90], axis=1),
                    quiet(np.nanpercentile, a, [10, 90], axis=1))


def test_median_special_values():
    cases = [[np.inf, -np.inf], [np.inf, np.inf, 1], [-0.0, -0.0], [-0.0, 0.0, -0.0],
             [3.4e38, 3.4e38], [1e-45, 2e-45], [np.nan, 1.0, np.nan]]
    for case in cases:
        for dtype in (np.float32, np.float64):
            a = np.array(case, dtype)
            with np.errstate(over="ignore", invalid="ignore"):
                expect = np.nanmedian(a)
            if np.isinf(expect) and np.isfinite(a).all():
                continue  # numpy's a + b overflows; the library's mean does not (documented)
            assert same(clstats.median(a), expect + dtype(0)), (case, dtype)


def test_median_out_and_masked(rng):
    a = hard_image(rng, (10, 12), nan=0.1)
    out = np.empty(12, np.float32)
    assert clstats.median(a, axis=0, out=out) is out
    assert same(out, np.nanmedian(a, axis=0))
    m = np.ma.MaskedArray(a, rng.random(a.shape) < 0.3)
    assert same(clstats.median(m), np.nanmedian(m.filled(np.nan)))


QS = [0, 0.5, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64])
@pytest.mark.parametrize("n", [1, 2, 3, 10, 1001])
def test_percentiles_every_q(rng, dtype, n):
    if np.dtype(dtype).kind == "f":
        a = rng.normal(size=n).astype(dtype)
        a[rng.random(n) < 0.1] = np.nan
        if np.isnan(a).all():
            a[0] = 1
    else:
        a = rng.integers(-1000, 1000, n).astype(dtype)
    assert same(clstats.percentile(a, QS), np.nanpercentile(a, QS))
    assert same(clstats.percentile(a, 37.5), np.nanpercentile(a, 37.5))
    qs = np.array(QS) / 100
    assert same(clstats.quantile(a, qs), np.nanquantile(a, qs))
    assert same(clstats.quantile(a, 0.3), np.nanquantile(a, 0.3))


def test_percentiles_along_axes_and_shapes(rng):
    a = hard_image(rng, (9, 13), nan=0.1)
    for axis in (0, 1, None):
        # (numpy's nanpercentile misplaces a 2-D q's axes along an axis: not compared there)
        for q in (50, [10, 90]) + (([[5, 25], [75, 95]],) if axis is None else ()):
            assert same(clstats.percentile(a, q, axis=axis), np.nanpercentile(a, q, axis=axis))
            assert same(clstats.percentile(a, q, axis=axis, keepdims=True),
                        np.nanpercentile(a, q, axis=axis, keepdims=True))


def test_percentiles_of_infinities():
    for case in ([np.inf], [-np.inf, 1, 2], [1, 2, np.inf], [-np.inf, np.inf]):
        a = np.array(case)
        with np.errstate(invalid="ignore"):
            assert same(clstats.percentile(a, QS), np.nanpercentile(a, QS)), case


def test_select_kth(rng):
    a = hard_image(rng, (17, 19), nan=0.1)
    valid = np.sort(a[~np.isnan(a)])
    for k in (0, 1, 7, valid.size // 2, valid.size - 1, -1, -5):
        assert same(clstats.select_kth(a, k), valid[k] + np.float32(0)), k  # zeros are +0
    ints = rng.integers(0, 50, 101).astype(np.int32)
    assert same(clstats.select_kth(ints, 50), np.sort(ints)[50])
    for k in (valid.size, -valid.size - 1):
        with pytest.raises(ValueError):
            clstats.select_kth(a, k)
    with pytest.raises(ValueError):
        clstats.select_kth(a, 1.5)


def test_tile_medians(rng):
    a = hard_image(rng, (37, 50), nan=0.1)
    for tile in (1, 4, (5, 7), (37, 50), (64, 64)):
        th, tw = (tile, tile) if isinstance(tile, int) else tile
        expect = np.array([[quiet(np.nanmedian, a[y:y + th, x:x + tw])
                            for x in range(0, 50, tw)] for y in range(0, 37, th)], np.float32)
        assert same(clstats.tile_medians(a, tile), expect), tile
    ints = rng.integers(0, 9, (8, 8)).astype(np.int16)
    assert same(clstats.tile_medians(ints, 4),
                np.array([[np.median(ints[y:y + 4, x:x + 4]) for x in (0, 4)] for y in (0, 4)]))


def test_bad_arguments():
    a = np.arange(10.0)
    for call in (lambda: clstats.median(a, axis=1), lambda: clstats.median(a, axis=(0, 0)),
                 lambda: clstats.median(np.array(["x"])), lambda: clstats.median(a.astype(complex)),
                 lambda: clstats.percentile(a, 101), lambda: clstats.percentile(a, -1),
                 lambda: clstats.percentile(a, np.nan), lambda: clstats.quantile(a, 1.5),
                 lambda: clstats.percentile(a, 50, method="nearest"),
                 lambda: clstats.tile_medians(a, 2), lambda: clstats.tile_medians(a.reshape(2, 5), 0),
                 lambda: clstats.median(np.array([2**60, 1], np.int64))):
        with pytest.raises(ValueError):
            call()
    assert clstats.median(a) == 4.5


def test_empty_arrays_as_numpy():
    e = np.zeros((0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert same(clstats.median(e, axis=0), np.nanmedian(e, axis=0))
        assert np.isnan(clstats.median(np.zeros(0)))
        assert same(clstats.percentile(e, 50, axis=0), np.nanpercentile(e, 50, axis=0))
