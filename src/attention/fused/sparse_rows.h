#pragma once
// Sparsemax and 1.5-entmax rows in the fused attention kernel: a lower bound on the threshold,
// the search over the keys above it (or over the whole row when most keys are candidates), and
// the weights, statistics and value sums over the keys with nonzero weight.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "layout.h"
#include "lengen/row_forward.h"
#include "lengen/threshold_search.h"
#include "scores.h"
#include "value_sums.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen::fused {

// A sparse row with more than 1 / this of its keys as candidates takes the dense summation.
constexpr int64_t kDenseRowShare = 4;

// Adds the statistics of a sparse row whose `count` nonzero weights w (of keys `keys`) are known,
// and writes its output.
inline void sum_support(const Layout& in, const float* w, const int32_t* keys, int64_t count,
                        const float* values, float* out_row, ItemStats& stats) {
  detail::Floats terms{};  // sums of w log2 w
  int64_t i = 0;
  for (; i + kWidth <= count; i += kWidth) {
    const Floats wi = detail::load_floats(w + i);
    terms += wi * detail::log2_of_weight(wi);
  }
  double w_log2_w = detail::sum_of_lanes(terms);
  for (; i < count; ++i) w_log2_w += w[i] * std::log2(static_cast<double>(w[i]));  // w[i] > 0
  weighted_sum<true>(w, keys, count, values, in.d_head, out_row);
  stats.nonzero += static_cast<double>(count);
  stats.entropy -= detail::kLn2 * w_log2_w;
}

// A lower bound on the threshold of a sparsemax (power 1) or 1.5-entmax (power 2) row whose
// candidates are c = scale (x - max): with N entries above a level a, sum [c - tau]_+^power = 1
// gives tau >= a - N^(-1/power). One vector pass counts the entries above a few levels; a row
// whose weight is spread over many keys has many of them near the max, and the bound then keeps
// the threshold search and the collection to the keys near its support.
struct ThresholdBound {
  double lower = -1;
  double near_max = 0;  // entries above the first level, (max - 1/2) in candidate units
};
inline ThresholdBound threshold_lower_bound(const float* x, int64_t padded_end, float max, double scale,
                                            bool squared) {
  constexpr int kLevels = 8;
  constexpr double kLevelAt[kLevels] = {-1.0 / 2, -3.0 / 8,  -1.0 / 4,  -3.0 / 16,
                                        -1.0 / 8, -1.0 / 16, -1.0 / 32, -1.0 / 64};
  Floats level[kLevels];
  double level_c[kLevels];
  for (int m = 0; m < kLevels; ++m) {
    const auto at = static_cast<float>(max + kLevelAt[m] / scale);
    level[m] = Floats{} + at;
    level_c[m] = scale * (static_cast<double>(at) - max);  // as the candidates are computed
  }
  Ints above[kLevels] = {};
  for (int64_t i = 0; i < padded_end; i += kWidth) {
    const Floats v = detail::load_floats(x + i);
    for (int m = 0; m < kLevels; ++m) above[m] -= v > level[m];  // a true lane is -1
  }
  ThresholdBound bound;
  for (int m = 0; m < kLevels; ++m) {
    double count = 0;
    for (int j = 0; j < kWidth; ++j) count += above[m][j];
    if (m == 0) bound.near_max = count;
    if (count > 0)
      bound.lower = std::max(bound.lower, level_c[m] - (squared ? 1 / std::sqrt(count) : 1 / count));
  }
  return bound;
}

// The positive parts at t of a whole row's candidates c = scale (x - max), in float vectors
// (sums in float over blocks of kFlushEvery vectors, in double across them): the threshold search
// of a row most of whose keys are candidates, without collecting them. t is taken in float, which
// moves the threshold by at most float's resolution at t.
inline detail::PositiveParts row_positive_parts(const float* x, int64_t padded_end, float max, float scale,
                                                double t) {
  constexpr int64_t kFlushEvery = 64;
  const Floats ts = Floats{} + static_cast<float>(t);
  const Floats ones = Floats{} + 1.0f;
  const Floats infinity = Floats{} + std::numeric_limits<float>::infinity();
  Floats min = infinity;
  detail::PositiveParts out;
  for (int64_t j = 0; j < padded_end;) {
    Floats count{}, sum{}, sum_sq{};
    const int64_t block_end = std::min(padded_end, j + kFlushEvery * kWidth);
    for (; j < block_end; j += kWidth) {
      const Floats d = (detail::load_floats(x + j) - max) * scale - ts;
      const auto positive = d > 0.0f;
      const Floats kept = positive ? d : Floats{};
      count += positive ? ones : Floats{};
      sum += kept;
      sum_sq += kept * kept;
      min = positive ? (d < min ? d : min) : min;
    }
    out.count += detail::sum_of_lanes(count);
    out.sum += detail::sum_of_lanes(sum);
    out.sum_sq += detail::sum_of_lanes(sum_sq);
  }
  for (int j = 0; j < kWidth; ++j) out.min = std::min(out.min, static_cast<double>(min[j]));
  return out;
}

// A sparse row most of whose keys are candidates (near uniform, as at random initialisation):
// the weights of the whole row in one vector pass with their statistics, and the values summed
// in key order, which beats gathering them by index. Float arithmetic of the dense row kernels.
// With a group slot the weights are left there for the group's joint value pass (out_row is then
// not written).
inline void attend_dense_sparse_row(const Layout& in, bool entmax15, const float* x, int64_t end, float max,
                                    double tau, const float* values, Buffers& buffers, float* group_slot,
                                    float* out_row, ItemStats& stats) {
  constexpr int64_t kFlushEvery = 64;  // vectors summed in float before a double
  const auto t = static_cast<float>(tau);
  const float scale = entmax15 ? 0.5f : 1.0f;
  const int64_t padded_end = round_up(end, kWidth);
  float* w = group_slot != nullptr ? group_slot : at_least(buffers.weights, padded_end);
  Ints nonzero{};
  // The weight is v or v^2 with v = [c - t]_+, so -w ln w = -power ln 2 w log2 v: the log of v,
  // which is there before the square.
  double w_log2_v = 0;
  for (int64_t j = 0; j < padded_end;) {
    Floats terms{};
    const int64_t block_end = std::min(padded_end, j + kFlushEvery * kWidth);
    for (; j < block_end; j += kWidth) {
      Floats v = (detail::load_floats(x + j) - max) * scale - t;
      v = v > 0.0f ? v : Floats{};
      const Floats weight = entmax15 ? v * v : v;
      detail::store_floats(w + j, weight);
      terms += weight * detail::log2_of_weight(v);
      nonzero -= weight > 0.0f;  // a true lane is -1
    }
    w_log2_v += detail::sum_of_lanes(terms);
  }
  if (group_slot == nullptr) weighted_sum<false>(w, nullptr, end, values, in.d_head, out_row);
  for (int j = 0; j < kWidth; ++j) stats.nonzero += nonzero[j];
  stats.entropy -= (entmax15 ? 2 : 1) * detail::kLn2 * w_log2_v;
}

// A sparsemax or 1.5-entmax row: its threshold from the keys within reach of the max (the
// normalizer's own search, so the threshold of the dense path up to rounding), then weights,
// values and statistics over those keys only. A row most of whose keys are candidates leaves its
// weights in group_slot when there is one, and returns true: its values are summed with the
// group's. previous_tau is the threshold of the block's previous row (NaN before the first), a
// starting point that saves the count at several levels and, for whole rows, most of the search.
inline bool attend_sparse_row(const Layout& in, bool entmax15, const float* x, int64_t end, float max,
                              const float* values, Buffers& buffers, float* group_slot, float* out_row,
                              double& previous_tau, ItemStats& stats) {
  const double scale = entmax15 ? 0.5 : 1.0;
  const int64_t padded_end = round_up(end, kWidth);
  const auto whole_row = [&](double tau) {
    attend_dense_sparse_row(in, entmax15, x, end, max, tau, values, buffers, group_slot, out_row, stats);
    return group_slot != nullptr;
  };
  const auto dense_row = [&](double lower, const detail::PositiveParts* parts_at_lower) {
    // The search passes over the row itself, in float vectors.
    const auto parts_at = [&](double t) {
      if (parts_at_lower != nullptr && t == lower) return *parts_at_lower;
      return row_positive_parts(x, padded_end, max, static_cast<float>(scale), t);
    };
    previous_tau =
        entmax15 ? detail::entmax15_search(parts_at, lower) : detail::sparsemax_search(parts_at, lower);
    return whole_row(previous_tau);
  };
  // A few entries below a level in candidate units are kept that rounding might otherwise drop
  // (they add nothing: the search drops what lies below its bracket).
  const auto floor_at = [&](double level) {
    return static_cast<float>(max + level / scale) - 1e-6f * (std::abs(max) + 1);
  };
  // Keys up to candidate -1 lie below every threshold (-1 bounds it from below): under ALiBi all
  // but the nearest few hundred keys of a long row. The passes below start at the first block of
  // keys above them, and every lower bound is taken at -1 or above.
  const int64_t skip = first_above(x, end, floor_at(-1));
  double lower;  // a lower bound on the threshold, -1 or above
  if (!std::isnan(previous_tau)) {
    // Neighbouring rows of a block have about the same threshold relative to their max. It is a
    // lower bound on this row's when the weight above it is at least 1 (the weight falls as the
    // threshold rises), and then the search starts there. Otherwise it lies above this row's
    // threshold, and one Newton step down gives a lower bound: the weight above t, sum [c -
    // t]_+^power, is convex in t, so its tangent at the hint lies below it and reaches 1 at or
    // below the threshold. One pass of positive parts, cheaper than the count at several levels.
    const detail::PositiveParts parts =
        row_positive_parts(x + skip, padded_end - skip, max, static_cast<float>(scale), previous_tau);
    const double mass = entmax15 ? parts.sum_sq : parts.sum;
    const double falls_by = entmax15 ? 2 * parts.sum : parts.count;  // minus the tangent's slope
    const bool hint_below = mass >= 1;
    lower = hint_below ? previous_tau : std::max(-1.0, previous_tau - (1 - mass) / falls_by);
    if (parts.count > static_cast<double>(end / kDenseRowShare))
      return dense_row(lower, hint_below ? &parts : nullptr);
  } else {
    const ThresholdBound bound = threshold_lower_bound(x + skip, padded_end - skip, max, scale, entmax15);
    lower = bound.lower;
    if (bound.near_max > static_cast<double>(end / kDenseRowShare)) return dense_row(lower, nullptr);
  }
  int32_t* keys = at_least(buffers.keys, end + kWidth);
  detail::Candidates& candidates = buffers.candidates;
  candidates.collect_listed(x + skip, end - skip, floor_at(lower), max, scale, keys);
  const auto count = static_cast<int64_t>(candidates.size());
  for (int64_t i = 0; i < count; ++i) keys[i] += static_cast<int32_t>(skip);
  const double tau = entmax15 ? detail::entmax15_threshold(candidates, lower)
                              : detail::sparsemax_threshold(candidates, lower);
  previous_tau = tau;
  if (count > end / kDenseRowShare) return whole_row(tau);
  // The weights of the candidates (in a loop of their own, so that it vectorizes), then those
  // that are nonzero packed to the front with their keys. In float as on the dense path (a
  // candidate in float is x - max, or (x - max)/2, exactly as the row kernels compute it), so
  // that an entry at the threshold gets the same zero.
  const double* c = candidates.begin();
  const auto t = static_cast<float>(tau);
  float* w = at_least(buffers.weights, count);
  for (int64_t i = 0; i < count; ++i) {
    const float v = static_cast<float>(c[i]) - t;
    w[i] = v > 0 ? v : 0.0f;
  }
  if (entmax15) {
    for (int64_t i = 0; i < count; ++i) w[i] *= w[i];
  }
  int32_t* support = at_least(buffers.support, count);
  int64_t nonzero = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float weight = w[i];
    support[nonzero] = keys[i];
    w[nonzero] = weight;
    nonzero += weight > 0;
  }
  sum_support(in, w, support, nonzero, values, out_row, stats);
  return false;
}

}  // namespace lengen::fused
