"""peers_gp.py - GPfit's deviance in numpy/scipy (cho_factor) and, where present, torch
float64 (CPU, or CUDA when available), on the designs bench_gp makes (uniform, the same
response): one evaluation at n x d and a population of COUNT at n; with --rule also one
evaluation at n x d with GPfit's nugget rule (R's extreme eigenvalues by LAPACK's/cuSOLVER's
symmetric eigensolver, then the Cholesky of R + delta I). Usage:
peers_gp.py [--n 4064] [--d 6] [--batch-n 256] [--count 100] [--reps 3] [--rule]."""
import argparse
import time

import numpy as np
import scipy.linalg


def design(n, d, seed=42):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, d))
    y = -np.exp(-((np.arange(1, d + 1)) * (x - 0.5) ** 2).sum(1))
    return x, y


def corr(x, theta, power=1.95):
    h = np.abs(x[:, None, :] - x[None, :, :])
    return np.exp(-(theta * h ** power).sum(-1))


def rule(lo, hi, thres=20.0):
    """GPfit's nugget from R's extreme eigenvalues."""
    e = np.exp(thres)
    return max(0.0, (hi - e * lo) / (e - 1))


def deviance_numpy(x, y, beta, nugget=1e-8):
    n = len(y)
    r = corr(x, 10.0 ** beta)
    if nugget is None:
        lo, hi = (scipy.linalg.eigvalsh(r, subset_by_index=[i, i])[0] for i in (0, n - 1))
        nugget = rule(lo, hi)
    c = scipy.linalg.cho_factor(r + nugget * np.eye(n), lower=True)
    ab = scipy.linalg.solve_triangular(c[0], np.stack([np.ones(n), y], 1), lower=True)
    mu = ab[:, 0] @ ab[:, 1] / (ab[:, 0] @ ab[:, 0])
    q = ((ab[:, 1] - mu * ab[:, 0]) ** 2).sum()
    return 2 * np.log(np.diag(c[0])).sum() + n * np.log(q)


def deviance_torch(torch, x, y, betas, nugget=1e-8):
    h = (x[:, None, :] - x[None, :, :]).abs() ** 1.95
    theta = 10.0 ** betas
    r = torch.exp(-(h[None] * theta[:, None, None, :]).sum(-1))
    n = y.shape[0]
    if nugget is None:
        w = torch.linalg.eigvalsh(r)
        e = float(np.exp(20.0))
        nugget = torch.clamp((w[:, -1] - e * w[:, 0]) / (e - 1), min=0)[:, None, None]
    r = r + nugget * torch.eye(n, dtype=r.dtype, device=r.device)
    l = torch.linalg.cholesky(r)
    rhs = torch.stack([torch.ones_like(y), y], 1).expand(len(betas), n, 2)
    ab = torch.linalg.solve_triangular(l, rhs, upper=False)
    mu = (ab[..., 0] * ab[..., 1]).sum(-1) / (ab[..., 0] ** 2).sum(-1)
    q = ((ab[..., 1] - mu[:, None] * ab[..., 0]) ** 2).sum(-1)
    return 2 * torch.log(torch.diagonal(l, dim1=-2, dim2=-1)).sum(-1) + n * torch.log(q)


def timed(f, reps):
    f()
    best = np.inf
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=4064)
    p.add_argument("--d", type=int, default=6)
    p.add_argument("--batch-n", type=int, default=256)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--rule", action="store_true")
    a = p.parse_args()
    x, y = design(a.n, a.d)
    beta = np.full(a.d, -0.25)
    if a.rule:
        t, v = timed(lambda: deviance_numpy(x, y, beta, None), 1)
        print(f"numpy/scipy one n {a.n} d {a.d} nugget rule: {1e3 * t:.1f} ms deviance {v:.10g}")
    t, v = timed(lambda: deviance_numpy(x, y, beta), a.reps)
    print(f"numpy/scipy one n {a.n} d {a.d}: {1e3 * t:.1f} ms deviance {v:.10g}")
    xb, yb = design(a.batch_n, a.d)
    betas = np.random.default_rng(1).uniform(-1, 0.5, (a.count, a.d))
    t, _ = timed(lambda: [deviance_numpy(xb, yb, b) for b in betas], a.reps)
    print(f"numpy/scipy batch n {a.batch_n} count {a.count}: {1e3 * t:.1f} ms")
    try:
        import torch
    except ImportError:
        print("torch: not installed, skipped")
        return
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    for n, bs, label in ((a.n, beta[None], "one"), (a.batch_n, betas, "batch")):
        xx, yy = design(n, a.d)
        tx = torch.tensor(xx, device=dev)
        ty = torch.tensor(yy, device=dev)
        tb = torch.tensor(bs, device=dev)

        def run():
            out = deviance_torch(torch, tx, ty, tb)
            sync()
            return out
        t, v = timed(run, a.reps)
        print(f"torch {dev} {label} n {n} count {len(bs)}: {1e3 * t:.1f} ms "
              f"deviance[0] {float(v[0]):.10g}")
        if a.rule and label == "one":
            def run_rule():
                out = deviance_torch(torch, tx, ty, tb, None)
                sync()
                return out
            t, v = timed(run_rule, a.reps)
            print(f"torch {dev} one n {n} nugget rule (eigvalsh): {1e3 * t:.1f} ms "
                  f"deviance[0] {float(v[0]):.10g}")


if __name__ == "__main__":
    main()
