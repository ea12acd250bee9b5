// Normalizers by name: every name builds, bad names and parameters are user errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lengen/errors.h"
#include "lengen/normalizers.h"

namespace lengen {
namespace {

TEST(NormalizerRegistry, EveryNameBuildsAndNormalizes) {
  const torch::Tensor z = torch::randn({3, 10});
  for (const std::string& name : normalizer_names()) {
    const torch::Tensor p = make_normalizer({name, 1.5, 4})(z, torch::Tensor());
    EXPECT_EQ(p.sizes(), z.sizes()) << name;
  }
}

TEST(NormalizerRegistry, UsesTheSpecParameters) {
  const torch::Tensor z = torch::randn({3, 10}, torch::kDouble);
  EXPECT_TRUE(torch::equal(make_normalizer({"entmax", 1.25, 32})(z, {}), entmax(z, 1.25)));
  EXPECT_TRUE(torch::equal(make_normalizer({"topk", 1.5, 3})(z, {}), topk_softmax(z, 3)));
  // A learned alpha passed at call time wins over spec.alpha.
  const torch::Tensor alpha = torch::tensor({1.2, 1.5, 1.9}, torch::kDouble).view({3, 1});
  EXPECT_TRUE(torch::equal(make_normalizer({"entmax", 1.25, 32})(z, alpha), entmax(z, alpha)));
}

TEST(NormalizerRegistry, RejectsUnknownNamesWithASuggestion) {
  try {
    make_normalizer({"entmax_15", 1.5, 32});
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("entmax15"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_normalizer({"entmax", 1.0, 32}), UserError);
  EXPECT_THROW(make_normalizer({"entmax", 0.5, 32}), UserError);
  EXPECT_THROW(make_normalizer({"topk", 1.5, 0}), UserError);
}

}  // namespace
}  // namespace lengen
