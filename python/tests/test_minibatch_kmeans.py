"""clstats.MiniBatchKMeans against scikit-learn's MiniBatchKMeans. Where the two are defined to
agree, exactly: partial_fit on the same batches in order from the same centres, with
reassignment_ratio=0 (our update is scikit-learn's, in the same precision), gives the same
labels and centres within 1e-5 (float32) or 1e-12 (float64) relative after every batch, with and
without sample weights. Where they are not (fit draws scikit-learn's batches at random, ours in
order), loosely: on blobs both find the same partition up to relabelling and inertias within 1%
of each other and of full Lloyd's. Then reproducibility, NaN rows and bad input."""
import numpy as np
import pytest

import clstats

sklearn_cluster = pytest.importorskip("sklearn.cluster", reason="scikit-learn is the peer")

RTOL = {np.float32: 1e-5, np.float64: 1e-12}


def blobs(rng, n, d, k, spread=1.0):
    centres = rng.uniform(-10, 10, (k, d))
    which = rng.integers(0, k, n)
    return centres[which] + rng.normal(0, spread, (n, d)), which


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_partial_fit_matches_scikit_learn_batch_by_batch(rng, dtype, weighted):
    X, _ = blobs(rng, 6000, 4, 6, spread=3.0)
    X = X.astype(dtype)
    w = rng.uniform(0.5, 2.0, len(X)).astype(dtype) if weighted else None
    init = X[rng.choice(len(X), 6, replace=False)]
    ours = clstats.MiniBatchKMeans(6, init=init, batch_size=500)
    peer = sklearn_cluster.MiniBatchKMeans(6, init=init, n_init=1, batch_size=500,
                                           reassignment_ratio=0.0)
    scale = float(np.abs(X).max())
    for first in range(0, len(X), 500):
        sl = slice(first, first + 500)
        ours.partial_fit(X[sl], sample_weight=None if w is None else w[sl])
        peer.partial_fit(X[sl], sample_weight=None if w is None else w[sl])
        np.testing.assert_allclose(ours.cluster_centers_, peer.cluster_centers_,
                                   rtol=RTOL[dtype], atol=RTOL[dtype] * scale)
    assert ours.n_steps_ == peer.n_steps_ == len(X) // 500
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))


def test_fit_agrees_loosely_with_scikit_learn(rng):
    X, truth = blobs(rng, 20000, 3, 5)
    ours = clstats.MiniBatchKMeans(5, batch_size=1024, max_iter=20, random_state=3,
                                   ).fit(rng.permutation(X))
    ours_labels = ours.predict(X)
    peer = sklearn_cluster.MiniBatchKMeans(5, batch_size=1024, n_init=3, random_state=0).fit(X)
    full = sklearn_cluster.KMeans(5, n_init=3, random_state=0).fit(X)
    # the same partition as the true blobs (and so as each other), up to the labels' names
    for labels in (ours_labels, peer.labels_):
        pairs = set(zip(labels.tolist(), truth.tolist()))
        assert len(pairs) == 5, f"{len(pairs)} label/blob pairs"
    inertia = ours.score(X) * -1
    assert inertia == pytest.approx(full.inertia_, rel=0.01)
    assert inertia == pytest.approx(peer.inertia_, rel=0.01)
    assert ours.n_iter_ <= 20 and ours.n_steps_ == ours.n_iter_ * 20


def test_same_seed_same_result_and_tol(rng):
    X, _ = blobs(rng, 5000, 2, 4)
    a = clstats.MiniBatchKMeans(4, random_state=7, batch_size=256, max_iter=50, tol=1e-4).fit(X)
    b = clstats.MiniBatchKMeans(4, random_state=7, batch_size=256, max_iter=50, tol=1e-4).fit(X)
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)
    assert np.array_equal(a.labels_, b.labels_)
    assert a.n_iter_ < 50
    np.testing.assert_array_equal(a.labels_, a.predict(X))
    assert a.inertia_ == pytest.approx(-a.score(X), rel=1e-12)


def test_nan_rows_raise_or_are_left_out(rng):
    X, _ = blobs(rng, 2000, 2, 3)
    X[17, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clstats.MiniBatchKMeans(3, random_state=0).fit(X)
    km = clstats.MiniBatchKMeans(3, random_state=0, nan_policy="omit").fit(X)
    assert km.labels_[17] == -1 and (np.delete(km.labels_, 17) >= 0).all()


@pytest.mark.parametrize("kw, match", [({"n_clusters": 0}, "n_clusters"),
                                       ({"batch_size": 0}, "batch_size"),
                                       ({"tol": -1.0}, "tol"),
                                       ({"init": "nope"}, "init")])
def test_bad_parameters(rng, kw, match):
    X, _ = blobs(rng, 100, 2, 3)
    args = {"n_clusters": 3, **kw}
    with pytest.raises(ValueError, match=match):
        clstats.MiniBatchKMeans(**args).fit(X)
