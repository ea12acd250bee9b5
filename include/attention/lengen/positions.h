#pragma once
// Position encodings (docs/method.md, "Position encodings"): the kinds of position_choices()
// (attention_choices.h).
#include <torch/types.h>

#include <string>
#include <vector>

#include "lengen/attention_choices.h"
#include "lengen/config.h"

namespace lengen {

class PositionEncoding {
 public:
  PositionEncoding(const AttentionConfig& config, int64_t heads, int64_t d_head);

  // Rotates q or k [B, H, T, d_head] by their absolute positions [B, T] (rope only).
  torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& positions) const;

  // Score bias -m_h * (i - j) for query positions [B, Tq] and key positions [B, Tk]:
  // [B, H, Tq, Tk] in `dtype` (the scores'), or an undefined tensor when no head has a bias.
  torch::Tensor bias(const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                     torch::ScalarType dtype = torch::kFloat) const;

  PositionKind kind() const { return kind_; }
  // The heads length scaling applies to: all heads, or under NAPE the NoPE heads.
  int64_t first_scaled_head() const { return first_scaled_head_; }
  // ALiBi slope per head (0 for heads without a bias).
  const std::vector<double>& slopes() const { return slopes_; }

 private:
  PositionKind kind_;
  int64_t d_head_;
  double rope_base_;
  int64_t first_scaled_head_ = 0;
  int64_t window_ = 0;  // window: keys each query sees
  std::vector<double> slopes_;
  torch::Tensor slope_tensor_;  // [H] in double, cast to the scores' dtype for the bias
};

// Slopes of `count` ALiBi heads: "linear" 1/(h+1), "exp" 2^-h.
std::vector<double> alibi_slopes(int64_t count, AlibiSlopes kind);

}  // namespace lengen
