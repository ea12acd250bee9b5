// Normalizer names to the records behind them: the functions, their fused row kernels and their
// variants. The list is normalizer_list.h, which the config layer reads as its choices; each
// record is its normalizer's NAME_normalizer(), in the normalizer's own .cpp.
#include "lengen/normalizer_registry.h"

#include <torch/torch.h>

#include <string>

#include "lengen/errors.h"
#include "lengen/named_entries.h"
#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "normalizer_record.h"

namespace lengen {

namespace {

using torch::Tensor;

// A learned alpha is kept in fp32, or in double for a double model.
torch::ScalarType at_least_float(torch::ScalarType dtype) {
  return dtype == torch::kDouble ? torch::kDouble : torch::kFloat;
}

// A record under its name in normalizer_list.h (the records leave it to the list).
NormalizerFactory named(const char* name, NormalizerFactory factory) {
  factory.name = name;
  return factory;
}

}  // namespace

const std::vector<NormalizerFactory>& normalizer_factories() {
  static const std::vector<NormalizerFactory> factories = {
#define LENGEN_NORMALIZER(name, help, parameters, label) named(#name, name##_normalizer()),
#include "lengen/normalizer_list.h"
#undef LENGEN_NORMALIZER
  };
  return factories;
}

std::vector<std::string> normalizer_factory_names() { return entry_names(normalizer_factories()); }

const NormalizerFactory& normalizer_factory(const std::string& name) {
  return entry_named(normalizer_factories(), "normalizer", name);
}

std::vector<NormalizerVariant> normalizer_variants(bool timed_only) {
  std::vector<NormalizerVariant> variants;
  for (const NormalizerFactory& factory : normalizer_factories()) {
    if (factory.variants.empty()) variants.push_back({factory.name, spec_of(factory.name)});
    for (const NormalizerVariant& variant : factory.variants) {
      if (variant.timed || !timed_only) variants.push_back(variant);
    }
  }
  return variants;
}

std::function<Tensor(const Tensor&)> variant_normalizer(const NormalizerVariant& variant) {
  const NormalizerFn normalize = make_normalizer(variant.spec);
  if (!variant.alpha_as_tensor) return [normalize](const Tensor& z) { return normalize(z, Tensor()); };
  const double alpha = variant.spec.alpha;
  return [normalize, alpha](const Tensor& z) {
    return normalize(z, torch::full({}, alpha, z.options().dtype(at_least_float(z.scalar_type()))));
  };
}

NormalizerFn make_normalizer(const NormalizerSpec& spec) { return normalizer_factory(spec.name).make(spec); }

std::optional<FusedRow> fused_row_kernel(const NormalizerSpec& spec, bool learned) {
  const NormalizerFactory& factory = normalizer_factory(spec.name);
  if (!factory.fused) return std::nullopt;
  return factory.fused(spec, learned);
}

}  // namespace lengen
