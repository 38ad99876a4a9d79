"""Variable selection by an information criterion on the device: the Particle Swarm Stepwise
algorithm (PaSS), as a scikit-learn-style estimator."""

import numpy as np

from . import _ext
from ._context import get_context
from ._estimator import Estimator, seed_of
from ._regress import _design

__all__ = ["PaSS"]

_CRITERIA = ("hdbic", "hdhqc", "ebic", "bic", "aic")


class PaSS(Estimator):
    """Particle Swarm Stepwise variable selection for the linear model y = b0 + X beta + e.

    K particles, each a model (a set of columns of X), take stochastic forward steps (add the
    column of largest |X_i^T R| outside the model, a column of the swarm's best model, or a
    random one) and backward steps (remove the column whose removal raises the residual sum of
    squares least, or a random one), switching direction when their criterion rises; the best
    model the swarm visits is the answer. The products X^T R of all particles are one matrix
    product on the device each iteration; each particle's least-squares fit is updated, never
    refitted. Columns and y are centred (an intercept, not counted in the model's size) and the
    columns scaled to unit norm, as the paper assumes.

    Parameters
    ----------
    criterion : {'hdbic', 'hdhqc', 'ebic', 'bic', 'aic'}
        n log(RSS/n) plus k log n log p (HDBIC), 2k log log n log p (HDHQC), k log n +
        2 gamma log C(p, k) (EBIC), k log n (BIC) or 2k (AIC).
    n_particles, n_iter : int
        The swarm's size K and its iterations (256 and 16).
    probs : sequence of 5 floats or None
        (p_b^f, p_i^f, p_r^f, p_i^b, p_r^b): forward from the best model, forward by the
        largest |X_i^T R|, forward at random; backward by the least cost, backward at random.
        None: (0, 0.8, 0.2, 0.8, 0.2), a row of the paper's Table II.
    gamma : float
        EBIC's gamma in [0, 1] (1).
    max_size : int or None
        The largest model; None: min(p, n - 2, 100).
    random_state : None, int or numpy generator
        The seed of the library's generator: one seed, one selection on every device.
    device : str or None
        The OpenCL device (see :func:`clstats.devices`).

    Attributes
    ----------
    support_ : ndarray of bool, (n_features,)
    coef_ : ndarray of float64, (n_features,), zero outside the support, on X's scale
    intercept_ : float
    criterion_ : float
        The best model's criterion.
    history_ : ndarray, (n_iter + 1,)
        The swarm's best criterion after the start and after each iteration.

    Examples
    --------
    >>> import numpy as np, clstats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 50))
    >>> y = 2 * X[:, 3] - 3 * X[:, 17] + rng.standard_normal(200)
    >>> sel = clstats.PaSS(criterion="ebic", n_particles=32, random_state=0).fit(X, y)
    >>> np.flatnonzero(sel.support_)
    array([ 3, 17])
    """

    def __init__(self, criterion="hdbic", n_particles=256, n_iter=16, probs=None,
                 random_state=None, device=None, *, gamma=1.0, max_size=None):
        self.criterion = criterion
        self.n_particles = n_particles
        self.n_iter = n_iter
        self.probs = probs
        self.random_state = random_state
        self.device = device
        self.gamma = gamma
        self.max_size = max_size

    def fit(self, X, y):
        """Selects columns of X (n_samples, n_features) for y (n_samples,); returns self.
        float32 X works in float32 on the device (criteria in double); other input in float64."""
        x, yv = _design(X, y, "PaSS.fit")
        if np.asarray(X).dtype == np.float32:
            x, yv = x.astype(np.float32), yv.astype(np.float32)
        if self.criterion not in _CRITERIA:
            raise ValueError(f"PaSS: criterion {self.criterion!r} is not one of {_CRITERIA}")
        probs = (0.0, 0.8, 0.2, 0.8, 0.2) if self.probs is None else tuple(map(float, self.probs))
        if len(probs) != 5:
            raise ValueError("PaSS: probs must be 5 numbers (p_b^f, p_i^f, p_r^f, p_i^b, p_r^b)")
        for name in ("n_particles", "n_iter"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"PaSS: {name} must be at least 1")
        max_size = 0 if self.max_size is None else int(self.max_size)
        if max_size < 0:
            raise ValueError("PaSS: max_size must be positive")
        p = x.shape[1]
        coef = np.zeros(p, np.float64)
        support = np.zeros(p, np.uint8)
        history = np.zeros(int(self.n_iter) + 1, np.float64)
        out = get_context(self.device).call(_ext.pass_fit, x, yv, (self.criterion, float(self.gamma), int(self.n_particles),
                                            int(self.n_iter), probs, max_size,
                                            seed_of(self.random_state)), coef, support, history)
        self.support_ = support.astype(bool)
        self.coef_ = coef
        self.intercept_ = out["intercept"]
        self.criterion_ = out["criterion"]
        self.history_ = history
        self.n_features_in_ = p
        return self

    def transform(self, X):
        """The selected columns of X."""
        return np.asarray(X)[:, self.support_]

    def predict(self, X):
        """intercept_ + X coef_."""
        return np.asarray(X, dtype=np.float64) @ self.coef_ + self.intercept_
