// sparsemax (entmax with alpha = 2): the Euclidean projection onto the simplex.
#include <ATen/Dispatch.h>
#include <torch/torch.h>

#include <vector>

#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "lengen/row_forward.h"
#include "lengen/row_kernels.h"
#include "lengen/threshold_search.h"

namespace lengen {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Sort-based threshold: the support is the largest k with 1 + k*z_(k) > sum_{j<=k} z_(j).
torch::Tensor sparsemax_forward_aten(const torch::Tensor& z) {
  const torch::Tensor fully_masked = detail::fully_masked_rows(z);
  const torch::Tensor x = detail::shift_by_row_max(z, fully_masked);
  const torch::Tensor sorted = std::get<0>(x.sort(-1, /*descending=*/true));
  const torch::Tensor cumsum = sorted.cumsum(-1);
  const torch::Tensor rank = torch::arange(1, x.size(-1) + 1, x.options());
  const torch::Tensor support = (1 + rank * sorted > cumsum).sum(-1, /*keepdim=*/true).clamp_min(1);
  const torch::Tensor tau = (cumsum.gather(-1, support - 1) - 1) / support.to(x.scalar_type());
  return (x - tau).clamp_min(0).masked_fill(fully_masked, 0.0);
}

// Michelot's algorithm on the entries within 1 of the max (p <= 1 bounds the threshold):
// tau = (sum_S z - 1)/|S| never exceeds the true threshold, so S keeps the support while
// shrinking, and tau is exact once S stops changing.
template <class T>
void sparsemax_row(const T* x, T* y, int64_t n, detail::Candidates& candidates) {
  const T max = detail::row_max(x, n);
  if (max == -std::numeric_limits<T>::infinity()) {
    std::fill(y, y + n, T(0));
    return;
  }
  // Entries after `end` cannot be in the support: the passes below skip them.
  const int64_t end = candidates.collect(x, n, static_cast<T>(max - 1), max, 1.0);
  const double tau = detail::sparsemax_threshold(candidates);
  const T t = static_cast<T>(tau);
  for (int64_t k = 0; k < end; ++k) {
    const T v = (x[k] - max) - t;
    y[k] = v > 0 ? v : T(0);
  }
  std::fill(y + end, y + n, T(0));
}

}  // namespace

namespace detail {

// Multiversioned: at random initialisation most of a row is a candidate.
LENGEN_ROW_KERNEL double sparsemax_threshold(const Candidates& candidates, double lower) {
  return sparsemax_search([&](double t) { return positive_parts(candidates, t); }, lower);
}

// Rows [begin, end) of z into p; multiversioned for float (see LENGEN_ROW_KERNEL).
template <class T>
void sparsemax_rows_of(const T* z, T* p, int64_t n, int64_t begin, int64_t end) {
  thread_local detail::Candidates candidates;
  for (int64_t row = begin; row < end; ++row) sparsemax_row(z + row * n, p + row * n, n, candidates);
}
LENGEN_ROW_KERNEL void sparsemax_rows(const float* z, float* p, int64_t n, int64_t begin, int64_t end) {
  sparsemax_rows_of(z, p, n, begin, end);
}
void sparsemax_rows(const double* z, double* p, int64_t n, int64_t begin, int64_t end) {
  sparsemax_rows_of(z, p, n, begin, end);
}

}  // namespace detail

namespace {

torch::Tensor sparsemax_forward_cpu(const torch::Tensor& z_in) {
  const torch::Tensor z = z_in.contiguous();
  torch::Tensor p = torch::empty_like(z);
  const int64_t n = z.size(-1);
  AT_DISPATCH_FLOATING_TYPES(z.scalar_type(), "sparsemax_forward_cpu", [&] {
    const scalar_t* z_data = z.data_ptr<scalar_t>();
    scalar_t* p_data = p.data_ptr<scalar_t>();
    detail::for_each_row_range(n == 0 ? 0 : z.numel() / n, n, [&](int64_t begin, int64_t end) {
      detail::sparsemax_rows(z_data, p_data, n, begin, end);
    });
  });
  return p;
}

class SparsemaxFunction : public torch::autograd::Function<SparsemaxFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z) {
    torch::Tensor p = detail::use_fused_cpu(z) ? sparsemax_forward_cpu(z) : sparsemax_forward_aten(z);
    ctx->save_for_backward({p});
    return p;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor p = ctx->get_saved_variables()[0];
    if (detail::use_fused_cpu(p))
      return {detail::entmax_family_backward_cpu(p, grad_outputs[0], {nullptr, 2.0}, false).dz};
    return {detail::entmax_family_backward_aten((p > 0).to(p.scalar_type()), grad_outputs[0])};
  }
};

}  // namespace

torch::Tensor sparsemax(const torch::Tensor& z, int64_t dim) {
  return detail::along_last_dim(z, dim, [](const torch::Tensor& x) { return SparsemaxFunction::apply(x); });
}

}  // namespace lengen
