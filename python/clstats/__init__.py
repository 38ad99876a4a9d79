"""clstats: exact robust statistics on any OpenCL device (GPU or CPU).

Sliding-window median and MAD maps with scipy.ndimage's arguments, numpy's nan-aware medians,
percentiles and quantiles, astropy's sigma-clipped statistics and ``mad_std``, computed
exactly by libclstats: where the peer's result is defined, the same bits; SExtractor's (SEP's)
mesh background and RMS (:class:`Background`); robust regression (:class:`LTSRegression`,
:class:`LMSRegression`), k-means (:class:`KMeans`, scikit-learn's Lloyd, and
:class:`MiniBatchKMeans`), PaSS variable selection (:class:`PaSS`) and Gaussian-process emulators
(:class:`GaussianProcess`, R's GPfit) on the device.

Every call takes ``device=``: ``'gpu'``, ``'cpu'``, an index into :func:`devices`, part of a
device's name, or a :class:`Context`. Without it, a context shared by the process runs the
call, on ``$CLSTATS_DEVICE``, else the first GPU, else the first CPU device.

>>> import numpy as np, clstats
>>> image = np.random.default_rng(0).normal(100.0, 5.0, (128, 128)).astype(np.float32)
>>> maps = clstats.filter_maps(image, 15, maps=('median', 'sigma'))
>>> mean, median, std = clstats.sigma_clipped_stats(image)
"""
from ._context import Context, DeviceError, devices, release_buffers
from ._filters import MAD_TO_SIGMA, filter_maps, mad_filter, median_filter
from ._order import median, percentile, quantile, select_kth, tile_medians
from ._clipping import mad_std, sigma_clipped_stats
from ._regress import LMSRegression, LTSRegression
from ._cluster import KMeans, MiniBatchKMeans
from ._background import Background
from ._varsel import PaSS
from ._gp import GaussianProcess
from . import _ext

__version__ = _ext.version()

__all__ = ["Context", "DeviceError", "devices", "release_buffers", "MAD_TO_SIGMA", "filter_maps", "mad_filter",
           "median_filter", "median", "percentile", "quantile", "select_kth", "tile_medians",
           "mad_std", "sigma_clipped_stats", "LTSRegression", "LMSRegression", "KMeans",
           "MiniBatchKMeans", "Background", "PaSS", "GaussianProcess"]
