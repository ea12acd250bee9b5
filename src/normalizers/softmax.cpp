// softmax with masked rows handled: a fully masked row gives zeros instead of NaN.
#include <torch/torch.h>

#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "lengen/row_kernels.h"

namespace lengen {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

torch::Tensor softmax_forward_aten(const torch::Tensor& z) {
  return torch::softmax(z, -1).masked_fill(detail::fully_masked_rows(z), 0.0);
}

// LibTorch's CPU softmax is already a fused kernel; only its NaN rows (every score -inf) need
// fixing, and they are rare, so the mask is computed only when one is there.
torch::Tensor softmax_forward_cpu(const torch::Tensor& z) {
  torch::Tensor p = torch::softmax(z, -1);
  if (p.numel() > 0 && p.select(-1, 0).isnan().any().item<bool>()) {
    p.masked_fill_(detail::fully_masked_rows(z), 0.0);
  }
  return p;
}

class SoftmaxFunction : public torch::autograd::Function<SoftmaxFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z) {
    torch::Tensor p = detail::use_fused_cpu(z) ? softmax_forward_cpu(z) : softmax_forward_aten(z);
    ctx->save_for_backward({p});
    return p;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor p = ctx->get_saved_variables()[0];
    const torch::Tensor& dy = grad_outputs[0];
    // Softmax's Jacobian is the entmax family's with g = p.
    if (detail::use_fused_cpu(p)) return {detail::entmax_family_backward_cpu(p, dy, {}, false).dz};
    return {detail::entmax_family_backward_aten(p, dy)};
  }
};

}  // namespace

torch::Tensor softmax(const torch::Tensor& z, int64_t dim) {
  return detail::along_last_dim(z, dim, [](const torch::Tensor& x) { return SoftmaxFunction::apply(x); });
}

}  // namespace lengen
