"""Gaussian-process emulators fitted by maximum likelihood as R's GPfit does it, with every
likelihood computed on the device in float64 (libclstats' src/gp)."""
import numbers

import numpy as np

from . import _ext
from ._context import get_context
from ._estimator import Estimator, seed_of
from ._regress import _design

__all__ = ["GaussianProcess"]

_CORR = {"power_exponential": 0, "matern32": 1, "matern52": 2}
_OPTIMIZER = {"lbfgs": 0, "genetic": 1}


class GaussianProcess(Estimator):
    """A Gaussian process y(x) = mu + z(x), fitted by maximum likelihood (GPfit's ``GP_fit``).

    The correlation of z is ``corr``: ``'power_exponential'``, R_ij = prod_k exp(-theta_k
    |x_ik - x_jk|^power), or ``'matern32'`` / ``'matern52'`` in GPfit's scaling. Parameters are
    fitted as beta = log10(theta) by multi-start bounded L-BFGS over [-10, 10]^d from GPfit's
    start design (a maximin Latin hypercube of 200 d points, the best 80 d clustered into
    ``n_starts`` groups by k-means, and the diagonal search); or, with
    ``optimizer='genetic'``, by the seed's genetic algorithm (Franey, Ranjan and Chipman:
    ``population`` members over ``generations`` generations, 100 x 20 = 2 000 deviances, each
    generation one pass on the device), which reproduces the seed's tables. GPfit assumes
    inputs scaled to [0, 1]; its start range is chosen for that.

    Parameters
    ----------
    corr : {'power_exponential', 'matern32', 'matern52'}
    power : float in (0, 2], default 1.95
        The power exponential's exponent.
    nugget : float >= 0 or None
        Added to R's diagonal; None: GPfit's rule, the smallest that keeps the condition
        number of R + nugget I at most e^20.
    n_starts : int or None
        Clusters of the start design, each giving one start (None: 2 d).
    optimizer : {'lbfgs', 'genetic'}, default 'lbfgs'
        GPfit's multi-start L-BFGS-B, or the seed's genetic algorithm.
    population, generations : int, default 100 and 20
        The genetic algorithm's (the first generation included); unused by 'lbfgs'.
    random_state : None, int or numpy generator
        The start design's draws (and the genetic algorithm's): a fixed integer gives the same
        fit again.
    device : str, int or Context, optional

    Attributes
    ----------
    theta_ : ndarray (d,)
        The fitted 10^beta.
    mu_, sigma2_, nugget_, deviance_ : float
        mu-hat, sigma-hat^2, the nugget used and GPfit's deviance log|R| + n log(n sigma2).

    Examples
    --------
    >>> import numpy as np, clstats
    >>> x = np.linspace(0, 1, 12).reshape(-1, 1)
    >>> gp = clstats.GaussianProcess(random_state=0).fit(x, np.sin(6 * x[:, 0]))
    >>> mean, std = gp.predict([[0.55]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(3.3)) < 1e-2)
    True
    """

    def __init__(self, corr="power_exponential", power=1.95, nugget=None, n_starts=None,
                 optimizer="lbfgs", population=100, generations=20, random_state=None,
                 device=None):
        self.corr = corr
        self.power = power
        self.nugget = nugget
        self.n_starts = n_starts
        self.optimizer = optimizer
        self.population = population
        self.generations = generations
        self.random_state = random_state
        self.device = device

    def _model(self, nugget):
        if self.corr not in _CORR:
            raise ValueError(f"corr={self.corr!r}: give one of {sorted(_CORR)}")
        power = float(self.power)
        if not 0 < power <= 2:
            raise ValueError(f"power={self.power}: give a number in (0, 2]")
        nug = float("nan") if nugget is None else float(nugget)
        if nugget is not None and not (nug >= 0 and np.isfinite(nug)):
            raise ValueError(f"nugget={nugget}: give None or a number >= 0")
        return (_CORR[self.corr], power, nug, 20.0)

    def fit(self, X, y):
        """Fits the model to X (n_samples, n_features) and y (n_samples,); returns self."""
        x, yv = _design(X, y, "GaussianProcess.fit")
        starts = self.n_starts
        if starts is not None and (not isinstance(starts, numbers.Integral) or starts < 1):
            raise ValueError(f"n_starts={starts}: give None or a positive integer")
        if self.optimizer not in _OPTIMIZER:
            raise ValueError(f"optimizer={self.optimizer!r}: give one of {sorted(_OPTIMIZER)}")
        for name in ("population", "generations"):
            v = getattr(self, name)
            if not isinstance(v, numbers.Integral) or v < (2 if name == "population" else 1):
                raise ValueError(f"{name}={v!r}: give an integer >= "
                                 f"{2 if name == 'population' else 1}")
        d = x.shape[1]
        n_starts = 2 * d if starts is None else int(starts)
        n_best = max(80 * d, n_starts)
        options = (max(200 * d, n_best), n_best, n_starts, True, 100, -10.0, 10.0,
                   seed_of(self.random_state), _OPTIMIZER[self.optimizer],
                   int(self.population), int(self.generations))
        beta = np.empty(d)
        model = self._model(self.nugget)
        fit = get_context(self.device).call(_ext.gp_fit, x, yv, model, options, beta)
        self.X_, self.y_, self.beta_ = x, yv, beta
        self.theta_ = 10.0 ** beta
        self.mu_, self.sigma2_ = fit["mu"], fit["sigma2"]
        self.nugget_, self.deviance_ = fit["nugget"], fit["deviance"]
        self.n_evaluations_ = fit["evaluations"]
        return self

    def _check_fitted(self, where):
        if not hasattr(self, "beta_"):
            raise ValueError(f"GaussianProcess.{where}: call fit first")

    def deviance(self, theta, nugget=None, X=None, y=None, return_gradient=False):
        """GPfit's deviance log|R + nugget I| + n log((y - 1 mu)' (R + nugget I)^-1 (y - 1 mu))
        at theta (d,), or at each row of theta (m, d) in one batched pass; on the fitted data
        unless X and y are given; nugget None applies GPfit's rule. With return_gradient (one
        theta), also d deviance / d log10(theta) at that nugget."""
        if X is None or y is None:
            self._check_fitted("deviance")
            x, yv = self.X_, self.y_
        else:
            x, yv = _design(X, y, "GaussianProcess.deviance")
        t = np.asarray(theta, dtype=np.float64)
        single = t.ndim == 1
        t = np.atleast_2d(t)
        if t.ndim != 2 or t.shape[1] != x.shape[1] or not np.all(t > 0):
            raise ValueError(f"theta must be positive, (d,) or (m, d) with d = {x.shape[1]}")
        beta = np.ascontiguousarray(np.log10(t))
        m = beta.shape[0]
        if return_gradient and m != 1:
            raise ValueError("return_gradient takes one theta")
        dev, mu, s2, nug = (np.empty(m) for _ in range(4))
        grad = np.empty(x.shape[1]) if return_gradient else None
        get_context(self.device).call(_ext.gp_deviance, x, yv, self._model(nugget), beta, m,
                                      dev, mu, s2, nug, grad)
        out = dev[0] if single else dev
        return (out, grad) if return_gradient else out

    def predict(self, X, return_std=False):
        """The predicted mean at X (m, n_features), and with return_std GPfit's standard error
        (the square root of its MSE)."""
        self._check_fitted("predict")
        x = np.asarray(X, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.X_.shape[1]:
            raise ValueError(f"X must be (m, {self.X_.shape[1]})")
        x = np.ascontiguousarray(x)
        mean = np.empty(x.shape[0])
        mse = np.empty(x.shape[0]) if return_std else None
        if x.shape[0]:
            get_context(self.device).call(_ext.gp_predict, self.X_, self.y_,
                                          self._model(self.nugget_), self.beta_, self.nugget_,
                                          x, mean, mse)
        return (mean, np.sqrt(mse)) if return_std else mean
