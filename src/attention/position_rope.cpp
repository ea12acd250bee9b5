// RoPE (GPT-NeoX rotate-half): q and k of every head rotated by their absolute positions.
#include "lengen/errors.h"
#include "position_record.h"

namespace lengen {

namespace {

torch::Tensor rotate_half(const torch::Tensor& x, const torch::Tensor& positions,
                          const AttentionConfig& config) {
  const int64_t d_head = x.size(-1);
  const int64_t half = d_head / 2;
  // Angles in fp32 from integer positions (double when x is double, so gradient checks stay exact):
  // exact enough for every position a model will see, whatever the activation dtype.
  const auto angle_dtype = x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  auto inv_freq =
      torch::pow(config.rope_base, -torch::arange(0, half, x.options().dtype(angle_dtype)) * 2.0 / d_head);
  auto angles = positions.to(angle_dtype).unsqueeze(-1) * inv_freq;  // [B, T, half]
  auto cos = torch::cos(angles).unsqueeze(1).to(x.dtype());          // [B, 1, T, half]
  auto sin = torch::sin(angles).unsqueeze(1).to(x.dtype());
  auto x1 = x.narrow(-1, 0, half);
  auto x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

}  // namespace

PositionRecord rope_position() {
  return {[](const AttentionConfig&, int64_t heads, int64_t d_head) {
            if (d_head % 2 != 0)
              throw UserError("rope needs an even model.d_head, got " + std::to_string(d_head));
            return no_slopes(heads);
          },
          rotate_half,
          {}};
}

}  // namespace lengen
