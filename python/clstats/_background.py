"""Mesh background and RMS maps, SExtractor's way with SEP's arithmetic, or with photutils'
sigma clipping and estimators (libclstats' ``clstats_background``)."""
import numbers

import numpy as np

from . import _ext
from ._arrays import as_array, rows_contiguous
from ._context import get_context

__all__ = ["Background"]

_ESTIMATORS = {"sextractor": 0, "median": 1, "mean": 2, "mmm": 3, "biweight": 4}
_RMS_ESTIMATORS = {"std": 0, "mad_std": 1, "biweight": 2}
_CLIPPINGS = {"histogram": 0, "sigma": 1}
# photutils' estimators, which its sigma clipping alone gives
_SIGMA_ONLY = ({"mmm", "biweight"}, {"mad_std", "biweight"})


def _pair(value, name):
    sizes = (value, value) if isinstance(value, numbers.Integral) else tuple(value)
    if (len(sizes) != 2 or any(not isinstance(s, numbers.Integral) or isinstance(s, bool)
                               for s in sizes) or min(sizes) < 1):
        raise ValueError(f"Background: {name}={value!r} must be a positive integer or two")
    return tuple(int(s) for s in sizes)


class Background:
    """The background and its RMS over a mesh of boxes, interpolated to every pixel.

    Each box of the mesh is clipped and gives a background and an RMS; bad boxes are filled
    from the good ones (SEP's way or photutils', as the clipping); the mesh is median-filtered and interpolated by bicubic spline.

    With ``clipping='histogram'`` (the default) a box is clipped SExtractor's way (its mean +- 2
    sd, then a histogram clipped at median +- ``sigma_clip`` sd until the sd settles) and is bad
    with fewer than half its pixels valid; a bad box takes the mean of its nearest good boxes,
    as SEP's. With the defaults this is SExtractor's and SEP's
    background: ``Background(data).background`` equals ``sep.Background(data, bw=64, bh=64,
    fw=3, fh=3).back()`` on float32 images, and so do the RMS map and the global values.

    With ``clipping='sigma'`` a box is measured as photutils' ``Background2D`` measures it
    (photutils 1.10): astropy's ``SigmaClip(sigma=sigma_clip, maxiters=maxiters)`` (median
    centre, std), then the estimators over what is kept, in double; a box is bad where more than
    ``exclude_percentile`` percent of its pixels are missing or clipped, and the mesh filter cuts
    its window at the mesh's edges as photutils does, bad boxes take the inverse-distance
    weighted mean of their 10 nearest good boxes (photutils' ``ShepardIDWInterpolator``, with
    the neighbours scipy's ``cKDTree`` picks where several lie at the same distance), and the maps are photutils' cubic zoom of
    the mesh (``BkgZoomInterpolator``). ``background``, ``rms``, the meshes and the global
    values then equal those of ``Background2D(data, box_size, filter_size=filter_size,
    sigma_clip=SigmaClip(sigma=sigma_clip, maxiters=maxiters), bkg_estimator=...,
    bkgrms_estimator=..., exclude_percentile=...)`` (``background``, ``background_rms``,
    ``background_mesh``, ``background_rms_mesh``, ``background_median``,
    ``background_rms_median``), excluded boxes included.

    Parameters
    ----------
    data : array_like
        The 2-D image. float32 is used as is; float64 is rounded to float32 (as SEP does) with
        ``clipping='histogram'`` and used as is with ``'sigma'``; other numbers converted to
        float32. NaN pixels are missing, and with ``'sigma'`` infinities too.
    box_size : int or (int, int), optional
        The mesh's box in pixels, square or (rows, columns). SEP's ``bh, bw``.
    filter_size : int or (int, int), optional
        The median filter of the mesh in boxes (odd), square or (rows, columns). SEP's
        ``fh, fw``; 1 filters nothing.
    mask : array_like of bool, optional
        True (nonzero) where a pixel is missing, the image's shape.
    sigma_clip : float, optional
        The clipping in sd (3, SExtractor's and photutils').
    estimator : {'sextractor', 'median', 'mean', 'mmm', 'biweight'}, optional
        'sextractor': the mode 2.5 median - 1.5 mean, or the median where the box is skewed
        (``|mean - median| >= 0.3 sd``); 'median' and 'mean' of the clipped pixels; with
        ``clipping='sigma'`` also 'mmm', 3 median - 2 mean (photutils' ``MMMBackground``), and
        'biweight', the biweight location with c = 6 (``BiweightLocationBackground``).
    rms_estimator : {'std', 'mad_std', 'biweight'}, optional
        'std': the clipped standard deviation; with ``clipping='sigma'`` also 'mad_std', 1.4826
        times the median absolute deviation (``MADStdBackgroundRMS``), and 'biweight', the
        biweight scale with c = 9 (``BiweightScaleBackgroundRMS``).
    filter_threshold : float, optional
        With 'histogram', SEP's ``fthresh``: a box is filtered only where it differs from its
        neighbours' median by at least this much. With 'sigma', photutils' ``filter_threshold``:
        only boxes whose background is above it are filtered; 0 filters every box (photutils'
        None).
    clipping : {'histogram', 'sigma'}, optional
        SExtractor's histogram clipping or astropy's sigma clipping, as above.
    maxiters : int or None, optional
        With 'sigma', astropy's ``maxiters`` (None: until nothing more is clipped).
    exclude_percentile : float, optional
        With 'sigma', photutils' ``exclude_percentile`` (0 to 100).
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
                 estimator="sextractor", rms_estimator="std", filter_threshold=0.0,
                 clipping="histogram", maxiters=10, exclude_percentile=10.0, device=None):
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
                             f"{sorted(_RMS_ESTIMATORS)}")
        if clipping not in _CLIPPINGS:
            raise ValueError(f"{where}: clipping={clipping!r}: one of {sorted(_CLIPPINGS)}")
        sigma = clipping == "sigma"
        if not sigma and (estimator in _SIGMA_ONLY[0] or rms_estimator in _SIGMA_ONLY[1]):
            raise ValueError(f"{where}: estimator={estimator!r}, rms_estimator="
                             f"{rms_estimator!r}: photutils' estimators need clipping='sigma'")
        if maxiters is None:
            iters = -1
        elif isinstance(maxiters, numbers.Integral) and not isinstance(maxiters, bool) \
                and maxiters >= 1:
            iters = int(maxiters)
        else:
            raise ValueError(f"{where}: maxiters={maxiters!r} must be a positive integer or None")
        if not (0.0 <= float(exclude_percentile) <= 100.0):
            raise ValueError(f"{where}: exclude_percentile={exclude_percentile!r}: 0 to 100")
        # the library reads 0 as photutils' default (10) and a negative value as 0
        exclude = float(exclude_percentile) if exclude_percentile > 0 else -1.0
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
            float(sigma_clip), _ESTIMATORS[estimator], _CLIPPINGS[clipping],
            _RMS_ESTIMATORS[rms_estimator], iters, exclude, self.background, self.rms)
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
