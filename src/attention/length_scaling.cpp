#include "lengen/length_scaling.h"

#include <cmath>

#include "lengen/precision.h"

namespace lengen {

LengthScalingImpl::LengthScalingImpl(const AttentionConfig& config, int64_t d_model, int64_t heads,
                                     int64_t first_scaled_head)
    : kind_(scaling_kind(config.scaling)),
      heads_(heads),
      first_scaled_head_(first_scaled_head),
      delta_(config.scaling_delta),
      gamma_range_(config.scaling_gamma_range) {
  const int64_t scaled = heads - first_scaled_head;
  torch::NoGradGuard no_grad;
  // One case per kind of scaling_choices(): the compiler names a kind without one (-Wswitch).
  switch (kind_) {
    case ScalingKind::kNone:
      break;
    case ScalingKind::kSsmax:
      ssmax_scale_ = register_parameter("scale", torch::randn({scaled}) * 0.01 + 1.0);
      break;
    case ScalingKind::kLearned:
      learned_beta_ = register_parameter("beta", torch::rand({scaled}) * 0.9 + 0.1);
      learned_gamma_ = register_parameter("gamma", torch::randn({scaled}) * 0.1);
      break;
    case ScalingKind::kAsentmax: {
      auto options = torch::nn::LinearOptions(d_model, scaled).bias(config.scaling_bias);
      // Two projections rather than one split in two: chunk() of a fused output makes the
      // backward markedly slower (it concatenates the gradients).
      beta_proj_ = register_module("beta_proj", torch::nn::Linear(options));
      gamma_proj_ = register_module("gamma_proj", torch::nn::Linear(options));
      for (auto& proj : {beta_proj_, gamma_proj_}) {
        proj->weight.normal_(0.0, config.scaling_init_std);
        if (config.scaling_bias) proj->bias.zero_();
      }
      break;
    }
  }
}

torch::Tensor LengthScalingImpl::forward(const torch::Tensor& x, const torch::Tensor& positions) {
  if (kind_ == ScalingKind::kNone) return {};
  // l_i = log(i + 2): the first position gets log 2, never 0. Padding (position -1) is
  // treated as position 0: its queries are masked anyway, and log 1 = 0 would make
  // l^gamma infinite (gamma < 0) and its gradient NaN. [B, 1, T, 1]
  const auto dtype = at_least_fp32(x.scalar_type());
  auto log_length = torch::log(positions.clamp_min(0).to(dtype) + 2.0).unsqueeze(1).unsqueeze(-1);
  torch::Tensor factor;  // [B, scaled heads, T, 1]
  if (kind_ == ScalingKind::kSsmax) {
    factor = ssmax_scale_.view({1, -1, 1, 1}) * log_length;
  } else if (kind_ == ScalingKind::kLearned) {
    factor = delta_ + learned_beta_.view({1, -1, 1, 1}) * log_length.pow(learned_gamma_.view({1, -1, 1, 1}));
  } else {
    auto xf = to_at_least_fp32(x);
    auto beta = torch::softplus(beta_proj_(xf)).transpose(1, 2).unsqueeze(-1);
    auto gamma = (gamma_range_ * torch::tanh(gamma_proj_(xf))).transpose(1, 2).unsqueeze(-1);
    factor = delta_ + beta * log_length.pow(gamma);
  }
  if (first_scaled_head_ == 0) return factor;
  auto unscaled = torch::ones({factor.size(0), first_scaled_head_, factor.size(2), 1}, factor.options());
  return torch::cat({unscaled, factor}, 1);
}

}  // namespace lengen
