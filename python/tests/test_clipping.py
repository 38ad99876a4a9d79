"""sigma_clipped_stats and mad_std against astropy's, bit for bit (cases after astropy's own
tests of sigma clipping)."""
import warnings

import numpy as np
import pytest

astropy_stats = pytest.importorskip("astropy.stats")

import clstats  # noqa: E402
from conftest import hard_image  # noqa: E402


def same(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    return ours.dtype == theirs.dtype and np.array_equal(ours, theirs, equal_nan=True)


def theirs(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int16])
def test_sigma_clipped_stats_is_astropys(rng, dtype):
    x = rng.normal(100, 5, 5001)
    x[:40] = rng.uniform(200, 1e4, 40)
    x[40:60] = -500
    x = x.astype(dtype)
    for kwargs in ({}, dict(sigma=2.5), dict(sigma_lower=4, sigma_upper=2),
                   dict(maxiters=1), dict(maxiters=None), dict(cenfunc="mean"),
                   dict(stdfunc="mad_std"), dict(std_ddof=1), dict(mask_value=100)):
        ours = clstats.sigma_clipped_stats(x, **kwargs)
        expect = theirs(astropy_stats.sigma_clipped_stats, x, **kwargs)
        for o, e in zip(ours, expect):
            assert same(o, e), (dtype, kwargs, ours, expect)


def test_sigma_clipping_leaves_out_nan_inf_and_masks(rng):
    image = hard_image(rng, (60, 70), nan=0.1)
    mask = rng.random(image.shape) < 0.1
    for data, kwargs in ((image, {}), (image, dict(mask=mask)),
                         (np.ma.MaskedArray(image, mask), {})):
        ours = theirs(clstats.sigma_clipped_stats, data, **kwargs)
        expect = theirs(astropy_stats.sigma_clipped_stats, data, **kwargs)
        for o, e in zip(ours, expect):
            assert same(o, e)


def test_sigma_clipping_degenerate_inputs():
    for data in (np.array([np.nan, np.inf]), np.array([1.0]), np.array([2.0, 2.0, 2.0])):
        ours = theirs(clstats.sigma_clipped_stats, data)
        expect = theirs(astropy_stats.sigma_clipped_stats, data)
        for o, e in zip(ours, expect):
            assert same(o, e), data
    everything_masked = np.ma.MaskedArray([1.0, 2.0], [True, True])
    assert clstats.sigma_clipped_stats(everything_masked) == (np.ma.masked,) * 3
    with pytest.raises(ValueError):
        clstats.sigma_clipped_stats([1.0, 2.0], cenfunc="mode")


def test_sigma_clipped_stats_along_an_axis(rng):
    x = rng.normal(0, 1, (6, 400)).astype(np.float32)
    x[:, :5] = 50
    mean, med, std = clstats.sigma_clipped_stats(x, axis=1)
    assert mean.shape == (6,)
    for i in range(6):
        row = clstats.sigma_clipped_stats(x[i])
        assert (mean[i], med[i], std[i]) == row
    expect = theirs(astropy_stats.sigma_clipped_stats, x, axis=1)
    assert np.allclose(med, expect[1], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_mad_std_is_astropys(rng, dtype):
    x = (rng.normal(0, 3, 2001) * 10).astype(dtype)
    assert same(clstats.mad_std(x), astropy_stats.mad_std(x))
    m = x.reshape(3, 667)
    for axis in (0, 1):
        assert same(clstats.mad_std(m, axis=axis), astropy_stats.mad_std(m, axis=axis))


def test_mad_std_nan_rules(rng):
    x = rng.normal(size=101)
    x[[3, 50]] = np.nan
    assert same(clstats.mad_std(x), theirs(astropy_stats.mad_std, x))
    assert same(clstats.mad_std(x, ignore_nan=True),
                theirs(astropy_stats.mad_std, x, ignore_nan=True))
    m = np.ma.MaskedArray(x, np.isnan(x))
    assert np.float64(clstats.mad_std(m)) == np.float64(astropy_stats.mad_std(m))
    assert same(clstats.mad_std(x, func=np.nanmedian),
                astropy_stats.mad_std(x, func=np.nanmedian))
