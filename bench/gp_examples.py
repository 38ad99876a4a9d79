"""gp_examples.py - the seed's examples regenerated (seed 001, Tables 1-2): log Goldstein-Price
(d = 2) and Hartman-6 (d = 6) on Latin hypercube designs (the widest of 20 random ones), fitted
by clstats.GaussianProcess and, on the same data, by scipy's L-BFGS-B multi-start on a numpy
reference of GPfit's deviance; optimised -2 log L, mu, sigma^2, SSPE over 1000 test points and
the time of each. --optimizer genetic fits by the seed's own optimiser (a genetic algorithm,
population 100, 20 generations: 2 000 deviances), as its tables were made; both runs both.
Usage: gp_examples.py [--gp-sizes 16,32,64] [--hartman-sizes 64] [--scipy-max-n 256]
[--optimizer lbfgs|genetic|both] [--device D]."""
import argparse
import time

import numpy as np
import scipy.linalg
import scipy.optimize

import clstats


def lhd(rng, n, d, tries=20):
    best, width = None, -1
    for _ in range(tries):
        x = (np.argsort(rng.random((d, n)), 1).T + rng.random((n, d))) / n
        w = min(np.sum((x[i] - x[:i]) ** 2, 1).min() for i in range(1, n))
        if w > width:
            best, width = x, w
    return best


def log_goldstein_price(x):
    x1, x2 = 4 * x[:, 0] - 2, 4 * x[:, 1] - 2
    a = 1 + (x1 + x2 + 1) ** 2 * (19 - 14 * x1 + 3 * x1 ** 2 - 14 * x2 + 6 * x1 * x2
                                  + 3 * x2 ** 2)
    b = 30 + (2 * x1 - 3 * x2) ** 2 * (18 - 32 * x1 + 12 * x1 ** 2 + 48 * x2 - 36 * x1 * x2
                                       + 27 * x2 ** 2)
    return np.log(a * b)


HART_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                   [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
HART_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                          [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
HART_C = np.array([1.0, 1.2, 3.0, 3.2])


def hartman6(x):
    return -np.exp(-((HART_A[None] * (x[:, None, :] - HART_P[None]) ** 2).sum(-1))) @ HART_C


def deviance(x, y, beta, power=1.95):
    h = np.abs(x[:, None, :] - x[None, :, :]) ** power
    r = np.exp(-(h * 10.0 ** beta).sum(-1))
    w = np.linalg.eigvalsh(r)
    e = np.exp(20.0)
    r[np.diag_indices_from(r)] += max(0.0, (w[-1] - e * w[0]) / (e - 1))
    c = scipy.linalg.cho_factor(r, lower=True)
    n = len(y)
    ab = scipy.linalg.solve_triangular(c[0], np.stack([np.ones(n), y], 1), lower=True)
    mu = ab[:, 0] @ ab[:, 1] / (ab[:, 0] @ ab[:, 0])
    return 2 * np.log(np.diag(c[0])).sum() + n * np.log(((ab[:, 1] - mu * ab[:, 0]) ** 2).sum())


def scipy_fit(rng, x, y, starts):
    d = x.shape[1]
    best = np.inf
    for s in rng.uniform(1.95 - np.log10(d) - 4, 1.95 - np.log10(d) + np.log10(5), (starts, d)):
        res = scipy.optimize.minimize(lambda b: deviance(x, y, b), s, method="L-BFGS-B",
                                      bounds=[(-10, 10)] * d)
        best = min(best, res.fun)
    return best


def run(name, f, n, d, args, rng):
    x = lhd(rng, n, d)
    y = f(x)
    test = rng.random((1000, d))
    line = f"{name} n {n}:"
    methods = ("lbfgs", "genetic") if args.optimizer == "both" else (args.optimizer,)
    for method in methods:
        t = time.perf_counter()
        gp = clstats.GaussianProcess(optimizer=method, random_state=1,
                                     device=args.device).fit(x, y)
        ours = time.perf_counter() - t
        sspe = float(((gp.predict(test) - f(test)) ** 2).sum())
        line += (f" {method} -2logL {gp.deviance_:.4f} mu {gp.mu_:.4g} sigma2 "
                 f"{gp.sigma2_:.4g} SSPE {sspe:.4g} time {ours:.2f} s ({gp.n_evaluations_} "
                 "evaluations)")
    if n <= args.scipy_max_n:
        t = time.perf_counter()
        best = scipy_fit(rng, x, y, 2 * d + 1)
        line += f" | scipy multi-start -2logL {best:.4f} time {time.perf_counter() - t:.2f} s"
    print(line, flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gp-sizes", default="16,32,64")
    p.add_argument("--hartman-sizes", default="64")
    p.add_argument("--scipy-max-n", type=int, default=256)
    p.add_argument("--optimizer", default="lbfgs", choices=("lbfgs", "genetic", "both"))
    p.add_argument("--device", default=None)
    args = p.parse_args()
    rng = np.random.default_rng(2026)
    for n in map(int, filter(None, args.gp_sizes.split(","))):
        run("log Goldstein-Price", log_goldstein_price, n, 2, args, rng)
    for n in map(int, filter(None, args.hartman_sizes.split(","))):
        run("Hartman-6", hartman6, n, 6, args, rng)


if __name__ == "__main__":
    main()
