"""Robust linear regression on the device, as scikit-learn estimators: Least Trimmed Squares
(FAST-LTS, robustbase's ltsReg) and Least Median of Squares."""
import numbers

import numpy as np

from . import _ext
from ._context import get_context
from ._estimator import Estimator, seed_of

__all__ = ["LTSRegression", "LMSRegression"]


def _design(X, y, where):
    x = np.asarray(X)
    if x.ndim == 1:
        raise ValueError(f"{where}: X must be 2-D (n_samples, n_features); reshape a single "
                         "feature with X.reshape(-1, 1)")
    if x.ndim != 2 or x.dtype.kind not in "biuf":
        raise ValueError(f"{where}: X must be a 2-D array of numbers, not {x.ndim}-D {x.dtype}")
    yv = np.asarray(y)
    if yv.ndim == 2 and yv.shape[1] == 1:
        yv = yv[:, 0]
    if yv.ndim != 1 or yv.dtype.kind not in "biuf":
        raise ValueError(f"{where}: y must be a vector of numbers")
    if yv.shape[0] != x.shape[0]:
        raise ValueError(f"{where}: X has {x.shape[0]} samples, y {yv.shape[0]}")
    if x.shape[1] < 1:
        raise ValueError(f"{where}: X has no feature")
    return (np.ascontiguousarray(x, dtype=np.float64),
            np.ascontiguousarray(yv, dtype=np.float64))


class _RobustRegression(Estimator):
    _method = None

    def __init__(self, alpha=0.5, n_subsets=500, fit_intercept=True, reweight=True,
                 random_state=None, *, nan_policy="raise", device=None):
        self.alpha = alpha
        self.n_subsets = n_subsets
        self.fit_intercept = fit_intercept
        self.reweight = reweight
        self.random_state = random_state
        self.nan_policy = nan_policy
        self.device = device

    def fit(self, X, y):
        """Fits the model to X (n_samples, n_features) and y (n_samples,); returns self."""
        where = f"{type(self).__name__}.fit"
        x, yv = _design(X, y, where)
        if not (0.5 <= float(self.alpha) <= 1):
            raise ValueError(f"{where}: alpha={self.alpha} must lie in [0.5, 1]")
        if not isinstance(self.n_subsets, numbers.Integral) or self.n_subsets < 1:
            raise ValueError(f"{where}: n_subsets={self.n_subsets!r} must be a positive integer")
        if self.nan_policy not in ("raise", "omit"):
            raise ValueError(f"{where}: nan_policy={self.nan_policy!r}: give 'raise' or 'omit'")
        n, p = x.shape
        coef, raw = np.empty(p), np.empty(p)
        support, outliers = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
        options = (self._method, float(self.alpha), 0, int(self.n_subsets),
                   bool(self.fit_intercept), bool(self.reweight), seed_of(self.random_state),
                   self.nan_policy == "omit")
        fit = get_context(self.device).call(_ext.regress, x, yv, options, coef, raw, support,
                                            outliers)
        self.coef_ = coef
        self.intercept_ = fit["intercept"]
        self.raw_coef_ = raw
        self.raw_intercept_ = fit["raw_intercept"]
        self.scale_ = fit["scale"]
        self.raw_scale_ = fit["raw_scale"]
        self.crit_ = fit["crit"]
        self.h_ = fit["h"]
        self.support_ = support.astype(bool)
        self.outliers_ = outliers.astype(bool)
        self.n_features_in_ = p
        return self

    def predict(self, X):
        """The fitted model's values for X (n_samples, n_features)."""
        if not hasattr(self, "coef_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet: call fit first")
        x = np.asarray(X, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} features")
        return x @ self.coef_ + self.intercept_


class LTSRegression(_RobustRegression):
    """Least Trimmed Squares regression on an OpenCL device: FAST-LTS as R's robustbase
    ``ltsReg`` computes it, with its scale and reweighting.

    The fit minimises the sum of the h smallest squared residuals, h = floor((n + q + 1) / 2)
    for alpha 0.5 (q the coefficients, the intercept included), so up to about half the rows
    may be outliers, in y or in X. Random q-row starts (``n_subsets``) are refined by C-steps on
    the device; the same ``random_state`` gives the same fit on every run and device.

    Parameters
    ----------
    alpha : float, optional
        The share of rows the fit keeps, in [0.5, 1] (robustbase's alpha).
    n_subsets : int, optional
        Random starts (500).
    fit_intercept : bool, optional
        Fit an intercept.
    reweight : bool, optional
        Refit by weighted least squares to the rows within qnorm(0.9875) raw scales, as
        robustbase does; ``coef_`` and ``scale_`` are then that fit's (``raw_coef_`` and
        ``raw_scale_`` the LTS fit's).
    random_state : None, int or numpy generator, optional
        The seed of the starts.
    nan_policy : {'raise', 'omit'}, optional
        A NaN in X or y: a ValueError, or the row left out.
    device : str, int or Context, optional
        As for :func:`clstats.median_filter`; the device needs fp64.

    Attributes
    ----------
    coef_, intercept_ : ndarray, float
        The final fit.
    raw_coef_, raw_intercept_ : ndarray, float
        The LTS fit before reweighting.
    scale_, raw_scale_ : float
        Robust scales of the residuals (robustbase's consistency and small-sample factors).
    crit_ : float
        The sum of the h smallest squared residuals of the raw fit.
    h_ : int
    support_ : ndarray of bool
        The raw fit's h rows.
    outliers_ : ndarray of bool
        The rows the final fit flags (residual beyond qnorm(0.9875) scales).

    Examples
    --------
    >>> import numpy as np, clstats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = X @ [2.0, -1.0] + 0.5 + rng.normal(0, 0.1, 200)
    >>> y[:40] += 30                                  # 20 % gross outliers
    >>> m = clstats.LTSRegression(random_state=0).fit(X, y)
    >>> np.round(m.coef_, 1), round(m.intercept_, 1), int(m.outliers_[:40].sum())
    (array([ 2., -1.]), 0.5, 40)
    """
    _method = "lts"


class LMSRegression(_RobustRegression):
    """Least Median of Squares regression on an OpenCL device: the fit that minimises the h-th
    smallest squared residual (Rousseeuw 1984), from random starts, with the same reweighting
    as :class:`LTSRegression`. Arguments and attributes are those of :class:`LTSRegression`;
    ``crit_`` is the h-th smallest squared residual.

    Examples
    --------
    >>> import numpy as np, clstats
    >>> x = np.arange(50.0).reshape(-1, 1); y = 3 * x[:, 0] + 1; y[::5] = 0
    >>> m = clstats.LMSRegression(random_state=1).fit(x, y)
    >>> np.round(m.coef_, 6), round(m.intercept_, 6)
    (array([3.]), 1.0)
    """
    _method = "lms"
