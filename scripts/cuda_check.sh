#!/usr/bin/env bash
# lengen's CUDA checks, for a GPU machine with PyTorch 2.x (CUDA) in python3: builds against that
# PyTorch, runs the GPU tests (normalizers on CUDA against the CPU kernels and the golden
# vectors) and the whole suite, times `lengen bench step` on the paper's copy model (softmax vs
# ASEntmax, bf16 and float32), and trains configs/paper/copy.json for 300 steps per method: alone
# and as one NCCL rank through `lengen launch`. Logs go to OUT_DIR (default build-cuda/logs).
#   scripts/cuda_check.sh [OUT_DIR]
#   LENGEN_EXTRA_PREFIX=DIR   dependencies packed by scripts/pack_header_deps.sh, where the
#                             machine has no CLI11 / nlohmann-json / spdlog / GoogleTest packages
#   LENGEN_CHECKS="..."       which checks run after the build (default: tests bench train suite)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LENGEN_CUDA_BUILD_DIR:-$root/build-cuda}
out=${1:-$build/logs}
mkdir -p "$out"
extra=${LENGEN_EXTRA_PREFIX:-}
jobs=$(nproc)
checks=" ${LENGEN_CHECKS:-tests bench train suite} "
wants() { [[ $checks == *" $1 "* ]]; }

torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_include=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
nccl_root=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
  c++ --version | head -1
  cmake --version | head -1
} >"$out/system.log" 2>&1

args=(-DCMAKE_BUILD_TYPE=Release -DLENGEN_BUILD_BENCH=OFF "-DCMAKE_PREFIX_PATH=$torch_prefix;$extra"
      -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON -DTORCH_CUDA_ARCH_LIST=9.0)
if [ -n "$extra" ]; then
  args+=("-DCMAKE_CXX_FLAGS=-I$extra/include")
  if [ ! -f "$torch_include/gloo/config.h" ] && [ -d "$extra/gloo/include" ]; then
    args+=("-DLENGEN_GLOO_INCLUDE=$extra/gloo/include")
  fi
fi
if [ -n "$nccl_root" ]; then
  args+=("-DLENGEN_NCCL_INCLUDE=$nccl_root/include" "-DLENGEN_NCCL_LIBRARY=$(ls "$nccl_root"/lib/libnccl.so* | head -1)")
fi
keep_going=()
if command -v ninja >/dev/null; then
  args+=(-G Ninja)
  keep_going=(-- -k 0)
fi
echo "== configure and build ($jobs jobs)"
start=$SECONDS
if ! { cmake -S "$root" -B "$build" "${args[@]}" && cmake --build "$build" -j "$jobs" "${keep_going[@]}"; } \
    >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -40
  echo "build failed after $((SECONDS - start)) s; see $out/build.log"
  exit 1
fi
echo "built in $((SECONDS - start)) s"
grep -E "lengen:|Found Torch|CUDA" "$out/build.log" | head

cli=$build/lengen
"$cli" info 2>&1 | tee "$out/info.log"
echo "lengen info: exit status ${PIPESTATUS[0]}"

if wants tests; then
echo "== normalizer tests on CUDA"
"$build/lengen_tests" --gtest_filter='*Cuda*' 2>&1 | tee "$out/cuda_tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |cuda|golden|Failure|error" | head -40
fi

if wants bench; then
echo "== bench step, the paper's copy model (d 256, 16 heads x 16, batch 128, length 64)"
for dtype in bfloat16 float32; do
  timeout 120 "$cli" bench step --device cuda --dtype "$dtype" --layers 2 --d-model 256 --heads 16 --d-head 16 \
    --batch 128 --length 64 --repeats 50 2>&1 | tee -a "$out/bench_step.log"
done
fi

if wants train; then
echo "== configs/paper/copy.json, 300 steps per method"
short=(--set train.steps=300 train.warmup=30 train.log_every=100 train.eval_every=300 train.checkpoint_every=300
       train.val_samples=256 eval.samples=128 "eval.lengths=[64,256,1024,2048]")
runs=$build/runs
rm -rf "$runs"
for method in "softmax none" "entmax15 asentmax"; do
  set -- $method
  timeout 180 "$cli" train "$root/configs/paper/copy.json" --out "$runs/$1_$2" "${short[@]}" \
    --set model.attention.normalizer=$1 model.attention.scaling=$2 2>&1 | tail -4
  timeout 180 "$cli" eval "$runs/$1_$2" 2>&1 | tail -8
done 2>&1 | tee "$out/train.log"
echo "== one NCCL rank through lengen launch"
timeout 180 "$cli" launch --nproc 1 -- train "$root/configs/paper/copy.json" --out "$runs/nccl" "${short[@]}" 2>&1 |
  tail -6 | tee "$out/launch.log"
for log in "$runs"/*/log.jsonl; do echo "$log"; grep -E '"tokens_per_s"' "$log" | tail -2; done | tee -a "$out/train.log"
fi

if wants suite; then
echo "== whole suite against this LibTorch (8 shards in parallel)"
for shard in 0 1 2 3 4 5 6 7; do
  (GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$shard timeout 150 stdbuf -oL -eL "$build/lengen_tests" \
     >"$out/suite_$shard.tmp" 2>&1; echo "exit status $?" >>"$out/suite_$shard.tmp") &
done
wait
for shard in 0 1 2 3 4 5 6 7; do
  log=$out/suite_$shard.tmp
  echo "shard $shard: $(grep -cE '^\[       OK \]' "$log") ok, $(grep -cE '^\[  FAILED  \] [A-Za-z]' "$log") failed lines," \
    "$(tail -1 "$log"); last test started: $(grep -E '^\[ RUN      \]' "$log" | tail -1)"
done
cat "$out"/suite_*.tmp >"$out/suite.log" && rm -f "$out"/suite_*.tmp
grep -E "^\[  FAILED  \] [A-Za-z]" "$out/suite.log" | sort -u | head -20
timeout 120 "$build/lengen_torch_free_tests" --gtest_brief=1 2>&1 | tail -2
fi
