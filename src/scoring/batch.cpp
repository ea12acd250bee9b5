#include "lengen/batch.h"

#include <torch/torch.h>

#include <algorithm>

#include "lengen/sequence.h"

namespace lengen {

Batch collate(const std::vector<Sample>& samples) {
  std::vector<EncodedSample> encoded;
  encoded.reserve(samples.size());
  size_t width = 0;
  for (const auto& sample : samples) {
    encoded.push_back(encode(sample));
    width = std::max(width, encoded.back().input.size());
  }
  const auto batch = static_cast<int64_t>(samples.size());
  const auto length = static_cast<int64_t>(width);
  auto input = torch::full({batch, length}, kPad, torch::kLong);
  auto target = torch::full({batch, length}, kPad, torch::kLong);
  auto loss_mask = torch::zeros({batch, length}, torch::kBool);
  auto positions = torch::full({batch, length}, -1, torch::kLong);
  auto input_data = input.accessor<int64_t, 2>();
  auto target_data = target.accessor<int64_t, 2>();
  auto mask_data = loss_mask.accessor<bool, 2>();
  auto position_data = positions.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    for (size_t t = 0; t < encoded[b].input.size(); ++t) {
      input_data[b][t] = encoded[b].input[t];
      target_data[b][t] = encoded[b].target[t];
      mask_data[b][t] = encoded[b].in_loss[t] != 0;
      position_data[b][t] = static_cast<int64_t>(t);
    }
  }
  return {input, target, loss_mask, positions};
}

Batch to_device(const Batch& batch, const torch::Device& device) {
  return {batch.input.to(device), batch.target.to(device), batch.loss_mask.to(device), batch.positions.to(device)};
}

}  // namespace lengen
