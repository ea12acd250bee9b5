#pragma once
// Shared plumbing of the normalizers (internal to them and the fused attention): moving the
// normalized dim last, half precision upcast, fully masked rows, and the backward shared by the
// entmax family.
#include <torch/types.h>

#include "lengen/precision.h"

namespace lengen::detail {

// Rows whose |alpha - 1| is below this are computed as softmax, never by the solver.
constexpr double kSoftmaxAlphaTolerance = 1e-3;

// True when the fused CPU kernels should run: a CPU float/double tensor and the ATen path
// not forced.
bool use_fused_cpu(const torch::Tensor& z);

// Applies `fn` (which normalizes along the last dim) to z along `dim`, in fp32 or better, and
// returns the result in z's layout and dtype. Autograd flows through the transposes and casts.
template <class Fn>
torch::Tensor along_last_dim(const torch::Tensor& z, int64_t dim, Fn&& fn) {
  TORCH_CHECK(z.dim() >= 1, "normalizers need at least one dimension");
  const int64_t last = z.dim() - 1;
  const int64_t d = dim < 0 ? dim + z.dim() : dim;
  TORCH_CHECK(d >= 0 && d <= last, "normalizer dim ", dim, " out of range for ", z.dim(), "-d input");
  torch::Tensor x = to_at_least_fp32(z);
  if (d != last) x = x.transpose(d, last);
  torch::Tensor y = fn(x);
  if (d != last) y = y.transpose(d, last);
  return y.to(z.scalar_type());
}

// [..., 1] mask of the rows (along the last dim) whose entries are all -inf.
torch::Tensor fully_masked_rows(const torch::Tensor& z);

// z - max over the last dim, with fully masked rows replaced by zeros so that no NaN arises;
// callers zero those rows in their output.
torch::Tensor shift_by_row_max(const torch::Tensor& z, const torch::Tensor& fully_masked);

// The backward shared by softmax, sparsemax and entmax: with g the derivative weights
// (g = p^(2-alpha) on the support), dz = g*dy - (sum(g*dy)/sum(g))*g. Rows with sum(g) = 0
// (fully masked) get zeros.
torch::Tensor entmax_family_backward_aten(const torch::Tensor& g, const torch::Tensor& dy);

}  // namespace lengen::detail
