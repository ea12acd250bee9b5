#include "lengen/positions.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "lengen/attention_choices.h"
#include "lengen/errors.h"
#include "lengen/named_entries.h"
#include "position_record.h"

namespace lengen {

namespace {

struct NamedPositionRecord {
  std::string name;
  PositionRecord record;
};

// The records of position_list.h's encodings, by name.
const std::vector<NamedPositionRecord>& position_records() {
  static const std::vector<NamedPositionRecord> records = {
#define LENGEN_POSITION(name, help, parameters, fused) {#name, name##_position()},
#include "lengen/position_list.h"
#undef LENGEN_POSITION
  };
  return records;
}

const PositionRecord& position_record(const std::string& name) {
  return entry_named(position_records(), "positions", name).record;
}

}  // namespace

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

std::vector<std::string> position_record_names() { return entry_names(position_records()); }

PositionEncoding::PositionEncoding(const AttentionConfig& config, int64_t heads, int64_t d_head)
    : record_(&position_record(config.positions)), config_(config) {
  PositionSetup setup = record_->setup(config, heads, d_head);
  slopes_ = std::move(setup.slopes);
  first_scaled_head_ = setup.first_scaled_head;
  for (double slope : slopes_) has_slopes_ = has_slopes_ || slope != 0.0;
  slope_tensor_ = torch::tensor(slopes_, torch::kDouble);
}

bool PositionEncoding::rotates() const { return static_cast<bool>(record_->rotate); }

bool PositionEncoding::adds_other_bias() const { return static_cast<bool>(record_->extra_bias); }

torch::Tensor PositionEncoding::rotate(const torch::Tensor& x, const torch::Tensor& positions) const {
  return record_->rotate ? record_->rotate(x, positions, config_) : x;
}

torch::Tensor PositionEncoding::bias(const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                                     torch::ScalarType dtype) const {
  torch::Tensor bias;
  if (has_slopes_) {
    auto distance = (query_positions.unsqueeze(-1) - key_positions.unsqueeze(-2)).to(dtype);  // [B, Tq, Tk]
    auto slopes = slope_tensor_.to(distance.device(), dtype).view({1, -1, 1, 1});
    bias = -slopes * distance.unsqueeze(1);
  }
  if (record_->extra_bias) {
    torch::Tensor extra = record_->extra_bias(query_positions, key_positions, dtype, config_);
    bias = bias.defined() ? bias + extra : extra;
  }
  return bias;
}

}  // namespace lengen
