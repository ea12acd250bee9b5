// Closed-form backwards against finite differences in double, for the scores and for alpha.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "gradcheck.h"
#include "lengen/learned_alpha.h"
#include "lengen/normalizer_registry.h"
#include "lengen/normalizers.h"

namespace lengen {
namespace {

using testing::gradcheck_error;

constexpr double kGradientTolerance = 1e-6;
constexpr double kInfScore = std::numeric_limits<double>::infinity();

// Scores with a causal mask (row i sees keys 0..i) and a fully masked first row.
torch::Tensor masked_scores(int64_t rows, int64_t n) {
  torch::manual_seed(7);
  torch::Tensor z = torch::randn({rows, n}, torch::kDouble) * 1.5;
  z = z.masked_fill(torch::ones({rows, n}, torch::kBool).triu(2), -kInfScore);
  z[0].fill_(-kInfScore);
  return z;
}

// Every registered variant (a normalizer is checked here by being registered), and a few inputs of
// their own: adaptive softmax's sharpening branch, a normalizer along dim 0.
TEST(NormalizerGradient, ScoresMatchFiniteDifferences) {
  const torch::Tensor z = masked_scores(6, 9);
  std::vector<std::pair<std::string, std::function<torch::Tensor(const torch::Tensor&)>>> cases = {
      {"adaptive_softmax sharp", [](const torch::Tensor& x) { return adaptive_softmax(x * 0.1); }},
      {"entmax15 dim 0", [](const torch::Tensor& x) { return entmax15(x.t(), 0); }},
  };
  for (const NormalizerVariant& variant : normalizer_variants()) {
    cases.push_back({variant.label, variant_normalizer(variant)});
  }
  for (const auto& [name, f] : cases) EXPECT_LT(gradcheck_error(f, z), kGradientTolerance) << name;
}

TEST(NormalizerGradient, AlphaMatchesFiniteDifferences) {
  const torch::Tensor z = masked_scores(6, 9);
  for (double a : {1.1, 1.5, 1.9, 2.5}) {
    const torch::Tensor alpha = torch::full({6, 1}, a, torch::kDouble) + torch::arange(6).view({6, 1}) * 0.01;
    EXPECT_LT(gradcheck_error([&](const torch::Tensor& x) { return entmax(z, x); }, alpha), kGradientTolerance) << a;
  }
  // One alpha per head, broadcast over batch and queries.
  torch::manual_seed(8);
  const torch::Tensor scores = torch::randn({2, 3, 4, 5}, torch::kDouble);
  const torch::Tensor per_head = torch::tensor({1.2, 1.5, 1.8}, torch::kDouble).view({1, 3, 1, 1});
  EXPECT_LT(gradcheck_error([&](const torch::Tensor& x) { return entmax(scores, x); }, per_head), kGradientTolerance);
  EXPECT_LT(gradcheck_error([&](const torch::Tensor& x) { return entmax(x, per_head); }, scores), kGradientTolerance);
}

TEST(NormalizerGradient, LearnedAlphaStaysInRangeAndLearns) {
  LearnedAlpha learned(4, 1.5);
  EXPECT_TRUE(torch::allclose(learned->forward(), torch::full({4}, 1.5)));
  EXPECT_NEAR(LearnedAlpha(1, 2.0)->forward().item<double>(), 1.99, 1e-6);
  EXPECT_THROW(LearnedAlpha(1, 1.0), std::exception);
  const torch::Tensor scores = torch::randn({2, 4, 3, 6});
  const torch::Tensor p = entmax(scores, learned->forward().view({1, -1, 1, 1}));
  (p * torch::randn(p.sizes())).sum().backward();
  const torch::Tensor grad = learned->parameters()[0].grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_TRUE(torch::isfinite(grad).all().item<bool>());
  EXPECT_GT(grad.abs().sum().item<double>(), 0.0);
  {
    torch::NoGradGuard no_grad;
    learned->parameters()[0].fill_(-100.0);
  }
  EXPECT_NEAR(learned->forward().min().item<double>(), LearnedAlphaImpl::kMinAlpha, 1e-6);
}

}  // namespace
}  // namespace lengen
