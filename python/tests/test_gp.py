"""clstats.GaussianProcess against a numpy/scipy float64 reference (scipy.linalg.cho_factor) of
GPfit's deviance: every correlation, batched and single evaluations, the gradient also against
finite differences, GPfit's nugget rule (numpy's eigvalsh) on duplicates and near-singular R;
prediction at the design; the fit at least as good as scipy's L-BFGS-B multi-start on the
reference (log Goldstein-Price); the seed's genetic algorithm, repeatable for a seed and near
the L-BFGS optimum; bad input."""
import numpy as np
import pytest

import clstats

scipy_linalg = pytest.importorskip("scipy.linalg", reason="scipy is the reference")
scipy_optimize = pytest.importorskip("scipy.optimize", reason="scipy is the reference")

NUS = {"matern32": 1.5, "matern52": 2.5}


def corr_matrix(X, beta, corr="power_exponential", power=1.95, Z=None):
    Z = X if Z is None else Z
    h = np.abs(Z[:, None, :] - X[None, :, :])
    theta = 10.0 ** np.asarray(beta)
    if corr == "power_exponential":
        return np.exp(-(theta * h ** power).sum(-1))
    t = 2 * np.sqrt(NUS[corr]) * theta * h
    poly = 1 + t if corr == "matern32" else 1 + t + t * t / 3
    return np.prod(poly, -1) * np.exp(-t.sum(-1))


def nugget_rule(R, thres=20.0):
    w = np.linalg.eigvalsh(R)
    e = np.exp(thres)
    return max(0.0, (w[-1] - e * w[0]) / (e - 1))


def deviance(X, y, beta, corr="power_exponential", nugget=None):
    R = corr_matrix(X, beta, corr)
    n = len(y)
    delta = nugget_rule(R) if nugget is None else nugget
    c = scipy_linalg.cho_factor(R + delta * np.eye(n), lower=True)
    one = np.ones(n)
    a, b = scipy_linalg.cho_solve(c, one), scipy_linalg.cho_solve(c, y)
    mu = one @ b / (one @ a)
    r = y - mu
    q = r @ scipy_linalg.cho_solve(c, r)
    return 2 * np.log(np.diag(c[0])).sum() + n * np.log(q), mu, q / n, delta


def goldstein_price(x):
    x1, x2 = 4 * x[:, 0] - 2, 4 * x[:, 1] - 2
    t1 = 1 + (x1 + x2 + 1) ** 2 * (19 - 14 * x1 + 3 * x1 ** 2 - 14 * x2 + 6 * x1 * x2
                                   + 3 * x2 ** 2)
    t2 = 30 + (2 * x1 - 3 * x2) ** 2 * (18 - 32 * x1 + 12 * x1 ** 2 + 48 * x2 - 36 * x1 * x2
                                        + 27 * x2 ** 2)
    return np.log(t1 * t2)


def response(X):
    return np.sin(3 * X).sum(1) + 10


@pytest.mark.parametrize("corr", ["power_exponential", "matern32", "matern52"])
@pytest.mark.parametrize("n,d", [(2, 1), (5, 3), (24, 2), (60, 10), (300, 4)])
def test_deviance_matches_numpy_reference(rng, corr, n, d):
    X = rng.uniform(size=(n, d))
    y = response(X)
    gp = clstats.GaussianProcess(corr=corr)
    thetas = 10.0 ** rng.uniform(-3, 2, (5, d))
    for nugget in (None, 1e-6):
        got = gp.deviance(thetas, nugget=nugget, X=X, y=y)
        for t, g in zip(thetas, got):
            want, mu, s2, delta = deviance(X, y, np.log10(t), corr, nugget)
            # Rounding of R's entries (exp, pow: an ulp apart between libraries) moves the
            # deviance by about eps cond(S): 1e-10 where S is well conditioned, up to 1e-7 at
            # GPfit's bound e^20.
            w = np.linalg.eigvalsh(corr_matrix(X, np.log10(t), corr) + delta * np.eye(n))
            tol = max(1e-10, 1e-15 * w[-1] / w[0])
            assert g == pytest.approx(want, rel=tol, abs=tol * n), (t, nugget)


def test_single_and_batched_paths_agree(rng):
    X = rng.uniform(size=(40, 3))
    y = response(X)
    gp = clstats.GaussianProcess(nugget=1e-8)
    thetas = 10.0 ** rng.uniform(-1, 1, (6, 3))
    batched = gp.deviance(thetas, X=X, y=y)
    single = [gp.deviance(t, X=X, y=y) for t in thetas]
    np.testing.assert_allclose(batched, single, rtol=1e-11)


@pytest.mark.parametrize("corr", ["power_exponential", "matern32", "matern52"])
def test_gradient_matches_finite_differences(rng, corr):
    X = rng.uniform(size=(25, 3))
    y = response(X)
    gp = clstats.GaussianProcess(corr=corr, nugget=1e-8)
    beta = np.array([-0.4, 0.2, 0.9])
    dev, grad = gp.deviance(10 ** beta, nugget=1e-8, X=X, y=y, return_gradient=True)
    assert dev == pytest.approx(deviance(X, y, beta, corr, 1e-8)[0], rel=1e-10)
    h = 1e-5
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fd = (deviance(X, y, beta + e, corr, 1e-8)[0] - deviance(X, y, beta - e, corr, 1e-8)[0])
        assert grad[k] == pytest.approx(fd / (2 * h), rel=1e-5, abs=1e-6)


def test_duplicates_take_the_rule_nugget_and_fail_without(rng):
    X = np.repeat(rng.uniform(size=(6, 2)), 2, axis=0)
    y = response(X) + rng.normal(0, 0.01, len(X))
    gp = clstats.GaussianProcess()
    beta = np.array([0.3, 0.5])
    want, mu, s2, delta = deviance(X, y, beta)
    assert delta > 0
    assert gp.deviance(10 ** beta, X=X, y=y) == pytest.approx(want, rel=1e-7)
    with pytest.raises(ValueError, match="duplicate"):
        gp.deviance(10 ** beta, nugget=0.0, X=X, y=y)


def test_prediction_matches_reference_and_interpolates(rng):
    X = rng.uniform(size=(15, 2))
    y = response(X)
    gp = clstats.GaussianProcess(random_state=1).fit(X, y)
    mean, std = gp.predict(X, return_std=True)
    np.testing.assert_allclose(mean, y, rtol=1e-6)
    Z = rng.uniform(size=(50, 2))
    m, s = gp.predict(Z, return_std=True)
    R = corr_matrix(X, gp.beta_) + gp.nugget_ * np.eye(len(y))
    r = corr_matrix(X, gp.beta_, Z=Z)
    c = scipy_linalg.cho_factor(R, lower=True)
    one = np.ones(len(y))
    ri = scipy_linalg.cho_solve(c, r.T)
    want = gp.mu_ + r @ scipy_linalg.cho_solve(c, y - gp.mu_)
    mse = gp.sigma2_ * (1 - (r * ri.T).sum(1)
                        + (1 - one @ ri) ** 2 / (one @ scipy_linalg.cho_solve(c, one)))
    np.testing.assert_allclose(m, want, rtol=1e-9)
    np.testing.assert_allclose(s, np.sqrt(np.maximum(mse, 0)), rtol=1e-6, atol=1e-9)


def latin_goldstein_price(rng, n=20):
    """n points of a random Latin hypercube in [0, 1]^2 and log Goldstein-Price there."""
    X = (rng.permuted(np.tile(np.arange(n), (2, 1)), axis=1).T + rng.uniform(size=(n, 2))) / n
    return X, goldstein_price(X)


def test_fit_is_at_least_as_good_as_scipy_multistart():
    rng = np.random.default_rng(7)
    X, y = latin_goldstein_price(rng)
    ours = clstats.GaussianProcess(random_state=0).fit(X, y)
    best = np.inf
    for start in rng.uniform(-2, 2.5, (10, 2)):
        res = scipy_optimize.minimize(lambda b: deviance(X, y, b)[0], start, method="L-BFGS-B",
                                      bounds=[(-10, 10)] * 2)
        best = min(best, res.fun)
    assert ours.deviance_ <= best + 1e-6 * abs(best)
    assert ours.deviance_ == pytest.approx(deviance(X, y, ours.beta_)[0], rel=1e-9)


def test_genetic_optimizer_repeats_for_a_seed_and_nears_lbfgs():
    X, y = latin_goldstein_price(np.random.default_rng(7))
    lbfgs = clstats.GaussianProcess(random_state=0).fit(X, y)
    ga = clstats.GaussianProcess(optimizer="genetic", random_state=5).fit(X, y)
    again = clstats.GaussianProcess(optimizer="genetic", random_state=5).fit(X, y)
    other = clstats.GaussianProcess(optimizer="genetic", random_state=6).fit(X, y)
    assert ga.n_evaluations_ == 100 * 20 + 1
    assert np.array_equal(ga.beta_, again.beta_) and ga.deviance_ == again.deviance_
    assert not np.array_equal(ga.beta_, other.beta_)
    assert lbfgs.deviance_ - 1e-6 * abs(lbfgs.deviance_) <= ga.deviance_ <= lbfgs.deviance_ + 0.05
    assert ga.deviance_ == pytest.approx(deviance(X, y, ga.beta_)[0], rel=1e-9)
    small = clstats.GaussianProcess(optimizer="genetic", population=10, generations=3,
                                    random_state=1).fit(X, y)
    assert small.n_evaluations_ == 10 * 3 + 1
    with pytest.raises(ValueError):
        clstats.GaussianProcess(optimizer="annealing").fit(X, y)
    with pytest.raises(ValueError):
        clstats.GaussianProcess(optimizer="genetic", population=1).fit(X, y)


def test_bad_input_is_refused():
    gp = clstats.GaussianProcess()
    with pytest.raises(ValueError):
        gp.fit(np.zeros((1, 0)), [1.0])
    with pytest.raises(Exception):
        gp.deviance([1.0], X=[[0.5]], y=[1.0])  # n = 1
    with pytest.raises(Exception):
        gp.deviance([1.0, 1.0], X=[[0.1, np.nan], [0.5, 0.2]], y=[1.0, 2.0])
    with pytest.raises(ValueError):
        clstats.GaussianProcess(corr="cubic").deviance([1.0], X=[[0.1], [0.5]], y=[1.0, 2.0])
    with pytest.raises(ValueError):
        clstats.GaussianProcess(power=2.5).deviance([1.0], X=[[0.1], [0.5]], y=[1.0, 2.0])
    with pytest.raises(ValueError):
        clstats.GaussianProcess().predict([[0.1]])
