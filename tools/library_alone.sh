#!/usr/bin/env bash
# library_alone.sh - the library builds and installs with the OpenCL loader and CLBlast only (its
# matrix library, docs/ARCHITECTURE.md): configured with
# the programs, tests, benchmarks and the optional MPI module off (so cfitsio, libpng, zlib,
# Check and MPI are never looked for), built, installed into a scratch directory, and its shared library checked to need none
# of them: OpenCL and CLBlast (with CLBlast's own C++ runtime) are all it may need. CI runs it
# (.ci/run). Where MPI is built, it is libclstats_mpi's alone (tests/installed_library.sh checks
# that libclstats still needs no libmpi then).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
meson setup "$dir/build" -Dprograms=disabled -Dtests=disabled -Dbench=false -Dpython=disabled -Dmpi=disabled \
    >/dev/null
ninja -C "$dir/build" >/dev/null
DESTDIR=$dir/root meson install -C "$dir/build" --quiet >/dev/null
lib=$(find "$dir/root" -name 'libclstats.so.*' -type f | head -1)
needed=$(objdump -p "$lib" | awk '/NEEDED/ {print $2}')
if echo "$needed" | grep -qiE 'cfitsio|png|libz|check|mpi'; then
    echo "library_alone: libclstats needs more than OpenCL and CLBlast: $needed" >&2
    exit 1
fi
if ! echo "$needed" | grep -q 'libclblast'; then
    echo "library_alone: libclstats does not link CLBlast: $needed" >&2
    exit 1
fi
echo "library alone: builds and installs needing only $(echo $needed | tr ' ' ',')"
