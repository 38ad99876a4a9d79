"""madfilter under mpirun (apps/madfilter/mpi_run.c) against madfilter alone: one image filtered
in bands over 3 ranks, a float64 cube with every map and a rectangle wrapping around, many
images shared among the ranks (-o DIR), each map the same bits; and a rank without a device
making every rank fail with no output left behind; "cpu:%local_rank%" naming the first CPU
device in a process of its own.

Usage: compare_madfilter_mpi.py MADFILTER MPIRUN (exits 77, skipped, without numpy or astropy)."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from astropy.io import fits
except ImportError:
    sys.exit(77)

madfilter, mpirun = sys.argv[1], sys.argv[2]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
env.setdefault("CLSTATS_DEVICE", "cpu")
failures = 0


def run(args, ranks=0, device=None, expect=0):
    cmd = ([mpirun, "-np", str(ranks), "--oversubscribe"] if ranks else []) + [madfilter] + args
    e = dict(env, CLSTATS_DEVICE=device) if device else env
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=300)
    if (p.returncode == 0) != (expect == 0):
        print(" ".join(cmd), "exited", p.returncode, p.stderr[-2000:])
        return False
    return True


def same(a, b, what):
    global failures
    with fits.open(a) as x, fits.open(b) as y:
        ok = len(x) == len(y) and all(
            (p.data is None and q.data is None) or
            (p.data.shape == q.data.shape and p.data.tobytes() == q.data.tobytes())
            for p, q in zip(x, y))
    if not ok:
        failures += 1
        print(f"{what}: {a} and {b} differ")


with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(25)
    img = (100 + 5 * rng.standard_normal((157, 61))).astype(">f4")
    img[rng.random(img.shape) < 0.03] = np.nan
    img[:20, :10] = 7  # ties
    fits.writeto(f"{d}/img.fits", img)
    fits.writeto(f"{d}/cube.fits", rng.standard_normal((2, 23, 19)))
    for i, shape in enumerate([(40, 30), (9, 70), (64, 64)]):
        fits.writeto(f"{d}/many{i}.fits", rng.standard_normal(shape).astype(">f4"))

    cases = [("img", ["-w", "15", "--maps", "mad,median,snr"]),
             ("cube", ["-w", "6x4", "--boundary", "wrap", "--max-memory", "20K",
                       "--maps", "mad,median,sigma,snr,residual"])]
    for name, args in cases:
        # alone, "cpu:%local_rank%" is "cpu:0", the first CPU device
        if run([f"{d}/{name}.fits", f"{d}/{name}_one.fits"] + args, device="cpu:%local_rank%") and \
                run([f"{d}/{name}.fits", f"{d}/{name}_mpi.fits"] + args, ranks=3):
            same(f"{d}/{name}_one.fits", f"{d}/{name}_mpi.fits", f"{name} in bands")
        else:
            failures += 1
    os.mkdir(f"{d}/one")
    os.mkdir(f"{d}/mpi")
    many = [f"{d}/many{i}.fits" for i in range(3)] + [f"{d}/img.fits"]
    if run(["-o", f"{d}/one/"] + many + ["-w", "5"]) and \
            run(["-o", f"{d}/mpi/"] + many + ["-w", "5"], ranks=3):
        for f in sorted(os.listdir(f"{d}/one")):
            same(f"{d}/one/{f}", f"{d}/mpi/{f}", "shared inputs")
        if sorted(os.listdir(f"{d}/one")) != sorted(os.listdir(f"{d}/mpi")):
            failures += 1
            print("shared inputs: not the same outputs")
    else:
        failures += 1
    # rank 1 names a device that does not exist ("cpu:1": the machine has one CPU device):
    # every rank fails, nothing is written
    if not run([f"{d}/img.fits", f"{d}/fail.fits", "-w", "5"], ranks=2,
               device="cpu:%local_rank%", expect=1):
        failures += 1
    if any(f.startswith("fail") for f in os.listdir(d)) or any("tmp" in f for f in os.listdir(d)):
        failures += 1
        print("a failed run left", os.listdir(d))

print(f"madfilter under mpirun: {failures} failures")
sys.exit(1 if failures else 0)
