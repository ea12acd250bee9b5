// The exponentials of a softmax row with their sum, entropy and nonzero count in one pass, for
// the fused evaluation attention, which divides by the sum only once it has summed the values.
// LibTorch's softmax needs the row in a tensor and the statistics would cost two more passes
// (and a log per entry).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "lengen/float8.h"
#include "lengen/row_forward.h"
#include "lengen/row_kernels.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen::detail {
namespace {

constexpr int kWidth = kFloats;

// Sums in float over 8 lanes per block of kFlushEvery vectors, in double across blocks.
constexpr int64_t kFlushEvery = 64;

}  // namespace

// entropy = log S - sum e_i d_i / S with d_i = x_i - max, e_i = exp(d_i) and S = sum e_i: no
// log per entry.
LENGEN_ROW_KERNEL ExpSums softmax_exponentials(const float* x, float* e, int64_t end, float max) {
  ExpSums out;
  if (end == 0 || max == -std::numeric_limits<float>::infinity()) {
    std::memset(e, 0, sizeof(float) * end);
    return out;
  }
  const Floats maxes = Floats{} + max;
  double sum = 0, weighted = 0;
  Ints nonzero{};
  // The smallest nonzero exponential, whether dividing by the sum can flush any to 0: tracked as
  // its bits minus one, unsigned, so that a zero wraps to the largest and one min keeps it.
  typedef uint32_t Bits __attribute__((vector_size(sizeof(Floats))));
  Bits lowest = Bits{} - 1;
  int64_t i = 0;
  while (i + kWidth <= end) {
    Floats block_sum{}, block_weighted{};
    const int64_t block_end = std::min(end, i + kFlushEvery * kWidth);
    for (; i + kWidth <= block_end; i += kWidth) {
      const Floats d = load_floats(x + i) - maxes;
      const Floats ei = exp_nonpositive(d);
      store_floats(e + i, ei);
      block_sum += ei;
      // e is 0 where d is at or below kExpUnderflow (-inf included, whose product would be NaN).
      block_weighted += ei * (d > kExpUnderflow ? d : Floats{} + kExpUnderflow);
      nonzero -= ei > 0.0f;  // a true lane is -1
      Bits bits;
      std::memcpy(&bits, &ei, sizeof(bits));
      bits -= 1;
      lowest = bits < lowest ? bits : lowest;
    }
    sum += sum_of_lanes(block_sum);
    weighted += sum_of_lanes(block_weighted);
  }
  for (int j = 0; j < kWidth; ++j) out.nonzero += nonzero[j];
  // The smallest nonzero exponential.
  float low = std::numeric_limits<float>::infinity();
  for (int j = 0; j < kWidth; ++j) {
    if (lowest[j] + 1 == 0) continue;  // no nonzero exponential in this lane
    const uint32_t bits = lowest[j] + 1;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    low = std::min(low, value);
  }
  if (i < end) {
    float padded[kWidth];
    std::fill(padded, padded + kWidth, -std::numeric_limits<float>::infinity());
    std::copy(x + i, x + end, padded);
    const Floats d = load_floats(padded) - maxes;
    const Floats ei = exp_nonpositive(d);
    const Floats ed = d > kExpUnderflow ? ei * d : Floats{};
    for (int64_t j = 0; j < end - i; ++j) {
      e[i + j] = ei[j];
      sum += ei[j];
      weighted += ed[j];
      out.nonzero += ei[j] > 0;
      if (ei[j] > 0) low = std::min(low, ei[j]);
    }
  }
  out.sum = sum;
  out.entropy = std::log(sum) - weighted / sum;
  // Counted as the normalized weights are: an exponential that divided by the sum falls below
  // float's smallest subnormal is a zero weight. Recounted only when one might (rare: an
  // exponential within e^2 of exp(kExpUnderflow) times the sum, about 100 below the max).
  if (static_cast<double>(low) < std::exp(static_cast<double>(kExpUnderflow) + 2) * sum) {
    const auto inverse = static_cast<float>(1.0 / sum);
    out.nonzero = 0;
    for (int64_t k = 0; k < end; ++k) out.nonzero += e[k] * inverse > 0;
  }
  return out;
}

}  // namespace lengen::detail
