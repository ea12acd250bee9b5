#include "lengen/loss.h"

#include <torch/torch.h>

namespace lengen {

torch::Tensor masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& target,
                                   const torch::Tensor& loss_mask) {
  auto per_token = torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}).to(torch::kFloat), target.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  auto mask = loss_mask.reshape({-1}).to(per_token.dtype());
  return (per_token * mask).sum() / mask.sum().clamp_min(1.0);
}

}  // namespace lengen
