// The vector exp and log of the row kernels and the fused attention against the C library's, and
// softmax's exponentials with their statistics against LibTorch's softmax.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lengen/float8.h"
#include "lengen/row_forward.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen::detail {
namespace {

// f applied to xs eight at a time (the tail padded with the last value).
template <class F>
std::vector<float> lanewise(const std::vector<float>& xs, F f) {
  std::vector<float> out(xs.size());
  for (size_t i = 0; i < xs.size(); i += kFloats) {
    Floats v{};
    for (size_t j = 0; j < kFloats; ++j) v[j] = xs[std::min(i + j, xs.size() - 1)];
    const Floats y = f(v);
    for (size_t j = 0; j < kFloats && i + j < xs.size(); ++j) out[i + j] = y[j];
  }
  return out;
}

// Floats spread over every binade from the smallest normal up to 2^20, 64 mantissas each.
std::vector<float> normal_floats() {
  std::vector<float> xs;
  for (int e = -126; e <= 20; ++e) {
    for (int m = 0; m < 64; ++m) xs.push_back(std::ldexp(1.0f + static_cast<float>(m) / 64.0f + 1e-3f, e));
  }
  return xs;
}

TEST(VectorMath, Log2OfWeightIsWithinFourTenMillionthsOfLog2) {
  const std::vector<float> xs = normal_floats();
  const std::vector<float> ys = lanewise(xs, [](const Floats& v) { return log2_of_weight(v); });
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double exact = std::log2(static_cast<double>(xs[i]));
    // Absolute near 1; beyond, the float sum of the exponent and the mantissa's log rounds at
    // float's relative resolution.
    worst = std::max(worst, std::abs(ys[i] - exact) / std::max(1.0, std::abs(exact)));
  }
  EXPECT_LT(worst, 4e-7);
}

TEST(VectorMath, EntropyTermsOfZeroAndSubnormalWeightsVanish) {
  const std::vector<float> weights = {
      0.0f, std::numeric_limits<float>::denorm_min(), 1e-40f, 1e-38f, 0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> ys = lanewise(weights, [](const Floats& v) { return v * log2_of_weight(v); });
  EXPECT_EQ(ys[0], 0.0f);
  for (float y : ys) {
    EXPECT_TRUE(std::isfinite(y));
    EXPECT_LT(std::abs(y), 1e-35f);
  }
}

TEST(VectorMath, ExpNonpositiveMatchesExpAndUnderflowsToZero) {
  std::vector<float> xs;
  for (int i = 0; i <= 4000; ++i) xs.push_back(-103.0f * static_cast<float>(i) / 4000.0f);
  const std::vector<float> ys = lanewise(xs, [](const Floats& v) { return exp_nonpositive(v); });
  for (size_t i = 0; i < xs.size(); ++i) {
    const double exact = std::exp(static_cast<double>(xs[i]));
    // Relative within a few ulp while normal; near the subnormal end, within the subnormal step.
    EXPECT_LE(std::abs(ys[i] - exact), 4e-7 * exact + 2e-45) << xs[i];
  }
  const std::vector<float> below = {
      -104.0f, -1e4f, -std::numeric_limits<float>::infinity(), -200.0f, -105.0f, -150.0f, -1e30f, -103.98f};
  for (float y : lanewise(below, [](const Floats& v) { return exp_nonpositive(v); })) EXPECT_EQ(y, 0.0f);
}

// A weight whose exponential is nonzero but falls below float's smallest subnormal once divided
// by the sum is a zero weight, as in LibTorch's softmax: keys about 100 below the max of a row
// whose sum is large, in the vector body and in the tail, with masked keys beside them. The
// exponentials may overwrite the scores.
TEST(VectorMath, SoftmaxExponentialsCountTheWeightsLibTorchKeeps) {
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  for (int64_t size : {61, 64, 203}) {
    for (float far : {-103.5f, -101.0f, -99.0f, -90.0f, -50.0f}) {
      for (bool only_last : {false, true}) {
        SCOPED_TRACE(std::to_string(size) + " keys, far " + std::to_string(far) +
                     (only_last ? ", last only" : ""));
        std::vector<float> row(static_cast<size_t>(size));
        for (int64_t j = 0; j < size; ++j) {
          const auto k = static_cast<size_t>(j);
          const bool far_key = !only_last && j % 5 == 1;
          row[k] = j % 7 == 3 ? minus_infinity : (far_key ? far : -0.01f * static_cast<float>(j % 4));
        }
        row.back() = far;  // in the tail of the sizes that have one
        const torch::Tensor scores = torch::tensor(row);
        const torch::Tensor weights = torch::softmax(scores, 0);
        const auto expected_nonzero = (weights > 0).sum().item<int64_t>();
        const double expected_entropy =
            -(weights * torch::where(weights > 0, weights.log(), torch::zeros_like(weights)))
                 .sum()
                 .item<double>();
        std::vector<float> e = row;  // in place
        const ExpSums sums = softmax_exponentials(e.data(), e.data(), size, 0.0f);
        EXPECT_EQ(sums.nonzero, expected_nonzero);
        EXPECT_NEAR(sums.entropy, expected_entropy, 1e-5);
        for (int64_t j = 0; j < size; ++j) {
          const auto k = static_cast<size_t>(j);
          EXPECT_NEAR(e[k] / sums.sum, weights[j].item<float>(), 1e-6) << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lengen::detail
