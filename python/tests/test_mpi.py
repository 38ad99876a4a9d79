"""clstats.mpi through mpi4py: the same script run under mpirun with 1 to 3 ranks, each rank
holding an uneven part (one empty with three ranks) of one array with NaNs, ties and +-inf,
checks the distributed median, k-th values and percentiles against the one-device calls (bit
for bit) and numpy, every method alike (the cutting plane's included), column medians and the
batched selection of a matrix whose rows the ranks share against numpy, the band filter
against the one-device filter, and a rank's bad argument raising the same error on every
rank. Skipped without mpi4py, mpirun, or the MPI module."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import clstats

SCRIPT = textwrap.dedent('''
    import sys
    import warnings
    import numpy as np
    from mpi4py import MPI
    import clstats, clstats.mpi

    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN parts, numpy's inf - inf
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    rng = np.random.default_rng(25)
    bad = 0
    for n, dtype in [(1, np.float32), (500, np.float32), (777, np.float64)]:
        x = np.round(rng.normal(size=n) * 4).astype(dtype)
        x[rng.random(n) < 0.1] = np.nan
        if n > 10:
            x[:3] = [np.inf, -np.inf, -0.0]
        cuts = np.sort(rng.integers(0, n + 1, size - 1)) if size > 1 else []
        bounds = [0, *cuts, n]
        if size == 3:
            bounds[2] = bounds[1]  # rank 1 empty
        part = x[bounds[rank]:bounds[rank + 1]]
        checks = [
            (clstats.mpi.median(part), clstats.median(x), np.nanmedian(x)),
            (clstats.mpi.median(part, even="upper"), None, None),
            (clstats.mpi.select_kth(part, n // 3), clstats.select_kth(x, n // 3), None)
            if np.count_nonzero(~np.isnan(x)) > n // 3 else (0, 0, None),
        ]
        nbytes, messages = clstats.mpi.last_traffic()  # a k-th value's: 3 or 6 histograms
        if not 0 < nbytes < 70000:
            bad += 1
            print(rank, "traffic", nbytes, messages, file=sys.stderr)
        q = np.array([0, 10, 50, 99.5, 100])
        got = clstats.mpi.percentile(part, q)
        want = np.nanpercentile(x.astype(np.float64), q)
        if not np.array_equal(got, want, equal_nan=True):
            bad += 1
            print(rank, "percentiles", n, got, want, file=sys.stderr)
        for g, w, peer in checks:
            if w is not None and not (np.array_equal(g, w, equal_nan=True)):
                bad += 1
                print(rank, "mismatch", n, g, w, file=sys.stderr)
            if peer is not None and not np.array_equal(np.float64(g), np.float64(peer),
                                                       equal_nan=True):
                bad += 1
                print(rank, "numpy differs", n, g, peer, file=sys.stderr)
    # every method the same bits; the cutting plane's traffic a few words a pass
    x = rng.normal(size=5000).astype(np.float32)
    x[rng.random(5000) < 0.05] = np.nan
    part = x[5000 * rank // size:5000 * (rank + 1) // size]
    for method in ("radix", "sample", "cutting_plane"):
        got = clstats.mpi.select_kth(part, 1234, method=method)
        if got != clstats.select_kth(x, 1234) or clstats.mpi.median(part, method=method) != \
                clstats.median(x):
            bad += 1
            print(rank, "method", method, got, file=sys.stderr)
    # column medians and the batched selection of a matrix whose rows the ranks share
    for rows, dtype in [(1, np.float32), (333, np.float32), (5000, np.float64)]:
        m = np.round(rng.normal(size=(rows, 5)) * 50).astype(dtype) / 8
        m[rng.random(m.shape) < 0.1] = np.nan
        m[:, 0] = np.nan
        if rows > 10:
            m[:3, 1] = [np.inf, -np.inf, -0.0]
        cuts = np.sort(rng.integers(0, rows + 1, size - 1)) if size > 1 else []
        b = [0, *cuts, rows]
        mine = m[b[rank]:b[rank + 1]]
        got = clstats.mpi.column_median(mine)
        if not (np.array_equal(got, np.nanmedian(m, axis=0), equal_nan=True)
                and got.dtype == np.nanmedian(m, axis=0).dtype):
            bad += 1
            print(rank, "column medians", rows, got, np.nanmedian(m, axis=0), file=sys.stderr)
        m[:, 0] = np.arange(rows) % 3  # every column's k in reach
        m[:, 2] = rng.normal(size=rows).astype(dtype)  # no infinity: the sums' bits show
        mine = m[b[rank]:b[rank + 1]]
        k = np.maximum(1, np.minimum(1 + (np.arange(5) * 97) % rows,
                                     np.sum(~np.isnan(m), axis=0)))
        kth, sums = clstats.mpi.column_smallest(mine, k)
        srt = np.sort(m, axis=0)  # NaNs last
        want = srt[k - 1, np.arange(5)]
        if not np.array_equal(kth, want, equal_nan=True):
            bad += 1
            print(rank, "column k-th", rows, kth, want, file=sys.stderr)
        # sums against numpy's, in double, to the precision of the part's dtype
        ref = np.array([np.sum(srt[:k[c], c].astype(np.float64)) for c in range(5)])
        tol = 1e-3 if dtype == np.float32 else 1e-9
        fin = np.isfinite(ref)
        if not (np.allclose(sums[fin], ref[fin], rtol=tol, atol=tol) and
                np.array_equal(sums[~fin], ref[~fin], equal_nan=True)):
            bad += 1
            print(rank, "column sums", rows, sums, ref, file=sys.stderr)
        # count messages of 2 + 256 * 5 32-bit words (the NaNs, a radix pass each: 4 for
        # float32, 8 for float64; the checks and the last), whatever the rows; the sums' state
        # handed on, 8 * 259 * 5 bytes, and broadcast, 16 * 5: rows of 5 columns would add
        # 20 or 40 bytes each
        nbytes, messages = clstats.mpi.last_traffic()
        passes = 4 if dtype == np.float32 else 8
        if not 0 < nbytes <= 40 + (passes + 6) * 4 * (2 + 256 * 5) + 8 * 259 * 5 + 80:
            bad += 1
            print(rank, "column traffic", nbytes, messages, file=sys.stderr)
    # the band filter against the one-device filter
    img = np.round(rng.normal(size=(29, 13)) * 3).astype(np.float32)
    img[rng.random(img.shape) < 0.05] = np.nan
    rows = [29 * r // size for r in range(size + 1)]
    med, mad = clstats.mpi.median_filter_rows(img[rows[rank]:rows[rank + 1]], 29, rows[rank], 5,
                                              mode="wrap")
    maps = clstats.filter_maps(img, 5, maps=("median", "mad"), mode="wrap")
    if not (np.array_equal(med, maps["median"][rows[rank]:rows[rank + 1]], equal_nan=True) and
            np.array_equal(mad, maps["mad"][rows[rank]:rows[rank + 1]], equal_nan=True)):
        bad += 1
        print(rank, "band filter differs", file=sys.stderr)
    # one rank's bad part: every rank raises
    try:
        clstats.mpi.select_kth(np.zeros(3, np.float32) if rank else np.zeros(3, np.int8).view("S3"), 0)
        bad += 1
        print(rank, "a bad part raised nothing", file=sys.stderr)
    except (ValueError, TypeError):
        pass
    total = comm.allreduce(bad)
    if rank == 0:
        print("failures", total)
    sys.exit(1 if total else 0)
''')


def _ready():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed"
    if not shutil.which("mpirun"):
        return "no mpirun"
    if not hasattr(clstats._ext, "mpi_select"):
        return "this build has no MPI module"
    return None


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_mpi_ranks(tmp_path, ranks):
    why = _ready()
    if why:
        pytest.skip(why)
    script = tmp_path / "mpi_script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(["mpirun", "-np", str(ranks), "--oversubscribe", sys.executable,
                        str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]


def test_import_loads_no_mpi():
    """`import clstats` (and clstats.mpi before its first call) loads no libmpi: the MPI
    module's calls live in the extension clstats._mpi, imported on the first one."""
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("no /proc/self/maps to read the loaded libraries from")
    code = ("import clstats, clstats.mpi\n"
            "print(any('libmpi' in line for line in open('/proc/self/maps')))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"
