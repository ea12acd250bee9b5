#pragma once
// The shape the row-wise normalizers share (internal), written once: a row
// kernel compiled for float (multiversioned) and double, its parallel dispatch
// over a tensor's rows, and an autograd Function whose forward runs the fused
// CPU kernel or the ATen composition and whose backward is the entmax family's
// gradient rule. A normalizer supplies its row kernel, its ATen forward and its
// derivative weights (normalizer_common.h); softmax.cpp, sparsemax.cpp and
// entmax15.cpp show the whole of it.
#include <ATen/Dispatch.h>
#include <torch/torch.h>

#include "lengen/normalizer_common.h"
#include "lengen/row_kernels.h"

namespace lengen::detail {

// Rows [begin, end) of z into p by `Row(x, y, n, candidates)`, with one
// Candidates buffer per thread and row kernel.
template <auto Row, class T>
void candidate_rows(const T* z, T* p, int64_t n, int64_t begin, int64_t end) {
  thread_local Candidates candidates;
  for (int64_t row = begin; row < end; ++row) Row(z + row * n, p + row * n, n, candidates);
}

// Defines `rows(z, p, n, begin, end)` for float, multiversioned (see
// LENGEN_ROW_KERNEL), and for double, over the row kernel template `row<T>(x,
// y, n, candidates)`. A macro because the multiversioning attribute needs a
// named function that is not a template.
#define LENGEN_CANDIDATE_ROWS(rows, row)                                                         \
  LENGEN_ROW_KERNEL void rows(const float* z, float* p, int64_t n, int64_t begin, int64_t end) { \
    ::lengen::detail::candidate_rows<row<float>>(z, p, n, begin, end);                           \
  }                                                                                              \
  void rows(const double* z, double* p, int64_t n, int64_t begin, int64_t end) {                 \
    ::lengen::detail::candidate_rows<row<double>>(z, p, n, begin, end);                          \
  }

// The fused CPU forward: p = rows(z) over the rows of z in parallel, where
// `rows(z_data, p_data, n, begin, end)` takes float and double.
template <class Rows>
torch::Tensor fused_rows_forward(const torch::Tensor& z_in, const Rows& rows) {
  const torch::Tensor z = z_in.contiguous();
  torch::Tensor p = torch::empty_like(z);
  const int64_t n = z.size(-1);
  AT_DISPATCH_FLOATING_TYPES(z.scalar_type(), "fused_rows_forward", [&] {
    const scalar_t* z_data = z.data_ptr<scalar_t>();
    scalar_t* p_data = p.data_ptr<scalar_t>();
    for_each_row_range(n == 0 ? 0 : z.numel() / n, n,
                       [&](int64_t begin, int64_t end) { rows(z_data, p_data, n, begin, end); });
  });
  return p;
}

// A normalizer of the entmax family whose only input is the scores. `Rule` has
//   static torch::Tensor forward_cpu(const torch::Tensor& z);       the fused
//   kernel static torch::Tensor forward_aten(const torch::Tensor& z);      any
//   device static constexpr double kAlpha;                                  for
//   the fused backward static torch::Tensor gradient_weights(const
//   torch::Tensor& p);   g for the ATen backward
template <class Rule>
class RowNormalizerFunction : public torch::autograd::Function<RowNormalizerFunction<Rule>> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& z) {
    torch::Tensor p = use_fused_cpu(z) ? Rule::forward_cpu(z) : Rule::forward_aten(z);
    ctx->save_for_backward({p});
    return p;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const torch::Tensor p = ctx->get_saved_variables()[0];
    const torch::Tensor& dy = grad_outputs[0];
    if (use_fused_cpu(p))
      return {entmax_family_backward_cpu(p, dy, RowAlpha{nullptr, Rule::kAlpha}, false).dz};
    return {entmax_family_backward_aten(Rule::gradient_weights(p), dy)};
  }
};

// The normalizer of `Rule` along `dim` (the public function's body).
template <class Rule>
torch::Tensor apply_row_normalizer(const torch::Tensor& z, int64_t dim) {
  return along_last_dim(z, dim, [](const torch::Tensor& x) { return RowNormalizerFunction<Rule>::apply(x); });
}

}  // namespace lengen::detail
