// entmax's Newton threshold search (the fused CPU kernel for integer e = 1/(alpha-1): alpha 1.25,
// 4/3, and 1.5 and 2 when alpha is a tensor) on what the golden table's short rows do not reach:
// long rows that span many of the kernel's float blocks and lane tails, ties, and rows with a
// single finite score; and the bracketing solver of the other alphas on short attention rows.
// The reference is the composed-ATen path in double (bisection to the last bit).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <vector>

#include "lengen/normalizers.h"

namespace lengen {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// alpha as a tensor: the solver's path for every alpha (a double 1.5 or 2 takes entmax15's or
// sparsemax's closed form).
torch::Tensor as_tensor(double alpha) { return torch::full({}, alpha, torch::kDouble); }

// entmax by the composed-ATen path, in double.
torch::Tensor aten_reference(const torch::Tensor& z, double alpha) {
  struct ForceAten {
    ForceAten() { set_force_aten_normalizers(true); }
    ~ForceAten() { set_force_aten_normalizers(false); }
  } force_aten;
  return entmax(z.to(torch::kDouble), as_tensor(alpha));
}

// [rows, n] scores ~ N(0, spread^2) where row r keeps its first lengths[r] entries (the rest at
// -inf, like a causal mask's tail), lengths spread over [1, n]. In double, but float values, so
// that float rows see the same scores.
torch::Tensor ragged_scores(int64_t rows, int64_t n, double spread) {
  const torch::Tensor lengths = torch::randint(1, n + 1, {rows, 1});
  const torch::Tensor beyond = torch::arange(n).view({1, n}) >= lengths;
  return (torch::randn({rows, n}) * spread).masked_fill(beyond, -kInf).to(torch::kDouble);
}

double max_error(const torch::Tensor& actual, const torch::Tensor& expected) {
  return (actual.to(torch::kDouble) - expected).abs().max().item<double>();
}

TEST(EntmaxNewton, LongRaggedRowsMatchTheAtenPath) {
  torch::manual_seed(11);
  for (double alpha : {1.25, 4.0 / 3.0, 1.5, 2.0}) {
    for (double spread : {1.0, 6.0}) {
      SCOPED_TRACE("alpha " + std::to_string(alpha) + " spread " + std::to_string(spread));
      const torch::Tensor z = ragged_scores(48, 4096, spread);
      const torch::Tensor expected = aten_reference(z, alpha);
      EXPECT_LT(max_error(entmax(z, as_tensor(alpha)), expected), 1e-13);
      // Float rows: a few float ulps of the largest p (~1e-2..1).
      const torch::Tensor p_float = entmax(z.to(torch::kFloat), as_tensor(alpha));
      EXPECT_EQ(p_float.scalar_type(), torch::kFloat);
      // The ATen path's float rows are off by up to ~1e-7 here too.
      EXPECT_LT(max_error(p_float, expected), 2.5e-7);
      EXPECT_LT(max_error(p_float.sum(-1), torch::ones({48}, torch::kDouble)), 2e-6);
      EXPECT_TRUE(p_float.masked_select(z.isinf()).eq(0).all().item<bool>()) << "masked scores get exactly 0";
    }
  }
}

TEST(EntmaxNewton, TiedScoresGiveUniformWeights) {
  for (torch::ScalarType dtype : {torch::kDouble, torch::kFloat}) {
    // 4096 equal scores, then 37 equal scores followed by -inf.
    torch::Tensor z = torch::full({2, 4096}, 0.7, torch::kDouble);
    z[1].narrow(0, 37, 4096 - 37).fill_(-kInf);
    torch::Tensor expected = torch::zeros_like(z);
    expected[0].fill_(1.0 / 4096);
    expected[1].narrow(0, 0, 37).fill_(1.0 / 37);
    const double tolerance = dtype == torch::kDouble ? 1e-15 : 1e-8;
    for (double alpha : {1.25, 4.0 / 3.0, 1.5, 2.0}) {
      EXPECT_LT(max_error(entmax(z.to(dtype), as_tensor(alpha)), expected), tolerance)
          << dtype << " alpha " << alpha;
    }
  }
}

TEST(EntmaxNewton, OneFiniteScoreTakesAllTheMassAndMaskedRowsAreZero) {
  for (torch::ScalarType dtype : {torch::kDouble, torch::kFloat}) {
    torch::Tensor z = torch::full({3, 100}, -kInf, torch::kDouble);
    z[0][63] = 2.5;
    z[1][0] = -1e4;
    torch::Tensor expected = torch::zeros_like(z);
    expected[0][63] = 1;
    expected[1][0] = 1;
    for (double alpha : {1.25, 4.0 / 3.0, 1.5, 2.0}) {
      const torch::Tensor p = entmax(z.to(dtype), as_tensor(alpha));
      EXPECT_TRUE(torch::isfinite(p).all().item<bool>()) << dtype << " alpha " << alpha;
      EXPECT_EQ(max_error(p, expected), 0.0) << dtype << " alpha " << alpha;
    }
  }
}

// Alpha above 2 (e = 1/(alpha-1) < 1): f has an unbounded slope at each support edge. On the
// first row (an attention row of a random model, alpha 3) Halley's steps alternate near the two
// ends of the bracket; on the second a score sits 6e-8 inside the support's edge, where Halley's
// first step is 2e-7 long with f at 0.26. Either way a threshold off by 1e-3 or more would be
// hidden by the renormalisation. Plus many short rows of close scores, as at initialisation.
TEST(EntmaxBracketing, ShortRowsOfCloseScoresMatchTheAtenPath) {
  const std::vector<double> row = {0.122327946, 0.971219838, 0.224125668, 0.765421152, 0.758793712,
                                   -0.891712248, 0.766289711, -0.361818224, 0.780853212, -0.437853873,
                                   -0.172589719, 0.388966173, -0.832850516, -0.652163088, 0.122428276,
                                   -0.0818144977, -0.030105425, 0.065685533, 0.100859642};
  torch::manual_seed(12);
  torch::Tensor z = ragged_scores(2000, 40, 0.5);
  z[0].narrow(0, 0, 19).copy_(torch::tensor(row, torch::kDouble));
  z[0].narrow(0, 19, 21).fill_(-kInf);
  // float(-0.421453327) - 0.5 rounds to within 3e-8 below -0.921453297: alpha 3's support edge.
  const std::vector<double> edge = {-2.42145324, -0.886993349, -2.11113691, -0.921453297, -0.421453327};
  z[1].narrow(0, 0, 5).copy_(torch::tensor(edge, torch::kDouble));
  z[1].narrow(0, 5, 35).fill_(-kInf);
  for (double alpha : {1.7, 2.5, 3.0}) {
    SCOPED_TRACE("alpha " + std::to_string(alpha));
    const torch::Tensor expected = aten_reference(z, alpha);
    EXPECT_LT(max_error(entmax(z, as_tensor(alpha)), expected), 1e-12);
    EXPECT_LT(max_error(entmax(z.to(torch::kFloat), as_tensor(alpha)), expected), 2e-3);
  }
}

}  // namespace
}  // namespace lengen
