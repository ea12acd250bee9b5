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

// e when it is an integer 1..4 (alpha = 2, 1.5, 4/3, 1.25), else 0.
int integer_exponent(double e) {
  for (int k = 1; k <= 4; ++k) {
    if (std::abs(e - k) < 1e-12) return k;
  }
  return 0;
}

// d^E and d^(E-1) for d >= 0 as products, and S^(1 - 1/E) for the Newton step.
template <int E>
struct IntegerPower {
  static_assert(E >= 1 && E <= 4, "integer exponents 1..4");

  template <class V>
  static V value(V d) {
    if constexpr (E == 1) return d;
    if constexpr (E == 2) return d * d;
    if constexpr (E == 3) return d * d * d;
    if constexpr (E == 4) return (d * d) * (d * d);
  }

  // d^(E-1), 0 at d = 0: an entry outside the support adds nothing to g'.
  template <class V>
  static V below(V d) {
    if constexpr (E == 1) return d > 0 ? V{} + 1 : V{};
    if constexpr (E == 2) return d;
    if constexpr (E == 3) return d * d;
    if constexpr (E == 4) return d * d * d;
  }

  static double root_ratio(double s) {
    if constexpr (E == 1) return 1;
    if constexpr (E == 2) return std::sqrt(s);
    if constexpr (E == 3) {
      const double r = std::cbrt(s);
      return r * r;
    }
    if constexpr (E == 4) {
      const double r = std::sqrt(s);
      return r * std::sqrt(r);
    }
  }
};

// d^e and the derivative terms d^(e-1), d^(e-2) for d > 0, with the integer exponents of the
// usual alphas (1.5, 4/3, 1.25) as products: std::pow would be the cost of the solver.
class SolverPower {
 public:
  explicit SolverPower(double e) : e_(e), integer_(integer_exponent(e)) {}

  // e when it is one of 1..4, else 0.
  int integer() const { return integer_; }

  double value(double d) const {
    double out = 0;
    with_value([&](auto power) { out = power(d); });
    return out;
  }

  // Calls fn with d -> d^e as a type of its own, so that loops over it vectorize.
  template <class Fn>
  void with_value(const Fn& fn) const {
    switch (integer_) {
      case 1:
        return fn([](auto d) { return IntegerPower<1>::value(d); });
      case 2:
        return fn([](auto d) { return IntegerPower<2>::value(d); });
      case 3:
        return fn([](auto d) { return IntegerPower<3>::value(d); });
      case 4:
        return fn([](auto d) { return IntegerPower<4>::value(d); });
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
  double e_;
  int integer_;
};

// Solver steps before giving up on tolerance (bisection alone needs ~55 in double).
constexpr int kMaxSolverSteps = 100;

// The threshold search for integer e = 1/(alpha-1): Newton's method on
// g(t) = ||[X - t]_+||_e - 1 = S_e(t)^(1/e) - 1, where S_k(t) = sum [X - t]_+^k. g is convex and
// decreasing (a norm of nonnegative, convex, nonincreasing functions of t) and nearly linear
// (exactly, while the support holds entries of one value), so from a t left of the root (g >= 0;
// t = -1, where the max alone has mass 1) Newton rises monotonically, never overshoots and
// converges in a few passes: ~5 for float rows, against ~8 for Newton on the quartic S_e - 1.
// With integer e each pass is a polynomial in d = [X - t]_+ (products, no pow), so it vectorizes
// over the whole row and needs no candidate list.

// d = [X - t]_+ of one score or a vector of them, X = (x - max) * scale, in the row's type: the
// passes and the output compute it alike, so that the output is normalised by the sum of the
// same values.
template <class V>
V excess(V x, V max, V scale, V t) {
  const V d = (x - max) * scale - t;
  return d > 0 ? d : V{};
}

// S_E and S_(E-1) at one t.
struct PowerSums {
  double value = 0;
  double below = 0;
};

// The vectors that a pass handles at a time (independent sums, so that they pipeline).
constexpr int kVectorsPerGroup = 4;
// Groups summed in T before the sums are added into a double: float rows keep float vectors,
// while each float sum adds only this many terms.
constexpr int64_t kFlushEvery = 32;

// The sum of the lanes of `sums`, in double.
template <class V>
double sum_of_lanes(const V (&sums)[kVectorsPerGroup]) {
  const V total = (sums[0] + sums[1]) + (sums[2] + sums[3]);
  double out = 0;
  for (size_t j = 0; j < sizeof(V) / sizeof(total[0]); ++j) out += total[j];
  return out;
}

// S_E(t) and S_(E-1)(t) over x[0, end), in explicit 16-byte vectors (GCC leaves this loop scalar
// with a branch per entry when written with lane arrays). The last partial group runs padded
// with -inf (d = 0): a scalar tail would cost as much as the vector pass over a short row.
template <int E, class T>
PowerSums power_sums(const T* x, int64_t end, T max, T scale, T t) {
  using Power = IntegerPower<E>;
  using V = typename detail::Vector16<T>::type;
  constexpr int kWidth = detail::Vector16<T>::kWidth;
  constexpr int kGroup = kVectorsPerGroup * kWidth;
  const V maxes = V{} + max, scales = V{} + scale, ts = V{} + t;
  PowerSums sums;
  for (int64_t i = 0; i < end;) {
    V value[kVectorsPerGroup] = {}, below[kVectorsPerGroup] = {};
    const auto add_group = [&](const T* group) {
      for (int k = 0; k < kVectorsPerGroup; ++k) {
        const V d = excess(detail::load_vector<V>(group + k * kWidth), maxes, scales, ts);
        value[k] += Power::value(d);
        below[k] += Power::below(d);
      }
    };
    const int64_t block_end = std::min(end, i + kFlushEvery * kGroup);
    for (; i + kGroup <= block_end; i += kGroup) add_group(x + i);
    if (i < block_end) {
      T padded[kGroup];
      std::fill(padded, padded + kGroup, -std::numeric_limits<T>::infinity());
      std::copy(x + i, x + block_end, padded);
      add_group(padded);
      i = block_end;
    }
    sums.value += sum_of_lanes(value);
    sums.below += sum_of_lanes(below);
  }
  return sums;
}

// Newton passes before giving up (the bracketing solver then takes the row); ~5-6 are usual.
constexpr int kMaxNewtonSteps = 30;

// The threshold t (in T, as the output will use it) and S_E(t), by Newton on g from t = -1
// (see above); the step is -g/g' = (S_E - S_E^(1-1/E)) / S_(E-1). Stops when the step is within
// `tolerance` of |t| (a step at or below 0 is the rounding floor), and takes that last step
// without another pass: it is still most of t's error (Newton's error after it is of order
// step^2): without it float rows are ~4x less accurate than the ATen path; S_E moves with it to
// first order. False if it does not converge.
template <int E, class T>
bool newton_threshold(const T* x, int64_t end, T max, T scale, double tolerance, T& t, double& sum) {
  t = T(-1);
  for (int pass = 0; pass < kMaxNewtonSteps; ++pass) {
    const PowerSums sums = power_sums<E>(x, end, max, scale, t);
    if (!(sums.below > 0)) return false;
    const double step = (sums.value - IntegerPower<E>::root_ratio(sums.value)) / sums.below;
    const T next = static_cast<T>(t + step);
    if (step <= tolerance * std::abs(static_cast<double>(t))) {
      sum = sums.value - E * (static_cast<double>(next) - t) * sums.below;
      t = next;
      return true;
    }
    t = next;
  }
  return false;
}

// entmax of row x by Newton (integer E), max its finite max. False (y untouched) if the search
// did not converge.
template <int E, class T>
bool entmax_row_newton(const T* x, T* y, int64_t n, T max, double alpha_minus_1) {
  // Entries at or below max - E have X <= -1 <= t: the passes stop after the last one above.
  const int64_t end = detail::support_end(x, n, static_cast<T>(max - E));
  const T scale = static_cast<T>(alpha_minus_1);
  T t;
  double sum;
  if (!newton_threshold<E>(x, end, max, scale, 4 * std::numeric_limits<T>::epsilon(), t, sum)) return false;
  const T inverse_sum = static_cast<T>(1 / sum);
  for (int64_t k = 0; k < end; ++k) y[k] = IntegerPower<E>::value(excess(x[k], max, scale, t)) * inverse_sum;
  std::fill(y + end, y + n, T(0));
  return true;
}

// The Newton search for the integer exponents where it is faster than the bracketing solver.
template <class T>
bool entmax_row_by_newton(const T* x, T* y, int64_t n, T max, double alpha_minus_1, int exponent) {
  switch (exponent) {
    case 1:
      return entmax_row_newton<1>(x, y, n, max, alpha_minus_1);
    case 2:
      return entmax_row_newton<2>(x, y, n, max, alpha_minus_1);
    case 3:
      return entmax_row_newton<3>(x, y, n, max, alpha_minus_1);
    case 4:
      return entmax_row_newton<4>(x, y, n, max, alpha_minus_1);
    default:
      return false;
  }
}

// Halley's method with a bisection fallback on f(t) = sum [X - t]_+^e - 1, e = 1/(alpha-1),
// over the entries that can be in the support (X = (alpha-1)(z - max) > -1). The bracket
// [-1, -m^(1-alpha)] (m candidates) only narrows, and entries at or below its lower end are
// dropped as it rises. Stops when f or the step is within the dtype's epsilon, then
// renormalises. Any alpha; max is the row's finite max.
template <class T>
void entmax_row_bracketing(const T* x, T* y, int64_t n, T max, double alpha_minus_1, const SolverPower& power,
                           detail::Candidates& candidates) {
  const double e = 1 / alpha_minus_1;
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

// entmax of row x into y: softmax near alpha = 1, else over the row up to its -inf tail (a
// causal mask's; zeros for a fully masked row), by Newton for the integer exponents and the
// bracketing solver for the rest (or if Newton fails).
template <class T>
void entmax_row(const T* x, T* y, int64_t n, double alpha, detail::Candidates& candidates) {
  const double alpha_minus_1 = alpha - 1;
  if (std::abs(alpha_minus_1) < detail::kSoftmaxAlphaTolerance) {
    detail::softmax_row(x, y, n);
    return;
  }
  const int64_t finite_end = detail::support_end(x, n, -std::numeric_limits<T>::infinity());
  std::fill(y + finite_end, y + n, T(0));
  if (finite_end == 0) return;
  const T max = detail::row_max(x, finite_end);
  const SolverPower power(1 / alpha_minus_1);
  if (entmax_row_by_newton(x, y, finite_end, max, alpha_minus_1, power.integer())) return;
  entmax_row_bracketing(x, y, finite_end, max, alpha_minus_1, power, candidates);
}

}  // namespace

namespace detail {

// Rows [begin, end) of z into p; multiversioned for float (see LENGEN_ROW_KERNEL).
template <class T>
void entmax_rows_of(const T* z, T* p, int64_t n, detail::RowAlpha alphas, int64_t begin, int64_t end) {
  thread_local detail::Candidates candidates;
  for (int64_t row = begin; row < end; ++row)
    entmax_row(z + row * n, p + row * n, n, alphas[row], candidates);
}
LENGEN_ROW_KERNEL void entmax_rows(const float* z, float* p, int64_t n, detail::RowAlpha alphas,
                                   int64_t begin, int64_t end) {
  entmax_rows_of(z, p, n, alphas, begin, end);
}
void entmax_rows(const double* z, double* p, int64_t n, detail::RowAlpha alphas, int64_t begin, int64_t end) {
  entmax_rows_of(z, p, n, alphas, begin, end);
}

}  // namespace detail

namespace {

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
