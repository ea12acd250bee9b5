#pragma once
// A learned entmax alpha per head (Correia et al. 2019): alpha = 1 + sigmoid(a), clamped to
// [1.01, 2] so that it never drifts to the softmax limit, where its gradient is undefined.
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace lengen {

class LearnedAlphaImpl : public torch::nn::Module {
 public:
  static constexpr double kMinAlpha = 1.01;
  static constexpr double kMaxAlpha = 2.0;

  // Throws UserError unless 1 < initial_alpha <= 2; an initial 2 starts at 1.99 (sigmoid
  // never reaches 1).
  LearnedAlphaImpl(int64_t heads, double initial_alpha);

  // alpha per head, [heads].
  torch::Tensor forward() const;

 private:
  torch::Tensor logit_;
};
TORCH_MODULE(LearnedAlpha);

}  // namespace lengen
