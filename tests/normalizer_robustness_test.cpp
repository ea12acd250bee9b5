// The known failure cases of the Python entmax library (docs/method.md, "Normalizers"):
// fully masked rows, ties, extreme logits, a single key, long rows, low precision.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "lengen/attention_choices.h"
#include "lengen/normalizer_registry.h"
#include "lengen/normalizers.h"

namespace lengen {
namespace {

constexpr double kInfValue = std::numeric_limits<double>::infinity();

// Every registered variant: a normalizer is tested here by being registered.
struct Normalizer {
  std::string name;
  std::function<torch::Tensor(const torch::Tensor&)> normalize;
  NormalizerTraits traits;
};

std::vector<Normalizer> all_normalizers() {
  std::vector<Normalizer> out;
  for (const NormalizerVariant& variant : normalizer_variants()) {
    out.push_back({variant.label, variant_normalizer(variant), normalizer_factory(variant.spec.name).traits});
  }
  return out;
}

bool finite(const torch::Tensor& t) { return torch::isfinite(t.to(torch::kDouble)).all().item<bool>(); }

TEST(NormalizerRobustness, FullyMaskedRowsGiveZerosAndZeroGradient) {
  for (auto dtype : {torch::kFloat, torch::kDouble, torch::kBFloat16}) {
    for (const auto& [name, normalize, traits] : all_normalizers()) {
      const torch::Tensor z = torch::full({3, 5}, -kInfValue, dtype).requires_grad_(true);
      const torch::Tensor p = normalize(z);
      EXPECT_EQ(p.to(torch::kDouble).abs().sum().item<double>(), 0.0) << name;
      const torch::Tensor dz = torch::autograd::grad({(p * torch::ones_like(p)).sum()}, {z})[0];
      EXPECT_EQ(dz.to(torch::kDouble).abs().sum().item<double>(), 0.0) << name;
    }
  }
}

TEST(NormalizerRobustness, TiesAreSplitEvenly) {
  const torch::Tensor z = torch::tensor({{2.0, 2.0, 2.0, -1.0}, {0.0, 0.0, 0.0, 0.0}}, torch::kDouble);
  for (const auto& [name, normalize, traits] : all_normalizers()) {
    if (traits.order_matters) continue;
    const torch::Tensor p = normalize(z);
    EXPECT_NEAR(p[0][0].item<double>(), p[0][2].item<double>(), 1e-12) << name;
    EXPECT_NEAR(p[1][0].item<double>(), 0.25, 1e-12) << name;
    EXPECT_NEAR(p[1][3].item<double>(), 0.25, 1e-12) << name;
  }
  EXPECT_EQ((topk_softmax(torch::zeros({1, 8}), 3) > 0).sum().item<int64_t>(), 3);
}

TEST(NormalizerRobustness, ExtremeLogitsStayFinite) {
  for (auto dtype : {torch::kFloat, torch::kBFloat16}) {
    const torch::Tensor z =
        torch::tensor({{1e4, -1e4, 0.0, 1e4 - 0.5}, {-1e4, -1e4 + 1, -kInfValue, -1e4 + 0.25}}, dtype)
            .requires_grad_(true);
    for (const auto& [name, normalize, traits] : all_normalizers()) {
      const torch::Tensor p = normalize(z);
      EXPECT_TRUE(finite(p)) << name;
      if (traits.rows_sum_to_one) {
        EXPECT_NEAR(p.to(torch::kDouble).sum(-1).min().item<double>(), 1.0, 1e-2) << name;
      }
      const torch::Tensor dz = torch::autograd::grad({(p * torch::randn(p.sizes())).sum()}, {z})[0];
      EXPECT_TRUE(finite(dz)) << name;
    }
  }
}

TEST(NormalizerRobustness, SingleKeyGetsAllTheWeight) {
  for (const auto& [name, normalize, traits] : all_normalizers()) {
    if (!traits.rows_sum_to_one) continue;
    const torch::Tensor p = normalize(torch::tensor({{-3.0}, {0.0}, {250.0}}));
    EXPECT_TRUE(torch::equal(p, torch::ones({3, 1}))) << name;
  }
}

TEST(NormalizerRobustness, RowsOfEveryLengthSumToOne) {
  torch::manual_seed(5);
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 513, 1000, 4096}) {
    const torch::Tensor z = torch::randn({3, n}) * 4;
    for (const auto& [name, normalize, traits] : all_normalizers()) {
      if (!traits.rows_sum_to_one) continue;
      const torch::Tensor p = normalize(z);
      EXPECT_LT((p.sum(-1) - 1).abs().max().item<double>(), 1e-5) << name << " n=" << n;
    }
  }
}

TEST(NormalizerRobustness, HalfPrecisionIsComputedInFp32) {
  torch::manual_seed(6);
  const torch::Tensor z = torch::randn({4, 64}) * 3;
  for (auto dtype : {torch::kBFloat16, torch::kHalf}) {
    const torch::Tensor low = z.to(dtype);
    for (const auto& [name, normalize, traits] : all_normalizers()) {
      const torch::Tensor p = normalize(low);
      EXPECT_EQ(p.scalar_type(), dtype);
      const torch::Tensor reference = normalize(low.to(torch::kFloat));
      EXPECT_TRUE(torch::equal(p, reference.to(dtype))) << name;
    }
  }
}

}  // namespace
}  // namespace lengen
