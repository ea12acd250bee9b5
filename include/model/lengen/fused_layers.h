#pragma once
// The decoder's element-wise layers as one pass each way on CPU: the RMSNorm and the gated GELU of
// the MLP. Each is an autograd function over CPU float/double tensors (use_fused_cpu); elsewhere
// (CUDA, bf16, the ATen path forced) it is the ATen composition beside it, which defines it.
// First-order gradients only.
#include <torch/types.h>

namespace lengen {

// x / sqrt(mean(x^2 over the last dim) + eps) * (1 + weight), weight of x's last size.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);
torch::Tensor rms_norm_aten(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// gelu(gate) * up, GELU in its tanh form: 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
torch::Tensor gated_gelu(const torch::Tensor& gate, const torch::Tensor& up);
torch::Tensor gated_gelu_aten(const torch::Tensor& gate, const torch::Tensor& up);

}  // namespace lengen
