// Google Benchmark: forward+backward of each normalizer on causal attention-shaped fp32 scores
// ([batch*heads, n, n], N(0, 1), future keys at -inf), single-threaded, beside torch::softmax.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "lengen/normalizer_bench.h"
#include "lengen/normalizer_registry.h"

namespace {

void forward_backward(benchmark::State& state, const std::function<torch::Tensor(const torch::Tensor&)>& f) {
  torch::manual_seed(0);
  const torch::Tensor scores = lengen::causal_scores(state.range(0));
  const torch::Tensor grad = torch::randn(scores.sizes());
  for (auto _ : state) {
    const torch::Tensor z = scores.detach().requires_grad_(true);
    f(z).backward(grad);
  }
  state.SetItemsProcessed(state.iterations() * scores.numel());
}

// A Google Benchmark name for a benchmark variant: "entmax alpha=1.5" -> "entmax_alpha1.5".
std::string benchmark_name(const std::string& label) {
  std::string name;
  for (char c : label) {
    if (c != '=') name += c == ' ' ? '_' : c;
  }
  return name;
}

void register_benchmark(const std::string& name,
                        const std::function<torch::Tensor(const torch::Tensor&)>& f) {
  benchmark::RegisterBenchmark(name.c_str(), forward_backward, f)
      ->Arg(128)
      ->Arg(512)
      ->Arg(2048)
      ->Unit(benchmark::kMillisecond);
}

void register_all() {
  register_benchmark("torch_softmax", [](const torch::Tensor& z) { return torch::softmax(z, -1); });
  for (const lengen::NormalizerVariant& variant : lengen::normalizer_variants(/*timed_only=*/true)) {
    register_benchmark(benchmark_name(variant.label), lengen::variant_normalizer(variant));
  }
}

}  // namespace

int main(int argc, char** argv) {
  torch::set_num_threads(1);
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
