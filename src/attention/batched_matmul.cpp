#include "batched_matmul.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>
#include <type_traits>

namespace lengen {

namespace {

template <class T>
using Gemm = void (*)(int, int, int, int, int, int, T, const T*, int, const T*, int, T, T*, int);
constexpr int kRowMajor = 101, kNoTranspose = 111, kTranspose = 112;
// Below m n k = 4 x 65,536 OpenBLAS runs a product on one thread (GEMM_MULTITHREAD_THRESHOLD):
// such products can run side by side; larger ones are left to ATen and the BLAS's own threads.
constexpr int64_t kOneThreadProduct = 4 * 65536;
// Below m n k = 400 ATen's bmm sums in a loop of its own rather than calling the BLAS (single
// queries against a cache): left to it, so that the bits stay ATen's.
constexpr int64_t kAtenLoopProduct = 400;

// The process's cblas_sgemm / cblas_dgemm (OpenBLAS's, or MKL's), or null.
template <class T>
Gemm<T> cblas_gemm() {
  static const auto gemm =
      reinterpret_cast<Gemm<T>>(dlsym(RTLD_DEFAULT, std::is_same_v<T, float> ? "cblas_sgemm" : "cblas_dgemm"));
  return gemm;
}

// One matrix layout of a [N, rows, cols] tensor as the BLAS reads it: rows contiguous
// (kNoTranspose), columns contiguous (kTranspose, the transposed view of a contiguous tensor), or
// neither (a contiguous copy), each with its leading dimension, as ATen's matrix product reads it.
struct Operand {
  torch::Tensor data;
  int transpose = kNoTranspose;
  int leading = 0;
};

Operand operand(const torch::Tensor& t) {
  if (t.stride(2) == 1 && t.stride(1) >= t.size(2)) return {t, kNoTranspose, static_cast<int>(t.stride(1))};
  if (t.stride(1) == 1 && t.stride(2) >= t.size(1)) return {t, kTranspose, static_cast<int>(t.stride(2))};
  torch::Tensor copy = t.contiguous();
  return {copy, kNoTranspose, static_cast<int>(copy.size(2))};
}

// c[i] = a[i] b[i] for a [N, m, k] and b [N, k, n]: one BLAS call per matrix, split over the threads.
template <class T>
torch::Tensor product(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  const Operand a = operand(a_in), b = operand(b_in);
  const int64_t count = a_in.size(0);
  const int m = a_in.size(1), k = a_in.size(2), n = b_in.size(2);
  torch::Tensor c = torch::empty({count, m, n}, a_in.options());
  const T* pa = a.data.data_ptr<T>();
  const T* pb = b.data.data_ptr<T>();
  T* pc = c.data_ptr<T>();
  const int64_t a_step = a.data.stride(0), b_step = b.data.stride(0);
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      cblas_gemm<T>()(kRowMajor, a.transpose, b.transpose, m, n, k, T(1), pa + i * a_step, a.leading,
                      pb + i * b_step, b.leading, T(0), pc + i * m * n, n);
    }
  });
  return c;
}

torch::Tensor product_of(const torch::Tensor& a, const torch::Tensor& b) {
  return a.scalar_type() == torch::kFloat ? product<float>(a, b) : product<double>(a, b);
}

// a [N, m, k] times b [N, k, n] with ATen's bmm's gradient: the same BLAS calls on the same
// layouts, so the same bits as torch::matmul.
class BatchedMatmul : public torch::autograd::Function<BatchedMatmul> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a,
                               const torch::Tensor& b) {
    ctx->save_for_backward({a, b});
    return product_of(a, b);
  }

  // C = A B: dA = G B^T, dB = A^T G.
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    torch::Tensor da, db;
    if (ctx->needs_input_grad(0)) da = product_of(grads[0], saved[1].transpose(1, 2));
    if (ctx->needs_input_grad(1)) db = product_of(saved[0].transpose(1, 2), grads[0]);
    return {da, db};
  }
};

}  // namespace

torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b, bool transpose_b) {
  const torch::Tensor right = transpose_b ? b.transpose(-2, -1) : b;
  const int64_t m = a.size(-2), k = a.size(-1), n = right.size(-1);
  const bool blas = a.device().is_cpu() && a.scalar_type() == b.scalar_type() &&
                    (a.scalar_type() == torch::kFloat || a.scalar_type() == torch::kDouble) &&
                    std::min({m, n, k}) > 1 && m * n * k >= kAtenLoopProduct && m * n * k < kOneThreadProduct &&
                    (a.scalar_type() == torch::kFloat ? cblas_gemm<float>() != nullptr : cblas_gemm<double>() != nullptr);
  if (!blas) return torch::matmul(a, right);
  auto shape = a.sizes().vec();
  shape.back() = n;
  return BatchedMatmul::apply(a.reshape({-1, m, k}), right.reshape({-1, k, n})).view(shape);
}

}  // namespace lengen
