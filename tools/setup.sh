#!/usr/bin/env bash
# setup.sh - installs what libclstats needs from Debian's packages (when missing) and builds it
# into build/. Safe to run again: it only installs what is absent and rebuilds what changed.
# --tests: also what only the tests need (tools/test.sh passes it).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build pkg-config gcc python3 ocl-icd-opencl-dev opencl-c-headers
          libclblast-dev pocl-opencl-icd clinfo libcfitsio-dev libpng-dev check libsubunit-dev
          libbz2-dev # cfitsio's static archive needs it (meson.build: programs without libcurl)
          python3-numpy python3-scipy python3-astropy
          python3-dev python3-mesonpy python3-pip python3-venv # the Python package (pip install .)
          clang libclang-rt-dev) # clang and its runtimes: tools/fuzz.sh (libFuzzer)
# Only for the tests: Oclgrind's simulated device (tools/test_oclgrind.sh), pytest for the
# Python package's suite (tools/test_python.sh), R's robustbase, the peer of the regression tests
# (tests/compare_robustbase.R; skipped without it), scikit-learn, k-means's peer
# (python/tests/test_kmeans.py), SEP and SExtractor, the mesh background's peers
# (python/tests/test_background.py, tests/compare_skymap.py, examples/detection/), matplotlib
# for the detection example's completeness plot (examples/detection/pipeline.py), and Open MPI
# with mpi4py: the library's optional MPI module is built where MPI is found, and its suites
# (tests/test_mpi.c, tests/compare_madfilter_mpi.py, python/tests/test_mpi.py) run under mpirun.
test_packages=(oclgrind python3-pytest r-cran-robustbase python3-sklearn python3-sep
               source-extractor python3-matplotlib libopenmpi-dev openmpi-bin python3-mpi4py)
if [ "${1:-}" = --tests ]; then packages+=("${test_packages[@]}"); fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi

# photutils, the peer of the mesh background's sigma clipping (python/tests/test_background.py,
# tests/compare_skymap.py; skipped without it), is not a Debian package: from PyPI, the version
# that Debian 12's astropy 5.2 and numpy 1.24 satisfy (photutils 1.10 asks numpy >= 1.22,
# astropy >= 5.1), into Debian's /usr/bin/python3 (the suites' interpreter), with --no-deps so
# that pip leaves Debian's numpy and astropy alone.
photutils_version=1.10.0
if [ "${1:-}" = --tests ] &&
       [ "$(/usr/bin/python3 -c 'import photutils; print(photutils.__version__)' 2>/dev/null)" != \
         "$photutils_version" ]; then
    echo "setup: installing photutils $photutils_version from PyPI" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" /usr/bin/python3 -m pip install --quiet --no-deps --break-system-packages \
        "photutils==$photutils_version"
fi

if [ ! -f build/build.ninja ]; then
    meson setup build --buildtype=release
fi
ninja -C build
