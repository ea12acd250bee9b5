#include <torch/torch.h>

#include "lengen/decoder.h"
#include "lengen/precision.h"

namespace lengen {

RMSNormImpl::RMSNormImpl(int64_t dim) { weight_ = register_parameter("weight", torch::zeros({dim})); }

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  // In fp32 or better whatever the input dtype: the mean of squares overflows or loses digits in bf16.
  auto xf = to_at_least_fp32(x);
  auto normed = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + 1e-6);
  return (normed * (1.0 + weight_)).to(x.dtype());
}

}  // namespace lengen
