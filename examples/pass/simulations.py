"""The seed paper's simulations regenerated from its descriptions (section IV-B): data, PSR
and FDR, and a forward-stepwise baseline; shared by python/tests/test_pass.py and by
examples/pass/tables.py, which runs the 100-dataset study."""

import numpy as np
from math import lgamma


def ing_lai(n=400, p=4000, r=10, rng=None):
    """Ing and Lai (2011): X_1..X_r iid N(0, 1); X_i = d_i + b sum_{l<=r} X_l beyond, d_i iid
    N(0, 1/4), b = (3 / (4 r))^(1/2); beta = 3, 3.75, ..., unit noise. Returns X, y, the truth."""
    rng = np.random.default_rng(rng)
    head = rng.standard_normal((n, r))
    b = np.sqrt(3.0 / (4.0 * r))
    X = np.empty((n, p))
    X[:, :r] = head
    X[:, r:] = 0.5 * rng.standard_normal((n, p - r)) + b * head.sum(axis=1, keepdims=True)
    beta = 3.0 + 0.75 * np.arange(r)
    y = head @ beta + rng.standard_normal(n)
    return X, y, np.arange(r)


def chen_chen(n=200, p=50, rho=0.2, rng=None):
    """Chen and Chen (2008): rows N(0, Sigma), Sigma_ij = rho^|i - j|; beta_1..8 =
    (0.7, 0.9, 0.4, 0.3, 1.0, 0.2, 0.2, 0.1), unit noise."""
    rng = np.random.default_rng(rng)
    sigma = rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    X = rng.standard_normal((n, p)) @ np.linalg.cholesky(sigma).T
    beta = np.array([0.7, 0.9, 0.4, 0.3, 1.0, 0.2, 0.2, 0.1])
    y = X[:, :8] @ beta + rng.standard_normal(n)
    return X, y, np.arange(8)


def psr_fdr(support, truth):
    """Positive selection rate #(S* & S)/#S and false discovery rate #(S* - S)/#S*."""
    chosen = set(np.flatnonzero(support))
    true = set(truth)
    return len(chosen & true) / len(true), (len(chosen - true) / len(chosen) if chosen else 0.0)


def criterion(X, y, support, name="hdbic", gamma=1.0):
    """A model's criterion from scratch (centred least squares, numpy's lstsq)."""
    n, p = X.shape
    k = int(np.count_nonzero(support))
    yc = y - y.mean()
    if k:
        Xc = X[:, np.asarray(support, bool)] - X[:, np.asarray(support, bool)].mean(axis=0)
        yc = yc - Xc @ np.linalg.lstsq(Xc, yc, rcond=None)[0]
    fit = n * np.log(yc @ yc / n)
    return fit + {"aic": 2 * k, "bic": k * np.log(n),
                  "ebic": k * np.log(n) + 2 * gamma * (lgamma(p + 1) - lgamma(k + 1) - lgamma(p - k + 1)),
                  "hdbic": k * np.log(n) * np.log(p),
                  "hdhqc": 2 * k * np.log(np.log(n)) * np.log(p)}[name]


def forward_stepwise(X, y, name="ebic", gamma=1.0, max_size=None):
    """The baseline: greedy forward selection by the criterion itself (each step adds the column
    that lowers it most), stopping when no addition lowers it."""
    n, p = X.shape
    support = np.zeros(p, bool)
    best = criterion(X, y, support, name, gamma)
    for _ in range(max_size or min(p, n - 2)):
        trials = []
        for i in np.flatnonzero(~support):
            support[i] = True
            trials.append((criterion(X, y, support, name, gamma), i))
            support[i] = False
        value, i = min(trials)
        if value >= best:
            break
        best = value
        support[i] = True
    return support, best
