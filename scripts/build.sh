#!/usr/bin/env bash
# Configures and builds lengen into build/ (or $LENGEN_BUILD_DIR) with all cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LENGEN_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${LENGEN_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "$@"
