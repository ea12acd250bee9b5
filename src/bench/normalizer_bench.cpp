// Each normalizer's forward+backward against torch::softmax (normalizer_bench.h).
#include "lengen/normalizer_bench.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_output.h"
#include "lengen/compute_threads.h"
#include "lengen/memory_estimate.h"
#include "lengen/normalizer_registry.h"

namespace lengen {
namespace {

// Untimed passes before each measurement.
constexpr int kWarmups = 3;
// Untimed baseline passes per length before anything is measured: the first passes of the
// process grow the heap and fault its pages in, which would make the first entry ~10x too slow.
constexpr int kHeapWarmups = 10;
// Elements per benchmark input: enough rows that per-call overheads do not dominate.
constexpr int64_t kTargetElements = int64_t{1} << 21;

struct NormalizerContender {
  std::string name;
  std::function<torch::Tensor(const torch::Tensor&)> normalize;
};

// LibTorch's softmax, the baseline, then every normalizer's benchmark variants.
std::vector<NormalizerContender> all_contenders() {
  std::vector<NormalizerContender> all = {
      {"torch::softmax", [](const torch::Tensor& z) { return torch::softmax(z, -1); }}};
  for (const NormalizerVariant& variant : normalizer_variants(/*timed_only=*/true)) {
    all.push_back({variant.label, variant_normalizer(variant)});
  }
  return all;
}

// One forward+backward pass of `contender`, in seconds.
double pass_seconds(const NormalizerContender& contender, const torch::Tensor& scores,
                    const torch::Tensor& grad, const NormalizerBenchOptions& options) {
  const torch::Tensor z = scores.detach().requires_grad_(true);
  const double start = bench_now_seconds(options.threads == 1);
  contender.normalize(z).backward(grad);
  return bench_now_seconds(options.threads == 1) - start;
}

// Fastest of `repeats` forward+backward passes of each contender in seconds, round-robin so a
// slow spell of a shared machine hits every contender alike.
std::vector<double> fastest_seconds(const std::vector<NormalizerContender>& chosen,
                                    const torch::Tensor& scores, const torch::Tensor& grad,
                                    const NormalizerBenchOptions& options) {
  std::vector<double> best(chosen.size(), std::numeric_limits<double>::infinity());
  for (int i = 0; i < kWarmups + options.repeats; ++i) {
    for (size_t c = 0; c < chosen.size(); ++c) {
      const double elapsed = pass_seconds(chosen[c], scores, grad, options);
      if (i >= kWarmups) best[c] = std::min(best[c], elapsed);
    }
  }
  return best;
}

}  // namespace

torch::Tensor causal_scores(int64_t n) {
  const int64_t batch_heads = std::max<int64_t>(1, kTargetElements / (n * n));
  const torch::Tensor future = torch::ones({n, n}, torch::kBool).triu(1);
  return torch::randn({batch_heads, n, n}).masked_fill(future, -std::numeric_limits<float>::infinity());
}

void run_normalizer_bench(const NormalizerBenchOptions& options) {
  const std::vector<NormalizerContender> chosen =
      baseline_and_only(all_contenders(), options.only, "bench normalizers --only", "normalizer");
  // Scores, their gradient, the weights, the backward's output and a normalizer's working copies
  // (a sort's, say): about 8 floats per score of the longest length, checked before any is made.
  for (int64_t n : options.lengths) {
    const double per_matrix = static_cast<double>(n) * static_cast<double>(n);
    MemoryEstimate needed;
    needed.attention = std::max(per_matrix, static_cast<double>(kTargetElements)) * 8.0 * 4.0;
    check_fits_in_memory(needed, "bench normalizers --lengths " + std::to_string(n),
                         "the scores of one length and their passes", "lower --lengths");
  }
  set_compute_threads(options.threads);
  torch::manual_seed(0);
  BenchTable table(
      options.json,
      fmt::format("forward+backward, fp32, causal mask, {} thread(s), best of {} round-robin passes, {}; "
                  "ratio = time / torch::softmax time",
                  options.threads, options.repeats, options.threads == 1 ? "thread CPU time" : "wall time"),
      {{"n", -6, "n"}, {"normalizer", -20, "normalizer"}, {"ms", 10, "ms", 3}, {"ratio", 8, "ratio", 2}});
  const NormalizerContender& baseline_contender = chosen.front();
  for (int64_t n : options.lengths) {
    const torch::Tensor scores = causal_scores(n);
    for (int i = 0; i < kHeapWarmups; ++i) {
      baseline_contender.normalize(scores.detach().requires_grad_(true)).backward(torch::ones_like(scores));
    }
  }
  for (int64_t n : options.lengths) {
    const torch::Tensor scores = causal_scores(n);
    const torch::Tensor grad = torch::randn(scores.sizes());
    const std::vector<double> fastest = fastest_seconds(chosen, scores, grad, options);
    for (size_t c = 0; c < chosen.size(); ++c) {
      table.add({{"n", n},
                 {"rows", scores.numel() / n},
                 {"normalizer", chosen[c].name},
                 {"ms", fastest[c] * 1e3},
                 {"ratio", fastest[c] / fastest.front()},
                 {"threads", options.threads}});
    }
  }
  table.finish();
}

}  // namespace lengen
