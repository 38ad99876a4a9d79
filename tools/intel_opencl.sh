#!/usr/bin/env bash
# intel_opencl.sh - installs Intel's OpenCL runtime for CPUs (a second CPU implementation beside
# PoCL, with its own compiler: the tests run on both) from PyPI into .intel-opencl/ (a Python
# virtual environment; ignored by git, about 0.9 GB), writes an ICD file naming its
# libintelocl.so, and prints the line that makes the OpenCL loader use it:
#
#     eval "$(bash tools/intel_opencl.sh)"     # sets OCL_ICD_VENDORS for this shell
#     CLSTATS_DEVICE=intel meson test -C build
#
# Needs python3-venv (tools/setup.sh --tests installs it) and PyPI; if PyPI cannot be reached
# this fails, saying so, rather than leaving the Intel tests out. Runs again in a second once
# installed. The versions are pinned, so that every machine tests the same compiler.
set -euo pipefail
cd "$(dirname "$0")/.."

# intel-opencl-rt names only tbb and the licence package; its libintelocl.so also loads
# libimf, libsvml, libirng and libintlc, which intel-cmplr-lib-rt holds.
packages=(intel-opencl-rt==2026.2.0 intel-cmplr-lib-rt==2026.2.0 intel-cmplr-lic-rt==2026.2.0
          tbb==2023.2.0 tcmlib==1.6.0)
dir=$PWD/.intel-opencl
stamp="$dir/installed"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${packages[*]}" ]; then
    rm -rf "$dir"
    echo "intel_opencl: installing ${packages[*]} from PyPI into $dir" >&2
    /usr/bin/python3 -m venv "$dir/venv"
    if ! "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile \
        --retries 3 --timeout 60 "${packages[@]}" >&2; then
        echo "intel_opencl: could not install Intel's OpenCL runtime from PyPI (is it reachable?)" >&2
        rm -rf "$dir"
        exit 1
    fi
    mkdir -p "$dir/vendors"
    echo "$dir/venv/lib/libintelocl.so" >"$dir/vendors/intel-cpu.icd"
    echo "${packages[*]}" >"$stamp"
fi
# A directory in OCL_ICD_VENDORS replaces /etc/OpenCL/vendors: Intel's runtime alone.
echo "export OCL_ICD_VENDORS=$dir/vendors"
