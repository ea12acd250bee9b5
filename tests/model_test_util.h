#pragma once
// Small models and inputs shared by the attention and model tests.
#include <torch/torch.h>

#include "lengen/config.h"
#include "lengen/decoder.h"

namespace lengen::testing {

inline ModelConfig tiny_model_config(const std::string& normalizer, const std::string& scaling,
                                     const std::string& positions) {
  ModelConfig config;
  config.layers = 2;
  config.d_model = 32;
  config.heads = 4;
  config.d_head = 8;
  config.d_mlp = 64;
  config.attention.normalizer = normalizer;
  config.attention.scaling = scaling;
  config.attention.positions = positions;
  // Larger than the default init so that sparse normalizers actually zero out keys.
  config.attention.scaling_init_std = 0.5;
  config.init_std = 0.2;
  return config;
}

inline torch::Tensor random_tokens(int64_t batch, int64_t length, int64_t vocab, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randint(4, vocab, {batch, length}, torch::kLong);
}

}  // namespace lengen::testing
