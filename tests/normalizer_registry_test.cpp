// Normalizers by name: every name builds, bad names and parameters are user errors. The choices
// of each attention axis: described once, each with its factory or kind.
#include "lengen/normalizer_registry.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <set>

#include "lengen/attention_choices.h"
#include "lengen/errors.h"
#include "lengen/length_scaling.h"
#include "lengen/normalizers.h"
#include "lengen/positions.h"

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
    EXPECT_EQ(std::string(e.what()), "unknown normalizer 'entmax_15' (did you mean 'entmax15'?); known: " +
                                         joined_names(normalizer_names()));
  }
  EXPECT_THROW(make_normalizer({"entmax", 1.0, 32}), UserError);
  EXPECT_THROW(make_normalizer({"entmax", 0.5, 32}), UserError);
  EXPECT_THROW(make_normalizer({"topk", 1.5, 0}), UserError);
}

// Each axis lists each name once, with help, and every parameter an entry reads is a
// model.attention key that only entries of that axis read.
TEST(Registries, NamesAreUniqueAndDocumented) {
  auto check = [](const auto& entries, const char* axis) {
    std::set<std::string> names;
    for (const auto& entry : entries) {
      EXPECT_TRUE(names.insert(entry.name).second) << axis << " " << entry.name;
      EXPECT_FALSE(entry.help.empty()) << axis << " " << entry.name;
    }
  };
  check(normalizer_choices(), "normalizer");
  check(scaling_choices(), "scaling");
  check(position_choices(), "positions");
  EXPECT_EQ(normalizers_reading("learn_alpha"), std::vector<std::string>({"entmax"}));
}

// The config layer describes the choices, the layers above build them: every described
// normalizer has a factory and every factory a description, in the same order (the errors of
// both list the names in it).
TEST(Registries, EveryDescribedNormalizerHasAFactoryAndEveryFactoryADescription) {
  EXPECT_EQ(normalizer_factory_names(), normalizer_names());
}

// Every described scaling builds as its own kind (no two share one), and every position encoding
// as its record.
TEST(Registries, EveryDescribedScalingAndPositionBuildsAsItsKind) {
  std::set<ScalingKind> scaling_kinds;
  for (const ScalingChoice& choice : scaling_choices()) {
    AttentionConfig config;
    config.scaling = choice.name;
    EXPECT_EQ(LengthScaling(config, 8, 2, 0)->kind(), choice.kind) << choice.name;
    EXPECT_TRUE(scaling_kinds.insert(choice.kind).second) << choice.name;
  }
  // Every listed position encoding has its record, and declares to the fused kernel what it adds:
  // a rotation, slopes, or (for any other bias) the dense path.
  EXPECT_EQ(position_record_names(), position_names());
  for (const PositionChoice& choice : position_choices()) {
    AttentionConfig config;
    config.positions = choice.name;
    const PositionEncoding encoding(config, 2, 4);
    const bool sloped = std::any_of(encoding.slopes().begin(), encoding.slopes().end(),
                                    [](double slope) { return slope != 0.0; });
    const FusedTerm expected = encoding.adds_other_bias() ? FusedTerm::kDenseOnly
                               : encoding.rotates()       ? FusedTerm::kRotation
                               : sloped                   ? FusedTerm::kHeadSlopes
                                                          : FusedTerm::kNone;
    EXPECT_EQ(choice.fused, expected) << choice.name;
  }
}

// The benchmarks' table names are what `lengen bench normalizers --only` accepts and what
// BENCHMARKS.md quotes: they stay as they are, in this order (a new normalizer adds its own).
TEST(NormalizerRegistry, BenchCasesKeepTheirTableNames) {
  std::vector<std::string> labels;
  for (const NormalizerVariant& variant : normalizer_variants(true)) labels.push_back(variant.label);
  auto next = labels.begin();
  for (const char* quoted : {"softmax", "sparsemax", "entmax15", "entmax alpha=1.5", "entmax alpha=1.25",
                             "entmax alpha=[1.5]", "topk k=32", "adaptive_softmax", "stickbreaking"}) {
    next = std::find(next, labels.end(), quoted);
    ASSERT_NE(next, labels.end()) << quoted << " is missing or out of order";
  }
  const torch::Tensor z = torch::randn({3, 10});
  for (const NormalizerVariant& variant : normalizer_variants(true)) {
    EXPECT_EQ(variant_normalizer(variant)(z).sizes(), z.sizes()) << variant.label;
    if (variant.label == "entmax alpha=[1.5]") {
      EXPECT_TRUE(torch::equal(variant_normalizer(variant)(z), entmax(z, torch::full({}, 1.5))));
    }
  }
}

// The fused row of a normalizer carries the alpha the kernel must use: entmax's own closed forms
// where its alpha has one, the general solver with the configured alpha otherwise, and none for
// the normalizers without a row kernel.
TEST(NormalizerRegistry, FusedRowsFollowEntmaxsDispatchAndCarryTheirAlpha) {
  EXPECT_EQ(fused_row_kernel({"softmax"}, false)->kernel, FusedRowKernel::kSoftmax);
  EXPECT_EQ(fused_row_kernel({"entmax", 1.5}, false)->kernel, FusedRowKernel::kEntmax15);
  EXPECT_EQ(fused_row_kernel({"entmax", 2.0}, false)->kernel, FusedRowKernel::kSparsemax);
  EXPECT_EQ(fused_row_kernel({"entmax", 1.0004}, false)->kernel, FusedRowKernel::kSoftmax);
  const std::optional<FusedRow> general = fused_row_kernel({"entmax", 1.25}, false);
  ASSERT_TRUE(general.has_value());
  EXPECT_EQ(general->kernel, FusedRowKernel::kEntmax);
  EXPECT_EQ(general->alpha, 1.25);
  EXPECT_EQ(fused_row_kernel({"entmax", 1.5}, true)->kernel, FusedRowKernel::kEntmax);
  for (const std::string name : {"topk", "adaptive_softmax", "stickbreaking"}) {
    EXPECT_FALSE(fused_row_kernel({name}, false).has_value()) << name;
  }
  EXPECT_THROW(fused_row_kernel({"softmaxx"}, false), UserError);
}

// The paper's method names come from the normalizer and scaling entries.
TEST(Registries, MethodCommonNames) {
  EXPECT_EQ(method_common_name("softmax", "none"), "Softmax");
  EXPECT_EQ(method_common_name("softmax", "ssmax"), "SSMax");
  EXPECT_EQ(method_common_name("entmax15", "none"), "Entmax 1.5");
  EXPECT_EQ(method_common_name("entmax15", "asentmax"), "ASEntmax");
  EXPECT_EQ(method_common_name("stickbreaking", "none"), "Stick-breaking");
  EXPECT_EQ(method_common_name("entmax", "none"), "");
  EXPECT_EQ(method_common_name("sparsemax", "learned"), "");
  EXPECT_EQ(method_common_name("softmax", "no_such_scaling"), "");
  EXPECT_EQ(method_common_name("no_such_normalizer", "none"), "");
  EXPECT_EQ(method_display_name("entmax15", "asentmax"), "ASEntmax");
  EXPECT_EQ(method_display_name("sparsemax", "learned"), "sparsemax + learned");
}

// The benchmarks' methods: every pair with a common name, once, softmax first (their baseline).
TEST(Registries, NamedMethodsAreEveryPairWithACommonName) {
  const std::vector<NamedMethod> methods = named_methods();
  ASSERT_FALSE(methods.empty());
  EXPECT_EQ(methods.front().name, "Softmax");
  size_t pairs_with_names = 0;
  for (const std::string& normalizer : normalizer_names()) {
    for (const std::string& scaling : scaling_names()) {
      const std::string name = method_common_name(normalizer, scaling);
      if (name.empty()) continue;
      ++pairs_with_names;
      const bool listed = std::any_of(methods.begin(), methods.end(), [&](const NamedMethod& method) {
        return method.normalizer == normalizer && method.scaling == scaling && method.name == name;
      });
      EXPECT_TRUE(listed) << normalizer << " + " << scaling;
    }
  }
  EXPECT_EQ(methods.size(), pairs_with_names);
}

}  // namespace
}  // namespace lengen
