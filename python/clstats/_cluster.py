"""k-means with scikit-learn's KMeans(algorithm='lloyd') interface, Lloyd's loop on the device
(libclstats' cluster module)."""
import numbers

import numpy as np

from . import _ext
from ._context import get_context
from ._estimator import Estimator, seed_of

__all__ = ["KMeans", "MiniBatchKMeans"]

_INITS = {"k-means++": 0, "random": 1}


def _rows(X, dtype=None):
    """X as C-contiguous 2-D rows of float32 or float64 (float64 for other types)."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (samples, features), not of shape {X.shape}")
    if dtype is None:
        dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    return np.ascontiguousarray(X, dtype=dtype)


def _check_parameters(est, whole_numbers):
    """The shared checks: these attributes integers >= 1, tol finite >= 0, nan_policy."""
    for name in whole_numbers:
        v = getattr(est, name)
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}={v!r} must be an integer >= 1")
    if not isinstance(est.tol, numbers.Real) or not np.isfinite(est.tol) or est.tol < 0:
        raise ValueError(f"tol={est.tol!r} must be a finite number >= 0")
    if est.nan_policy not in ("raise", "omit"):
        raise ValueError(f"nan_policy={est.nan_policy!r} must be 'raise' or 'omit'")


class KMeans(Estimator):
    """k-means clustering (Lloyd's algorithm) on an OpenCL device.

    Follows :class:`sklearn.cluster.KMeans` with ``algorithm='lloyd'``: the same parameters,
    fitted attributes and end rules (a run ends when no label changes, when the summed squared
    shift of the centres is at most ``tol`` times the mean of the features' variances, or after
    ``max_iter`` iterations; a cluster left empty takes the point farthest from its centre).
    Labels are the nearest centre, ties to the lowest index. Sums are reduced in a fixed order,
    so a ``random_state`` gives the same result on every run and device; the random numbers are
    the library's own (xoshiro256**), not numpy's, so seeds do not reproduce scikit-learn's
    draws.

    Parameters
    ----------
    n_clusters : int, default 8
    init : {'k-means++', 'random'} or array of shape (n_clusters, n_features)
        k-means++ as scikit-learn's (2 + floor(ln k) local trials), k distinct random rows, or
        the given centres (then one run, whatever ``n_init`` says).
    n_init : int, default 1
        Runs from different seeds; the one with the lowest inertia is kept.
    max_iter : int, default 300
    tol : float, default 1e-4
        Relative tolerance on the centres' shift (scikit-learn's definition).
    random_state : None, int, RandomState or Generator
        Seeds the library's generator (None: drawn from numpy's global generator).
    nan_policy : {'raise', 'omit'}, default 'raise'
        Rows holding NaN or infinity raise ValueError, or are left out with label -1.
    device : str, int or Context, optional
        Where to run (see :class:`clstats.Context`).

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,), int32
    inertia_ : float
        Sum of the weighted squared distances of the points to their centres.
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np, clstats
    >>> X = np.array([[1, 2], [1, 4], [1, 0], [10, 2], [10, 4], [10, 0]], dtype=float)
    >>> km = clstats.KMeans(n_clusters=2, random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist())
    [[1.0, 2.0], [10.0, 2.0]]
    """

    def __init__(self, n_clusters=8, *, init="k-means++", n_init=1, max_iter=300, tol=1e-4,
                 random_state=None, nan_policy="raise", device=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.nan_policy = nan_policy
        self.device = device

    def _check(self):
        _check_parameters(self, ("n_clusters", "n_init", "max_iter"))

    def fit(self, X, y=None, sample_weight=None):
        """Compute the clustering of X (n_samples, n_features); returns self."""
        self._check()
        X = _rows(X)
        if X.shape[0] == 0:
            raise ValueError("X has no sample")
        k = int(self.n_clusters)
        given = None
        if isinstance(self.init, str):
            if self.init not in _INITS:
                raise ValueError(f"init={self.init!r} must be 'k-means++', 'random' or an array")
            init = _INITS[self.init]
        else:
            given = np.ascontiguousarray(self.init, dtype=X.dtype)
            if given.shape != (k, X.shape[1]):
                raise ValueError(f"init has shape {given.shape}; n_clusters={k} and "
                                 f"{X.shape[1]} features need ({k}, {X.shape[1]})")
            init = 2
        weight = None
        if sample_weight is not None:
            weight = np.ascontiguousarray(np.broadcast_to(sample_weight, X.shape[:1]),
                                          dtype=X.dtype)
        centres = np.empty((k, X.shape[1]), dtype=X.dtype)
        labels = np.empty(X.shape[0], dtype=np.int32)
        ctx = get_context(self.device)
        inertia, n_iter = ctx.call(_ext.kmeans, X, k, init, given, weight, int(self.n_init),
                                   int(self.max_iter), float(self.tol), seed_of(self.random_state),
                                   int(self.nan_policy == "omit"), centres, labels)
        self.cluster_centers_ = centres
        self.labels_ = labels
        self.inertia_ = inertia
        self.n_iter_ = n_iter
        self.n_features_in_ = X.shape[1]
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit and return the labels of X."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def predict(self, X, sample_weight=None):
        """The index of the nearest fitted centre for each row of X (-1 for rows with NaN)."""
        return self._predict(X, sample_weight)[0]

    def score(self, X, y=None, sample_weight=None):
        """Minus the inertia of X against the fitted centres, as scikit-learn's."""
        return -self._predict(X, sample_weight)[1]

    def _predict(self, X, sample_weight):
        if not hasattr(self, "cluster_centers_"):
            raise ValueError("this KMeans is not fitted yet: call fit first")
        X = _rows(X, self.cluster_centers_.dtype)
        if X.shape[1] != self.cluster_centers_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features; the fit had "
                             f"{self.cluster_centers_.shape[1]}")
        weight = None
        if sample_weight is not None:
            weight = np.ascontiguousarray(np.broadcast_to(sample_weight, X.shape[:1]),
                                          dtype=X.dtype)
        labels = np.empty(X.shape[0], dtype=np.int32)
        inertia = get_context(self.device).call(_ext.kmeans_predict, X, self.cluster_centers_,
                                                weight, labels)
        return labels, inertia

    def __repr__(self):
        return f"clstats.KMeans(n_clusters={self.n_clusters}, init={self.init!r} ...)" \
            if not isinstance(self.init, str) else \
            f"clstats.KMeans(n_clusters={self.n_clusters}, init={self.init!r})"


class MiniBatchKMeans(Estimator):
    """Mini-batch k-means (Sculley 2010) for data larger than the device's memory.

    Follows :class:`sklearn.cluster.MiniBatchKMeans`: each batch's rows are labelled by their
    nearest centre on the device (one batch at a time there), and each centre moves to the
    weighted mean of every point it has been given so far, scikit-learn's update
    (``_mini_batch_step``) in the data's precision. Unlike scikit-learn, ``fit`` takes the
    batches as consecutive rows in order, pass after pass (``max_iter`` passes; shuffle X first
    if its order is not random), never reassigns small clusters at random
    (``reassignment_ratio=0``), and stops early only by ``tol``; so a ``random_state`` gives the
    same result on every run and device. ``partial_fit`` on a batch is scikit-learn's
    ``partial_fit`` on the same batch with ``reassignment_ratio=0``.

    Parameters
    ----------
    n_clusters : int, default 8
    init : {'k-means++', 'random'} or array of shape (n_clusters, n_features)
        The first centres, drawn from ``init_size`` rows sampled with replacement (``fit``) or
        from the first batch (``partial_fit``), or given.
    max_iter : int, default 100
        Passes over the data at most.
    batch_size : int, default 1024
    tol : float, default 0.0
        Stop after a pass whose summed squared centre shift is at most ``tol`` times the mean of
        the features' variances (0: ``max_iter`` passes).
    init_size : int, optional
        Rows for the seeding (default 3 x batch_size, at least 3 x n_clusters).
    random_state, nan_policy, device : as :class:`KMeans`.

    Attributes
    ----------
    cluster_centers_, labels_, inertia_ : as :class:`KMeans` (``fit``: by the final centres)
    n_iter_ : int
        Passes made.
    n_steps_ : int
        Batches processed.
    """

    def __init__(self, n_clusters=8, *, init="k-means++", max_iter=100, batch_size=1024, tol=0.0,
                 init_size=None, random_state=None, nan_policy="raise", device=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.tol = tol
        self.init_size = init_size
        self.random_state = random_state
        self.nan_policy = nan_policy
        self.device = device

    def _check(self):
        _check_parameters(self, ("n_clusters", "max_iter", "batch_size"))
        if self.init_size is not None and (not isinstance(self.init_size, numbers.Integral)
                                           or self.init_size < 1):
            raise ValueError(f"init_size={self.init_size!r} must be None or an integer >= 1")

    def _init_of(self, X):
        k = int(self.n_clusters)
        if isinstance(self.init, str):
            if self.init not in _INITS:
                raise ValueError(f"init={self.init!r} must be 'k-means++', 'random' or an array")
            return _INITS[self.init], None
        given = np.ascontiguousarray(self.init, dtype=X.dtype)
        if given.shape != (k, X.shape[1]):
            raise ValueError(f"init has shape {given.shape}; n_clusters={k} and "
                             f"{X.shape[1]} features need ({k}, {X.shape[1]})")
        return 2, given

    @staticmethod
    def _weights(sample_weight, X):
        if sample_weight is None:
            return None
        return np.ascontiguousarray(np.broadcast_to(sample_weight, X.shape[:1]), dtype=X.dtype)

    def _run(self, X, sample_weight, max_iter, init_size):
        k = int(self.n_clusters)
        init, given = self._init_of(X)
        centres = np.empty((k, X.shape[1]), dtype=X.dtype)
        labels = np.empty(X.shape[0], dtype=np.int32)
        out = get_context(self.device).call(
            _ext.kmeans_minibatch, X, k, init, given, self._weights(sample_weight, X),
            int(self.batch_size), int(init_size or 0), int(max_iter), float(self.tol),
            seed_of(self.random_state), int(self.nan_policy == "omit"), centres, labels)
        return centres, labels, out

    def fit(self, X, y=None, sample_weight=None):
        """Compute the clustering of X (n_samples, n_features); returns self."""
        self._check()
        X = _rows(X)
        if X.shape[0] == 0:
            raise ValueError("X has no sample")
        centres, labels, (inertia, n_iter, n_steps) = self._run(X, sample_weight, self.max_iter,
                                                                self.init_size)
        self.cluster_centers_, self.labels_, self.inertia_ = centres, labels, inertia
        self.n_iter_, self.n_steps_ = n_iter, n_steps
        # the weight each centre has seen is not returned by fit: partial_fit after fit
        # starts counting afresh from these centres
        self._counts = np.zeros(centres.shape[0])
        self.n_features_in_ = X.shape[1]
        return self

    def partial_fit(self, X, y=None, sample_weight=None):
        """One mini-batch step on X (the first call also draws or takes the first centres)."""
        self._check()
        first = not hasattr(self, "cluster_centers_")
        X = _rows(X, None if first else self.cluster_centers_.dtype)
        if X.shape[0] == 0:
            raise ValueError("X has no sample")
        if first:
            centres, _, _ = self._run(X, sample_weight, 0, self.init_size or X.shape[0])
            self.cluster_centers_, self._counts = centres, np.zeros(centres.shape[0])
            self.n_steps_, self.n_iter_ = 0, 0
            self.n_features_in_ = X.shape[1]
        elif X.shape[1] != self.cluster_centers_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features; the fit had "
                             f"{self.cluster_centers_.shape[1]}")
        labels = np.empty(X.shape[0], dtype=np.int32)
        get_context(self.device).call(_ext.kmeans_minibatch_step, X,
                                      self._weights(sample_weight, X),
                                      int(self.nan_policy == "omit"), self.cluster_centers_,
                                      self._counts, labels)
        self.labels_ = labels
        self.n_steps_ += 1
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit and return the labels of X."""
        return self.fit(X, sample_weight=sample_weight).labels_

    predict = KMeans.predict
    score = KMeans.score
    _predict = KMeans._predict

    def __repr__(self):
        return f"clstats.MiniBatchKMeans(n_clusters={self.n_clusters}, batch_size={self.batch_size})"
