#!/usr/bin/env bash
# test_python.sh - the Python package as a user gets it: `pip install .` into a fresh virtual
# environment that sees Debian's numpy, scipy, astropy and meson-python (so nothing is
# downloaded), then its pytest suite on the default device, run from outside the source tree so
# that the installed package is the one tested.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$PWD/build/python-venv
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-deps --no-index .
cd build
"$venv/bin/python" -m pytest -q -p no:cacheprovider ../python/tests
