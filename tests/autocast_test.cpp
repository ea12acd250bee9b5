// AutocastScope: bf16 matrix products inside an enabled scope, fp32 inside a nested disabled
// one, and the previous state back after each.
#include "lengen/autocast.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lengen/model.h"

namespace lengen {
namespace {

TEST(Autocast, ScopesSetAndRestoreTheMatmulDtype) {
  const torch::Tensor a = torch::randn({4, 8});
  const torch::Tensor b = torch::randn({8, 3});
  ASSERT_FALSE(autocast_enabled(c10::DeviceType::CPU));
  {
    const AutocastScope bf16(c10::DeviceType::CPU, true);
    EXPECT_TRUE(autocast_enabled(c10::DeviceType::CPU));
    EXPECT_EQ(torch::matmul(a, b).scalar_type(), torch::kBFloat16);
    {
      const AutocastScope fp32(c10::DeviceType::CPU, false);
      EXPECT_FALSE(autocast_enabled(c10::DeviceType::CPU));
      EXPECT_EQ(torch::matmul(a, b).scalar_type(), torch::kFloat);
    }
    EXPECT_TRUE(autocast_enabled(c10::DeviceType::CPU));
    EXPECT_EQ(torch::matmul(a, b).scalar_type(), torch::kBFloat16);
  }
  EXPECT_FALSE(autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(torch::matmul(a, b).scalar_type(), torch::kFloat);
}

// A decoder forward under bf16 autocast computes in bf16 (its logits differ from the float32
// forward's) to bf16's precision, and still returns float32 logits.
TEST(Autocast, DecoderForwardMatchesFloat32ToBfloat16Precision) {
  ModelConfig config;
  config.layers = 1;
  config.d_model = 32;
  config.heads = 2;
  config.d_head = 16;
  config.d_mlp = 64;
  config.attention.normalizer = "entmax15";
  config.attention.scaling = "asentmax";
  torch::manual_seed(0);
  Decoder model(config, 12);
  const torch::Tensor tokens = torch::randint(0, 12, {2, 9});
  torch::NoGradGuard no_grad;
  const torch::Tensor reference = model->forward(tokens);
  const AutocastScope bf16(c10::DeviceType::CPU, true);
  const torch::Tensor logits = model->forward(tokens);
  EXPECT_EQ(logits.scalar_type(), torch::kFloat);
  const double error = (logits - reference).abs().max().item<double>();
  EXPECT_GT(error, 0.0);
  EXPECT_LT(error, 0.05 * (1 + reference.abs().max().item<double>()));
}

}  // namespace
}  // namespace lengen
