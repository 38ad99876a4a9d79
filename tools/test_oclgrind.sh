#!/usr/bin/env bash
# test_oclgrind.sh - every kernel family on tiny inputs (tests/test_tiny_kernels.c, judged by the
# plain references) on Oclgrind's simulated device, with its checks for out-of-bounds accesses,
# data races between work-items and misuse of the OpenCL API: any report fails, and the
# report is printed. Expects build/ (tools/setup.sh --tests installs oclgrind).
# CK_RUN_CASE=filter|footprints|select|columns|... runs one family (test_tiny_kernels.c names them).
set -euo pipefail
cd "$(dirname "$0")/.."
log=build/meson-logs/oclgrind.log
mkdir -p "$(dirname "$log")"
rm -f "$log"
# --build-options -cl-opt-disable: Oclgrind 21.10 simulates LLVM's zext of a vector of i1
#   wrongly (true becomes 255, not 1), which the optimiser makes of a vector compare's -1
#   subtracted (the rank design's counts in median_filter_rank.cl): the counts come out wrong
#   and the reads they steer run off the bitset, in the simulator only. Unoptimised kernels
#   keep the sign extension, which it simulates right.
# --local-mem-size 49152: the 48 KiB NVIDIA GPUs report, which the GPU settings (Oclgrind's
#   device says it is a GPU) are made for; float64 selection needs more than Oclgrind's 32.
# --uninitialized is left off: in 21.10 it stops on LLVM's freeze instruction.
# The disk cache is off, so every kernel is built, and checked, by the simulator.
status=0
CLSTATS_DEVICE=oclgrind CLSTATS_CACHE_DIR=off \
    oclgrind --data-races --check-api --build-options -cl-opt-disable --local-mem-size 49152 \
    --log "$log" build/tests/test_tiny_kernels || status=$?
if [ -s "$log" ]; then
    cat "$log"
    echo "test_oclgrind: Oclgrind reported the errors above ($log)" >&2
    exit 1
fi
if [ $status -ne 0 ]; then
    echo "test_oclgrind: the tiny kernels' suite failed on Oclgrind's device" >&2
    exit $status
fi
echo "test_oclgrind: no out-of-bounds access, data race or API error reported"
