"""Inputs as the library takes them: float32 or float64 values, rows of contiguous elements,
missing data as NaN. Copies only where the input needs converting."""
import numpy as np

# Integers below this magnitude, and the half-way means of two of them, are exact in float32.
_F32_EXACT_INT = 2**22


def _check_dtype(a, where):
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{where}: arrays of dtype {a.dtype} are not supported "
                         "(give numbers: bool, integers or floats)")


def as_array(a, where):
    """``a`` as an ndarray, masked values as NaN (a masked array's mask is missing data)."""
    if isinstance(a, np.ma.MaskedArray):
        data = np.asarray(a.data)
        _check_dtype(data, where)
        mask = np.ma.getmaskarray(a)
        if mask.any():
            data = data.astype(np.result_type(data.dtype, np.float32), copy=True)
            data[mask] = np.nan
        return data
    arr = np.asarray(a)
    _check_dtype(arr, where)
    return arr


def work_dtype(arr):
    """The dtype the library computes ``arr`` in, exactly: float32 for float32, float16 and
    integers small enough that float32 holds them and the means of two of them; else float64."""
    if arr.dtype == np.float32 or arr.dtype == np.float16:
        return np.dtype(np.float32)
    if arr.dtype.kind in "biu":
        if arr.size == 0 or arr.dtype.itemsize <= 2:
            return np.dtype(np.float32)
        lo, hi = int(arr.min()), int(arr.max())
        if -_F32_EXACT_INT < lo and hi < _F32_EXACT_INT:
            return np.dtype(np.float32)
        if arr.dtype.itemsize == 8 and (hi > 2**53 or lo < -2**53):
            raise ValueError("integers beyond 2**53 have no exact float64 value; "
                             "convert them yourself if rounding is acceptable")
    return np.dtype(np.float64)


def rows_contiguous(arr, dtype):
    """``arr`` (1-D or 2-D) in dtype, native order, aligned, each row's elements contiguous:
    itself where it already is (any row stride), else one copy."""
    ok = (arr.dtype == dtype and arr.dtype.isnative and arr.flags.aligned
          and (arr.ndim == 1 and (arr.shape[0] <= 1 or arr.strides[0] == arr.itemsize)
               or arr.ndim == 2 and (arr.shape[1] <= 1 or arr.strides[1] == arr.itemsize)
               and (arr.shape[0] <= 1 or arr.strides[0] >= arr.shape[1] * arr.itemsize)))
    return arr if ok else np.ascontiguousarray(arr, dtype=dtype)
