#!/usr/bin/env bash
# run_sample.sh - sets everything up (tools/setup.sh) and runs the main job on the bundled sample:
# MAD, median, sigma and SNR maps of samples/sky.fits with an 11 x 11 window, written to
# sky_maps.fits (replaced if it exists) on the first OpenCL device found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >/dev/null
./build/apps/madfilter/madfilter --list-devices
./build/apps/madfilter/madfilter samples/sky.fits sky_maps.fits -w 11 --maps mad,median,sigma,snr \
    --overwrite
