#!/usr/bin/env bash
# run_cpu.sh - the filter on the CPU OpenCL device (PoCL) beside the scipy peers, in one session:
# ROUNDS rounds, each running ours and then the peers, so both see the same machine at nearly the
# same time; the summary takes the best of every measurement (shared machines are noisy).
# Writes the raw RESULT lines and the summary under $OUT. The scipy peers are slow, so the wide
# windows run them on smaller images (Mpixel/s does not depend on the size).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/clstats-bench-cpu}
ROUNDS=${ROUNDS:-2}
SIZES=${SIZES:-256,512,1024,2048,4096}
WIDTHS=${WIDTHS:-3,5,7,11,15,21,51,101}
PEER_WIDTHS=${PEER_WIDTHS:-3,5,7,11,15,21}
WIDE_PEER_WIDTHS=${WIDE_PEER_WIDTHS-51,101}
mkdir -p "$OUT"
: >"$OUT/results.txt"
for r in $(seq "$ROUNDS"); do
    echo "== round $r: clstats" >&2
    ./build/bench/bench_filter --device cpu --sizes "$SIZES" --widths "$WIDTHS" \
        --maps median,mad --repeat 3 --budget 10 | tee -a "$OUT/results.txt" | grep -v RESULT >&2
    echo "== round $r: scipy" >&2
    /usr/bin/python3 bench/peers_filter.py --no-gpu --widths "$PEER_WIDTHS" --repeat 3 \
        >>"$OUT/results.txt"
    if [ -n "$WIDE_PEER_WIDTHS" ]; then
        /usr/bin/python3 bench/peers_filter.py --no-gpu --widths "$WIDE_PEER_WIDTHS" --repeat 1 \
            --cpu-size 256 --mad-size 64 >>"$OUT/results.txt"
    fi
done
# Best kernel and end-to-end time of each (implementation, map, size, width); Mpixel/s of both.
/usr/bin/python3 - "$OUT/results.txt" <<'PY' | tee "$OUT/summary.txt"
import re, sys
best = {}
for line in open(sys.argv[1]):
    if not line.startswith("RESULT") or "op=build" in line:
        continue
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    impl = line.split("impl=", 1)[1].split(" op=", 1)[0]
    key = (impl, f["op"], int(f["n"]), int(f["w"]))
    k, t = float(f["kernel_ms"]), float(f["total_ms"])
    old = best.get(key, (k, t))
    best[key] = (min(old[0], k), min(old[1], t))
print(f"{'impl':42} {'map':6} {'size':>6} {'w':>4} {'kernel ms':>10} {'total ms':>10} "
      f"{'kernel Mpx/s':>12} {'total Mpx/s':>12}")
for (impl, op, n, w), (k, t) in sorted(best.items()):
    print(f"{impl:42} {op:6} {n:6} {w:4} {k:10.3f} {t:10.3f} {n * n / k / 1e3:12.3f} "
          f"{n * n / t / 1e3:12.3f}")
PY
