#!/usr/bin/env bash
# test_intel.sh - the whole test suite again on Intel's OpenCL CPU runtime, a second CPU
# implementation with its own compiler (installed from PyPI by tools/intel_opencl.sh), then
# madfilter's maps from it and from PoCL compared byte for byte (tools/same_maps.py). Expects
# build/ (tools/setup.sh). Arguments go to meson test (e.g. a suite name).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! vendors_line=$(bash tools/intel_opencl.sh); then
    echo "test_intel: no Intel runtime, so this stage fails; where PyPI cannot be reached," \
        "CLSTATS_TEST_INTEL=0 bash tools/test.sh runs the rest (CI never leaves it out)" >&2
    exit 1
fi
eval "$vendors_line"
# Only Intel's ICD is listed now; the name says so again, in case a runtime lists more.
export CLSTATS_DEVICE=intel
status=0
meson test -C build --logbase testlog-intel --print-errorlogs "$@" || status=$?
if [ $# -eq 0 ]; then
    /usr/bin/python3 tools/same_maps.py build/apps/madfilter/madfilter "$OCL_ICD_VENDORS" || status=1
fi
exit $status
