#include "lengen/positions.h"

#include <torch/torch.h>

#include <cmath>

#include "lengen/errors.h"

namespace lengen {

std::vector<std::string> position_names() { return {"nope", "rope", "alibi", "nape"}; }

std::vector<double> alibi_slopes(int64_t count, const std::string& kind) {
  if (kind != "linear" && kind != "exp") {
    throw UserError("unknown alibi_slopes '" + kind + "' (expected linear or exp)");
  }
  std::vector<double> slopes;
  for (int64_t h = 0; h < count; ++h) {
    slopes.push_back(kind == "linear" ? 1.0 / static_cast<double>(h + 1) : std::ldexp(1.0, -static_cast<int>(h)));
  }
  return slopes;
}

PositionEncoding::PositionEncoding(const AttentionConfig& config, int64_t heads, int64_t d_head)
    : kind_(config.positions), d_head_(d_head), rope_base_(config.rope_base), slopes_(heads, 0.0) {
  if (kind_ == "alibi") {
    slopes_ = alibi_slopes(heads, config.alibi_slopes);
  } else if (kind_ == "nape") {
    int64_t alibi_heads = config.alibi_heads < 0 ? heads / 2 : config.alibi_heads;
    if (alibi_heads > heads) {
      throw UserError("model.attention.alibi_heads (" + std::to_string(alibi_heads) + ") exceeds model.heads (" +
                      std::to_string(heads) + ")");
    }
    auto alibi = alibi_slopes(alibi_heads, config.alibi_slopes);
    std::copy(alibi.begin(), alibi.end(), slopes_.begin());
    first_scaled_head_ = alibi_heads;
  } else if (kind_ == "rope") {
    if (d_head % 2 != 0) throw UserError("rope needs an even model.d_head, got " + std::to_string(d_head));
  } else if (kind_ != "nope") {
    std::string hint = closest_match(kind_, position_names());
    throw UserError("unknown positions '" + kind_ + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  slope_tensor_ = torch::tensor(slopes_, torch::kDouble);
}

torch::Tensor PositionEncoding::rotate(const torch::Tensor& x, const torch::Tensor& positions) const {
  if (kind_ != "rope") return x;
  const int64_t half = d_head_ / 2;
  // Angles in fp32 from integer positions (double when x is double, so gradient checks stay exact):
  // exact enough for every position a model will see, whatever the activation dtype.
  const auto angle_dtype = x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  auto inv_freq = torch::pow(rope_base_, -torch::arange(0, half, x.options().dtype(angle_dtype)) * 2.0 / d_head_);
  auto angles = positions.to(angle_dtype).unsqueeze(-1) * inv_freq;  // [B, T, half]
  auto cos = torch::cos(angles).unsqueeze(1).to(x.dtype());          // [B, 1, T, half]
  auto sin = torch::sin(angles).unsqueeze(1).to(x.dtype());
  auto x1 = x.narrow(-1, 0, half);
  auto x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

torch::Tensor PositionEncoding::bias(const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                                     torch::ScalarType dtype) const {
  if (kind_ != "alibi" && kind_ != "nape") return {};
  auto distance = (query_positions.unsqueeze(-1) - key_positions.unsqueeze(-2)).to(dtype);  // [B, Tq, Tk]
  auto slopes = slope_tensor_.to(distance.device(), dtype).view({1, -1, 1, 1});
  return -slopes * distance.unsqueeze(1);
}

}  // namespace lengen
