#pragma once
// The threshold searches of sparsemax and 1.5-entmax, written once over any source of the
// positive parts at a trial threshold t (PositiveParts: count, sum, sum of squares and min of
// c - t over the entries c > t): the row kernels pass their candidates in double, the fused
// attention a whole row of scores in float vectors when most of the row is a candidate.
#include <cmath>

#include "lengen/row_kernels.h"

namespace lengen::detail {

// Newton steps beyond which the 1.5-entmax search accepts its closed form (only reached by
// round-off when an entry sits exactly on the threshold).
constexpr int kMaxEntmax15NewtonSteps = 64;
// Passes beyond which Michelot's iteration stops (each pass but the last removes at least one
// entry, so only round-off could get here).
constexpr int kMaxMichelotSteps = 256;

// 1.5-entmax's exact threshold without sorting, from `lower` (a lower bound: -1 always is one).
// f(t) = sum [X - t]_+^2 is convex and decreasing, so Newton steps from a lower bound stay below
// the threshold and the set S = {X > t} shrinks towards the support. At each step the
// closed-form root of sum_S (X - t)^2 = 1 is tried: when every entry of S stays above it, S is
// the support and the root is exact.
template <class PartsAt>
double entmax15_search(const PartsAt& parts_at, double lower) {
  for (int step = 0;; ++step) {
    const PositiveParts s = parts_at(lower);
    const double mean = s.sum / s.count;
    const double spread = s.sum_sq - s.sum * mean;
    if (spread <= 1) {
      const double root = mean - std::sqrt((1 - spread) / s.count);
      if (root <= s.min || step == kMaxEntmax15NewtonSteps) return lower + root;
    }
    const double newton = (s.sum_sq - 1) / (2 * s.sum);
    if (!(newton > 0) || step == kMaxEntmax15NewtonSteps) return lower;
    lower += newton;
  }
}

// sparsemax's threshold by Michelot's algorithm from `lower` (a lower bound: -1 always is one,
// as p <= 1): tau = t + (sum (c - t) - 1)/count over the entries above t never exceeds the true
// threshold, so S keeps the support while shrinking, and tau is exact once a pass finds as many
// entries as the last.
template <class PartsAt>
double sparsemax_search(const PartsAt& parts_at, double lower) {
  double tau = lower;
  double count = -1;
  for (int step = 0; step < kMaxMichelotSteps; ++step) {
    const PositiveParts s = parts_at(tau);
    if (s.count == count || s.count == 0) break;
    count = s.count;
    tau += (s.sum - 1) / s.count;
  }
  return tau;
}

}  // namespace lengen::detail
