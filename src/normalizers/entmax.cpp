// alpha-entmax for any alpha > 1: p = [(alpha-1)z - tau]_+^(1/(alpha-1)), tau found by a root
// finder, alpha a double or a per-row tensor that may be learned.
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lengen/errors.h"
#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "lengen/row_forward.h"
#include "lengen/row_kernels.h"
#include "normalizer_record.h"
#include "row_normalizer.h"

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

// dz = g*dy - (sum(g*dy)/sum(g))*g with g = p^(2-alpha); d alpha as in docs/method.md ("Learned alpha").
variable_list entmax_backward_aten(const torch::Tensor& p, const torch::Tensor& dy,
                                   const torch::Tensor& alpha, bool needs_alpha_grad) {
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

torch::Tensor entmax_forward_cpu(const torch::Tensor& z, const torch::Tensor& alpha) {
  const detail::RowAlphaStorage alphas = detail::row_alpha(alpha, z);
  return detail::fused_rows_forward(
      z, [&](const auto* z_data, auto* p_data, int64_t n, int64_t begin, int64_t end) {
        detail::entmax_rows(z_data, p_data, n, alphas.rows, begin, end);
      });
}

class EntmaxFunction : public torch::autograd::Function<EntmaxFunction> {
 public:
  // alpha: broadcastable to z, size 1 along the last dim, z's dtype.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& z, const torch::Tensor& alpha) {
    torch::Tensor p = detail::use_fused_cpu(z) ? entmax_forward_cpu(z, alpha) : entmax_forward_aten(z, alpha);
    ctx->save_for_backward({p, alpha});
    return p;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    if (detail::use_fused_cpu(saved[0])) {
      const detail::RowAlphaStorage alphas = detail::row_alpha(saved[1], saved[0]);
      detail::FamilyGrads grads = detail::entmax_family_backward_cpu(saved[0], grad_outputs[0], alphas.rows,
                                                                     ctx->needs_input_grad(1));
      if (!grads.d_alpha.defined()) return {grads.dz, torch::Tensor()};
      return {grads.dz, grads.d_alpha.to(saved[1].scalar_type()).sum_to_size(saved[1].sizes())};
    }
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
  // The two usual alphas have exact closed-form kernels (same values and gradients, no solver);
  // a tensor alpha always takes the solver.
  if (alpha == 1.5) return entmax15(z, dim);
  if (alpha == 2.0) return sparsemax(z, dim);
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

namespace {

NormalizerFn make_entmax(const NormalizerSpec& spec) {
  if (!(spec.alpha > 1.0) || !std::isfinite(spec.alpha)) {
    throw UserError("normalizer 'entmax' needs alpha > 1, got " + std::to_string(spec.alpha));
  }
  const double alpha = spec.alpha;
  return [alpha](const torch::Tensor& z, const torch::Tensor& learned) {
    return learned.defined() ? entmax(z, learned) : entmax(z, alpha);
  };
}

// As entmax dispatches itself: alpha near 1 is softmax, 1.5 and 2 have their closed forms, a
// learned alpha always takes the general solver.
std::optional<FusedRow> fused_entmax(const NormalizerSpec& spec, bool learned) {
  if (learned) return FusedRow{FusedRowKernel::kEntmax};
  if (std::abs(spec.alpha - 1) < detail::kSoftmaxAlphaTolerance) return FusedRow{FusedRowKernel::kSoftmax};
  if (spec.alpha == 1.5) return FusedRow{FusedRowKernel::kEntmax15};
  if (spec.alpha == 2.0) return FusedRow{FusedRowKernel::kSparsemax};
  return FusedRow{FusedRowKernel::kEntmax, spec.alpha};
}

}  // namespace

// Its record: alpha from the config (or learned per head), the fused attention's rows for it.
NormalizerFactory entmax_normalizer() {
  return {"",
          make_entmax,
          fused_entmax,
          // A tensor alpha (a learned one, say) takes the general solver, not entmax15's closed form.
          {{"entmax alpha=1.5", spec_of("entmax", 1.5)},
           {"entmax alpha=1.25", spec_of("entmax", 1.25)},
           {"entmax alpha=[1.5]", spec_of("entmax", 1.5), true},
           checked_only({"entmax alpha=2", spec_of("entmax", 2.0)}),
           checked_only({"entmax alpha=3", spec_of("entmax", 3.0)}),
           checked_only({"entmax alpha=[1.7]", spec_of("entmax", 1.7), true})},
          {}};
}

}  // namespace lengen
