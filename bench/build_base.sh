#!/usr/bin/env bash
# build_base.sh COMMIT [DIR] - builds bench_select and bench_filter (and the library they load)
# of an older commit into DIR (default build-base/), for run_gpu.sh's select_ab and filter_ab
# stages to time beside the current build/ on the same GPU in the same run. Carry DIR with build/ and .device-libs/;
# each build loads its own libclstats through its relative rpath.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:?usage: bench/build_base.sh COMMIT [DIR]}
dir=${2:-build-base}
src=$(mktemp -d)
trap 'git worktree remove --force "$src" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$src" "$commit" >/dev/null
meson setup "$src/build" "$src" --buildtype=release >/dev/null
ninja -C "$src/build" bench/bench_select bench/bench_filter >/dev/null
rm -rf "$dir"
cp -a "$src/build" "$dir"
echo "$dir: bench_select and bench_filter of $(git rev-parse --short "$commit")"
