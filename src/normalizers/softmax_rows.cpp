// Softmax rows with their entropy and nonzero count, for the fused evaluation attention: one
// pass for the max, one for exp and its sums, one to scale. LibTorch's softmax needs the row in a
// tensor and the statistics would cost two more passes (and a log per entry).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "normalizers/row_forward.h"
#include "normalizers/row_kernels.h"

namespace lengen::detail {
namespace {

// Eight floats: one AVX2 register on x86-64-v3, two SSE registers on baseline x86-64.
// The helpers that take or return them are inlined into the multiversioned loops
// (LENGEN_ROW_KERNEL flattens them), so no call passes one across an ABI boundary.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float Floats __attribute__((vector_size(32)));
typedef int32_t Ints __attribute__((vector_size(32)));
constexpr int kWidth = 8;

// Scores this far below the row's max get weight exactly 0. Below about -103.97 float's exp
// rounds to 0 (the smallest subnormal is 2^-149); LibTorch's softmax gets the same zeros.
constexpr float kExpUnderflow = -103.972f;

// exp(d) for d <= 0 (Cephes' expf: a degree-6 polynomial on d - n ln 2, |error| ~1 ulp), with
// subnormal results and exact zeros below kExpUnderflow, -inf included.
Floats exp_nonpositive(const Floats& d) {
  const Floats clamped = d > kExpUnderflow ? d : Floats{} + kExpUnderflow;
  // n = round(d / ln 2) by the 1.5 * 2^23 trick (|n| < 2^22 here).
  const Floats magic = Floats{} + 12582912.0f;
  const Floats n = (clamped * 1.44269504088896341f + magic) - magic;
  const Floats r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  Floats p = Floats{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // 2^n in two factors, 2^(n + 64) and 2^-64, so that n down to -150 still scales correctly into
  // the subnormals.
  const Ints exponent = (__builtin_convertvector(n, Ints) + (127 + 64)) << 23;
  Floats scale;
  std::memcpy(&scale, &exponent, sizeof(scale));
  const Floats e = p * scale * 5.42101086242752217e-20f;
  return d > kExpUnderflow ? e : Floats{};
}

Floats load(const float* x) {
  Floats v;
  std::memcpy(&v, x, sizeof(v));
  return v;
}

void store(float* y, const Floats& v) { std::memcpy(y, &v, sizeof(v)); }

float sum_of_lanes(const Floats& v) {
  float out = 0;
  for (int j = 0; j < kWidth; ++j) out += v[j];
  return out;
}

// softmax of row x (n entries) into y; entropy = log S - sum e_i d_i / S with d_i = x_i - max and
// e_i = exp(d_i), S = sum e_i, so no log per entry. Sums in float over 8 lanes per block of
// kFlushEvery vectors, in double across blocks.
constexpr int64_t kFlushEvery = 64;

RowSummary softmax_row_summarized(const float* x, float* y, int64_t n) {
  RowSummary summary;
  const int64_t end = support_end(x, n, -std::numeric_limits<float>::infinity());
  std::memset(y + end, 0, sizeof(float) * (n - end));
  if (end == 0) return summary;
  const float max = row_max(x, end);
  const Floats maxes = Floats{} + max;
  double sum = 0, weighted = 0;
  int64_t i = 0;
  while (i + kWidth <= end) {
    Floats block_sum{}, block_weighted{};
    const int64_t block_end = std::min(end, i + kFlushEvery * kWidth);
    for (; i + kWidth <= block_end; i += kWidth) {
      const Floats d = load(x + i) - maxes;
      const Floats e = exp_nonpositive(d);
      store(y + i, e);
      block_sum += e;
      block_weighted += d > kExpUnderflow ? e * d : Floats{};
    }
    sum += sum_of_lanes(block_sum);
    weighted += sum_of_lanes(block_weighted);
  }
  if (i < end) {
    float padded[kWidth];
    std::fill(padded, padded + kWidth, -std::numeric_limits<float>::infinity());
    std::copy(x + i, x + end, padded);
    const Floats d = load(padded) - maxes;
    const Floats e = exp_nonpositive(d);
    const Floats ed = d > kExpUnderflow ? e * d : Floats{};
    for (int64_t j = 0; j < end - i; ++j) {
      y[i + j] = e[j];
      sum += e[j];
      weighted += ed[j];
    }
  }
  const float inverse = static_cast<float>(1.0 / sum);
  int64_t nonzero = 0;
  for (int64_t k = 0; k < end; ++k) {
    y[k] *= inverse;
    nonzero += y[k] > 0;
  }
  summary.nonzero = nonzero;
  summary.entropy = std::log(sum) - weighted / sum;
  return summary;
}

}  // namespace

LENGEN_ROW_KERNEL void softmax_rows_summarized(const float* z, float* p, int64_t n, int64_t begin,
                                               int64_t end, RowSummary* summaries) {
  for (int64_t row = begin; row < end; ++row)
    summaries[row] = softmax_row_summarized(z + row * n, p + row * n, n);
}

}  // namespace lengen::detail
