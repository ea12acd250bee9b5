// 1.5-entmax, exact: p = [z/2 - tau]_+^2 with tau from the sorted running mean and mean of
// squares (Peters et al. 2019).
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

torch::Tensor entmax15_forward_aten(const torch::Tensor& z) {
  const torch::Tensor fully_masked = detail::fully_masked_rows(z);
  const torch::Tensor x = detail::shift_by_row_max(z, fully_masked) / 2;
  const torch::Tensor sorted = std::get<0>(x.sort(-1, /*descending=*/true));
  // Masked entries sort last; zeroing them keeps the running sums finite (their own
  // comparison below uses the -inf value and so never enters the support).
  const torch::Tensor finite = torch::where(torch::isfinite(sorted), sorted, torch::zeros_like(sorted));
  const torch::Tensor rank = torch::arange(1, x.size(-1) + 1, x.options());
  const torch::Tensor mean = finite.cumsum(-1) / rank;
  const torch::Tensor mean_sq = (finite * finite).cumsum(-1) / rank;
  const torch::Tensor delta = ((1 - rank * (mean_sq - mean * mean)) / rank).clamp_min(0);
  const torch::Tensor tau = mean - delta.sqrt();
  const torch::Tensor support = (tau <= sorted).sum(-1, /*keepdim=*/true).clamp_min(1);
  const torch::Tensor tau_star = tau.gather(-1, support - 1);
  return (x - tau_star).clamp_min(0).square().masked_fill(fully_masked, 0.0);
}

// 1.5-entmax of row x into y, with the threshold found on the entries that can be in the
// support (X = (z - max)/2 > -1).
template <class T>
void entmax15_row(const T* x, T* y, int64_t n, detail::Candidates& candidates) {
  const T max = detail::row_max(x, n);
  if (max == -std::numeric_limits<T>::infinity()) {
    std::fill(y, y + n, T(0));
    return;
  }
  // Entries after `end` cannot be in the support: the passes below skip them.
  const int64_t end = candidates.collect(x, n, static_cast<T>(max - 2), max, 0.5);
  const double tau = detail::entmax15_threshold(candidates);
  const T t = static_cast<T>(tau);
  for (int64_t k = 0; k < end; ++k) {
    const T v = (x[k] - max) * T(0.5) - t;
    y[k] = v > 0 ? v : T(0);
  }
  // A separate loop: fused with the clamp, GCC turns the square into a branch and stops vectorizing.
  for (int64_t k = 0; k < end; ++k) y[k] *= y[k];
  std::fill(y + end, y + n, T(0));
}

}  // namespace

namespace detail {

// Multiversioned: at random initialisation most of a row is a candidate.
LENGEN_ROW_KERNEL double entmax15_threshold(const Candidates& candidates, double lower) {
  return entmax15_search([&](double t) { return positive_parts(candidates, t); }, lower);
}

// Rows [begin, end) of z into p; multiversioned for float (see LENGEN_ROW_KERNEL).
template <class T>
void entmax15_rows_of(const T* z, T* p, int64_t n, int64_t begin, int64_t end) {
  thread_local detail::Candidates candidates;
  for (int64_t row = begin; row < end; ++row) entmax15_row(z + row * n, p + row * n, n, candidates);
}
LENGEN_ROW_KERNEL void entmax15_rows(const float* z, float* p, int64_t n, int64_t begin, int64_t end) {
  entmax15_rows_of(z, p, n, begin, end);
}
void entmax15_rows(const double* z, double* p, int64_t n, int64_t begin, int64_t end) {
  entmax15_rows_of(z, p, n, begin, end);
}

}  // namespace detail

namespace {

torch::Tensor entmax15_forward_cpu(const torch::Tensor& z_in) {
  const torch::Tensor z = z_in.contiguous();
  torch::Tensor p = torch::empty_like(z);
  const int64_t n = z.size(-1);
  AT_DISPATCH_FLOATING_TYPES(z.scalar_type(), "entmax15_forward_cpu", [&] {
    const scalar_t* z_data = z.data_ptr<scalar_t>();
    scalar_t* p_data = p.data_ptr<scalar_t>();
    detail::for_each_row_range(n == 0 ? 0 : z.numel() / n, n, [&](int64_t begin, int64_t end) {
      detail::entmax15_rows(z_data, p_data, n, begin, end);
    });
  });
  return p;
}

class Entmax15Function : public torch::autograd::Function<Entmax15Function> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z) {
    torch::Tensor p = detail::use_fused_cpu(z) ? entmax15_forward_cpu(z) : entmax15_forward_aten(z);
    ctx->save_for_backward({p});
    return p;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor p = ctx->get_saved_variables()[0];
    if (detail::use_fused_cpu(p))
      return {detail::entmax_family_backward_cpu(p, grad_outputs[0], {nullptr, 1.5}, false).dz};
    return {detail::entmax_family_backward_aten(p.sqrt(), grad_outputs[0])};
  }
};

}  // namespace

torch::Tensor entmax15(const torch::Tensor& z, int64_t dim) {
  return detail::along_last_dim(z, dim, [](const torch::Tensor& x) { return Entmax15Function::apply(x); });
}

}  // namespace lengen
