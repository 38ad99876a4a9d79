"""Regenerates the seed paper's simulation tables (section IV-B) with clstats.PaSS: mean and
standard deviation of PSR and FDR over DATASETS random datasets (100 by default) for Ing and
Lai (n 400, p 4000, HDBIC; the paper's Table II) at 256 particles x 16 iterations and 16 x 32,
and Chen and Chen (n 200, p 50, EBIC gamma 1; Table III) at 16 x 8, 256 x 8 and 16 x 256,
beside forward stepwise by the criterion. STUDY (both, ing-lai or chen-chen) picks the study.

    /usr/bin/python3 examples/pass/tables.py [DATASETS] [DEVICE] [STUDY]
"""

import sys

import numpy as np

import clstats
import simulations as sim


def study(name, make, criterion, settings, datasets, device, baseline):
    rows = {s: [] for s in settings}
    base = []
    for d in range(datasets):
        X, y, truth = make(rng=d)
        X, y = X.astype(np.float32), y.astype(np.float32)
        for particles, iters in settings:
            fit = clstats.PaSS(criterion, n_particles=particles, n_iter=iters, random_state=d,
                               device=device).fit(X, y)
            rows[(particles, iters)].append(sim.psr_fdr(fit.support_, truth))
        if baseline:
            base.append(sim.psr_fdr(sim.forward_stepwise(X.astype(float), y.astype(float),
                                                         criterion)[0], truth))
    print(f"\n{name}, {criterion}, {datasets} datasets, probs (0, 0.8, 0.2), (0.8, 0.2)")
    print("| particles x iterations | PSR mean | FDR mean | PSR sd | FDR sd |")
    print("|---|---|---|---|---|")
    for (k, t), v in list(rows.items()) + ([(("forward", "stepwise"), base)] if base else []):
        a = np.array(v)
        print(f"| {k} x {t} | {a[:, 0].mean():.6f} | {a[:, 1].mean():.6f} | "
              f"{a[:, 0].std():.6f} | {a[:, 1].std():.6f} |")


def main():
    datasets = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    device = sys.argv[2] if len(sys.argv) > 2 else None
    which = sys.argv[3] if len(sys.argv) > 3 else "both"
    if which in ("both", "ing-lai"):
        study("Ing & Lai n 400 p 4000", sim.ing_lai, "hdbic", [(256, 16), (16, 32)], datasets,
              device, False)
    if which in ("both", "chen-chen"):
        study("Chen & Chen n 200 p 50", sim.chen_chen, "ebic", [(16, 8), (256, 8), (16, 256)],
              datasets, device, True)


if __name__ == "__main__":
    main()
