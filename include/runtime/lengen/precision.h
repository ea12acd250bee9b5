#pragma once
// The dtype that precision-sensitive maths runs in (RMSNorm, attention scores and weights,
// length scaling, logits and the loss): fp32 for half-precision tensors, else the tensor's
// own. A float model computes in fp32 and a double one (the reference and gradient tests)
// stays double end to end.
#include <torch/types.h>

namespace lengen {

inline torch::ScalarType at_least_fp32(torch::ScalarType dtype) {
  return (dtype == torch::kHalf || dtype == torch::kBFloat16) ? torch::kFloat : dtype;
}

inline torch::Tensor to_at_least_fp32(const torch::Tensor& x) { return x.to(at_least_fp32(x.scalar_type())); }

}  // namespace lengen
