#!/usr/bin/env bash
# e2e_cpu.sh - madfilter end to end on the CPU OpenCL device (PoCL), start-up included, beside
# scipy's generic_filter with a numpy MAD (issue 20's 2-core target: MAD, 1024^2, w = 11). ROUNDS
# rounds, each timing madfilter RUNS times (a new output each time, the program cache warm) and
# then the peer on a 128^2 crop (its Mpixel/s does not depend on the size); prints the best and
# median wall times and the ratio of the peer's time for the whole image to ours.
# BASE=path/to/another/madfilter times that one too, interleaved with ours (a change's gain on a
# shared machine).
#   bench/e2e_cpu.sh [SIZE] [WIDTH]     (needs build/ and /usr/bin/python3 with scipy)
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-1024}
W=${2:-11}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 - "$N" "$TMP/in.fits" <<'PY'
import sys, numpy as np
n = int(sys.argv[1])
img = (100 + 5 * np.random.default_rng(1).standard_normal((n, n))).astype(">f4")
cards = ["SIMPLE  =                    T", "BITPIX  =                  -32", "NAXIS   =                    2",
         f"NAXIS1  = {n:20d}", f"NAXIS2  = {n:20d}", "END"]
head = "".join(c.ljust(80) for c in cards).ljust(2880 * ((len(cards) * 80 + 2879) // 2880))
with open(sys.argv[2], "wb") as f:
    f.write(head.encode()); f.write(img.tobytes()); f.write(b"\0" * (-img.nbytes % 2880))
PY
./build/apps/madfilter/madfilter "$TMP/in.fits" "$TMP/warm.fits" -w "$W" --maps mad -d cpu -q
: >"$TMP/ours.txt"
: >"$TMP/base.txt"
: >"$TMP/peer.txt"
wall() { # BINARY RESULT_FILE: one end-to-end run's wall seconds
    rm -f "$TMP/out.fits"
    /usr/bin/python3 -c 'import subprocess, sys, time
t = time.perf_counter(); subprocess.run(sys.argv[1:], check=True); print(time.perf_counter() - t)' \
        "$1" "$TMP/in.fits" "$TMP/out.fits" -w "$W" --maps mad -d cpu -q >>"$2"
}
[ -n "${BASE:-}" ] && "$BASE" "$TMP/in.fits" "$TMP/warm.fits" -w "$W" --maps mad -d cpu -q --overwrite
for r in $(seq "$ROUNDS"); do
    for i in $(seq "$RUNS"); do
        wall ./build/apps/madfilter/madfilter "$TMP/ours.txt"
        [ -n "${BASE:-}" ] && wall "$BASE" "$TMP/base.txt"
    done
    /usr/bin/python3 - "$W" >>"$TMP/peer.txt" <<'PY'
import sys, time, numpy as np, scipy.ndimage as ndi
w, n = int(sys.argv[1]), 128
small = (100 + 5 * np.random.default_rng(2).standard_normal((n, n))).astype(np.float32)
mad = lambda v: np.median(np.abs(v - np.median(v)))
t = time.perf_counter(); ndi.generic_filter(small, mad, size=w, mode="reflect")
print(n * n / (time.perf_counter() - t))
PY
done
/usr/bin/python3 - "$N" "$W" "$TMP/peer.txt" "$TMP/ours.txt" "$TMP/base.txt" <<'PY'
import sys, statistics
n, w = int(sys.argv[1]), int(sys.argv[2])
rate = max(float(x) for x in open(sys.argv[3]))  # the peer's best pixels/s
peer_s = n * n / rate
print(f"scipy generic_filter numpy MAD: {rate / 1e6:.4f} Mpixel/s -> {peer_s:.1f} s for {n}^2")
for name, path in (("madfilter", sys.argv[4]), ("base", sys.argv[5])):
    t = sorted(float(x) for x in open(path))
    if not t:
        continue
    print(f"{name} {n}^2 MAD w={w} on PoCL, end to end: best {t[0]:.3f} s, median "
          f"{statistics.median(t):.3f} s ({len(t)} runs); peer / it: {peer_s / t[0]:.0f}x (best), "
          f"{peer_s / statistics.median(t):.0f}x (median)")
PY
