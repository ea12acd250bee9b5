// sparsemax (entmax with alpha = 2): the Euclidean projection onto the simplex.
#include <torch/torch.h>

#include "lengen/normalizers.h"
#include "normalizers/normalizer_common.h"

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

class SparsemaxFunction : public torch::autograd::Function<SparsemaxFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z) {
    torch::Tensor p = sparsemax_forward_aten(z);
    ctx->save_for_backward({p});
    return p;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor p = ctx->get_saved_variables()[0];
    return {detail::entmax_family_backward_aten((p > 0).to(p.scalar_type()), grad_outputs[0])};
  }
};

}  // namespace

torch::Tensor sparsemax(const torch::Tensor& z, int64_t dim) {
  return detail::along_last_dim(z, dim, [](const torch::Tensor& x) { return SparsemaxFunction::apply(x); });
}

}  // namespace lengen
