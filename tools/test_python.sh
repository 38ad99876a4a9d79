#!/usr/bin/env bash
# test_python.sh - the Python package as a user gets it: a wheel built from the source tree
# (what `pip install .` does), installed into a fresh virtual environment that sees Debian's
# numpy, scipy, astropy and meson-python (so nothing is downloaded), checked to hold only the
# package, then its pytest suite on the default device, run from outside the source tree so
# that the installed package is the one tested.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$PWD/build/python-venv
wheels=$PWD/build/python-wheel
rm -rf "$venv" "$wheels"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" wheel --quiet --no-build-isolation --no-deps --no-index -w "$wheels" .
wheel=$(ls "$wheels"/clstats-*.whl)
outside=$("$venv/bin/python" -m zipfile -l "$wheel" | awk 'NR > 1 {print $1}' |
          grep -vE '^clstats/|^clstats-[^/]*\.dist-info/' || true)
if [ -n "$outside" ]; then
    echo "test_python: the wheel holds more than the package: $outside" >&2
    exit 1
fi
"$venv/bin/pip" install --quiet --no-deps --no-index "$wheel"
cd build
"$venv/bin/python" -m pytest -q -p no:cacheprovider ../python/tests
