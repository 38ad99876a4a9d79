"""LTSRegression and LMSRegression: robustbase's starsCYG fit, recovery of the truth where least
squares breaks down, determinism, and clear errors."""
import numpy as np
import pytest

import clstats

# robustbase's starsCYG: log surface temperature and log light intensity of the 47 stars of
# the CYG OB1 cluster (the Hertzsprung-Russell diagram).
STARS_T = [4.37, 4.56, 4.26, 4.56, 4.30, 4.46, 3.84, 4.57, 4.26, 4.37, 3.49, 4.43, 4.48, 4.01,
           4.29, 4.42, 4.23, 4.42, 4.23, 3.49, 4.29, 4.29, 4.42, 4.49, 4.38, 4.42, 4.29, 4.38,
           4.22, 3.48, 4.38, 4.56, 4.45, 3.49, 4.23, 4.62, 4.53, 4.45, 4.53, 4.43, 4.38, 4.45,
           4.50, 4.45, 4.55, 4.45, 4.42]
STARS_L = [5.23, 5.74, 4.93, 5.74, 5.19, 5.46, 4.65, 5.27, 5.57, 5.12, 5.73, 5.45, 5.42, 4.05,
           4.26, 4.58, 3.94, 4.18, 4.18, 5.89, 4.38, 4.22, 4.42, 4.85, 5.02, 4.66, 4.66, 4.90,
           4.39, 6.05, 4.42, 5.10, 5.22, 6.29, 4.34, 5.62, 5.10, 5.22, 5.18, 5.57, 4.62, 5.06,
           5.34, 5.34, 5.54, 4.98, 4.50]


def test_stars_cyg_is_robustbases():
    x = np.array(STARS_T).reshape(-1, 1)
    fit = clstats.LTSRegression(random_state=0).fit(x, STARS_L)
    # robustbase::ltsReg(log.light ~ log.Te, data = starsCYG): intercept -8.500, slope 3.046
    assert round(fit.intercept_, 3) == -8.500
    assert round(float(fit.coef_[0]), 3) == 3.046
    assert fit.h_ == 25
    assert sorted(np.flatnonzero(fit.outliers_) + 1) == [7, 9, 11, 20, 30, 34]
    assert fit.support_.sum() == 25
    ls = np.polyfit(STARS_T, STARS_L, 1)
    assert ls[0] < 0  # least squares: the four giants turn the slope around


@pytest.mark.parametrize("estimator", [clstats.LTSRegression, clstats.LMSRegression])
def test_truth_recovered_where_least_squares_fails(estimator):
    rng = np.random.default_rng(5)
    n = 400
    X = rng.normal(size=(n, 3))
    truth = np.array([1.5, -2.0, 0.5])
    y = X @ truth + 3.0 + rng.normal(0, 0.05, n)
    bad = rng.choice(n, int(0.3 * n), replace=False)
    X[bad[:60]] += 20          # bad leverage points
    y[bad] += rng.uniform(50, 100, bad.size)
    fit = estimator(random_state=2).fit(X, y)
    assert np.allclose(fit.coef_, truth, atol=0.05)
    assert abs(fit.intercept_ - 3.0) < 0.05
    assert fit.outliers_[bad].all()
    ls = np.linalg.lstsq(np.c_[X, np.ones(n)], y, rcond=None)[0]
    assert not np.allclose(ls[:3], truth, atol=0.5)
    assert np.allclose(fit.predict(X[:5]), X[:5] @ fit.coef_ + fit.intercept_)


def test_same_seed_same_fit_and_options():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 2))
    y = X.sum(axis=1) + rng.standard_t(2, 150)
    a = clstats.LTSRegression(random_state=11).fit(X, y)
    b = clstats.LTSRegression(random_state=11).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and a.crit_ == b.crit_
    raw = clstats.LTSRegression(random_state=11, reweight=False).fit(X, y)
    assert np.array_equal(raw.coef_, a.raw_coef_)
    through_zero = clstats.LTSRegression(random_state=1, fit_intercept=False).fit(X, y)
    assert through_zero.intercept_ == 0
    wider = clstats.LTSRegression(alpha=0.9, random_state=1).fit(X, y)
    assert wider.h_ > a.h_


def test_bad_input_is_refused_clearly():
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10.0)
    with_nan = y.copy()
    with_nan[3] = np.nan
    for call in (lambda: clstats.LTSRegression().fit(X[:2], y[:2]),
                 lambda: clstats.LTSRegression().fit(X, y[:9]),
                 lambda: clstats.LTSRegression().fit(X[:, 0], y),
                 lambda: clstats.LTSRegression(alpha=0.2).fit(X, y),
                 lambda: clstats.LTSRegression(n_subsets=0).fit(X, y),
                 lambda: clstats.LTSRegression(random_state=0).fit(
                     np.c_[X[:, 0], 2 * X[:, 0]], y),
                 lambda: clstats.LTSRegression(random_state=0).fit(X, with_nan),
                 lambda: clstats.LTSRegression().predict(X)):
        with pytest.raises(ValueError):
            call()
    fit = clstats.LTSRegression(random_state=0, nan_policy="omit").fit(
        np.c_[np.arange(10.0), np.arange(10.0) ** 2], with_nan)
    assert not fit.support_[3] and not fit.outliers_[3]
