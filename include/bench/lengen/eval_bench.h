#pragma once
// `lengen bench eval`: seconds per evaluated sample at long lengths, fused and dense kernels,
// against the FLOP floor at the sgemm rate measured in the same run.
#include <cstdint>
#include <string>
#include <vector>

namespace lengen {

struct EvalBenchOptions {
  std::vector<int64_t> lengths = {1024, 4096, 16384};
  int64_t samples = 2;
  int64_t repeats = 1;
  int threads = 1;
  int64_t dense_max_length = 16384;
  // A run folder whose last checkpoint is timed; empty: the shipped quick mqmtar config
  // (shipped_configs.h) with softmax and with ASEntmax, at random initialisation.
  std::string run_dir;
  bool json = false;
};

// Times every model at every length and prints a table (or JSON) on stdout.
void run_eval_bench(const EvalBenchOptions& options);

}  // namespace lengen
