// alpha-entmax's CPU row kernels: the threshold tau of each row by Newton's method for the integer
// exponents e = 1/(alpha-1) and by Halley's method with bisection for any other alpha (entmax.cpp
// holds the op, its backward and the ATen path).
#include <algorithm>
#include <cmath>
#include <limits>

#include "lengen/normalizer_common.h"
#include "lengen/row_forward.h"
#include "lengen/row_kernels.h"

namespace lengen {
namespace {

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
  // Halley's steps can land on alternate sides of the root, each near a bracket end, so that the
  // bracket shrinks by little per step (f has an infinite slope at every support edge when
  // alpha > 2): a step is bisection whenever the last two did not halve the bracket.
  double width_one_back = upper - lower, width_two_back = 2 * width_one_back;
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
    const bool shrinking = upper - lower <= width_two_back / 2;
    width_two_back = width_one_back;
    width_one_back = upper - lower;
    const double next = (shrinking && halley > lower && halley < upper) ? halley : (lower + upper) / 2;
    // A step within tolerance ends the search only where f is at the rounding error of its sum:
    // next to a support edge, f's unbounded slope and curvature make Halley's step tiny far from
    // the root.
    const bool converged = std::abs(next - t) <= tolerance * std::abs(t) &&
                           std::abs(f) <= tolerance * static_cast<double>(candidates.size());
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

}  // namespace lengen
