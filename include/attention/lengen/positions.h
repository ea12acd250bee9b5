#pragma once
// Position encodings (docs/method.md, "Position encodings"): those of position_list.h, each built
// from its record (position_record.h, in the encoding's own .cpp).
#include <torch/types.h>

#include <string>
#include <vector>

#include "lengen/attention_choices.h"
#include "lengen/config.h"

namespace lengen {

struct PositionRecord;  // position_record.h: what each encoding of position_list.h adds

// The position encoding model.attention.positions names, set up for a model's heads.
class PositionEncoding {
 public:
  // UserError for an unknown name (with the closest one) or a config the encoding cannot take.
  PositionEncoding(const AttentionConfig& config, int64_t heads, int64_t d_head);

  // Rotates q or k [B, H, T, d_head] by their absolute positions [B, T] (rope only).
  torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& positions) const;
  // Score bias for query positions [B, Tq] and key positions [B, Tk]: -m_h * (i - j) on heads
  // with a slope, plus any other term of the encoding (window's -inf), [B, H or 1, Tq, Tk] in
  // `dtype` (the scores'); an undefined tensor when it adds none.
  torch::Tensor bias(const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                     torch::ScalarType dtype = torch::kFloat) const;
  // Whether it rotates q and k, and whether it adds a bias other than the slopes' (which the
  // fused kernel does not compute).
  bool rotates() const;
  bool adds_other_bias() const;
  // The heads length scaling applies to: all heads, or under NAPE the NoPE heads.
  int64_t first_scaled_head() const { return first_scaled_head_; }
  // ALiBi slope per head (0 for heads without a bias).
  const std::vector<double>& slopes() const { return slopes_; }

 private:
  const PositionRecord* record_;
  AttentionConfig config_;
  int64_t first_scaled_head_ = 0;
  bool has_slopes_ = false;
  std::vector<double> slopes_;
  torch::Tensor slope_tensor_;  // [H] in double, cast to the scores' dtype for the bias
};

// The names of the encodings with a record, in position_list.h's order.
std::vector<std::string> position_record_names();

// Slopes of `count` ALiBi heads: "linear" 1/(h+1), "exp" 2^-h.
std::vector<double> alibi_slopes(int64_t count, AlibiSlopes kind);

}  // namespace lengen
