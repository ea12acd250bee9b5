#pragma once
// The dtype of precision-sensitive maths (norms, attention, logits, loss): fp32 for half-precision
// tensors, else the tensor's own (double stays double).
#include <torch/types.h>

namespace lengen {

inline torch::ScalarType at_least_fp32(torch::ScalarType dtype) {
  return (dtype == torch::kHalf || dtype == torch::kBFloat16) ? torch::kFloat : dtype;
}

inline torch::Tensor to_at_least_fp32(const torch::Tensor& x) { return x.to(at_least_fp32(x.scalar_type())); }

}  // namespace lengen
