"""Exact order statistics with numpy's nan-functions semantics: NaN (and masked values) are
left out; a slice with no valid value gives NaN and numpy's warning."""
import numbers
import warnings

import numpy as np

from . import _ext
from ._arrays import as_array, rows_contiguous, work_dtype
from ._context import get_context

__all__ = ["median", "percentile", "quantile", "select_kth", "tile_medians"]

_AxisError = getattr(getattr(np, "exceptions", np), "AxisError", None) or np.AxisError


def _all_nan_warning():
    warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)


def _axes(where, axis, ndim):
    """axis as a sorted tuple of dimensions (None: all of them)."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = []
    for ax in items:
        if not isinstance(ax, numbers.Integral) or isinstance(ax, bool):
            raise ValueError(f"{where}: axis={axis!r} must be None, an integer or a tuple of them")
        if not -ndim <= ax < ndim:
            raise _AxisError(int(ax), ndim)
        axes.append(int(ax) % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{where}: axis={axis!r} repeats an axis")
    return tuple(sorted(axes))


def _vector(arr, dtype):
    """All of arr's elements as a vector of dtype (a view where memory allows)."""
    flat = np.ravel(arr, order="K")
    return rows_contiguous(flat, dtype)


def _slices(arr, axes, dtype):
    """arr as a matrix whose columns are the slices along axes, and the shape of the rest."""
    rest = tuple(d for d in range(arr.ndim) if d not in axes)
    moved = np.transpose(arr, axes + rest)
    length = int(np.prod([arr.shape[d] for d in axes]))
    rest_shape = tuple(arr.shape[d] for d in rest)
    matrix = moved.reshape(length, -1)
    return rows_contiguous(matrix, dtype), rest_shape


def _finish(values, axes, shape, keepdims, out, dtype):
    """values (the shape of the axes not reduced) as numpy returns them: dtype, keepdims, out."""
    result = np.asarray(values, dtype=dtype)
    if keepdims:
        result = result.reshape(tuple(1 if d in axes else n for d, n in enumerate(shape)))
    if out is not None:
        np.copyto(out, result, casting="unsafe")
        return out
    return result[()] if result.ndim == 0 else result


def _numpy_dtype(function, dtype):
    """The dtype numpy's nan-function returns for data of dtype (numpy's versions differ)."""
    probe = np.zeros(2, dtype=dtype)
    return np.asarray(function(probe)).dtype


def _one(ctx, vec, what, k=0):
    """(value or None, NaNs) of one order statistic of a vector."""
    return ctx.call(_ext.select, vec, what, k)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False, *, device=None):
    """Median of the valid values, along an axis or of the whole array: numpy's ``nanmedian``.

    Exact (an element of the data, or the mean of the two middle ones as numpy computes it),
    computed on an OpenCL device. NaN and masked values are left out; a slice with none valid
    gives NaN and numpy's "All-NaN slice encountered" warning.

    Parameters
    ----------
    a : array_like
        Numbers of any shape (a masked array's mask is missing data).
    axis : None, int or tuple of int, optional
        Along which axes; None (the default) takes the whole array. Medians along an axis of a
        float32 or small-integer array run as one device call (the column medians); other
        types take one call per slice.
    out : ndarray, optional
        Where to put the result.
    overwrite_input : bool, optional
        Accepted for numpy's signature; the input is never changed.
    keepdims : bool, optional
        Keep the reduced axes, of length one.
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`.

    Returns
    -------
    scalar or ndarray
        numpy's dtype for the input (float32 for float32, float64 for integers and float64).

    Examples
    --------
    >>> import numpy as np, clstats
    >>> clstats.median(np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]]), axis=1)
    array([2., 5.])
    """
    del overwrite_input
    where = "median"
    arr = as_array(a, where)
    if arr.size == 0:
        return np.nanmedian(arr, axis=axis, out=out, keepdims=keepdims)
    axes = _axes(where, axis, arr.ndim)
    dtype = _numpy_dtype(np.nanmedian, arr.dtype)
    wd = work_dtype(arr)
    ctx = get_context(device)
    if len(axes) == arr.ndim:
        value, _ = _one(ctx, _vector(arr, wd), "median")
        if value is None:
            _all_nan_warning()
            value = np.nan
        return _finish(value, axes, arr.shape, keepdims, out, dtype)
    matrix, rest_shape = _slices(arr, axes, wd)
    if wd == np.float32:
        values = np.empty(matrix.shape[1], np.float32)
        ctx.call(_ext.column_medians, matrix, values)
        if np.isnan(values).any() and np.isnan(matrix).all(axis=0).any():
            _all_nan_warning()
    else:
        columns = np.ascontiguousarray(matrix.T)
        values = np.empty(columns.shape[0])
        empty = False
        for i, column in enumerate(columns):
            v, _ = _one(ctx, column, "median")
            empty |= v is None
            values[i] = np.nan if v is None else v
        if empty:
            _all_nan_warning()
    return _finish(values.reshape(rest_shape), axes, arr.shape, keepdims, out, dtype)


def _q_array(where, q, scale):
    qa = np.asarray(q, dtype=np.float64)
    if qa.dtype.kind != "f" or np.isnan(qa).any() or (qa < 0).any() or (qa > scale).any():
        name = "Percentiles" if scale == 100 else "Quantiles"
        raise ValueError(f"{where}: {name} must be in the range [0, {scale}]")
    return qa


_scalar_rule = []


def _float32_rule(q, arr):
    """How numpy computes this quantile of float32 data: None where as in float64 (numpy 1,
    and any array q), which the library does; for a Python scalar q numpy 2 returns float32,
    either working in float32 from end to end ('float32') or taking the index and the weight
    in float64 and interpolating in float32 ('weak'), as its versions differ: told apart once,
    on a probe whose bits differ between the two."""
    if type(q) not in (int, float) or arr.dtype != np.float32:
        return None
    if not _scalar_rule:
        x = np.array([1.4494741, -1.4403604, -0.01746621], np.float32)
        got = np.nanquantile(x, 0.3)
        if np.asarray(got).dtype != np.float32:
            _scalar_rule.append(None)
        else:
            weak = _interpolate(x[1], x[2], 2 * 0.3, 0, "weak")
            _scalar_rule.append("weak" if weak == got else "float32")
    return _scalar_rule[0]


def _interpolate(a, b, h, r0, rule):
    """numpy's _lerp of float32 order statistics a and b at index h (r0 its floor, or -1 past
    the last), in the arithmetic of the rule."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.float32(b - a)
        if rule == "float32":
            g = np.float32(h - np.float32(r0))
            if g >= 0.5:
                return np.float32(b - d * (np.float32(1) - g))
            return np.float32(a + d * g)
        g = float(h) - r0
        if g >= 0.5:
            return np.float32(b - d * np.float32(1 - g))
        return np.float32(a + d * np.float32(g))


def _quantile_in_float32(ctx, vec, q, percent, rule):
    """numpy 2's 'linear' quantile of a float32 vector at a Python scalar q, from the order
    statistics the device selects; None where no value is valid."""
    low, nans = ctx.call(_ext.select, vec, "kth", 0)
    if low is None:
        return None
    n = vec.size - nans
    if rule == "float32":
        fraction = np.float32(q) / np.float32(100) if percent else np.float32(q)
        h = np.float32(n - 1) * fraction
    else:
        h = (n - 1) * (q / 100 if percent else float(q))
    if h >= n - 1:
        r0 = r1 = n - 1
        floor = -1
    else:
        r0 = floor = int(np.floor(h))
        r1 = r0 + 1
    a = np.float32(ctx.call(_ext.select, vec, "kth", r0)[0])
    b = a if r1 == r0 else np.float32(ctx.call(_ext.select, vec, "kth", r1)[0])
    return _interpolate(a, b, h, floor, rule)


def _quantiles(where, a, q_input, fractions, q_shape, axis, out, keepdims, method, device):
    if method != "linear":
        raise ValueError(f"{where}: method={method!r}: only numpy's default 'linear' is "
                         "supported")
    arr = as_array(a, where)
    if arr.size == 0:
        return None
    axes = _axes(where, axis, arr.ndim)
    rule = _float32_rule(q_input, arr)
    in_float32 = rule is not None
    probe_q = 0.5 if type(q_input) in (int, float) else [0.5]
    dtype = _numpy_dtype(lambda x: np.nanquantile(x, probe_q), arr.dtype)
    wd = work_dtype(arr)
    ctx = get_context(device)
    q = np.ascontiguousarray(fractions.reshape(-1))
    if len(axes) == arr.ndim:
        vectors, rest_shape = [_vector(arr, wd)], ()
    else:
        matrix, rest_shape = _slices(arr, axes, wd)
        vectors = np.ascontiguousarray(matrix.T)
    values = np.empty((q.size, len(vectors)))
    empty = False
    for i, vec in enumerate(vectors):
        if in_float32:
            v = _quantile_in_float32(ctx, vec, q_input, where == "percentile", rule)
            found, column = (None if v is None else 0), np.array([v if v is not None else 0.0])
        else:
            column = np.empty(q.size)
            found = ctx.call(_ext.quantiles, vec, q, column) if q.size else 0
        empty |= found is None
        values[:, i] = np.nan if found is None else column
    if empty:
        _all_nan_warning()
    values = values.reshape(q_shape + rest_shape)
    if keepdims:
        values = values.reshape(q_shape + tuple(1 if d in axes else n
                                                for d, n in enumerate(arr.shape)))
    result = values.astype(dtype)
    if out is not None:
        np.copyto(out, result, casting="unsafe")
        return out
    return result[()] if result.ndim == 0 else result


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, device=None):
    """q-th percentiles of the valid values: numpy's ``nanpercentile``, exact, on the device.

    Parameters
    ----------
    a : array_like
        Numbers of any shape (a masked array's mask is missing data).
    q : float or array_like of float
        Percentiles in [0, 100].
    axis : None, int or tuple of int, optional
        Along which axes (one device call per slice); None takes the whole array.
    out, overwrite_input, keepdims
        As numpy's (the input is never changed).
    method : {'linear'}, optional
        numpy's default rule, the only one supported: order statistics i and i + 1 with
        h = (n - 1) q / 100 interpolated as numpy does, in double precision.
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`.

    Returns
    -------
    scalar or ndarray
        The shape numpy gives (q's shape first); numpy's dtype.

    Examples
    --------
    >>> import numpy as np, clstats
    >>> clstats.percentile([1.0, 2.0, np.nan, 4.0], [25, 50])
    array([1.5, 2. ])
    """
    del overwrite_input
    qa = _q_array("percentile", q, 100)
    result = _quantiles("percentile", a, q, qa / 100, qa.shape, axis, out, keepdims, method,
                        device)
    if result is None:
        return np.nanpercentile(as_array(a, "percentile"), q, axis=axis, out=out,
                                keepdims=keepdims)
    return result


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, device=None):
    """q-th quantiles (q in [0, 1]) of the valid values: numpy's ``nanquantile``.

    Arguments as for :func:`percentile`, with q a fraction instead of a percentage.

    Examples
    --------
    >>> import numpy as np, clstats
    >>> float(clstats.quantile(np.arange(11.0), 0.3))
    3.0
    """
    del overwrite_input
    qa = _q_array("quantile", q, 1)
    result = _quantiles("quantile", a, q, qa, qa.shape, axis, out, keepdims, method, device)
    if result is None:
        return np.nanquantile(as_array(a, "quantile"), q, axis=axis, out=out, keepdims=keepdims)
    return result


def select_kth(a, k, *, device=None):
    """The k-th smallest valid value of the whole array (k = 0 the minimum, -1 the maximum).

    What ``numpy.partition(a[~numpy.isnan(a)], k)[k]`` gives, without sorting or copying: NaN
    and masked values are left out.

    Parameters
    ----------
    a : array_like
        Numbers of any shape.
    k : int
        The rank among the valid values, 0-based; negative counts from the largest.
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`.

    Returns
    -------
    scalar
        An element of ``a``, of its dtype.

    Raises
    ------
    ValueError
        When k is out of range for the valid values (or there is none).

    Examples
    --------
    >>> import numpy as np, clstats
    >>> int(clstats.select_kth(np.array([5, 1, 4, 2]), 1))
    2
    """
    where = "select_kth"
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise ValueError(f"{where}: k={k!r} must be an integer")
    arr = as_array(a, where)
    wd = work_dtype(arr)
    vec = _vector(arr, wd)
    valid = vec.size - (int(np.count_nonzero(np.isnan(vec))) if k < 0 else 0)
    rank = int(k) + valid if k < 0 else int(k)
    if rank < 0 or (k < 0 and rank >= valid):
        raise ValueError(f"{where}: k={k} is out of range for {valid} valid values")
    if vec.size == 0:
        raise ValueError(f"{where}: the array is empty")
    value, nans = get_context(device).call(_ext.select, vec, "kth", rank)
    if value is None:
        raise ValueError(f"{where}: no valid value (all {nans} are NaN)")
    return np.asarray(value).astype(arr.dtype if arr.dtype.kind != "b" else np.uint8)[()]


def tile_medians(a, tile, *, device=None):
    """Median of each tile of a 2-D image: the mesh a background map interpolates.

    Tiles start at the image's first row and column; the last in each row and column is cut
    short by the image's edge. NaN and masked values are left out; a tile with none valid
    gives NaN.

    Parameters
    ----------
    a : array_like
        The 2-D image (float32, or integers float32 holds exactly).
    tile : int or (int, int)
        The tile's size: square, or (rows, columns) as numpy orders shapes.
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`.

    Returns
    -------
    ndarray
        ``ceil(rows / tile_rows) x ceil(columns / tile_columns)`` medians: float32 for float32
        images, float64 for integers (numpy's dtypes).

    Examples
    --------
    >>> import numpy as np, clstats
    >>> clstats.tile_medians(np.arange(16.0, dtype=np.float32).reshape(4, 4), 2)
    array([[ 2.5,  4.5],
           [10.5, 12.5]], dtype=float32)
    """
    where = "tile_medians"
    arr = as_array(a, where)
    if arr.ndim != 2:
        raise ValueError(f"{where}: the image must be 2-D, not {arr.ndim}-D")
    sizes = (tile, tile) if isinstance(tile, numbers.Integral) else tuple(tile)
    if (len(sizes) != 2 or any(not isinstance(s, numbers.Integral) or isinstance(s, bool)
                               for s in sizes) or min(sizes) < 1):
        raise ValueError(f"{where}: tile={tile!r} must be a positive integer or two of them")
    th, tw = (int(s) for s in sizes)
    dtype = _numpy_dtype(np.nanmedian, arr.dtype)
    if work_dtype(arr) != np.float32:
        raise ValueError(f"{where}: {arr.dtype} data: tile medians are computed in float32 "
                         "only so far (convert with .astype(numpy.float32) to accept rounding)")
    image = rows_contiguous(arr, np.dtype(np.float32))
    out = np.empty((-(-arr.shape[0] // th), -(-arr.shape[1] // tw)), np.float32)
    if image.size:
        get_context(device).call(_ext.tile_medians, image, tw, th, out)
    return out.astype(dtype) if dtype != out.dtype else out
