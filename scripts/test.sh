#!/usr/bin/env bash
# The test command: install what is missing, build, run every test. Non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LENGEN_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)" "$@"
