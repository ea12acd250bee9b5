#include "lengen/loss.h"

#include <torch/torch.h>

#include <algorithm>

#include "lengen/precision.h"

namespace lengen {

torch::Tensor target_cross_entropy(const torch::Tensor& target_logits, const torch::Tensor& targets) {
  // A sum over max(N, 1) rather than a mean, so that a batch without targets gives 0, not NaN.
  auto total = torch::nn::functional::cross_entropy(
      to_at_least_fp32(target_logits), targets,
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  return total / static_cast<double>(std::max<int64_t>(targets.size(0), 1));
}

}  // namespace lengen
