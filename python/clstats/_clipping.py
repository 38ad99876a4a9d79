"""astropy's robust scale and sigma-clipped statistics, with the medians on the device and
every other step the same numpy expression astropy evaluates, so that the results are
astropy's bits."""
import warnings

import numpy as np

from . import _order
from ._arrays import as_array, work_dtype
from ._context import get_context

__all__ = ["mad_std", "sigma_clipped_stats"]

_MAD_TO_STD = 1.482602218505602


def _median_of(values, ctx):
    """numpy.nanmedian of a vector (at least one valid value), as numpy's scalar type."""
    dtype = _order._numpy_dtype(np.nanmedian, values.dtype)
    value, _ = _order._one(ctx, _order._vector(values, work_dtype(values)), "median")
    return dtype.type(np.nan if value is None else value)


def mad_std(data, axis=None, func=None, ignore_nan=False, *, device=None):
    """Robust standard deviation, 1.482602218505602 x the median absolute deviation.

    astropy's :func:`astropy.stats.mad_std`, with its arguments and results: NaN in the data
    gives NaN unless ``ignore_nan``; a masked array's mask is honoured.

    Parameters
    ----------
    data : array_like
        The numbers.
    axis : None, int or tuple of int, optional
        Along which axes (see :func:`clstats.median`); None takes the whole array.
    func : callable, optional
        A median function to use instead of the device's (astropy's argument).
    ignore_nan : bool, optional
        Leave NaN out instead of returning NaN.
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> import numpy as np, clstats
    >>> x = np.random.default_rng(0).normal(0, 2.0, 100001)
    >>> round(float(clstats.mad_std(x)), 1)
    2.0
    """
    if func is not None:
        data = np.asanyarray(data)
        m = func(data, axis=axis)
        if axis is not None:
            m = np.expand_dims(m, axis=axis)
        return func(np.abs(data - m), axis=axis) * _MAD_TO_STD
    masked = isinstance(data, np.ma.MaskedArray)
    arr = np.asarray(data) if not masked else data
    if not masked and not ignore_nan and np.asarray(arr).dtype.kind == "f":
        if np.isnan(arr).any():
            if axis is None:
                return np.asarray(arr).dtype.type(np.nan) * _MAD_TO_STD
            with np.errstate(invalid="ignore"):
                has_nan = np.isnan(arr).any(axis=axis)
            result = mad_std(arr, axis=axis, ignore_nan=True, device=device)
            return np.where(has_nan, np.nan, result)
    values = as_array(arr, "mad_std")
    if values.size == 0:
        return np.float64(np.nan)
    ctx = get_context(device)
    if axis is None:
        m = _median_of(values, ctx)
        deviation = np.abs(values - m)
        return _median_of(deviation, ctx) * _MAD_TO_STD
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = _order.median(values, axis=axis, device=ctx)
        m = np.expand_dims(m, axis=axis)
        return _order.median(np.abs(values - m), axis=axis, device=ctx) * _MAD_TO_STD


def _clipped(values, ctx, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc):
    """astropy's SigmaClip without an axis: the finite values left after clipping."""
    filtered = values[np.isfinite(values)]
    changed, iteration = 1, 0
    while changed != 0 and iteration < maxiters:
        iteration += 1
        size = filtered.size
        cen = (_median_of(filtered, ctx) if cenfunc == "median" else np.nanmean(filtered))
        std = np.nanstd(filtered) if stdfunc == "std" else mad_std(filtered, device=ctx)
        lower = cen - (std * sigma_lower)
        cen += std * sigma_upper
        filtered = filtered[(filtered >= lower) & (filtered <= cen)]
        changed = size - filtered.size
    return filtered


def sigma_clipped_stats(data, mask=None, mask_value=None, sigma=3.0, sigma_lower=None,
                        sigma_upper=None, maxiters=5, cenfunc="median", stdfunc="std",
                        std_ddof=0, axis=None, *, device=None):
    """Mean, median and standard deviation after iterative sigma clipping.

    astropy's :func:`astropy.stats.sigma_clipped_stats` (its arguments, algorithm and results,
    bit for bit), with each median computed exactly on the device: non-finite values are left
    out first, then values beyond ``sigma`` standard deviations of the centre are clipped until
    none is or ``maxiters`` rounds have run.

    Parameters
    ----------
    data : array_like
        The numbers (a masked array's mask is honoured).
    mask : array_like of bool, optional
        True where a value is left out.
    mask_value : float, optional
        A value left out wherever it occurs.
    sigma, sigma_lower, sigma_upper : float, optional
        The clipping limits in standard deviations (the lower and upper default to sigma).
    maxiters : int or None, optional
        The most clipping rounds; None clips until nothing changes.
    cenfunc : {'median', 'mean'}, optional
        The centre.
    stdfunc : {'std', 'mad_std'}, optional
        The scale.
    std_ddof : int, optional
        Delta degrees of freedom of the returned standard deviation.
    axis : None, int or tuple of int, optional
        Clip each slice along these axes on its own (one device call per slice).
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`.

    Returns
    -------
    mean, median, stddev : float or ndarray

    Examples
    --------
    >>> import numpy as np, clstats
    >>> x = np.random.default_rng(4).normal(10.0, 1.0, 10000)
    >>> x[:50] = 1e4
    >>> mean, med, std = clstats.sigma_clipped_stats(x)
    >>> round(float(med)), round(float(std))
    (10, 1)
    """
    if cenfunc not in ("median", "mean"):
        raise ValueError(f"{cenfunc} is an invalid cenfunc.")
    if stdfunc not in ("std", "mad_std"):
        raise ValueError(f"{stdfunc} is an invalid stdfunc.")
    sigma_lower = sigma if sigma_lower is None else sigma_lower
    sigma_upper = sigma if sigma_upper is None else sigma_upper
    maxiters = np.inf if maxiters is None else maxiters
    if mask is not None:
        data = np.ma.MaskedArray(data, mask)
    if mask_value is not None:
        data = np.ma.masked_values(data, mask_value)
    if isinstance(data, np.ma.MaskedArray) and data.mask.all():
        return np.ma.masked, np.ma.masked, np.ma.masked
    if isinstance(data, np.ma.MaskedArray):
        keep = ~np.ma.getmaskarray(data)
        raw = np.asarray(data.data)
    else:
        raw = np.asarray(data)
        keep = None
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"sigma_clipped_stats: arrays of dtype {raw.dtype} are not supported")
    ctx = get_context(device)

    def one(values, keep_values):
        values = values.ravel() if keep_values is None else values[keep_values]
        clipped = _clipped(values, ctx, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc)
        median = (_median_of(clipped, ctx) if clipped.size
                  else np.nanmedian(clipped))
        return np.nanmean(clipped), median, np.nanstd(clipped, ddof=std_ddof)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if axis is None:
            return one(raw, keep)
        axes = _order._axes("sigma_clipped_stats", axis, raw.ndim)
        rest = tuple(d for d in range(raw.ndim) if d not in axes)
        moved = np.transpose(raw, rest + axes)
        rest_shape = moved.shape[:len(rest)]
        slices = moved.reshape(int(np.prod(rest_shape)), -1)
        kept = (None if keep is None
                else np.transpose(keep, rest + axes).reshape(slices.shape))
        stats = [one(slices[i], None if kept is None else kept[i]) for i in range(len(slices))]
        return tuple(np.array([s[j] for s in stats]).reshape(rest_shape) for j in range(3))
