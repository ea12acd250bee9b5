#pragma once
// Attention normalizers: scores -> weights along `dim` (docs/method.md, "Normalizers"). Entries at -inf get
// exactly 0 and zero gradient; a fully masked row gives zeros. Half-precision input is
// computed in fp32 and cast back. Each has a closed-form backward. They are picked by name
// through normalizer_registry.h.
#include <torch/types.h>

#include <cstdint>

namespace lengen {

torch::Tensor softmax(const torch::Tensor& z, int64_t dim = -1);
torch::Tensor sparsemax(const torch::Tensor& z, int64_t dim = -1);
torch::Tensor entmax15(const torch::Tensor& z, int64_t dim = -1);
// alpha > 1; alpha within 1e-3 of 1 is softmax.
torch::Tensor entmax(const torch::Tensor& z, double alpha, int64_t dim = -1);
// alpha broadcastable to z with size 1 along dim (e.g. [1, H, 1, 1] per head); may require
// grad (docs/method.md, "Learned alpha").
torch::Tensor entmax(const torch::Tensor& z, const torch::Tensor& alpha, int64_t dim = -1);
torch::Tensor topk_softmax(const torch::Tensor& z, int64_t k, int64_t dim = -1);
torch::Tensor adaptive_softmax(const torch::Tensor& z, int64_t dim = -1);
torch::Tensor stickbreaking(const torch::Tensor& z, int64_t dim = -1);

// Forces the composed-ATen path on CPU too (tests compare it with the fused kernels).
void set_force_aten_normalizers(bool force);

}  // namespace lengen
