// Stick-breaking attention: A_j = sigmoid(z_j) * prod_{k>j} (1 - sigmoid(z_k)) along the row,
// in log space. Masked (-inf) entries take nothing and break nothing.
#include <torch/torch.h>

#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "normalizer_record.h"

namespace lengen {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// out_j = sum_{k>j} v_k, computed without subtracting (no cancellation next to large terms).
torch::Tensor reverse_exclusive_cumsum(const torch::Tensor& v) {
  const int64_t n = v.size(-1);
  const torch::Tensor inclusive = v.flip(-1).cumsum(-1);
  return torch::cat({torch::zeros_like(v.narrow(-1, 0, 1)), inclusive.narrow(-1, 0, n - 1)}, -1).flip(-1);
}

// out_k = sum_{j<k} v_j.
torch::Tensor exclusive_cumsum(const torch::Tensor& v) {
  const int64_t n = v.size(-1);
  return torch::cat({torch::zeros_like(v.narrow(-1, 0, 1)), v.narrow(-1, 0, n - 1).cumsum(-1)}, -1);
}

class StickbreakingFunction : public torch::autograd::Function<StickbreakingFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z) {
    const torch::Tensor log_a = torch::log_sigmoid(z) + reverse_exclusive_cumsum(torch::log_sigmoid(-z));
    torch::Tensor a = log_a.exp();
    ctx->save_for_backward({z, a});
    return a;
  }

  // d log A_j / d z_j = sigmoid(-z_j) and d log A_j / d z_k = -sigmoid(z_k) for k > j, so
  // dz_k = (dy*A)_k sigmoid(-z_k) - sigmoid(z_k) sum_{j<k} (dy*A)_j.
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& z = saved[0];
    const torch::Tensor weighted = grad_outputs[0] * saved[1];
    return {weighted * torch::sigmoid(-z) - torch::sigmoid(z) * exclusive_cumsum(weighted)};
  }
};

}  // namespace

torch::Tensor stickbreaking(const torch::Tensor& z, int64_t dim) {
  return detail::along_last_dim(z, dim,
                                [](const torch::Tensor& x) { return StickbreakingFunction::apply(x); });
}

// Its record: no parameters; the dense path only. Its weights need not sum to one, and equal
// scores get unequal weights by where they sit.
NormalizerFactory stickbreaking_normalizer() {
  return {"",
          parameterless<stickbreaking>,
          {},
          {},
          {/*rows_sum_to_one=*/false, /*shift_invariant=*/false, /*picks_among_ties=*/false,
           /*order_matters=*/true}};
}

}  // namespace lengen
