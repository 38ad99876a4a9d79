"""clstats.PaSS: the seed paper's simulations on a few datasets (Ing and Lai with HDBIC, Chen and
Chen with EBIC beside a forward-stepwise baseline), the criterion against one recomputed from
scratch, reproducibility by seed, dtypes, and bad input. The 100-dataset study is
examples/pass/tables.py."""

import pathlib
import sys

import numpy as np
import pytest

import clstats

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "pass"))
import simulations as sim  # noqa: E402


@pytest.mark.parametrize("dataset", [0, 1])
def test_pass_ing_lai_hdbic_exact(dataset):
    X, y, truth = sim.ing_lai(rng=1000 + dataset)
    fit = clstats.PaSS("hdbic", n_particles=256, n_iter=16, random_state=dataset).fit(
        X.astype(np.float32), y.astype(np.float32))
    psr, fdr = sim.psr_fdr(fit.support_, truth)
    assert (psr, fdr) == (1.0, 0.0), np.flatnonzero(fit.support_)


def test_pass_chen_chen_ebic_beside_forward_stepwise():
    for dataset in range(3):
        X, y, truth = sim.chen_chen(rng=2000 + dataset)
        fit = clstats.PaSS("ebic", n_particles=64, n_iter=32, random_state=dataset).fit(X, y)
        base, base_value = sim.forward_stepwise(X, y, "ebic")
        # The swarm minimises the criterion at least as well as the greedy path.
        assert fit.criterion_ <= base_value + 1e-9 * abs(base_value)
        psr, fdr = sim.psr_fdr(fit.support_, truth)
        assert psr >= sim.psr_fdr(base, truth)[0] - 0.25 and fdr <= 0.5


@pytest.mark.parametrize("criterion", ["hdbic", "hdhqc", "ebic", "bic", "aic"])
def test_pass_criterion_matches_lstsq(criterion):
    X, y, _ = sim.chen_chen(n=60, p=30, rng=7)
    fit = clstats.PaSS(criterion, n_particles=16, n_iter=24, gamma=0.5,
                       probs=(0.2, 0.5, 0.3, 0.5, 0.5), random_state=3).fit(X, y)
    want = sim.criterion(X, y, fit.support_, criterion, 0.5)
    assert fit.criterion_ == pytest.approx(want, rel=1e-9)
    assert np.all(np.diff(fit.history_) <= 0) and fit.history_[-1] == fit.criterion_
    # coef_ and intercept_ are the LS fit of the support on X's own scale.
    S = fit.support_
    A = np.column_stack([np.ones(len(y)), X[:, S]])
    sol = np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(fit.coef_[S], sol[1:], rtol=1e-9, atol=1e-12)
    assert fit.intercept_ == pytest.approx(sol[0], rel=1e-9, abs=1e-12)
    assert np.all(fit.coef_[~S] == 0)


def test_pass_seed_repeats_and_dtypes():
    X, y, truth = sim.chen_chen(rng=5)
    a = clstats.PaSS("ebic", n_particles=8, n_iter=20, probs=(0.2, 0.4, 0.4, 0.5, 0.5),
                     random_state=11).fit(X, y)
    b = clstats.PaSS("ebic", n_particles=8, n_iter=20, probs=(0.2, 0.4, 0.4, 0.5, 0.5),
                     random_state=11).fit(X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.history_, b.history_)
    c = clstats.PaSS("ebic", n_particles=32, n_iter=32, random_state=1).fit(
        X.astype(np.float32), y.astype(np.float32))
    d = clstats.PaSS("ebic", n_particles=32, n_iter=32, random_state=1).fit(X, y)
    assert c.criterion_ == pytest.approx(d.criterion_, rel=1e-4)


def test_pass_bad_input():
    X, y, _ = sim.chen_chen(n=20, p=10, rng=1)
    with pytest.raises(ValueError):
        clstats.PaSS().fit(X[:, :0], y)
    with pytest.raises(ValueError):
        clstats.PaSS().fit(X[:2], y[:2])
    with pytest.raises(ValueError):
        clstats.PaSS(criterion="cic").fit(X, y)
    with pytest.raises(ValueError):
        clstats.PaSS(probs=(0.5, 0.5, 0.5, 0.5, 0.5)).fit(X, y)
    Xc = X.copy()
    Xc[:, 3] = 2.0
    with pytest.raises(Exception, match="column 3"):
        clstats.PaSS().fit(Xc, y)
    Xn = X.copy()
    Xn[4, 1] = np.nan
    with pytest.raises(Exception, match="NaN|nan"):
        clstats.PaSS().fit(Xn, y)
