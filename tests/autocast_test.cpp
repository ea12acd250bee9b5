// AutocastScope: bf16 matrix products inside an enabled scope, fp32 inside a nested disabled
// one, and the previous state back after each.
#include "lengen/autocast.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lengen/decoder.h"
#include "model_test_util.h"

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
  torch::manual_seed(0);
  Decoder model(testing::tiny_model_config("entmax15", "asentmax", "nape"), 12);
  const torch::Tensor tokens = testing::random_tokens(2, 9, 12, 1);
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
