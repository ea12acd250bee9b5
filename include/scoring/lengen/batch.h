#pragma once
// Samples -> tensors: encoded sequences right-padded with PAD (causal attention never lets
// a real position see the padding after it), and the mask of positions in the loss.
#include <torch/types.h>

#include <vector>

#include "lengen/task.h"

namespace lengen {

struct Batch {
  torch::Tensor input;      // [B, T] int64
  torch::Tensor target;     // [B, T] int64
  torch::Tensor loss_mask;  // [B, T] bool: target tokens and the final EOS
  torch::Tensor positions;  // [B, T] int64: 0..len-1, -1 on the padding (never attended)
};

Batch collate(const std::vector<Sample>& samples);

Batch to_device(const Batch& batch, const torch::Device& device);

}  // namespace lengen
