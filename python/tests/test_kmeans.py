"""clstats.KMeans against scikit-learn's KMeans(algorithm='lloyd') given the same initial
centres: identical labels, centres within 1e-5 (float32) or 1e-12 (float64) relative, on blobs,
uniform data, duplicates and exact ties; empty clusters; weights; NaN rows; bad input."""
import numpy as np
import pytest

import clstats

sklearn_cluster = pytest.importorskip("sklearn.cluster", reason="scikit-learn is the peer")

RTOL = {np.float32: 1e-5, np.float64: 1e-12}


def blobs(rng, n, d, k, spread=1.0):
    centres = rng.uniform(-10, 10, (k, d))
    return centres[rng.integers(0, k, n)] + rng.normal(0, spread, (n, d))


def datasets(rng):
    yield "blobs", blobs(rng, 3000, 3, 5)
    yield "uniform", rng.uniform(size=(2000, 2))
    yield "duplicates", np.repeat(rng.normal(size=(40, 4)), 25, axis=0)
    # Exact ties that stay exact in scikit-learn's arithmetic too (it centres the data and
    # takes |c|^2 - 2 x.c): a symmetric integer grid (mean 0), each point 20 times.
    g = np.arange(-3, 4, dtype=float)
    yield "ties", np.repeat(np.stack(np.meshgrid(g, g), -1).reshape(-1, 2), 20, axis=0)


def compare(X, init, **kw):
    ours = clstats.KMeans(len(init), init=init, **kw).fit(X)
    peer = sklearn_cluster.KMeans(len(init), init=init, n_init=1, algorithm="lloyd", **kw).fit(X)
    return ours, peer


def assert_close(ours, peer, dtype, X):
    scale = float(np.abs(X).max())
    np.testing.assert_array_equal(ours.labels_, peer.labels_)
    np.testing.assert_allclose(ours.cluster_centers_, peer.cluster_centers_, rtol=RTOL[dtype],
                               atol=RTOL[dtype] * scale)
    assert ours.n_iter_ == peer.n_iter_
    assert ours.inertia_ == pytest.approx(peer.inertia_, rel=10 * RTOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_given_centres_match_scikit_learn(rng, dtype):
    for name, X in datasets(rng):
        X = X.astype(dtype)
        k = 6
        # Distinct rows as the initial centres (duplicated centres tie for ever).
        if name == "ties":  # half-integer centres: many points equally far from two
            init = np.array([[-1.5, 0], [1.5, 0], [0, 1.5], [0, -1.5], [-2.5, -2.5], [2.5, 2.5]],
                            dtype=dtype)
        else:
            rows = np.unique(X, axis=0)
            init = rows[rng.choice(len(rows), k, replace=False)]
        for tol in (0.0, 1e-4):
            ours, peer = compare(X, init, tol=tol)
            assert ours.cluster_centers_.dtype == dtype, name
            assert_close(ours, peer, dtype, X)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_empty_cluster_takes_the_farthest_point(rng, dtype):
    X = blobs(rng, 1000, 2, 3).astype(dtype)
    init = X[:4].copy()
    init[3] = 1e3  # far from every point: empty after the first assignment
    ours, peer = compare(X, init, tol=0.0)
    assert_close(ours, peer, dtype, X)
    assert np.bincount(ours.labels_, minlength=4).min() > 0


def test_sample_weights_match_scikit_learn(rng):
    X = blobs(rng, 2000, 3, 4)
    w = rng.uniform(0, 3, len(X))
    w[::13] = 0
    init = X[:4].copy()
    ours = clstats.KMeans(4, init=init).fit(X, sample_weight=w)
    peer = sklearn_cluster.KMeans(4, init=init, n_init=1, algorithm="lloyd").fit(
        X, sample_weight=w)
    assert_close(ours, peer, np.float64, X)


def test_inertia_no_worse_than_scikit_learn_on_easy_data(rng):
    X = blobs(rng, 5000, 2, 8, spread=0.3)
    for n_init in (1, 4):
        ours = clstats.KMeans(8, n_init=n_init, random_state=1).fit(X)
        peer = sklearn_cluster.KMeans(8, n_init=n_init, random_state=1).fit(X)
        assert ours.inertia_ <= peer.inertia_ * (1 + 1e-9)


def test_same_seed_same_result_and_restarts(rng):
    X = blobs(rng, 4000, 3, 6).astype(np.float32)
    for init in ("k-means++", "random"):
        a = clstats.KMeans(6, init=init, random_state=5).fit(X)
        b = clstats.KMeans(6, init=init, random_state=5).fit(X)
        np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
        np.testing.assert_array_equal(a.labels_, b.labels_)
        c = clstats.KMeans(6, init=init, n_init=3, random_state=5).fit(X)
        assert c.inertia_ <= a.inertia_


def test_predict_and_fit_predict(rng):
    X = blobs(rng, 1000, 2, 3)
    km = clstats.KMeans(3, random_state=0)
    labels = km.fit_predict(X)
    np.testing.assert_array_equal(km.predict(X), labels)
    assert -km.score(X) == pytest.approx(km.inertia_, rel=1e-12)
    peer = sklearn_cluster.KMeans(3, init=km.cluster_centers_, n_init=1).fit(X)
    np.testing.assert_array_equal(peer.predict(X[:50]), km.predict(X[:50]))


def test_nan_rows_raise_or_are_left_out(rng):
    X = blobs(rng, 500, 2, 3)
    X[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clstats.KMeans(3).fit(X)
    km = clstats.KMeans(3, init=X[:3], nan_policy="omit").fit(X)
    assert km.labels_[7] == -1
    keep = np.ones(len(X), bool)
    keep[7] = False
    peer = sklearn_cluster.KMeans(3, init=X[:3], n_init=1, algorithm="lloyd").fit(X[keep])
    np.testing.assert_array_equal(km.labels_[keep], peer.labels_)
    np.testing.assert_allclose(km.cluster_centers_, peer.cluster_centers_, rtol=1e-12)
    assert km.predict(X)[7] == -1


@pytest.mark.parametrize("X, k, match", [
    (np.zeros((5, 2)), 6, "exceed"),
    (np.zeros((5, 2)), 0, "n_clusters"),
    (np.zeros((5, 0)), 2, "d = 0"),
    (np.zeros((0, 2)), 2, "no sample"),
    (np.zeros(5), 2, "2-D"),
])
def test_bad_input_gives_clear_errors(X, k, match):
    with pytest.raises(ValueError, match=match):
        clstats.KMeans(k).fit(X)


def test_bad_parameters():
    X = np.zeros((10, 2))
    for kw in ({"n_init": 0}, {"max_iter": 0}, {"tol": -1.0}, {"init": "nope"},
               {"init": np.zeros((3, 3))}, {"nan_policy": "skip"}):
        with pytest.raises(ValueError):
            clstats.KMeans(2, **kw).fit(X)
    with pytest.raises(ValueError, match="not fitted"):
        clstats.KMeans(2).predict(X)
