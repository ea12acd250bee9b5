#pragma once
// What a normalizer's .cpp needs to write its record (NormalizerFactory, normalizer_registry.h):
// the declaration of every NAME_normalizer() of normalizer_list.h, and the shapes most records
// share. Internal to the normalizers layer.
#include <torch/torch.h>

#include "lengen/normalizer_registry.h"

namespace lengen {

#define LENGEN_NORMALIZER(name, help, parameters, label) NormalizerFactory name##_normalizer();
#include "lengen/normalizer_list.h"
#undef LENGEN_NORMALIZER

// A normalizer without parameters: the function of the scores alone.
template <torch::Tensor (*Normalize)(const torch::Tensor&, int64_t)>
NormalizerFn parameterless(const NormalizerSpec&) {
  return [](const torch::Tensor& z, const torch::Tensor&) { return Normalize(z, -1); };
}

// A normalizer that one fused row kernel computes whatever its parameters.
template <FusedRowKernel Kernel>
std::optional<FusedRow> always(const NormalizerSpec&, bool) {
  return FusedRow{Kernel};
}

// The spec of a benchmark or test variant.
inline NormalizerSpec spec_of(const std::string& name, double alpha = 1.5, int64_t topk = 32) {
  return {name, alpha, topk};
}

// A variant the tests check and the benchmarks do not time.
inline NormalizerVariant checked_only(NormalizerVariant variant) {
  variant.timed = false;
  return variant;
}

}  // namespace lengen
