#!/usr/bin/env bash
# test.sh - sets everything up (tools/setup.sh --tests) and runs the whole test suite on the first
# OpenCL device found (PoCL's CPU device where there is no GPU; CLSTATS_DEVICE picks another),
# and the Python package's pytest suite after a `pip install .` (tools/test_python.sh),
# then again on Intel's OpenCL CPU runtime, installed from PyPI, with madfilter's maps compared
# byte for byte between the two (tools/test_intel.sh), then every kernel family on tiny inputs
# under Oclgrind's checks for out-of-bounds accesses and data races (tools/test_oclgrind.sh).
# CLSTATS_TEST_INTEL=0 leaves the Intel stage out, for a machine that cannot reach PyPI; the
# closing lines then say so. Nothing else is ever left out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh --tests
rc=0
summary=()
stage() { # NAME COMMAND...: runs a stage, timed, and records its outcome
    local name=$1 start=$SECONDS status=0
    shift
    echo "== $name" >&2
    "$@" || status=$?
    [ $status -eq 0 ] || rc=1
    summary+=("$name: $([ $status -eq 0 ] && echo ok || echo FAILED) in $((SECONDS - start)) s")
}
# One line any reader understands, counted from meson's own log.
count() {
    /usr/bin/python3 - "$1" <<'PY'
import json, sys
results = [json.loads(line)["result"] for line in open(sys.argv[1]) if line.strip()]
passed = sum(r == "OK" for r in results)
skipped = sum(r == "SKIP" for r in results)
print(f"{passed} passed, {len(results) - passed - skipped} failed, {skipped} skipped")
PY
}
rm -f build/meson-logs/testlog.json build/meson-logs/testlog-intel.json
stage "suites on the default device" meson test -C build --print-errorlogs
stage "Python package: pip install . and its pytest suite" bash tools/test_python.sh
if [ "${CLSTATS_TEST_INTEL:-1}" = 0 ]; then
    summary+=("suites on Intel's runtime: LEFT OUT (CLSTATS_TEST_INTEL=0)")
else
    stage "suites on Intel's runtime, maps against PoCL's" bash tools/test_intel.sh
fi
stage "kernels under Oclgrind" bash tools/test_oclgrind.sh
echo
for line in "${summary[@]}"; do echo "$line"; done
[ -f build/meson-logs/testlog.json ] && echo "default device: $(count build/meson-logs/testlog.json)"
[ -f build/meson-logs/testlog-intel.json ] &&
    echo "Intel's runtime: $(count build/meson-logs/testlog-intel.json)"
exit $rc
