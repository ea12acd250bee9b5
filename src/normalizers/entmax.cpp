// alpha-entmax for any alpha > 1: p = [(alpha-1)z - tau]_+^(1/(alpha-1)), tau found by a root
// finder, alpha a double or a per-row tensor that may be learned.
#include <cmath>
#include <limits>
#include <torch/torch.h>

#include "lengen/normalizers.h"
#include "normalizers/normalizer_common.h"

namespace lengen {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows whose alpha is within kSoftmaxAlphaTolerance of 1 are softmax rows.
torch::Tensor softmax_rows(const torch::Tensor& alpha) {
  return (alpha - 1).abs() < detail::kSoftmaxAlphaTolerance;
}

// Bisection on tau in [max - 1, max - n^(1-alpha)] (scaled scores), halving until the bracket
// is below the dtype's resolution; then p is renormalised to sum 1.
torch::Tensor entmax_forward_aten(const torch::Tensor& z, const torch::Tensor& alpha) {
  const torch::Tensor fully_masked = detail::fully_masked_rows(z);
  const torch::Tensor as_softmax = softmax_rows(alpha).expand(fully_masked.sizes());
  // Softmax rows run the solver at a harmless alpha and are replaced at the end.
  const torch::Tensor alpha_minus_1 = (alpha - 1).expand(fully_masked.sizes()).masked_fill(as_softmax, 0.5);
  const torch::Tensor x = detail::shift_by_row_max(z, fully_masked) * alpha_minus_1;
  const torch::Tensor exponent = 1 / alpha_minus_1;
  torch::Tensor lo = -torch::ones_like(alpha_minus_1);
  torch::Tensor hi = -torch::pow(static_cast<double>(z.size(-1)), -alpha_minus_1);
  const int iterations = z.scalar_type() == torch::kDouble ? std::numeric_limits<double>::digits + 2
                                                           : std::numeric_limits<float>::digits + 2;
  for (int i = 0; i < iterations; ++i) {
    const torch::Tensor mid = (lo + hi) / 2;
    const torch::Tensor mass = (x - mid).clamp_min(0).pow(exponent).sum(-1, /*keepdim=*/true);
    const torch::Tensor too_low = mass >= 1;
    lo = torch::where(too_low, mid, lo);
    hi = torch::where(too_low, hi, mid);
  }
  torch::Tensor p = (x - lo).clamp_min(0).pow(exponent);
  p = p / p.sum(-1, /*keepdim=*/true);
  p = torch::where(as_softmax, torch::softmax(z, -1), p);
  return p.masked_fill(fully_masked, 0.0);
}

// dz = g*dy - (sum(g*dy)/sum(g))*g with g = p^(2-alpha); d alpha per SPEC §1.
variable_list entmax_backward_aten(const torch::Tensor& p, const torch::Tensor& dy, const torch::Tensor& alpha,
                                   bool needs_alpha_grad) {
  const torch::Tensor as_softmax = softmax_rows(alpha);
  const torch::Tensor support = p > 0;
  const torch::Tensor g = p.pow(2 - alpha.masked_fill(as_softmax, 1.0)).masked_fill(~support, 0.0);
  torch::Tensor dz = detail::entmax_family_backward_aten(g, dy);
  if (!needs_alpha_grad) return {dz, torch::Tensor()};
  const torch::Tensor sum_g = g.sum(-1, /*keepdim=*/true);
  const torch::Tensor s = g / torch::where(sum_g > 0, sum_g, torch::ones_like(sum_g));
  const torch::Tensor p_log_p = p * torch::where(support, p, torch::ones_like(p)).log();
  const torch::Tensor entropy_term = p_log_p.sum(-1, /*keepdim=*/true);
  const torch::Tensor alpha_minus_1 = (alpha - 1).masked_fill(as_softmax, 0.5);
  torch::Tensor d_alpha =
      (dy * ((p - s) / alpha_minus_1.square() - (p_log_p - s * entropy_term) / alpha_minus_1))
          .sum(-1, /*keepdim=*/true);
  // At alpha = 1 the derivative is indeterminate; learned alpha is kept away from it.
  d_alpha = d_alpha.masked_fill(as_softmax, 0.0);
  return {dz, d_alpha.sum_to_size(alpha.sizes())};
}

class EntmaxFunction : public torch::autograd::Function<EntmaxFunction> {
 public:
  // alpha: broadcastable to z, size 1 along the last dim, z's dtype.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z, const torch::Tensor& alpha) {
    torch::Tensor p = entmax_forward_aten(z, alpha);
    ctx->save_for_backward({p, alpha});
    return p;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    return entmax_backward_aten(saved[0], grad_outputs[0], saved[1], ctx->needs_input_grad(1));
  }
};

// alpha reshaped to z's rank (leading ones), so that it follows z through along_last_dim.
torch::Tensor alpha_like(const torch::Tensor& z, const torch::Tensor& alpha, int64_t dim) {
  TORCH_CHECK(alpha.dim() <= z.dim(), "entmax: alpha has more dims than the scores");
  std::vector<int64_t> shape(z.dim() - alpha.dim(), 1);
  shape.insert(shape.end(), alpha.sizes().begin(), alpha.sizes().end());
  torch::Tensor a = alpha.reshape(shape);
  const int64_t d = dim < 0 ? dim + z.dim() : dim;
  TORCH_CHECK(d >= 0 && d < z.dim() && a.size(d) == 1, "entmax: alpha must have size 1 along dim ", dim);
  return a;
}

}  // namespace

torch::Tensor entmax(const torch::Tensor& z, double alpha, int64_t dim) {
  TORCH_CHECK(alpha > 1, "entmax: alpha must be > 1, got ", alpha);
  if (std::abs(alpha - 1) < detail::kSoftmaxAlphaTolerance) return lengen::softmax(z, dim);
  return entmax(z, torch::full({}, alpha, torch::TensorOptions().dtype(torch::kDouble)), dim);
}

torch::Tensor entmax(const torch::Tensor& z, const torch::Tensor& alpha, int64_t dim) {
  const torch::Tensor a = alpha_like(z, alpha, dim);
  const int64_t d = dim < 0 ? dim + z.dim() : dim;
  const int64_t last = z.dim() - 1;
  return detail::along_last_dim(z, dim, [&](const torch::Tensor& x) {
    torch::Tensor a_last = a.to(x.options());
    if (d != last) a_last = a_last.transpose(d, last);
    return EntmaxFunction::apply(x, a_last);
  });
}

}  // namespace lengen
