// The fused RMSNorm and gated GELU against the ATen compositions they replace (values and
// gradients, float and double, widths that are and are not multiples of the eight-float vector),
// and their backwards against finite differences in double.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "gradcheck.h"
#include "lengen/fused_layers.h"

namespace lengen {
namespace {

using Inputs = std::vector<torch::Tensor>;
using Layer = std::function<torch::Tensor(const Inputs&)>;

// The outputs and the gradients of sum(layer(inputs) * w) for a fixed random w.
Inputs outputs_and_gradients(const Layer& layer, const Inputs& values) {
  Inputs inputs;
  for (const torch::Tensor& value : values) inputs.push_back(value.detach().clone().requires_grad_(true));
  const torch::Tensor y = layer(inputs);
  torch::manual_seed(99);
  (y * torch::randn_like(y)).sum().backward();
  Inputs out = {y.detach()};
  for (const torch::Tensor& input : inputs) out.push_back(input.grad());
  return out;
}

void expect_same(const Layer& fused, const Layer& aten, const Inputs& values, double rtol, double atol) {
  const Inputs got = outputs_and_gradients(fused, values), want = outputs_and_gradients(aten, values);
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i == 0 ? "output" : "gradient of input " + std::to_string(i - 1));
    EXPECT_EQ(got[i].scalar_type(), want[i].scalar_type());
    const torch::Tensor excess = ((got[i] - want[i]).abs() - rtol * want[i].abs()).flatten();
    const int64_t worst = excess.argmax().item<int64_t>();
    EXPECT_LE(excess[worst].item<double>(), atol) << "lengen " << got[i].flatten()[worst].item<double>()
                                                   << ", ATen " << want[i].flatten()[worst].item<double>();
  }
}

const Layer kRmsNorm = [](const Inputs& in) { return rms_norm(in[0], in[1], 1e-6); };
const Layer kRmsNormAten = [](const Inputs& in) { return rms_norm_aten(in[0], in[1], 1e-6); };
const Layer kGatedGelu = [](const Inputs& in) { return gated_gelu(in[0], in[1]); };
const Layer kGatedGeluAten = [](const Inputs& in) { return gated_gelu_aten(in[0], in[1]); };

TEST(FusedLayers, RmsNormMatchesTheAtenComposition) {
  torch::manual_seed(3);
  for (const auto dtype : {torch::kFloat, torch::kDouble}) {
    for (const int64_t d : {1, 13, 128}) {
      SCOPED_TRACE(std::to_string(d) + (dtype == torch::kFloat ? " float" : " double"));
      const torch::Tensor x = torch::randn({3, 37, d}, dtype) * 3;
      const torch::Tensor weight = torch::randn({d}, dtype) * 0.5;
      const double tolerance = dtype == torch::kFloat ? 1e-5 : 1e-12;
      expect_same(kRmsNorm, kRmsNormAten, {x, weight}, tolerance, tolerance);
    }
  }
}

TEST(FusedLayers, GatedGeluMatchesTheAtenComposition) {
  torch::manual_seed(4);
  for (const auto dtype : {torch::kFloat, torch::kDouble}) {
    for (const int64_t n : {5, 64, 1003}) {
      SCOPED_TRACE(std::to_string(n) + (dtype == torch::kFloat ? " float" : " double"));
      // Gates out to +-30: both tails of the sigmoid, where GELU is 0 or the identity.
      torch::Tensor gate = torch::randn({7, n}, dtype) * 4;
      gate[0] = torch::linspace(-30, 30, n, dtype);
      const torch::Tensor up = torch::randn({7, n}, dtype);
      // float: ATen's tanh rounds to -1 where the sigmoid form still resolves the far left tail
      // (gradients of a few 1e-6 against 0).
      const double tolerance = dtype == torch::kFloat ? 1e-5 : 1e-12;
      expect_same(kGatedGelu, kGatedGeluAten, {gate, up}, tolerance, tolerance);
    }
  }
}

// Each input perturbed in turn, the others held (double, where the fused kernels run).
TEST(FusedLayers, BackwardsMatchFiniteDifferences) {
  torch::manual_seed(5);
  const torch::Tensor x = torch::randn({4, 11}, torch::kDouble) * 2, weight = torch::randn({11}, torch::kDouble);
  const torch::Tensor gate = torch::randn({4, 11}, torch::kDouble) * 3, up = torch::randn({4, 11}, torch::kDouble);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& v) { return rms_norm(v, weight, 1e-6); }, x), 1e-6);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& v) { return rms_norm(x, v, 1e-6); }, weight), 1e-6);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& v) { return gated_gelu(v, up); }, gate), 1e-6);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& v) { return gated_gelu(gate, v); }, up), 1e-6);
}

}  // namespace
}  // namespace lengen
