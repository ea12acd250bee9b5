// Length scaling, position encodings and masking (docs/method.md, "Length scaling" and
// "Position encodings"), checked against hand-computed values.
#include "lengen/attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "lengen/attention_choices.h"
#include "lengen/errors.h"
#include "lengen/length_scaling.h"
#include "lengen/positions.h"
#include "model_test_util.h"

namespace lengen {
namespace {

torch::Tensor positions_row(std::vector<int64_t> values) { return torch::tensor(values).unsqueeze(0); }

TEST(LengthScaling, SsmaxIsScaleTimesLogOfPositionPlusTwo) {
  AttentionConfig config;
  config.scaling = "ssmax";
  LengthScaling scaling(config, 8, 2, 0);
  {
    torch::NoGradGuard no_grad;
    scaling->named_parameters()["scale"].copy_(torch::tensor({0.5f, 2.0f}));
  }
  auto factor = scaling(torch::zeros({1, 3, 8}), positions_row({0, 1, 5}));
  ASSERT_EQ(factor.sizes(), torch::IntArrayRef({1, 2, 3, 1}));
  for (int h = 0; h < 2; ++h) {
    double s = h == 0 ? 0.5 : 2.0;
    EXPECT_NEAR(factor[0][h][0][0].item<double>(), s * std::log(2.0), 1e-6);
    EXPECT_NEAR(factor[0][h][1][0].item<double>(), s * std::log(3.0), 1e-6);
    EXPECT_NEAR(factor[0][h][2][0].item<double>(), s * std::log(7.0), 1e-6);
  }
}

TEST(LengthScaling, LearnedIsDeltaPlusBetaTimesLogPowerGamma) {
  AttentionConfig config;
  config.scaling = "learned";
  config.scaling_delta = 1.0;
  LengthScaling scaling(config, 8, 1, 0);
  {
    torch::NoGradGuard no_grad;
    scaling->named_parameters()["beta"].fill_(0.7);
    scaling->named_parameters()["gamma"].fill_(0.3);
  }
  auto factor = scaling(torch::zeros({1, 1, 8}), positions_row({10}));
  EXPECT_NEAR(factor.item<double>(), 1.0 + 0.7 * std::pow(std::log(12.0), 0.3), 1e-6);
}

TEST(LengthScaling, AsentmaxUsesPerTokenProjections) {
  AttentionConfig config;
  config.scaling = "asentmax";
  config.scaling_delta = 1.0;
  config.scaling_gamma_range = 2.0;
  LengthScaling scaling(config, 2, 1, 0);
  {
    torch::NoGradGuard no_grad;
    auto params = scaling->named_parameters();
    params["beta_proj.weight"].copy_(torch::tensor({{0.5f, -1.0f}}));
    params["beta_proj.bias"].fill_(0.1);
    params["gamma_proj.weight"].copy_(torch::tensor({{0.3f, 0.2f}}));
    params["gamma_proj.bias"].fill_(-0.05);
  }
  auto x = torch::tensor({{{1.0f, 2.0f}}});
  auto factor = scaling(x, positions_row({6}));
  double beta = std::log1p(std::exp(0.5 * 1 - 1.0 * 2 + 0.1));
  double gamma = 2.0 * std::tanh(0.3 * 1 + 0.2 * 2 - 0.05);
  EXPECT_NEAR(factor.item<double>(), 1.0 + beta * std::pow(std::log(8.0), gamma), 1e-6);
}

TEST(LengthScaling, OnlyScaledHeadsChange) {
  AttentionConfig config;
  config.scaling = "ssmax";
  LengthScaling scaling(config, 8, 4, 2);
  auto factor = scaling(torch::zeros({1, 3, 8}), positions_row({0, 1, 2}));
  EXPECT_TRUE(torch::equal(factor.narrow(1, 0, 2), torch::ones({1, 2, 3, 1})));
  EXPECT_FALSE(torch::allclose(factor.narrow(1, 2, 2), torch::ones({1, 2, 3, 1})));
}

TEST(LengthScaling, GradientsReachEveryParameter) {
  for (std::string kind : {"ssmax", "learned", "asentmax"}) {
    AttentionConfig config;
    config.scaling = kind;
    LengthScaling scaling(config, 4, 2, 0);
    auto x = torch::randn({2, 5, 4});
    auto positions = torch::arange(5).unsqueeze(0).expand({2, 5});
    scaling(x, positions).pow(2).sum().backward();
    for (auto& param : scaling->named_parameters()) {
      ASSERT_TRUE(param.value().grad().defined()) << kind << " " << param.key();
      EXPECT_GT(param.value().grad().abs().sum().item<double>(), 0.0) << kind << " " << param.key();
    }
  }
}

TEST(LengthScaling, UnknownNameIsAUserErrorWithASuggestion) {
  AttentionConfig config;
  config.scaling = "asentmx";
  try {
    LengthScaling scaling(config, 4, 2, 0);
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'asentmax'"), std::string::npos) << e.what();
  }
}

TEST(Positions, UnknownNamesAreUserErrorsWithASuggestion) {
  AttentionConfig config;
  config.positions = "alibbi";
  try {
    PositionEncoding positions(config, 2, 4);
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    // The known names come from the table, so that a new position encoding needs no edit here.
    EXPECT_EQ(std::string(e.what()),
              "unknown positions 'alibbi' (did you mean 'alibi'?); known: " + joined_names(position_names()));
  }
}

TEST(Positions, AlibiSlopes) {
  auto linear = alibi_slopes(4, AlibiSlopes::kLinear);
  EXPECT_DOUBLE_EQ(linear[0], 1.0);
  EXPECT_DOUBLE_EQ(linear[3], 0.25);
  auto exp = alibi_slopes(4, AlibiSlopes::kExp);
  EXPECT_DOUBLE_EQ(exp[1], 0.5);
  EXPECT_DOUBLE_EQ(exp[3], 0.125);
}

TEST(Positions, AlibiBiasIsMinusSlopeTimesDistance) {
  AttentionConfig config;
  config.positions = "alibi";
  PositionEncoding encoding(config, 2, 4);
  auto bias = encoding.bias(positions_row({3}), positions_row({0, 1, 2, 3}));
  ASSERT_EQ(bias.sizes(), torch::IntArrayRef({1, 2, 1, 4}));
  EXPECT_FLOAT_EQ(bias[0][0][0][0].item<float>(), -3.0f);
  EXPECT_FLOAT_EQ(bias[0][1][0][1].item<float>(), -1.0f);  // slope 1/2, distance 2
  EXPECT_FLOAT_EQ(bias[0][1][0][3].item<float>(), 0.0f);
}

TEST(Positions, NapeSplitsHeadsIntoAlibiAndNope) {
  AttentionConfig config;
  config.positions = "nape";
  PositionEncoding encoding(config, 8, 4);
  EXPECT_EQ(encoding.first_scaled_head(), 4);
  for (int h = 0; h < 4; ++h) EXPECT_DOUBLE_EQ(encoding.slopes()[h], 1.0 / (h + 1));
  for (int h = 4; h < 8; ++h) EXPECT_DOUBLE_EQ(encoding.slopes()[h], 0.0);
  config.alibi_heads = 2;
  EXPECT_EQ(PositionEncoding(config, 8, 4).first_scaled_head(), 2);
  // More ALiBi heads than heads: the attention refuses its config before building any part.
  config.alibi_heads = 9;
  ModelConfig model;
  model.heads = 8;
  model.d_head = 4;
  model.attention = config;
  EXPECT_THROW({ Attention attention(model); }, UserError);
}

TEST(Positions, RopeScoresDependOnlyOnRelativePosition) {
  AttentionConfig config;
  config.positions = "rope";
  PositionEncoding encoding(config, 1, 8);
  torch::manual_seed(0);
  auto q = torch::randn({1, 1, 1, 8}, torch::kDouble);
  auto k = torch::randn({1, 1, 1, 8}, torch::kDouble);
  auto score = [&](int64_t i, int64_t j) {
    auto qi = encoding.rotate(q, positions_row({i}));
    auto kj = encoding.rotate(k, positions_row({j}));
    return (qi * kj).sum().item<double>();
  };
  EXPECT_NEAR(score(7, 3), score(107, 103), 1e-9);
  EXPECT_NEAR(score(0, 0), (q * k).sum().item<double>(), 1e-12);
  EXPECT_GT(std::abs(score(7, 3) - score(7, 0)), 1e-6);
  // A rotation keeps the norm.
  EXPECT_NEAR(encoding.rotate(q, positions_row({5})).norm().item<double>(), q.norm().item<double>(), 1e-12);
}

TEST(Attention, OutputsNeverDependOnFutureTokens) {
  for (std::string positions : {"nope", "rope", "alibi", "nape"}) {
    auto config = testing::tiny_model_config("entmax15", "asentmax", positions);
    torch::manual_seed(1);
    Attention attention(config);
    auto x = torch::randn({1, 6, config.d_model});
    auto pos = torch::arange(6).unsqueeze(0);
    auto changed = x.clone();
    changed.narrow(1, 4, 2).normal_();
    auto a = attention(x, pos);
    auto b = attention(changed, pos);
    EXPECT_TRUE(torch::allclose(a.narrow(1, 0, 4), b.narrow(1, 0, 4), 1e-5, 1e-6)) << positions;
    EXPECT_FALSE(torch::allclose(a.narrow(1, 4, 2), b.narrow(1, 4, 2))) << positions;
  }
}

TEST(Attention, StatisticsCountNonzeroKeysAndEntropy) {
  auto config = testing::tiny_model_config("softmax", "none", "nope");
  Attention attention(config);
  HeadStats stats;
  attention(torch::randn({2, 5, config.d_model}), torch::arange(5).unsqueeze(0).expand({2, 5}), nullptr,
            &stats);
  EXPECT_EQ(stats.rows, 10);
  // Softmax gives every visible key weight: query i sees i + 1 keys, so the mean is 3.
  for (int h = 0; h < config.heads; ++h) {
    EXPECT_NEAR(stats.nonzero_sum[h].item<double>() / stats.rows, 3.0, 1e-9);
    EXPECT_GT(stats.entropy_sum[h].item<double>(), 0.0);
    EXPECT_LT(stats.entropy_sum[h].item<double>() / stats.rows, std::log(5.0));
  }
}

}  // namespace
}  // namespace lengen
