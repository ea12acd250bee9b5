#include <torch/torch.h>

#include "lengen/decoder.h"

namespace lengen {

MlpImpl::MlpImpl(int64_t d_model, int64_t d_mlp) {
  auto linear = [](int64_t in, int64_t out) {
    return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
  };
  gate_ = register_module("gate", linear(d_model, d_mlp));
  up_ = register_module("up", linear(d_model, d_mlp));
  down_ = register_module("down", linear(d_mlp, d_model));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  return down_(torch::gelu(gate_(x), "tanh") * up_(x));
}

}  // namespace lengen
