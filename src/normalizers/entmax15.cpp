// 1.5-entmax, exact: p = [z/2 - tau]_+^2 with tau from the sorted running mean and mean of
// squares (Peters et al. 2019).
#include <torch/torch.h>

#include "lengen/normalizers.h"
#include "normalizers/normalizer_common.h"

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

class Entmax15Function : public torch::autograd::Function<Entmax15Function> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z) {
    torch::Tensor p = entmax15_forward_aten(z);
    ctx->save_for_backward({p});
    return p;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor p = ctx->get_saved_variables()[0];
    return {detail::entmax_family_backward_aten(p.sqrt(), grad_outputs[0])};
  }
};

}  // namespace

torch::Tensor entmax15(const torch::Tensor& z, int64_t dim) {
  return detail::along_last_dim(z, dim, [](const torch::Tensor& x) { return Entmax15Function::apply(x); });
}

}  // namespace lengen
