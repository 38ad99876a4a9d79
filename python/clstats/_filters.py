"""Sliding-window median and MAD maps, with scipy.ndimage's arguments."""
import numbers

import numpy as np

from . import _ext
from ._arrays import as_array, rows_contiguous, with_mask
from ._context import get_context

__all__ = ["median_filter", "mad_filter", "filter_maps", "MAD_TO_SIGMA"]

#: The standard deviation of Gaussian noise per unit of MAD, 1 / Phi^-1(3/4): astropy's
#: ``mad_std`` constant, which the SIGMA and SNR maps use.
MAD_TO_SIGMA = 1.482602218505602

MAX_WIDTH = 255

# scipy.ndimage's names: its grid-* modes are the same as these for filters.
_MODES = {"reflect": "reflect", "grid-mirror": "reflect", "mirror": "mirror",
          "nearest": "nearest", "constant": "constant", "grid-constant": "constant",
          "wrap": "wrap", "grid-wrap": "wrap"}

_MAPS = ("median", "mad", "sigma", "snr")

_ROADMAP = ("; rectangular, even-sized, shifted and footprint windows are not built yet "
            "(they come with the filter's window shapes)")


def _width(where, shape, size, footprint):
    """The odd square window a scipy-style size or footprint asks for, or a ValueError."""
    if footprint is not None:
        if size is not None:
            raise ValueError(f"{where}: give size or footprint, not both")
        fp = np.asarray(footprint)
        if fp.ndim != 2:
            raise ValueError(f"{where}: footprint must be 2-D, not {fp.ndim}-D")
        if fp.shape[0] != fp.shape[1] or fp.shape[0] % 2 == 0 or not fp.astype(bool).all():
            raise ValueError(f"{where}: footprint of shape {fp.shape}: only an all-True odd "
                             f"square footprint is supported so far{_ROADMAP}")
        size = fp.shape[0]
    if size is None:
        raise ValueError(f"{where}: give size (the window's width) or footprint")
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        sizes = (int(size),) * len(shape)
    else:
        try:
            sizes = tuple(int(s) for s in size)
        except TypeError:
            raise ValueError(f"{where}: size={size!r} must be an integer or a tuple of them")
        if any(isinstance(s, bool) or int(s) != s for s in size):
            raise ValueError(f"{where}: size={size!r} must be integers")
        if len(sizes) != len(shape):
            raise ValueError(f"{where}: size={size!r} has {len(sizes)} entries for a "
                             f"{len(shape)}-D input")
    if any(s < 1 for s in sizes):
        raise ValueError(f"{where}: size={size!r} must be at least 1")
    if len(set(sizes)) != 1 or sizes[0] % 2 == 0:
        raise ValueError(f"{where}: size={size!r}: only square windows of odd width are "
                         f"supported so far{_ROADMAP}")
    if sizes[0] > MAX_WIDTH:
        raise ValueError(f"{where}: size={sizes[0]} is wider than the widest window, {MAX_WIDTH}")
    return sizes[0]


def _mode(where, mode):
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"{where}: mode={mode!r}: give one of {', '.join(_MODES)} "
                         "(one mode for both axes)")
    return _MODES[mode]


def _origin(where, origin):
    origins = np.atleast_1d(np.asarray(origin))
    if origins.dtype.kind not in "iu" or origins.ndim != 1 or np.any(origins != 0):
        raise ValueError(f"{where}: origin={origin!r}: only origin=0 is supported so far"
                         f"{_ROADMAP}")


def _image(where, input, mask):
    """The input as a 2-D float32 image (NaN = missing) and the dtype its median map keeps."""
    arr = as_array(input, where)
    if arr.ndim != 2:
        raise ValueError(f"{where}: the input must be a 2-D image, not {arr.ndim}-D "
                         f"(shape {arr.shape})")
    arr = with_mask(arr, mask, where)
    kept = arr.dtype
    if kept == np.float64 or (kept.kind in "iu" and kept.itemsize > 2):
        finite = arr[np.isfinite(arr)] if kept.kind == "f" else arr
        if finite.size and not np.array_equal(finite.astype(np.float32).astype(kept), finite):
            raise ValueError(
                f"{where}: {kept} values that float32 cannot hold exactly (the filter works in "
                "float32 so far): convert with .astype(numpy.float32) to accept rounding")
        if kept == np.float64:
            raise ValueError(
                f"{where}: float64 images are not filtered yet (the filter works in float32 so "
                "far, and its MAD in float32 differs from float64's): convert with "
                ".astype(numpy.float32)")
    return rows_contiguous(arr, np.dtype(np.float32)), kept


def _cval(where, cval, kept):
    try:
        value = float(cval)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: cval={cval!r} must be a number")
    if np.isnan(value) and kept.kind in "iu":
        raise ValueError(f"{where}: cval=nan (missing) needs a float input; integers have no NaN")
    return value


def _maps(where, input, size, footprint, mode, cval, origin, mask, device, wanted, outputs=None):
    """The maps asked for, float32, computed in one pass of the device."""
    image, kept = _image(where, input, mask)
    width = _width(where, image.shape, size, footprint)
    boundary = _mode(where, mode)
    _origin(where, origin)
    value = _cval(where, cval, kept)
    outputs = outputs or {}
    need_median = any(m in wanted for m in ("median", "snr"))
    need_mad = any(m in wanted for m in ("mad", "sigma", "snr"))
    median = outputs.get("median")
    if need_median and median is None:
        median = np.empty(image.shape, np.float32)
    mad = outputs.get("mad")
    if need_mad and mad is None:
        mad = np.empty(image.shape, np.float32)
    if image.size:
        get_context(device).call(_ext.median_filter, image, width, boundary, value,
                                 median if need_median else None, mad if need_mad else None)
    maps = {}
    if need_median:
        maps["median"] = median
    if need_mad:
        maps["mad"] = mad
    if "sigma" in wanted or "snr" in wanted:
        sigma = np.empty(image.shape, np.float32)
        snr = np.empty(image.shape, np.float32) if "snr" in wanted else None
        pixels = np.ascontiguousarray(image) if snr is not None else None
        _ext.sigma_snr(pixels, np.ascontiguousarray(median) if snr is not None else None,
                       np.ascontiguousarray(mad), sigma, snr)
        maps["sigma"] = sigma
        if snr is not None:
            maps["snr"] = snr
    return {m: maps[m] for m in wanted}, kept


def _direct_output(output, shape):
    """``output`` where the device can write into it as it is (float32 rows), else None."""
    if (isinstance(output, np.ndarray) and output.dtype == np.float32 and output.shape == shape
            and output.flags.writeable
            and rows_contiguous(output, np.dtype(np.float32)) is output):
        return output
    return None


def _deliver(where, result, output, dtype):
    """The result as scipy gives it: a new array of ``dtype``, or written into ``output``."""
    if output is None:
        return result if result.dtype == dtype else result.astype(dtype)
    if isinstance(output, np.ndarray):
        if output is result:
            return output
        if output.shape != result.shape:
            raise ValueError(f"{where}: output has shape {output.shape}, the input "
                             f"{result.shape}")
        if not output.flags.writeable:
            raise ValueError(f"{where}: output is read-only")
        if output.dtype.kind not in "fiub" or (output.dtype.kind != "f" and dtype.kind == "f"):
            raise ValueError(f"{where}: output of dtype {output.dtype} cannot hold the "
                             f"{dtype} result")
        np.copyto(output, result, casting="unsafe")
        return output
    try:
        out_dtype = np.dtype(output)
    except TypeError:
        raise ValueError(f"{where}: output must be an array or a dtype, not {output!r}")
    if out_dtype.kind not in "fiub" or (out_dtype.kind != "f" and dtype.kind == "f"):
        raise ValueError(f"{where}: output dtype {out_dtype} cannot hold the {dtype} result")
    return result.astype(out_dtype)


def _filter_one(where, which, input, size, footprint, mode, cval, origin, output, mask, device):
    arr = np.asarray(input) if not isinstance(input, np.ma.MaskedArray) else input
    direct = _direct_output(output, getattr(arr, "shape", None))
    maps, kept = _maps(where, input, size, footprint, mode, cval, origin, mask, device, (which,),
                       {which: direct} if direct is not None else None)
    dtype = kept if which == "median" else np.dtype(np.float32)
    return _deliver(where, maps[which], output, dtype)


def median_filter(input, size=None, footprint=None, mode="reflect", cval=0.0, origin=0,
                  output=None, *, mask=None, device=None):
    """Median of the window around every pixel of a 2-D image, exact, on an OpenCL device.

    A drop-in for :func:`scipy.ndimage.median_filter` on 2-D images: where scipy's result is
    defined (no NaN in the data) the two give the same bits. NaN pixels, masked pixels (of a
    :class:`numpy.ma.MaskedArray` or of ``mask``) and ``cval=nan`` outside the image are
    missing data and left out of each window; a window with no valid value gives NaN, and one
    with an even count of valid values the mean of the two middle ones (numpy's median).

    Parameters
    ----------
    input : array_like
        The 2-D image: bool, integers or floats (float32 is filtered as it is; other types
        are converted once, and only where float32 holds their values exactly).
    size : int or tuple of int
        The window's width in pixels (odd; a tuple must give the same odd width twice).
    footprint : array_like, optional
        scipy's footprint: an all-True odd square, the same as ``size``.
    mode : {'reflect', 'mirror', 'nearest', 'constant', 'wrap'}, optional
        How the image extends beyond its edges, as scipy.ndimage defines it (its 'grid-'
        names are accepted). Windows wider than the image continue the pattern.
    cval : float, optional
        The value outside the image for mode 'constant'; NaN makes it missing.
    origin : int, optional
        0 (other shifts come with the filter's window shapes).
    output : ndarray or dtype, optional
        Where to write the result (a float32 array of the input's shape is written in place by
        the device; any other array through one copy), or the dtype of the new result.
    mask : array_like of bool, optional
        True where a pixel is missing data, as NaN is.
    device : str, int or Context, optional
        The device to run on: ``'gpu'``, ``'cpu'``, an index into :func:`clstats.devices`,
        part of a device name, or a :class:`clstats.Context`. By default a context shared by
        the process on ``$CLSTATS_DEVICE``, else the first GPU, else the first CPU device.

    Returns
    -------
    ndarray
        The median map, of the input's dtype (as scipy), or ``output``.

    Raises
    ------
    ValueError
        For a bad argument (ndim, size, mode, origin, dtype, output).
    clstats.DeviceError
        When the device fails (none found, a kernel that will not build, out of memory).

    Examples
    --------
    >>> import numpy as np, clstats
    >>> image = np.random.default_rng(1).normal(size=(64, 64)).astype(np.float32)
    >>> background = clstats.median_filter(image, size=11)
    >>> background.shape, background.dtype
    ((64, 64), dtype('float32'))
    """
    return _filter_one("median_filter", "median", input, size, footprint, mode, cval, origin,
                       output, mask, device)


def mad_filter(input, size=None, footprint=None, mode="reflect", cval=0.0, origin=0,
               output=None, *, mask=None, device=None):
    """Median absolute deviation of the window around every pixel of a 2-D image, exact.

    The MAD of a window is numpy's ``nanmedian(abs(x - m))`` over its valid values, ``m``
    being that window's median (:func:`median_filter`); multiply by :data:`MAD_TO_SIGMA` for a
    robust standard deviation (or ask :func:`filter_maps` for 'sigma'). Arguments are those of
    :func:`median_filter`.

    Returns
    -------
    ndarray
        The float32 MAD map, or ``output``.

    Examples
    --------
    >>> import numpy as np, clstats
    >>> image = np.random.default_rng(2).normal(size=(64, 64)).astype(np.float32)
    >>> noise = clstats.mad_filter(image, size=15) * clstats.MAD_TO_SIGMA
    """
    return _filter_one("mad_filter", "mad", input, size, footprint, mode, cval, origin, output,
                       mask, device)


def filter_maps(input, size=None, maps=_MAPS, footprint=None, mode="reflect", cval=0.0, origin=0,
                *, mask=None, device=None):
    """Median, MAD, SIGMA and SNR maps of a 2-D image, in one pass of the device.

    Parameters
    ----------
    input, size, footprint, mode, cval, origin, mask, device
        As for :func:`median_filter`.
    maps : sequence of str, optional
        Which maps, any of ``'median'``, ``'mad'``, ``'sigma'`` (``MAD_TO_SIGMA * mad``) and
        ``'snr'`` (``(input - median) / sigma``, NaN where sigma is 0).

    Returns
    -------
    dict
        The maps asked for, by name, each a float32 array of the input's shape.

    Examples
    --------
    >>> import numpy as np, clstats
    >>> image = np.random.default_rng(3).normal(size=(64, 64)).astype(np.float32)
    >>> m = clstats.filter_maps(image, 11, maps=('median', 'snr'))
    >>> sorted(m)
    ['median', 'snr']
    """
    if isinstance(maps, str):
        maps = (maps,)
    maps = tuple(maps)
    unknown = [m for m in maps if m not in _MAPS]
    if unknown or not maps or len(set(maps)) != len(maps):
        raise ValueError(f"filter_maps: maps={maps!r}: give some of {', '.join(_MAPS)}, "
                         "each once")
    result, _ = _maps("filter_maps", input, size, footprint, mode, cval, origin, mask, device,
                      maps)
    return result
