#include "lengen/positions.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lengen/attention_choices.h"
#include "lengen/errors.h"

namespace lengen {

std::vector<double> alibi_slopes(int64_t count, AlibiSlopes kind) {
  std::vector<double> slopes;
  for (int64_t h = 0; h < count; ++h) {
    switch (kind) {
      case AlibiSlopes::kLinear:
        slopes.push_back(1.0 / static_cast<double>(h + 1));
        break;
      case AlibiSlopes::kExp:
        slopes.push_back(std::ldexp(1.0, -static_cast<int>(h)));
        break;
    }
  }
  return slopes;
}

PositionEncoding::PositionEncoding(const AttentionConfig& config, int64_t heads, int64_t d_head)
    : kind_(position_kind(config.positions)),
      d_head_(d_head),
      rope_base_(config.rope_base),
      slopes_(heads, 0.0) {
  // One case per kind of position_choices(): the compiler names a kind without one (-Wswitch).
  switch (kind_) {
    case PositionKind::kNope:
      break;
    case PositionKind::kRope:
      if (d_head % 2 != 0) throw UserError("rope needs an even model.d_head, got " + std::to_string(d_head));
      break;
    case PositionKind::kAlibi:
      slopes_ = alibi_slopes(heads, config.alibi_slopes);
      break;
    case PositionKind::kNape: {
      const int64_t alibi_heads = config.alibi_heads < 0 ? heads / 2 : config.alibi_heads;
      // attention_problem() (config_io.h) refuses this for a config; here it guards the copy below.
      TORCH_CHECK(alibi_heads <= heads, "nape: ", alibi_heads, " ALiBi heads of ", heads);
      auto alibi = alibi_slopes(alibi_heads, config.alibi_slopes);
      std::copy(alibi.begin(), alibi.end(), slopes_.begin());
      first_scaled_head_ = alibi_heads;
      break;
    }
    case PositionKind::kWindow:
      window_ = config.window;
      break;
  }
  slope_tensor_ = torch::tensor(slopes_, torch::kDouble);
}

namespace {

// Whether the kind rotates q and k: one case per kind, so that the compiler names a new kind
// here too (-Wswitch).
bool rotates(PositionKind kind) {
  switch (kind) {
    case PositionKind::kRope:
      return true;
    case PositionKind::kNope:
    case PositionKind::kAlibi:
    case PositionKind::kNape:
    case PositionKind::kWindow:
      return false;
  }
  return false;
}

}  // namespace

torch::Tensor PositionEncoding::rotate(const torch::Tensor& x, const torch::Tensor& positions) const {
  if (!rotates(kind_)) return x;
  const int64_t half = d_head_ / 2;
  // Angles in fp32 from integer positions (double when x is double, so gradient checks stay exact):
  // exact enough for every position a model will see, whatever the activation dtype.
  const auto angle_dtype = x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  auto inv_freq =
      torch::pow(rope_base_, -torch::arange(0, half, x.options().dtype(angle_dtype)) * 2.0 / d_head_);
  auto angles = positions.to(angle_dtype).unsqueeze(-1) * inv_freq;  // [B, T, half]
  auto cos = torch::cos(angles).unsqueeze(1).to(x.dtype());          // [B, 1, T, half]
  auto sin = torch::sin(angles).unsqueeze(1).to(x.dtype());
  auto x1 = x.narrow(-1, 0, half);
  auto x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

torch::Tensor PositionEncoding::bias(const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                                     torch::ScalarType dtype) const {
  // One case per kind, so that the compiler names a new kind here too (-Wswitch).
  switch (kind_) {
    case PositionKind::kNope:
    case PositionKind::kRope:
      return {};
    case PositionKind::kAlibi:
    case PositionKind::kNape: {
      auto distance = (query_positions.unsqueeze(-1) - key_positions.unsqueeze(-2)).to(dtype);  // [B, Tq, Tk]
      auto slopes = slope_tensor_.to(distance.device(), dtype).view({1, -1, 1, 1});
      return -slopes * distance.unsqueeze(1);
    }
    case PositionKind::kWindow: {
      // The same on every head; keys `window` or more positions back are out of sight.
      auto distance = query_positions.unsqueeze(-1) - key_positions.unsqueeze(-2);  // [B, Tq, Tk]
      auto outside = (distance >= window_).unsqueeze(1);
      return torch::zeros(outside.sizes(), outside.options().dtype(dtype))
          .masked_fill(outside, -std::numeric_limits<double>::infinity());
    }
  }
  return {};
}

}  // namespace lengen
