"""Order statistics and the median filter of data spread over the ranks of an MPI communicator
(mpi4py), each rank computing on its own device and only histograms (or a filter's halo rows)
crossing between them: the library's MPI module, include/clstats/mpi.h.

Every function is collective: every rank of ``comm`` calls it, each with its own part of the
data, and every rank gets the same result, bit for bit the one-device call's on the whole
array (:func:`clstats.median` and its kin). A rank that fails makes every rank raise the same
error. Needs mpi4py, and a build of clstats whose library has its MPI module (meson found MPI).

>>> from mpi4py import MPI
>>> import numpy as np, clstats.mpi
>>> part = np.arange(10.0) + 10 * MPI.COMM_WORLD.rank     # each rank its own values
>>> clstats.mpi.median(part)                                # the median of all ranks' values
"""
import warnings

import numpy as np

from . import _ext
from ._arrays import as_array, rows_contiguous, work_dtype
from ._context import get_context

__all__ = ["median", "select_kth", "percentile", "quantile", "column_median", "column_smallest",
           "median_filter_rows", "last_traffic"]

_MODES = ("reflect", "mirror", "nearest", "constant", "wrap")
# enum clstats_select_method
_METHODS = {"auto": 0, "radix": 1, "cutting_plane": 2, "sample": 3}
_traffic = [0, 0]


def _comm_handle(comm):
    if not hasattr(_ext, "mpi_select"):
        raise ImportError("this build of clstats has no MPI module (meson found no MPI library)")
    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    return comm.py2f()


def _part(where, part):
    arr = as_array(part, where)
    wd = work_dtype(arr)
    return rows_contiguous(np.ravel(arr, order="K"), wd), arr.dtype


def last_traffic():
    """(bytes, messages) this rank handed to MPI in the last call of this module: for the
    selections a histogram a radix pass, whatever the number of values."""
    return tuple(_traffic)


def _join_failed(handle, what):
    """This rank's arguments failed before the call: it joins the call without them, so that
    every rank raises rather than waits (the others get the library's error)."""
    try:
        _ext.mpi_select(None, handle, None, what, 0, None, None)
    except Exception:
        pass


def _method(where, method):
    if method not in _METHODS:
        raise ValueError(f"{where}: method={method!r}: give one of " + ", ".join(_METHODS))
    return _METHODS[method]


def _select(where, part, what, k, comm, even, device, method="auto"):
    handle = _comm_handle(comm)
    try:
        vec, dtype = _part(where, part)
        code = _method(where, method)
        ctx = get_context(device)
    except Exception:
        _join_failed(handle, what)
        raise
    value, nans, nbytes, messages = ctx.call(_ext.mpi_select, handle, vec, what, k, None, None,
                                             even, code)
    _traffic[:] = [nbytes, messages]
    if value is None:
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        value = np.nan
    out = np.float32 if vec.dtype == np.float32 else np.float64
    return out(value)


def median(part, comm=None, *, even="mean", method="auto", device=None):
    """Median of the valid values of all ranks' parts (numpy's ``nanmedian`` of their
    concatenation): float32 for float32 parts, else float64. ``even``: 'mean', 'lower' or
    'upper', the rule for an even count. ``method`` (the same on every rank): 'radix'
    (histograms a pass), 'sample' (a sample's bracket first), 'cutting_plane' (Kelley's
    cutting plane, its counts and objective gathered a pass, 88 bytes a rank), or 'auto'; every
    method gives the same bits."""
    return _select("clstats.mpi.median", part, "median", 0, comm, even, device, method)


def select_kth(part, k, comm=None, *, method="auto", device=None):
    """The k-th smallest valid value (0-based) of all ranks' parts; ``method`` as for
    :func:`median`."""
    k = int(k)
    if k < 0:
        raise ValueError("clstats.mpi.select_kth: k must be >= 0")
    return _select("clstats.mpi.select_kth", part, "kth", k, comm, "mean", device, method)


def _matrix(where, part):
    arr = as_array(part, where)
    if arr.ndim != 2:
        raise ValueError(f"{where}: part must be 2-D (this rank's rows, columns)")
    return rows_contiguous(arr, work_dtype(arr))


def _join_failed_columns(handle, k):
    try:  # join the call without arguments, so that every rank raises (see _join_failed)
        _ext.mpi_columns(None, handle, None, k, None, None)
    except Exception:
        pass


def column_median(part, comm=None, *, even="mean", device=None):
    """Median of every column of a matrix whose rows the ranks hold (numpy's
    ``nanmedian(axis=0)`` of the ranks' parts stacked): ``part`` this rank's rows (rows,
    columns), possibly none, the same columns on every rank. Only counts cross, a radix pass a
    column, however many rows. float32 for float32 parts, else float64; NaN (with numpy's
    warning) where a column has no valid value."""
    where = "clstats.mpi.column_median"
    handle = _comm_handle(comm)
    try:
        m = _matrix(where, part)
        out = np.empty(m.shape[1])
        ctx = get_context(device)
    except Exception:
        _join_failed_columns(handle, None)
        raise
    nans, nbytes, messages, empty = ctx.call(_ext.mpi_columns, handle, m, None, out, None, even)
    _traffic[:] = [nbytes, messages]
    if np.isnan(out).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    return out.astype(m.dtype)


def column_smallest(part, k, comm=None, *, sums=True, device=None):
    """For every column c of a matrix whose rows the ranks hold, in rank order (rank 0's
    first): its k[c]-th smallest valid value (k from 1 to all ranks' rows; an int for every
    column) and, with ``sums``, the sum of its k[c] smallest valid values, the same bits as
    the one-device batched selection of the whole matrix (section VI's multiplicity rule, the
    sums in the part's precision in one fixed order). Returns ``kth`` or ``(kth, sums)``,
    arrays of the part's dtype; NaN (with a warning) where a column has fewer than k[c] valid
    values."""
    where = "clstats.mpi.column_smallest"
    handle = _comm_handle(comm)
    try:
        m = _matrix(where, part)
        ks = np.broadcast_to(np.asarray(k), (m.shape[1],))
        if ks.size and (not np.issubdtype(ks.dtype, np.integer) or (ks < 1).any()):
            raise ValueError(f"{where}: k must be integers >= 1")
        ks = np.ascontiguousarray(ks, dtype=np.uint64)
        out = np.empty(m.shape[1])
        sum_out = np.empty(m.shape[1], m.dtype) if sums else None
        ctx = get_context(device)
    except Exception:
        _join_failed_columns(handle, np.ones(1, np.uint64))
        raise
    nans, nbytes, messages, empty = ctx.call(_ext.mpi_columns, handle, m, ks, out, sum_out)
    _traffic[:] = [nbytes, messages]
    if empty:
        warnings.warn("some columns have fewer valid values than their k (NaN there)",
                      RuntimeWarning, stacklevel=2)
    kth = out.astype(m.dtype)
    return (kth, sum_out) if sums else kth


def quantile(part, q, comm=None, *, device=None, _scale=1.0):
    """Quantiles q (in [0, 1]) of the valid values of all ranks' parts by numpy's 'linear'
    rule, as float64 (numpy's ``nanquantile`` with an array q, the same bits)."""
    where = "clstats.mpi.quantile" if _scale == 1.0 else "clstats.mpi.percentile"
    handle = _comm_handle(comm)
    try:
        qa = np.asarray(q, dtype=np.float64)
        if np.isnan(qa).any() or (qa < 0).any() or (qa > _scale).any():
            raise ValueError(f"{where}: q must be in the range [0, {_scale:g}]")
        flat = np.ascontiguousarray(qa.ravel() / _scale if _scale != 1.0 else qa.ravel())
        vec, _ = _part(where, part)
        out = np.empty(flat.size)
        ctx = get_context(device)
    except Exception:
        _join_failed(handle, "quantiles")
        raise
    value, nans, nbytes, messages = ctx.call(_ext.mpi_select, handle, vec, "quantiles", 0, flat,
                                             out)
    _traffic[:] = [nbytes, messages]
    if value is None:
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    return out.reshape(qa.shape)[()] if qa.ndim == 0 else out.reshape(qa.shape)


def percentile(part, q, comm=None, *, device=None):
    """Percentiles q (in [0, 100]) of the valid values of all ranks' parts: :func:`quantile`
    of q / 100."""
    return quantile(part, q, comm, device=device, _scale=100.0)


def median_filter_rows(band, ny, row0, size, comm=None, *, mode="reflect", cval=0.0,
                       device=None):
    """The median and MAD filter (:func:`clstats.filter_maps`' 'median' and 'mad') of a float32
    image of ``ny`` rows whose rows the ranks hold in bands, in rank order: this rank's
    ``band`` is rows ``row0`` .. ``row0 + len(band) - 1`` (possibly none). Each rank receives
    only the halo rows its windows reach from the others. ``size`` is an int or (rows,
    columns). Returns this rank's rows of (median, mad), float32, the same bits as those rows
    of the one-device filter."""
    handle = _comm_handle(comm)
    try:
        arr = np.ascontiguousarray(band, dtype=np.float32)
        if arr.ndim != 2:
            raise ValueError("clstats.mpi.median_filter_rows: band must be 2-D (rows, columns)")
        if mode not in _MODES:
            raise ValueError(f"clstats.mpi.median_filter_rows: mode={mode!r}: give one of "
                             + ", ".join(_MODES))
        height, width = (size, size) if np.ndim(size) == 0 else tuple(size)
        median = np.empty_like(arr)
        mad = np.empty_like(arr)
        ctx = get_context(device)
    except Exception:
        try:  # join the call without arguments, so that every rank raises (see _join_failed)
            _ext.mpi_median_filter(None, handle, None, 0, 0, (1, 1, 0, 0), "reflect", 0.0, None,
                                   None)
        except Exception:
            pass
        raise
    nbytes = ctx.call(_ext.mpi_median_filter, handle, arr, int(ny), int(row0),
                      (int(width), int(height), 0, 0), mode, float(cval), median, mad)
    _traffic[:] = [nbytes, 0]
    return median, mad
