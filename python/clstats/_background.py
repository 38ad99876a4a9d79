"""Mesh background and RMS maps, SExtractor's way, with SEP's arithmetic (libclstats'
``clstats_background``)."""
import numbers

import numpy as np

from . import _ext
from ._arrays import as_array, rows_contiguous
from ._context import get_context

__all__ = ["Background"]

_ESTIMATORS = {"sextractor": 0, "median": 1, "mean": 2}
_RMS_ESTIMATORS = ("std",)


def _pair(value, name):
    sizes = (value, value) if isinstance(value, numbers.Integral) else tuple(value)
    if (len(sizes) != 2 or any(not isinstance(s, numbers.Integral) or isinstance(s, bool)
                               for s in sizes) or min(sizes) < 1):
        raise ValueError(f"Background: {name}={value!r} must be a positive integer or two")
    return tuple(int(s) for s in sizes)


class Background:
    """The background and its RMS over a mesh of boxes, interpolated to every pixel.

    Each box of the mesh is clipped (its mean +- 2 sd, then a histogram clipped at median +-
    ``sigma_clip`` sd until the sd settles) and gives a background and an RMS; boxes with fewer
    than half their pixels valid take their nearest neighbours' values; the mesh is
    median-filtered and interpolated by bicubic spline. With the defaults this is SExtractor's
    and SEP's background: ``Background(data).background`` equals
    ``sep.Background(data, bw=64, bh=64, fw=3, fh=3).back()`` on float32 images, and so do the
    RMS map and the global values.

    Parameters
    ----------
    data : array_like
        The 2-D image. float32 is used as is, float64 rounded to float32 (as SEP does), other
        numbers converted to float32. NaN pixels are missing.
    box_size : int or (int, int), optional
        The mesh's box in pixels, square or (rows, columns). SEP's ``bh, bw``.
    filter_size : int or (int, int), optional
        The median filter of the mesh in boxes (odd), square or (rows, columns). SEP's
        ``fh, fw``; 1 filters nothing.
    mask : array_like of bool, optional
        True (nonzero) where a pixel is missing, the image's shape.
    sigma_clip : float, optional
        The histogram clipping in sd (SExtractor's 3).
    estimator : {'sextractor', 'median', 'mean'}, optional
        'sextractor': the mode 2.5 median - 1.5 mean, or the median where the box is skewed
        (``|mean - median| >= 0.3 sd``); 'median' and 'mean' of the clipped histogram.
    rms_estimator : {'std'}, optional
        The clipped standard deviation.
    filter_threshold : float, optional
        SEP's ``fthresh``: a box is filtered only where it differs from its neighbours' median
        by at least this much.
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`.

    Attributes
    ----------
    background, rms : ndarray
        float32 maps of the image's shape.
    background_mesh, rms_mesh : ndarray
        The filtered mesh, one value per box (float32).
    global_background, global_rms : float
        The medians of the filtered meshes (SEP's ``globalback``, ``globalrms``).

    Examples
    --------
    >>> import numpy as np, clstats
    >>> image = np.random.default_rng(1).normal(10.0, 2.0, (256, 300)).astype(np.float32)
    >>> bkg = clstats.Background(image, box_size=64)
    >>> bkg.background.shape, bkg.rms.dtype
    ((256, 300), dtype('float32'))
    >>> bool(abs(bkg.global_background - 10.0) < 0.1), bool(abs(bkg.global_rms - 2.0) < 0.1)
    (True, True)
    """

    def __init__(self, data, box_size=64, filter_size=3, mask=None, sigma_clip=3.0,
                 estimator="sextractor", rms_estimator="std", filter_threshold=0.0, device=None):
        where = "Background"
        arr = as_array(data, where)
        if arr.ndim != 2 or arr.size == 0:
            raise ValueError(f"{where}: the image must be 2-D and not empty, not {arr.shape}")
        bh, bw = _pair(box_size, "box_size")
        fh, fw = _pair(filter_size, "filter_size")
        if fh % 2 == 0 or fw % 2 == 0:
            raise ValueError(f"{where}: filter_size={filter_size!r} must be odd")
        if estimator not in _ESTIMATORS:
            raise ValueError(f"{where}: estimator={estimator!r}: one of {sorted(_ESTIMATORS)}")
        if rms_estimator not in _RMS_ESTIMATORS:
            raise ValueError(f"{where}: rms_estimator={rms_estimator!r}: one of "
                             f"{list(_RMS_ESTIMATORS)}")
        if not (float(sigma_clip) > 0.0):
            raise ValueError(f"{where}: sigma_clip={sigma_clip!r} must be positive")
        if not (float(filter_threshold) >= 0.0):
            raise ValueError(f"{where}: filter_threshold={filter_threshold!r} must be >= 0")
        dtype = np.float64 if arr.dtype == np.float64 else np.float32
        image = rows_contiguous(arr, np.dtype(dtype))
        mask8 = None
        if mask is not None:
            m = np.asarray(mask)
            if m.shape != arr.shape:
                raise ValueError(f"{where}: mask has shape {m.shape}, the data {arr.shape}")
            mask8 = np.ascontiguousarray(m != 0, dtype=np.uint8)
        self.background = np.empty(arr.shape, np.float32)
        self.rms = np.empty(arr.shape, np.float32)
        back, rms, gb, gr = get_context(device).call(
            _ext.background, image, mask8, bw, bh, fw, fh, float(filter_threshold),
            float(sigma_clip), _ESTIMATORS[estimator], self.background, self.rms)
        self.background_mesh = np.array(back, np.float32)
        self.rms_mesh = np.array(rms, np.float32)
        self.global_background = gb
        self.global_rms = gr

    def subtract(self, data):
        """The image less the background map: ``data - background`` in float32.

        Parameters
        ----------
        data : array_like
            An image of the shape the background was measured on.

        Returns
        -------
        ndarray
            float32, the image's shape.
        """
        arr = np.asarray(data)
        if arr.shape != self.background.shape:
            raise ValueError(f"Background.subtract: shape {arr.shape}, the background's "
                             f"{self.background.shape}")
        return arr.astype(np.float32) - self.background

    def __repr__(self):
        return (f"<clstats.Background {self.background.shape[1]}x{self.background.shape[0]}, "
                f"mesh {self.background_mesh.shape[1]}x{self.background_mesh.shape[0]}, "
                f"global {self.global_background:.6g} +- {self.global_rms:.6g}>")
