"""The device the suite runs on: $CLSTATS_DEVICE as the library reads it (CI: PoCL's CPU)."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20261124)


def hard_image(rng, shape, dtype=np.float32, nan=0.05, ties=True, infs=True):
    """Random pixels with NaNs, ties (a few values repeated), a constant block and +-inf."""
    a = rng.normal(size=shape)
    if ties:
        a = np.round(a * 4) / 4
    a = a.astype(dtype)
    if min(shape) >= 8:
        a[2:6, 3:7] = dtype(1.5)
    if infs and a.size > 4:
        a.flat[rng.integers(0, a.size, 3)] = np.inf
        a.flat[rng.integers(0, a.size, 3)] = -np.inf
    if nan:
        a[rng.random(shape) < nan] = np.nan
    return a
