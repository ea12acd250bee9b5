#pragma once
// Token-mean cross entropy over the positions in the loss mask (SPEC §5).
#include <torch/types.h>

namespace lengen {

torch::Tensor masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& target,
                                   const torch::Tensor& loss_mask);

}  // namespace lengen
