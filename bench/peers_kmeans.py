"""peers_kmeans.py - the peers of bench_kmeans on its data and its cases: scikit-learn's
KMeans(algorithm='lloyd', n_init=1, tol=0) from the same given centres, and, where torch sees a
GPU, a GEMM-based Lloyd loop in torch (the issue's peer). Usage: peers_kmeans.py seed|big|wide
[--reps R] [--lo LO --hi HI]; per-iteration cases time two runs and take the difference."""
import argparse
import time

import numpy as np

CASES = {"seed": (100000, 2, 5), "big": (10000000, 3, 16), "wide": (1000000, 256, 1024)}


def blobs(n, d, k):
    """bench_kmeans.c's data: the same 64-bit LCG, so the same floats."""
    mask = (1 << 64) - 1
    s = 42

    def nxt():
        nonlocal s
        s = (s * 6364136223846793005 + 1442695040888963407) & mask
        return ((s >> 11) + 0.5) / 9007199254740992.0

    c = np.array([20 * nxt() - 10 for _ in range(k * d)], dtype=np.float32).reshape(k, d)
    x = np.empty((n, d), dtype=np.float32)
    for p in range(n):
        b = int(nxt() * k) % k
        for j in range(d):
            u1, u2 = nxt(), nxt()
            x[p, j] = c[b, j] + np.float32(np.sqrt(-2 * np.log(u1)) * np.cos(6.283185307179586 * u2))
    return x


def sklearn_fit(x, k, iters):
    from sklearn.cluster import KMeans
    t0 = time.perf_counter()
    km = KMeans(k, init=x[:k], n_init=1, max_iter=iters, tol=0.0, algorithm="lloyd").fit(x)
    return time.perf_counter() - t0, km.n_iter_, km.inertia_


def torch_fit(x, k, iters):
    import torch
    dev = torch.device("cuda")
    X = torch.from_numpy(x).to(dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    c = X[:k].clone()
    xx = (X * X).sum(1, keepdim=True)
    for _ in range(iters):
        dist = xx - 2 * X @ c.T + (c * c).sum(1)
        lab = dist.argmin(1)
        sums = torch.zeros_like(c).index_add_(0, lab, X)
        cnt = torch.bincount(lab, minlength=k).clamp(min=1).unsqueeze(1)
        c = sums / cnt
    torch.cuda.synchronize()
    return time.perf_counter() - t0, iters, float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=CASES)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lo", type=int, default=2)
    ap.add_argument("--hi", type=int, default=12)
    a = ap.parse_args()
    n, d, k = CASES[a.case]
    x = blobs(n, d, k) if n * d <= 10**6 else None
    if x is None:  # the LCG in Python is slow; large cases draw with numpy (different data)
        rng = np.random.default_rng(42)
        x = (rng.uniform(-10, 10, (k, d))[rng.integers(0, k, n)] + rng.standard_normal((n, d))).astype(np.float32)
    peers = [("scikit-learn", sklearn_fit)]
    try:
        import torch
        if torch.cuda.is_available():
            peers.append(("torch", torch_fit))
    except ImportError:
        print("torch: not installed, left out")
    print(f"n {n} d {d} k {k}")
    for name, f in peers:
        for r in range(a.reps + 1):
            if a.case == "seed":
                t, it, inertia = f(x, k, 300)
                print(f"{name} {'run' if r else 'warm-up'}: {1e3 * t:.1f} ms for {it} iterations, inertia {inertia:.6g}")
            else:
                t0, i0, _ = f(x, k, a.lo)
                t1, i1, _ = f(x, k, a.hi)
                print(f"{name} {'run' if r else 'warm-up'}: {1e3 * (t1 - t0) / max(i1 - i0, 1):.2f} ms per iteration ({i0} and {i1} its)")


if __name__ == "__main__":
    main()
