// Normalizer names to the functions behind them, and the benchmarks' variants of each. The names
// and what the config and the report say of them are normalizer_choices() (attention_choices.cpp):
// adding a normalizer adds one entry there and one here.
#include "lengen/registry.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "lengen/errors.h"
#include "lengen/normalizers.h"

namespace lengen {

namespace {

using torch::Tensor;

// A normalizer without parameters: the function of the scores alone.
template <Tensor (*Normalize)(const Tensor&, int64_t)>
NormalizerFn parameterless(const NormalizerSpec&) {
  return [](const Tensor& z, const Tensor&) { return Normalize(z, -1); };
}

NormalizerFn make_entmax(const NormalizerSpec& spec) {
  if (!(spec.alpha > 1.0) || !std::isfinite(spec.alpha)) {
    throw UserError("normalizer 'entmax' needs alpha > 1, got " + std::to_string(spec.alpha));
  }
  const double alpha = spec.alpha;
  return [alpha](const Tensor& z, const Tensor& learned) {
    return learned.defined() ? entmax(z, learned) : entmax(z, alpha);
  };
}

NormalizerFn make_topk(const NormalizerSpec& spec) {
  if (spec.topk < 1) throw UserError("normalizer 'topk' needs topk >= 1, got " + std::to_string(spec.topk));
  const int64_t k = spec.topk;
  return [k](const Tensor& z, const Tensor&) { return topk_softmax(z, k); };
}

NormalizerSpec spec_of(const std::string& name, double alpha = 1.5, int64_t topk = 32) {
  return {name, alpha, topk};
}

}  // namespace

const std::vector<NormalizerFactory>& normalizer_factories() {
  static const std::vector<NormalizerFactory> factories = {
      {"softmax", {}, parameterless<softmax>},
      {"sparsemax", {}, parameterless<sparsemax>},
      {"entmax15", {}, parameterless<entmax15>},
      {"entmax",
       // A tensor alpha (a learned one, say) takes the general solver, not entmax15's closed form.
       {{"entmax alpha=1.5", spec_of("entmax", 1.5)},
        {"entmax alpha=1.25", spec_of("entmax", 1.25)},
        {"entmax alpha=[1.5]", spec_of("entmax", 1.5), true}},
       make_entmax},
      {"topk", {{"topk k=32", spec_of("topk", 1.5, 32)}}, make_topk},
      {"adaptive_softmax", {}, parameterless<adaptive_softmax>},
      {"stickbreaking", {}, parameterless<stickbreaking>},
  };
  return factories;
}

std::vector<std::string> normalizer_factory_names() { return entry_names(normalizer_factories()); }

std::vector<NormalizerBenchCase> normalizer_bench_cases() {
  std::vector<NormalizerBenchCase> cases;
  for (const NormalizerFactory& factory : normalizer_factories()) {
    if (factory.bench_cases.empty()) cases.push_back({factory.name, spec_of(factory.name)});
    cases.insert(cases.end(), factory.bench_cases.begin(), factory.bench_cases.end());
  }
  return cases;
}

std::function<Tensor(const Tensor&)> bench_normalizer(const NormalizerBenchCase& bench_case) {
  const NormalizerFn normalize = make_normalizer(bench_case.spec);
  if (!bench_case.alpha_as_tensor) return [normalize](const Tensor& z) { return normalize(z, Tensor()); };
  const double alpha = bench_case.spec.alpha;
  return [normalize, alpha](const Tensor& z) { return normalize(z, torch::full({}, alpha)); };
}

NormalizerFn make_normalizer(const NormalizerSpec& spec) {
  return entry_named(normalizer_factories(), "normalizer", spec.name).make(spec);
}

}  // namespace lengen
