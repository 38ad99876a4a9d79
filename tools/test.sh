#!/usr/bin/env bash
# test.sh - sets everything up (tools/setup.sh) and runs the whole test suite on the first
# OpenCL device found (PoCL's CPU device where there is no GPU; CLSTATS_DEVICE picks another).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
rc=0
meson test -C build --print-errorlogs || rc=$?
# One closing line any reader understands, counted from meson's own log.
log=build/meson-logs/testlog.json
if [ -f "$log" ]; then
    /usr/bin/python3 - "$log" <<'PY'
import json, sys
results = [json.loads(line)["result"] for line in open(sys.argv[1]) if line.strip()]
passed = sum(r == "OK" for r in results)
skipped = sum(r == "SKIP" for r in results)
print(f"{passed} passed, {len(results) - passed - skipped} failed, {skipped} skipped")
PY
fi
exit $rc
