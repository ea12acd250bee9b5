// Normalizer names to the functions behind them, their fused row kernels and their variants. The
// names and what the config and the report say of them are normalizer_choices()
// (attention_choices.cpp): adding a normalizer adds one entry there and one here.
#include "lengen/normalizer_registry.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "lengen/errors.h"
#include "lengen/named_entries.h"
#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"

namespace lengen {

namespace {

using torch::Tensor;

// A normalizer without parameters: the function of the scores alone.
template <Tensor (*Normalize)(const Tensor&, int64_t)>
NormalizerFn parameterless(const NormalizerSpec&) {
  return [](const Tensor& z, const Tensor&) { return Normalize(z, -1); };
}

// A normalizer that one fused row kernel computes whatever its parameters.
template <FusedRowKernel Kernel>
std::optional<FusedRow> always(const NormalizerSpec&, bool) {
  return FusedRow{Kernel};
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

// As entmax dispatches itself: alpha near 1 is softmax, 1.5 and 2 have their closed forms, a
// learned alpha always takes the general solver.
std::optional<FusedRow> fused_entmax(const NormalizerSpec& spec, bool learned) {
  if (learned) return FusedRow{FusedRowKernel::kEntmax};
  if (std::abs(spec.alpha - 1) < detail::kSoftmaxAlphaTolerance) return FusedRow{FusedRowKernel::kSoftmax};
  if (spec.alpha == 1.5) return FusedRow{FusedRowKernel::kEntmax15};
  if (spec.alpha == 2.0) return FusedRow{FusedRowKernel::kSparsemax};
  return FusedRow{FusedRowKernel::kEntmax, spec.alpha};
}

NormalizerFn make_topk(const NormalizerSpec& spec) {
  if (spec.topk < 1) throw UserError("normalizer 'topk' needs topk >= 1, got " + std::to_string(spec.topk));
  const int64_t k = spec.topk;
  return [k](const Tensor& z, const Tensor&) { return topk_softmax(z, k); };
}

NormalizerSpec spec_of(const std::string& name, double alpha = 1.5, int64_t topk = 32) {
  return {name, alpha, topk};
}

// A learned alpha is kept in fp32, or in double for a double model.
torch::ScalarType at_least_float(torch::ScalarType dtype) {
  return dtype == torch::kDouble ? torch::kDouble : torch::kFloat;
}

NormalizerVariant checked_only(NormalizerVariant variant) {
  variant.timed = false;
  return variant;
}

}  // namespace

const std::vector<NormalizerFactory>& normalizer_factories() {
  static const std::vector<NormalizerFactory> factories = {
      {"softmax", parameterless<softmax>, always<FusedRowKernel::kSoftmax>, {}, {}},
      {"sparsemax", parameterless<sparsemax>, always<FusedRowKernel::kSparsemax>, {}, {}},
      {"entmax15", parameterless<entmax15>, always<FusedRowKernel::kEntmax15>, {}, {}},
      {"entmax",
       make_entmax,
       fused_entmax,
       // A tensor alpha (a learned one, say) takes the general solver, not entmax15's closed form.
       {{"entmax alpha=1.5", spec_of("entmax", 1.5)},
        {"entmax alpha=1.25", spec_of("entmax", 1.25)},
        {"entmax alpha=[1.5]", spec_of("entmax", 1.5), true},
        checked_only({"entmax alpha=2", spec_of("entmax", 2.0)}),
        checked_only({"entmax alpha=3", spec_of("entmax", 3.0)}),
        checked_only({"entmax alpha=[1.7]", spec_of("entmax", 1.7), true})},
       {}},
      {"topk",
       make_topk,
       {},
       {{"topk k=32", spec_of("topk", 1.5, 32)}, checked_only({"topk k=4", spec_of("topk", 1.5, 4)})},
       {/*rows_sum_to_one=*/true, /*shift_invariant=*/true, /*picks_among_ties=*/true}},
      {"adaptive_softmax", parameterless<adaptive_softmax>, {}, {}, {}},
      {"stickbreaking",
       parameterless<stickbreaking>,
       {},
       {},
       {/*rows_sum_to_one=*/false, /*shift_invariant=*/false, /*picks_among_ties=*/false,
        /*order_matters=*/true}},
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
