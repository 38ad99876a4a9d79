#!/usr/bin/env bash
# run_gpu.sh - what we run on the GPU machine (see ../shared/device/README.md): the test suites
# on the NVIDIA device and on PoCL there, then the filter benchmark beside its peers.
# Expects build/ and .device-libs/ carried; writes logs under $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
clinfo -l 2>&1 | tee "$OUT/devices.txt"
for t in build/tests/test_*; do
    [ -x "$t" ] || continue
    for dev in gpu cpu; do
        echo "== $t on $dev"
        CLSTATS_DEVICE=$dev timeout 300 "$t" 2>&1 | tail -3
    done
done 2>&1 | tee "$OUT/tests.txt"
sizes=${SIZES:-1024,4096}
widths=${WIDTHS:-3,5,11,21,31}
timeout 400 ./build/bench/bench_filter --device gpu --sizes "$sizes" --widths "$widths" \
    --repeat 5 --budget 8 2>&1 | tee "$OUT/bench_gpu.txt"
timeout 300 python3 bench/peers_filter.py --sizes "$sizes" --widths "$widths" --no-cpu 2>&1 \
    | tee "$OUT/peers_gpu.txt"
