#pragma once
// Attention normalizers: scores -> weights along `dim` (docs/method.md, "Normalizers"). Entries at -inf get
// exactly 0 and zero gradient; a fully masked row gives zeros. Half-precision input is
// computed in fp32 and cast back. Each has a closed-form backward.
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lengen {

torch::Tensor softmax(const torch::Tensor& z, int64_t dim = -1);
torch::Tensor sparsemax(const torch::Tensor& z, int64_t dim = -1);
torch::Tensor entmax15(const torch::Tensor& z, int64_t dim = -1);
// alpha > 1; alpha within 1e-3 of 1 is softmax.
torch::Tensor entmax(const torch::Tensor& z, double alpha, int64_t dim = -1);
// alpha broadcastable to z with size 1 along dim (e.g. [1, H, 1, 1] per head); may require
// grad (docs/method.md, "Learned alpha").
torch::Tensor entmax(const torch::Tensor& z, const torch::Tensor& alpha, int64_t dim = -1);
torch::Tensor topk_softmax(const torch::Tensor& z, int64_t k, int64_t dim = -1);
torch::Tensor adaptive_softmax(const torch::Tensor& z, int64_t dim = -1);
torch::Tensor stickbreaking(const torch::Tensor& z, int64_t dim = -1);

// Forces the composed-ATen path on CPU too (tests compare it with the fused kernels).
void set_force_aten_normalizers(bool force);
bool force_aten_normalizers();

// A normalizer picked by name, applied along the last dim. `alpha` is used by "entmax"
// (a double or a broadcastable tensor, e.g. a learned per-head alpha).
struct NormalizerSpec {
  std::string name = "softmax";  // one of normalizer_factory_names()
  double alpha = 1.5;            // entmax only
  int64_t topk = 32;             // topk only
};

using NormalizerFn = std::function<torch::Tensor(const torch::Tensor& scores, const torch::Tensor& alpha)>;

// One timed variant of a normalizer in the benchmarks: its table name and its spec; with
// `alpha_as_tensor` the spec's alpha is passed as a tensor, as a learned alpha is.
struct NormalizerBenchCase {
  std::string label;
  NormalizerSpec spec;
  bool alpha_as_tensor = false;
};

// The function behind one normalizer name: its factory and the benchmarks' variants. The names,
// their order and what the config and the report say of them are normalizer_choices()
// (attention_choices.h, the config layer); a test checks that both list the same names.
struct NormalizerFactory {
  std::string name;  // model.attention.normalizer
  std::vector<NormalizerBenchCase> bench_cases;
  // Builds it from the spec; UserError naming the normalizer when a parameter is out of range.
  std::function<NormalizerFn(const NormalizerSpec&)> make;
};

// Every normalizer's factory, in the order of normalizer_choices().
const std::vector<NormalizerFactory>& normalizer_factories();
std::vector<std::string> normalizer_factory_names();

// Every normalizer's benchmark variants, in the factories' order; an entry that lists none is timed
// once, under its name, with the default spec.
std::vector<NormalizerBenchCase> normalizer_bench_cases();
// The variant's normalizer as a function of the scores alone.
std::function<torch::Tensor(const torch::Tensor&)> bench_normalizer(const NormalizerBenchCase& bench_case);

// Throws UserError naming the normalizer when it is unknown (with the closest name) or its
// parameters are invalid.
NormalizerFn make_normalizer(const NormalizerSpec& spec);

}  // namespace lengen
