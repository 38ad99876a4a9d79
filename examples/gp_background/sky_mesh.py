"""sky_mesh.py - a sky background's mesh interpolated by a Gaussian process (issue 23's worked
example for images), against the bicubic spline SExtractor and SEP use.

A simulated 1024 x 1024 sky: a smooth background (a gradient and a broad bump), Gaussian noise,
and bright extended sources whose pixels are masked down to 1 sigma of the noise (as a
detection pass would mask them), so
that some 64-pixel boxes of the mesh lose more than half their pixels. clstats.Background
measures the mesh (filter 1, so the mesh is the boxes' own values) and fills those boxes from
their neighbours, as SEP does, before its spline; here the filled boxes are holes instead: a
GaussianProcess (GPfit's model, fitted on the device) is fitted to the box centres that kept
their pixels, and predicts the background (and its standard error) at every pixel. Both maps
are compared with the true background, over the whole image and inside the holes.

Usage: PYTHONPATH=<package> python3 examples/gp_background/sky_mesh.py [--size 1024]
[--box 64] [--sources 8] [--seed 1] [--device D]"""
import argparse
import time

import numpy as np

import clstats


def simulate(size, sources, rng):
    yy, xx = np.mgrid[0:size, 0:size] / size
    truth = 100 + 30 * xx - 10 * yy + 25 * np.exp(-((xx - 0.6) ** 2 + (yy - 0.35) ** 2) / 0.05)
    image = truth + rng.normal(0, 5, truth.shape)
    stars = np.zeros_like(truth)
    for _ in range(sources):
        cx, cy = rng.uniform(0.1, 0.9, 2)
        r = rng.uniform(0.01, 0.025)
        stars += rng.uniform(200, 2000) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
    image += stars
    mask = stars > 5  # the sources' pixels down to 1 sigma of the noise
    return image.astype(np.float32), truth, mask


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--box", type=int, default=64)
    p.add_argument("--sources", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default=None)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    image, truth, mask = simulate(a.size, a.sources, rng)
    bkg = clstats.Background(image, box_size=a.box, filter_size=1, mask=mask, device=a.device)
    ny, nx = bkg.background_mesh.shape
    # A box is a hole where more than half its pixels are masked: SEP fills it from its
    # neighbours; the GP is fitted without it.
    masked = mask[:ny * a.box, :nx * a.box].reshape(ny, a.box, nx, a.box).mean((1, 3))
    kept = masked <= 0.5
    by, bx = np.mgrid[0:ny, 0:nx]
    centres = np.stack([(by + 0.5) * a.box / a.size, (bx + 0.5) * a.box / a.size], -1)
    X, y = centres[kept], bkg.background_mesh[kept].astype(np.float64)
    t = time.perf_counter()
    gp = clstats.GaussianProcess(random_state=0, device=a.device).fit(X, y)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    rows = np.arange(a.size) + 0.5
    gp_map = np.empty((a.size, a.size))
    gp_std = np.empty((a.size, a.size))
    for r0 in range(0, a.size, 256):  # 256 rows of pixels a prediction call
        pr = rows[r0:r0 + 256]
        grid = np.stack(np.meshgrid(pr, rows, indexing="ij"), -1).reshape(-1, 2) / a.size
        m, s = gp.predict(grid, return_std=True)
        gp_map[r0:r0 + 256], gp_std[r0:r0 + 256] = m.reshape(-1, a.size), s.reshape(-1, a.size)
    predict_s = time.perf_counter() - t
    holes = np.kron(~kept, np.ones((a.box, a.box), bool))
    holes = np.pad(holes, ((0, a.size - holes.shape[0]), (0, a.size - holes.shape[1])))

    def rms(diff, where):
        return float(np.sqrt(np.mean(diff[where] ** 2))) if where.any() else float("nan")

    everywhere = np.ones_like(holes)
    print(f"image {a.size}^2, boxes {ny} x {nx} of {a.box} px, holes {int((~kept).sum())}, "
          f"GP fit on {len(y)} box centres {fit_s:.2f} s ({gp.n_evaluations_} deviances), "
          f"prediction at {a.size ** 2} pixels {predict_s:.2f} s")
    print(f"GP: theta {np.round(gp.theta_, 3)}, mu {gp.mu_:.3f}, sigma2 {gp.sigma2_:.4g}, "
          f"nugget {gp.nugget_:.3g}")
    print("| map | rms error, whole image | rms error, in the holes | largest error |")
    print("|---|---|---|---|")
    for name, m in (("bicubic spline (SEP's, holes filled)", bkg.background),
                    ("Gaussian process (holes left out)", gp_map)):
        d = m - truth
        print(f"| {name} | {rms(d, everywhere):.3f} | {rms(d, holes):.3f} | "
              f"{np.abs(d).max():.3f} |")
    inside = holes & ~mask
    print(f"GP standard error: median {np.median(gp_std):.3f} over the image, "
          f"{np.median(gp_std[holes]) if holes.any() else float('nan'):.3f} in the holes; "
          f"noise per box mean {5 / a.box:.3f}; pixels in holes not masked {int(inside.sum())}")


if __name__ == "__main__":
    main()
