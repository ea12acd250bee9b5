#pragma once
// The attention's two products, a . b^T (the scores) and a . b (the weighted values), over
// [..., rows, cols] tensors whose leading dimensions are batch and heads.
#include <torch/types.h>

namespace lengen {

// a [..., m, k] times b [..., n, k] transposed (transpose_b) or b [..., k, n]: [..., m, n], with
// its gradient. On the CPU in fp32 and double, while each product is small enough that the BLAS
// would run it on one thread, the products are BLAS calls split over the threads (ATen's bmm
// dispatches a select and a matrix product per head of every sequence, which at the lengths of
// training costs more than the product); otherwise, and without a CBLAS in the process,
// torch::matmul. Either way each product is the same BLAS call, so the bits are the same.
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b, bool transpose_b);

}  // namespace lengen
