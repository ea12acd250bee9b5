#pragma once
// Token-mean cross entropy over the target positions (docs/method.md, "Sequences and loss").
#include <torch/types.h>

namespace lengen {

// target_logits [N, vocab]: the logits at the N target positions only
// (DecoderImpl::forward_selected with the loss mask); targets [N]. Computed in fp32 or better.
torch::Tensor target_cross_entropy(const torch::Tensor& target_logits, const torch::Tensor& targets);

}  // namespace lengen
