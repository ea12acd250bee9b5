#pragma once
// `lengen bench normalizers`: forward+backward time of each normalizer on causal scores, as a
// ratio to LibTorch's softmax in the same run.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lengen {

struct NormalizerBenchOptions {
  std::vector<int64_t> lengths = {128, 512, 2048};
  int threads = 1;
  int repeats = 5;
  bool json = false;
  // Names of the normalizers to time (empty: all); torch::softmax, the baseline, always runs.
  std::vector<std::string> only;
};

// Times "torch::softmax", then every normalizer's variants, and prints a table (or JSON).
void run_normalizer_bench(const NormalizerBenchOptions& options);

// [batch*heads, n, n] fp32 scores ~ N(0, 1) under a causal mask, like q.k/sqrt(d_h) at
// initialisation, with enough rows (about 2M elements) that per-call overheads do not dominate.
torch::Tensor causal_scores(int64_t n);

}  // namespace lengen
