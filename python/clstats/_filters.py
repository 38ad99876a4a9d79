"""Sliding-window median and MAD maps, with scipy.ndimage's arguments."""
import numbers
import warnings

import numpy as np

from . import _ext
from ._arrays import as_array, rows_contiguous, work_dtype
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

_MAPS = ("median", "mad", "sigma", "snr", "residual")
_DEFAULT_MAPS = ("median", "mad", "sigma", "snr")

_EVEN = ("mean", "lower", "upper")


def _pair(where, name, value):
    """A scipy per-axis argument (a number or one per axis) as (rows, columns)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value), int(value)
    try:
        items = tuple(value)
    except TypeError:
        raise ValueError(f"{where}: {name}={value!r} must be an integer or one per axis")
    if len(items) != 2 or any(not isinstance(v, numbers.Integral) or isinstance(v, bool)
                              for v in items):
        raise ValueError(f"{where}: {name}={value!r} must be an integer or two of them "
                         "(rows, columns) for a 2-D image")
    return int(items[0]), int(items[1])


def _window(where, size, footprint, origin):
    """The window as the library takes it: ((width, height, origin_x, origin_y), footprint or
    None), from scipy's size (rows, columns), footprint and origin (rows, columns)."""
    oy, ox = _pair(where, "origin", origin)
    if footprint is not None:
        if size is not None:
            warnings.warn(f"{where}: ignoring size because footprint is set", UserWarning,
                          stacklevel=4)
        fp = np.asarray(footprint)
        if fp.ndim != 2:
            raise ValueError(f"{where}: footprint must be 2-D, not {fp.ndim}-D")
        if fp.dtype.kind not in "biuf":
            raise ValueError(f"{where}: footprint of dtype {fp.dtype} (give booleans)")
        cells = np.ascontiguousarray(fp != 0, dtype=np.uint8)
        if min(cells.shape) < 1 or max(cells.shape) > MAX_WIDTH:
            raise ValueError(f"{where}: footprint of shape {fp.shape}: each side must be "
                             f"1 to {MAX_WIDTH}")
        if not cells.any():
            raise ValueError(f"{where}: the footprint selects no cell")
        if cells.all():
            return (cells.shape[1], cells.shape[0], ox, oy), None
        return (cells.shape[1], cells.shape[0], ox, oy), cells
    if size is None:
        raise ValueError(f"{where}: give size (the window's shape) or footprint")
    rows, cols = _pair(where, "size", size)
    if min(rows, cols) < 1 or max(rows, cols) > MAX_WIDTH:
        raise ValueError(f"{where}: size={size!r}: each side must be 1 to {MAX_WIDTH}")
    return (cols, rows, ox, oy), None


def _mode(where, mode):
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"{where}: mode={mode!r}: give one of {', '.join(_MODES)} "
                         "(one mode for both axes)")
    return _MODES[mode]


def _even(where, even):
    if even not in _EVEN:
        raise ValueError(f"{where}: even={even!r}: give 'mean', 'lower' or 'upper'")
    return even


def _image(where, input, mask):
    """The input as a 2-D float32 or float64 image with rows contiguous (NaN = missing), the
    mask as uint8 or None, and the dtype the median map keeps (the input's, as scipy)."""
    if isinstance(input, np.ma.MaskedArray):
        masked = np.ma.getmaskarray(input)
        input = np.asarray(input.data)
        mask = masked if mask is None else (np.asarray(mask) != 0) | masked
    arr = as_array(input, where)
    if arr.ndim != 2:
        raise ValueError(f"{where}: the input must be a 2-D image, not {arr.ndim}-D "
                         f"(shape {arr.shape})")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.shape != arr.shape:
            raise ValueError(f"{where}: mask has shape {mask.shape}, the image {arr.shape}")
        mask = np.ascontiguousarray(mask != 0, dtype=np.uint8) if mask.any() else None
    return rows_contiguous(arr, work_dtype(arr)), mask, arr.dtype


def _cval(where, cval, kept):
    try:
        value = float(cval)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: cval={cval!r} must be a number")
    if np.isnan(value) and kept.kind in "biu":
        raise ValueError(f"{where}: cval=nan (missing) needs a float input; integers have no NaN")
    return value


def _maps(where, input, size, footprint, mode, cval, origin, even, mask, device, wanted,
          outputs=None):
    """The maps asked for, in the image's working dtype, computed in one pass of the device."""
    image, mask, kept = _image(where, input, mask)
    window, cells = _window(where, size, footprint, origin)
    boundary = _mode(where, mode)
    value = _cval(where, cval, kept)
    outputs = outputs or {}
    need_median = any(m in wanted for m in ("median", "snr", "residual"))
    need_mad = any(m in wanted for m in ("mad", "sigma", "snr"))
    median = outputs.get("median")
    if need_median and (median is None or median.dtype != image.dtype):
        median = np.empty(image.shape, image.dtype)
    mad = outputs.get("mad")
    if need_mad and (mad is None or mad.dtype != image.dtype):
        mad = np.empty(image.shape, image.dtype)
    if image.size:
        get_context(device).call(_ext.median_filter, image, window, cells, _even(where, even),
                                 boundary, value, mask, median if need_median else None,
                                 mad if need_mad else None)
    maps = {}
    if need_median:
        maps["median"] = median
    if need_mad:
        maps["mad"] = mad
    if "sigma" in wanted or "snr" in wanted:
        maps.update(_sigma_snr(image, mask, median, mad, "snr" in wanted))
    if "residual" in wanted:
        maps["residual"] = image - median
        if mask is not None:
            maps["residual"][mask != 0] = np.nan
    return {m: maps[m] for m in wanted}, kept


def _sigma_snr(image, mask, median, mad, want_snr):
    """SIGMA and SNR as the library computes them, in the image's precision."""
    sigma = np.empty(image.shape, image.dtype)
    snr = np.empty(image.shape, image.dtype) if want_snr else None
    pixels = np.ascontiguousarray(image) if want_snr else None
    if want_snr and mask is not None:
        pixels = pixels.copy()
        pixels[mask != 0] = np.nan
    _ext.sigma_snr(pixels, np.ascontiguousarray(median) if want_snr else None,
                   np.ascontiguousarray(mad), sigma, snr)
    return {"sigma": sigma, "snr": snr} if want_snr else {"sigma": sigma}


def _direct_output(output, shape):
    """``output`` where the device can write into it as it is (float rows), else None; the
    call checks that its dtype is the image's working one."""
    if (isinstance(output, np.ndarray) and output.dtype in (np.float32, np.float64)
            and output.shape == shape and output.flags.writeable
            and rows_contiguous(output, output.dtype) is output):
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


def _filter_one(where, which, input, size, footprint, mode, cval, origin, even, output, mask,
                device):
    arr = np.asarray(input) if not isinstance(input, np.ma.MaskedArray) else input
    direct = _direct_output(output, getattr(arr, "shape", None))
    maps, kept = _maps(where, input, size, footprint, mode, cval, origin, even, mask, device,
                       (which,), {which: direct} if direct is not None else None)
    result = maps[which]
    dtype = kept if which == "median" else result.dtype
    return _deliver(where, result, output, dtype)


def median_filter(input, size=None, footprint=None, mode="reflect", cval=0.0, origin=0,
                  output=None, *, even="upper", mask=None, device=None):
    """Median of the window around every pixel of a 2-D image, exact, on an OpenCL device.

    A drop-in for :func:`scipy.ndimage.median_filter` on 2-D images: where scipy's result is
    defined (no NaN in the data) the two give the same bits, for every size, footprint, origin
    and mode. NaN pixels, masked pixels (of a :class:`numpy.ma.MaskedArray` or of ``mask``) and
    ``cval=nan`` outside the image are missing data and left out of each window; a window with
    no valid value gives NaN.

    Parameters
    ----------
    input : array_like
        The 2-D image: bool, integers or floats. float32 (and float16, small integers) are
        filtered in float32; float64, and integers float32 cannot hold, in float64 (a device
        with fp64 is needed).
    size : int or (int, int)
        The window's shape, (rows, columns) or one number for a square, 1 to 255 each, odd or
        even (an even size covers one cell more before the pixel than after, as scipy's).
    footprint : array_like of bool, optional
        Any window up to 255 x 255: the cells that are True (scipy's footprint=, not flipped).
        ``size`` is then ignored.
    mode : {'reflect', 'mirror', 'nearest', 'constant', 'wrap'}, optional
        How the image extends beyond its edges, as scipy.ndimage defines it (its 'grid-'
        names are accepted). Windows wider than the image continue the pattern.
    cval : float, optional
        The value outside the image for mode 'constant'; NaN makes it missing.
    origin : int or (int, int), optional
        scipy's shift of the window, per axis (rows, columns).
    output : ndarray or dtype, optional
        Where to write the result (a float array of the working dtype and the input's shape is
        written in place by the device; any other array through one copy), or the dtype of the
        new result.
    even : {'upper', 'lower', 'mean'}, optional
        The median of an even count of valid values: the upper of the two middle ones
        (scipy's rank n // 2, the default, so that footprints with an even count of cells
        match scipy), the lower, or their mean (numpy's median).
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
    >>> ring = np.zeros((9, 9), bool); yy, xx = np.mgrid[-4:5, -4:5]
    >>> ring[(xx**2 + yy**2 > 4) & (xx**2 + yy**2 <= 16)] = True
    >>> around = clstats.median_filter(image, footprint=ring)   # IRAF rmedian's annulus
    """
    return _filter_one("median_filter", "median", input, size, footprint, mode, cval, origin,
                       even, output, mask, device)


def mad_filter(input, size=None, footprint=None, mode="reflect", cval=0.0, origin=0,
               output=None, *, even="mean", mask=None, device=None):
    """Median absolute deviation of the window around every pixel of a 2-D image, exact.

    The MAD of a window is numpy's ``nanmedian(abs(x - m))`` over its valid values, ``m``
    being that window's median, both by the ``even`` rule (by default the mean of the two
    middle values, numpy's); multiply by :data:`MAD_TO_SIGMA` for a robust standard deviation
    (or ask :func:`filter_maps` for 'sigma'). Other arguments are those of
    :func:`median_filter`.

    Returns
    -------
    ndarray
        The MAD map (float32, or float64 for float64 data), or ``output``.

    Examples
    --------
    >>> import numpy as np, clstats
    >>> image = np.random.default_rng(2).normal(size=(64, 64)).astype(np.float32)
    >>> noise = clstats.mad_filter(image, size=15) * clstats.MAD_TO_SIGMA
    """
    return _filter_one("mad_filter", "mad", input, size, footprint, mode, cval, origin, even,
                       output, mask, device)


def filter_maps(input, size=None, maps=_DEFAULT_MAPS, footprint=None, mode="reflect", cval=0.0, origin=0,
                *, even="mean", mask=None, device=None):
    """Median, MAD, SIGMA and SNR maps of a 2-D image, in one pass of the device.

    Parameters
    ----------
    input, size, footprint, mode, cval, origin, mask, device
        As for :func:`median_filter`.
    even : {'mean', 'lower', 'upper'}, optional
        The even-count rule of the median and the MAD (as :func:`mad_filter`: numpy's mean by
        default).
    maps : sequence of str, optional
        Which maps, any of ``'median'``, ``'mad'``, ``'sigma'`` (``MAD_TO_SIGMA * mad``),
        ``'snr'`` (``(input - median) / sigma``, NaN where sigma is 0) and ``'residual'``
        (``input - median``: with sigma, what a detector such as SExtractor takes); the first
        four by default.

    Returns
    -------
    dict
        The maps asked for, by name, each an array of the input's shape (float32, or float64
        for float64 data).

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
    result, _ = _maps("filter_maps", input, size, footprint, mode, cval, origin, even, mask,
                      device, maps)
    return result
