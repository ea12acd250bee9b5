// A sliding window: each query sees its last model.attention.window keys, itself included; the
// same on every head.
#include <limits>

#include "position_record.h"

namespace lengen {

PositionRecord window_position() {
  return {[](const AttentionConfig&, int64_t heads, int64_t) { return no_slopes(heads); },
          {},
          [](const torch::Tensor& query_positions, const torch::Tensor& key_positions,
             torch::ScalarType dtype, const AttentionConfig& config) {
            auto distance = query_positions.unsqueeze(-1) - key_positions.unsqueeze(-2);  // [B, Tq, Tk]
            auto outside = (distance >= config.window).unsqueeze(1);
            return torch::zeros(outside.sizes(), outside.options().dtype(dtype))
                .masked_fill(outside, -std::numeric_limits<double>::infinity());
          }};
}

}  // namespace lengen
