#!/usr/bin/env bash
# The demo: install, build, then train softmax and ASEntmax (both NAPE) on copy at lengths
# 8-16, compare them at 1x-16x the training length and draw one sample's attention maps at 1x
# and 8x for both. About 4 minutes on 2 cores after the build (the first build takes about 5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LENGEN_BUILD_DIR:-$root/build}
out=${LENGEN_DEMO_OUT:-$root/runs/demo}

"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target lengen-cli
lengen="$build_dir/lengen"

"$lengen" info
echo
echo "== Training softmax and ASEntmax on copy (lengths 8-16), two jobs in parallel =="
"$lengen" sweep "$root/configs/sweeps/demo.json" --out "$out" --jobs 2
echo
echo "== Results by evaluation length: exact match, token accuracy, nonzero attention keys per query =="
"$lengen" report "$out"
echo
echo "== Why: one sample's attention maps at 1x (16) and 8x (128), softmax beside ASEntmax =="
"$lengen" attention "$out/softmax" "$out/asentmax" --length 16 --out "$out/maps_1x" > /dev/null
"$lengen" attention "$out/softmax" "$out/asentmax" --length 128 --out "$out/maps_8x" > /dev/null
echo "Maps: $out/maps_1x/attention.md and $out/maps_8x/attention.md"
echo "Report with tables and plots: $out/report.md"
