#pragma once
// What a position encoding's .cpp writes as its record: how it sets itself up for a model's heads
// and which terms it adds to the attention. The list of encodings is position_list.h; this header
// declares every NAME_position() of it. Internal to the attention layer.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "lengen/config.h"

namespace lengen {

// An encoding set up for a model's heads.
struct PositionSetup {
  std::vector<double> slopes;     // per head: the ALiBi slope m_h of the bias -m_h * (i - j); 0: none
  int64_t first_scaled_head = 0;  // the heads length scaling applies to start here
};

struct PositionRecord {
  // Checks the config for `heads` heads of size `d_head` (UserError naming what is wrong) and
  // sets the encoding up.
  std::function<PositionSetup(const AttentionConfig& config, int64_t heads, int64_t d_head)> setup;
  // q or k [B, H, T, d_head] rotated by their absolute positions [B, T]; empty: no rotation.
  std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& positions, const AttentionConfig&)>
      rotate;
  // A score bias other than the slopes' ([B, 1 or H, Tq, Tk] in `dtype`), for query positions
  // [B, Tq] and key positions [B, Tk]; empty: none. The fused kernel does not compute it, so its
  // list line declares kDenseOnly (a test checks).
  std::function<torch::Tensor(const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                              torch::ScalarType dtype, const AttentionConfig&)>
      extra_bias;
};

#define LENGEN_POSITION(name, help, parameters, fused) PositionRecord name##_position();
#include "lengen/position_list.h"
#undef LENGEN_POSITION

// No slope on any of `heads` heads, all of them length-scaled.
inline PositionSetup no_slopes(int64_t heads) { return {std::vector<double>(heads, 0.0), 0}; }

}  // namespace lengen
