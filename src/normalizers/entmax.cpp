// alpha-entmax for any alpha > 1: p = [(alpha-1)z - tau]_+^(1/(alpha-1)), tau found by a root
// finder, alpha a double or a per-row tensor that may be learned.
#include <ATen/Dispatch.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lengen/normalizers.h"
#include "normalizers/normalizer_common.h"
#include "normalizers/row_kernels.h"

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

// d^e and the derivative terms d^(e-1), d^(e-2) for d > 0, with the integer exponents of the
// usual alphas (1.5, 4/3, 1.25) as products: std::pow would be the cost of the solver.
class SolverPower {
 public:
  explicit SolverPower(double e) : e_(e), integer_(integer_exponent(e)) {}

  double value(double d) const {
    switch (integer_) {
      case 1:
        return d;
      case 2:
        return d * d;
      case 3:
        return d * d * d;
      case 4: {
        const double s = d * d;
        return s * s;
      }
      default:
        return std::pow(d, e_);
    }
  }

  // Calls fn with d -> d^e as a type of its own, so that loops over it vectorize.
  template <class Fn>
  void with_value(const Fn& fn) const {
    switch (integer_) {
      case 1:
        return fn([](auto d) { return d; });
      case 2:
        return fn([](auto d) { return d * d; });
      case 3:
        return fn([](auto d) { return d * d * d; });
      case 4:
        return fn([](auto d) { return (d * d) * (d * d); });
      default:
        return fn([e = e_](auto d) { return static_cast<decltype(d)>(std::pow(d, e)); });
    }
  }

  void terms(double d, double& pe, double& pe1, double& pe2) const {
    switch (integer_) {
      case 1:
        pe2 = 0, pe1 = 1, pe = d;
        return;
      case 2:
        pe2 = 1;
        break;
      case 3:
        pe2 = d;
        break;
      case 4:
        pe2 = d * d;
        break;
      default:
        pe = std::pow(d, e_);
        pe1 = pe / d;
        pe2 = pe1 / d;
        return;
    }
    pe1 = pe2 * d;
    pe = pe1 * d;
  }

 private:
  static int integer_exponent(double e) {
    for (int k = 1; k <= 4; ++k) {
      if (std::abs(e - k) < 1e-12) return k;
    }
    return 0;
  }

  double e_;
  int integer_;
};

// Solver steps before giving up on tolerance (bisection alone needs ~55 in double).
constexpr int kMaxSolverSteps = 100;

// Halley's method with a bisection fallback on f(t) = sum [X - t]_+^e - 1, e = 1/(alpha-1),
// over the entries that can be in the support (X = (alpha-1)(z - max) > -1). The bracket
// [-1, -m^(1-alpha)] (m candidates) only narrows, and entries at or below its lower end are
// dropped as it rises. Stops when f or the step is within the dtype's epsilon, then
// renormalises.
template <class T>
void entmax_row(const T* x, T* y, int64_t n, double alpha, detail::Candidates& candidates) {
  const double alpha_minus_1 = alpha - 1;
  if (std::abs(alpha_minus_1) < detail::kSoftmaxAlphaTolerance) {
    detail::softmax_row(x, y, n);
    return;
  }
  const T max = detail::row_max(x, n);
  if (max == -std::numeric_limits<T>::infinity()) {
    std::fill(y, y + n, T(0));
    return;
  }
  const double e = 1 / alpha_minus_1;
  const SolverPower power(e);
  // Entries after `end` cannot be in the support: the passes below skip them.
  const int64_t end = candidates.collect(x, n, static_cast<T>(max - e), max, alpha_minus_1);
  const double tolerance = 4 * std::numeric_limits<T>::epsilon();
  double lower = -1;
  double upper = -std::pow(static_cast<double>(candidates.size()), -alpha_minus_1);
  double t = lower;
  for (int step = 0; step < kMaxSolverSteps; ++step) {
    size_t kept = 0;
    double f = -1, f1 = 0, f2 = 0;
    for (double value : candidates) {
      if (value <= lower) continue;
      candidates[kept++] = value;
      const double d = value - t;
      if (d <= 0) continue;
      double pe, pe1, pe2;
      power.terms(d, pe, pe1, pe2);
      f += pe;
      f1 += pe1;
      f2 += pe2;
    }
    candidates.resize(kept);
    f1 *= -e;
    f2 *= e * (e - 1);
    (f >= 0 ? lower : upper) = t;
    if (std::abs(f) <= tolerance) break;
    const double halley = t - 2 * f * f1 / (2 * f1 * f1 - f * f2);
    const double next = (halley > lower && halley < upper) ? halley : (lower + upper) / 2;
    const bool converged = std::abs(next - t) <= tolerance * std::abs(t);
    t = next;
    if (converged) break;
  }
  double sum = 0;
  for (double value : candidates) {
    if (value > t) sum += power.value(value - t);
  }
  const double scale = 1 / sum;
  const T a = static_cast<T>(alpha_minus_1);
  const T tau = static_cast<T>(t);
  const T scale_t = static_cast<T>(scale);
  for (int64_t k = 0; k < end; ++k) {
    const T v = (x[k] - max) * a - tau;
    y[k] = v > 0 ? v : T(0);
  }
  // Separate from the clamp, which otherwise becomes a branch around the power (no vectorizing).
  power.with_value([&](const auto& value) {
    for (int64_t k = 0; k < end; ++k) y[k] = value(y[k]) * scale_t;
  });
  std::fill(y + end, y + n, T(0));
}

// Rows [begin, end) of z into p; multiversioned for float (see LENGEN_ROW_KERNEL).
template <class T>
void entmax_rows_of(const T* z, T* p, int64_t n, detail::RowAlpha alphas, int64_t begin, int64_t end) {
  thread_local detail::Candidates candidates;
  for (int64_t row = begin; row < end; ++row) entmax_row(z + row * n, p + row * n, n, alphas[row], candidates);
}
LENGEN_ROW_KERNEL void entmax_rows(const float* z, float* p, int64_t n, detail::RowAlpha alphas, int64_t begin, int64_t end) {
  entmax_rows_of(z, p, n, alphas, begin, end);
}
void entmax_rows(const double* z, double* p, int64_t n, detail::RowAlpha alphas, int64_t begin, int64_t end) {
  entmax_rows_of(z, p, n, alphas, begin, end);
}

torch::Tensor entmax_forward_cpu(const torch::Tensor& z_in, const torch::Tensor& alpha) {
  const torch::Tensor z = z_in.contiguous();
  torch::Tensor p = torch::empty_like(z);
  const int64_t n = z.size(-1);
  const detail::RowAlphaStorage alphas = detail::row_alpha(alpha, z);
  AT_DISPATCH_FLOATING_TYPES(z.scalar_type(), "entmax_forward_cpu", [&] {
    const scalar_t* z_data = z.data_ptr<scalar_t>();
    scalar_t* p_data = p.data_ptr<scalar_t>();
    detail::for_each_row_range(n == 0 ? 0 : z.numel() / n, n, [&](int64_t begin, int64_t end) {
      entmax_rows(z_data, p_data, n, alphas.rows, begin, end);
    });
  });
  return p;
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

}  // namespace lengen
