#!/usr/bin/env bash
# fuzz.sh [SECONDS] - fuzzes madfilter's input path (fuzz/fuzz_input.c: FITS headers and data
# through cfitsio, PNG through libpng; no OpenCL) with clang's libFuzzer under AddressSanitizer
# and UndefinedBehaviorSanitizer, for SECONDS (default 60), from the seeds in fuzz/corpus/.
# New inputs collect in build-fuzz/corpus/; a crash is saved as build-fuzz/crashes/crash-*,
# the run stops and this exits non-zero. To keep a crash as a regression test once it is
# fixed, copy the file into fuzz/regressions/ (tests/meson.build replays that folder).
# A longer hunt: bash tools/fuzz.sh 3600
# FUZZ_RUNS=N [FUZZ_SEED=S]: exactly N inputs from libFuzzer seed S (default 1) instead of a time,
# into a fresh corpus, so that one commit fuzzes the same inputs on every machine: CI runs this
# way, and .ci/run on a clean clone predicts CI. FUZZ_OUT: the build folder (default build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=${FUZZ_OUT:-build-fuzz}
mkdir -p "$out/corpus" "$out/crashes"
# Same inputs also need the same comparisons to learn from: a fixed input file name, and no
# address randomisation where setarch may turn it off (stack addresses reach comparisons).
export FUZZ_INPUT=$out/input
same=()
if [[ -n ${FUZZ_RUNS:-} ]]; then
    limit=(-runs="$FUZZ_RUNS" -seed="${FUZZ_SEED:-1}")
    grown=$(mktemp -d)
    trap 'rm -rf "$grown"' EXIT
    setarch "$(uname -m)" -R true 2>/dev/null && same=(setarch "$(uname -m)" -R)
else
    limit=(-max_total_time="$seconds")
    grown=$out/corpus
fi
clang -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 -Iinclude -Iapps/common \
    $(pkg-config --cflags cfitsio libpng zlib) \
    fuzz/fuzz_input.c apps/common/{fits_input,fits_preflight,fits_probe,fits_reader}.c \
    apps/common/{fits_output,fits_errors,image,png_io,atomic_file,parallel}.c -pthread \
    $(pkg-config --libs cfitsio libpng zlib) -lm -o "$out/fuzz_input"
# allocator_may_return_null=1: an absurd allocation fails as it does outside ASan (malloc gives
# NULL) instead of aborting, so every caller's NULL check is exercised. cfitsio 4.2 sizes a
# table's column list from an uninitialised variable when a BINTABLE's NAXIS1 is malformed
# (heasarc/cfitsio#168, fuzz/regressions/cfitsio-bintable-bad-naxis1.fits): that must read as
# cfitsio's error, not a crash. quarantine_size_mb=8: madfilter's input path forks a child per
# FITS input (apps/common/fits_probe.c), and a fork costs as much as the memory ASan holds; the
# smaller quarantine (freed memory kept to catch a use after free) makes it about 5 times
# quicker. -max_len 65536: a few FITS blocks, or any PNG the seeds grow to.
asan=detect_leaks=1:allocator_may_return_null=1:quarantine_size_mb=8:malloc_context_size=8
ASAN_OPTIONS=$asan "${same[@]}" "$out/fuzz_input" "${limit[@]}" -max_len=65536 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/crashes/" -print_final_stats=1 \
    "$grown" fuzz/corpus fuzz/regressions
