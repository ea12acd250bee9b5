#pragma once
// Length scaling of the queries (docs/method.md, "Length scaling"): the scaled heads' queries
// are multiplied by a factor that grows with the log of the absolute position, so attention
// can stay sharp as sequences grow. The kinds are those of scaling_choices() (attention_choices.h).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "lengen/attention_choices.h"
#include "lengen/config.h"

namespace lengen {

class LengthScalingImpl : public torch::nn::Module {
 public:
  // Scales heads [first_scaled_head, heads).
  LengthScalingImpl(const AttentionConfig& config, int64_t d_model, int64_t heads, int64_t first_scaled_head);

  // Per-head factors for q, shape [B, heads, T, 1], or an undefined tensor for "none".
  // `x` is the normalised input of the attention block [B, T, d_model] (used by asentmax);
  // `positions` are absolute 0-based positions [B, T] (padding, at -1, counts as 0).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& positions);

  ScalingKind kind() const { return kind_; }
  int64_t first_scaled_head() const { return first_scaled_head_; }

 private:
  ScalingKind kind_;
  int64_t heads_;
  int64_t first_scaled_head_;
  double delta_;
  double gamma_range_;
  torch::Tensor ssmax_scale_;      // ssmax: s_h
  torch::Tensor learned_beta_;     // learned: beta_h
  torch::Tensor learned_gamma_;    // learned: gamma_h
  torch::nn::Linear beta_proj_{nullptr};   // asentmax: beta = softplus(W_b x + b_b)
  torch::nn::Linear gamma_proj_{nullptr};  // asentmax: gamma = r * tanh(W_g x + b_g)
};
TORCH_MODULE(LengthScaling);

}  // namespace lengen
