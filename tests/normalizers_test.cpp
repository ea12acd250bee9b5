// The normalizer test table (normalizer x shape x dtype x mask x alpha), after ggml's
// test-backend-ops: every case checks the invariants of docs/method.md ("Normalizers") on
// forward and backward.
#include "lengen/normalizers.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "lengen/attention_choices.h"
#include "lengen/normalizer_registry.h"

namespace lengen {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class Mask { kNone, kCausal, kRandom, kFullRows };

struct Case {
  NormalizerVariant variant;
  std::vector<int64_t> shape;
  torch::ScalarType dtype;
  Mask mask;

  const NormalizerTraits& traits() const { return normalizer_factory(variant.spec.name).traits; }
  std::string describe() const {
    std::ostringstream out;
    out << variant.label << " shape=" << torch::IntArrayRef(shape) << " dtype=" << dtype
        << " mask=" << static_cast<int>(mask);
    return out.str();
  }
};

torch::Tensor mask_for(const Case& c) {
  const int64_t n = c.shape.back();
  const int64_t rows = c.shape[c.shape.size() - 2];
  switch (c.mask) {
    case Mask::kNone:
      return torch::zeros(c.shape, torch::kBool);
    case Mask::kCausal:
      return torch::ones({rows, n}, torch::kBool).triu(1).expand(c.shape);
    case Mask::kRandom:
      return torch::rand(c.shape) < 0.3;
    case Mask::kFullRows: {
      torch::Tensor mask = torch::rand(c.shape) < 0.3;
      mask.select(-2, 0).fill_(true);
      return mask;
    }
  }
  return {};
}

// Every registered variant (normalizer_registry.h) x shape x dtype x mask: a normalizer is tested
// here by being registered.
std::vector<Case> table() {
  const std::vector<std::vector<int64_t>> shapes = {{1, 1}, {3, 7}, {2, 3, 5, 33}, {4, 300}};
  std::vector<Case> cases;
  for (const NormalizerVariant& variant : normalizer_variants()) {
    for (const auto& shape : shapes) {
      for (auto dtype : {torch::kFloat, torch::kDouble, torch::kBFloat16}) {
        for (auto mask : {Mask::kNone, Mask::kCausal, Mask::kRandom, Mask::kFullRows}) {
          cases.push_back({variant, shape, dtype, mask});
        }
      }
    }
  }
  return cases;
}

// The alpha a variant passes as a tensor (a learned one), or none.
torch::Tensor alpha_tensor_of(const NormalizerVariant& variant) {
  return variant.alpha_as_tensor ? torch::full({}, variant.spec.alpha) : torch::Tensor();
}

TEST(NormalizerTable, CoversEveryNormalizerOfTheConfig) {
  const std::vector<Case> cases = table();
  for (const std::string& name : normalizer_names()) {
    const bool covered =
        std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.variant.spec.name == name; });
    EXPECT_TRUE(covered) << name << " has no row in the normalizer table";
  }
}

TEST(NormalizerTable, InvariantsHoldForEveryCase) {
  torch::manual_seed(0);
  for (const Case& c : table()) {
    SCOPED_TRACE(c.describe());
    const NormalizerFn normalize = make_normalizer(c.variant.spec);

    const torch::Tensor mask = mask_for(c);
    const torch::Tensor z =
        (torch::randn(c.shape) * 2).masked_fill(mask, -kInfinity).to(c.dtype).requires_grad_(true);
    const torch::Tensor p = normalize(z, alpha_tensor_of(c.variant));
    ASSERT_EQ(p.scalar_type(), c.dtype);
    ASSERT_EQ(p.sizes(), z.sizes());

    const torch::Tensor pd = p.detach().to(torch::kDouble);
    const torch::Tensor full_rows = mask.all(-1);
    const double tolerance = c.dtype == torch::kBFloat16 ? 2e-2 : (c.dtype == torch::kFloat ? 1e-5 : 1e-12);
    EXPECT_TRUE(torch::isfinite(pd).all().item<bool>());
    EXPECT_GE(pd.min().item<double>(), 0.0);
    EXPECT_EQ(pd.masked_select(mask).abs().sum().item<double>(), 0.0) << "masked entries must be exactly 0";
    EXPECT_EQ(pd.sum(-1).masked_select(full_rows).abs().sum().item<double>(), 0.0);
    // Rows sum to 1, or to at most 1 where the normalizer declares so (stick-breaking).
    const torch::Tensor sums = pd.sum(-1).masked_select(full_rows.logical_not());
    if (sums.numel() > 0) {
      const torch::Tensor excess = c.traits().rows_sum_to_one ? (sums - 1).abs() : sums - 1;
      EXPECT_LT(excess.max().item<double>(), tolerance);
    }

    const torch::Tensor dz =
        torch::autograd::grad({(p.to(torch::kFloat) * torch::randn(c.shape)).sum()}, {z})[0];
    EXPECT_TRUE(torch::isfinite(dz.to(torch::kDouble)).all().item<bool>());
    EXPECT_EQ(dz.to(torch::kDouble).masked_select(mask).abs().sum().item<double>(), 0.0)
        << "masked entries must get zero gradient";
  }
}

TEST(NormalizerTable, SparseNormalizersAreSparseAndSoftmaxIsNot) {
  const torch::Tensor z = torch::tensor({{3.0, 1.0, 0.2, -1.0, -4.0}}, torch::kDouble);
  EXPECT_EQ((softmax(z) == 0).sum().item<int64_t>(), 0);
  EXPECT_GT((sparsemax(z) == 0).sum().item<int64_t>(), 0);
  EXPECT_GT((entmax15(z) == 0).sum().item<int64_t>(), 0);
  EXPECT_GT((entmax(z, 1.25) == 0).sum().item<int64_t>(), 0);
  EXPECT_EQ((topk_softmax(z, 2) > 0).sum().item<int64_t>(), 2);
}

TEST(NormalizerTable, EntmaxAlphaTwoIsSparsemaxAndOnePointFiveIsEntmax15) {
  torch::manual_seed(1);
  const torch::Tensor z = torch::randn({6, 50}, torch::kDouble) * 3;
  EXPECT_LT((entmax(z, 2.0) - sparsemax(z)).abs().max().item<double>(), 1e-12);
  EXPECT_LT((entmax(z, 1.5) - entmax15(z)).abs().max().item<double>(), 1e-12);
  // A tensor alpha takes the general solver, which must agree with both closed forms.
  const torch::Tensor alpha = torch::full({6, 1}, 1.5, torch::kDouble);
  EXPECT_LT((entmax(z, alpha) - entmax15(z)).abs().max().item<double>(), 1e-12);
  const torch::Tensor alpha_two = torch::full({6, 1}, 2.0, torch::kDouble);
  EXPECT_LT((entmax(z, alpha_two) - sparsemax(z)).abs().max().item<double>(), 1e-12);
}

TEST(NormalizerTable, AlphaTendingToOneTendsToSoftmax) {
  torch::manual_seed(2);
  const torch::Tensor z = torch::randn({4, 30}, torch::kDouble);
  double previous = kInfinity;
  for (double alpha : {1.5, 1.1, 1.01, 1.002}) {
    const double error = (entmax(z, alpha) - softmax(z)).abs().max().item<double>();
    EXPECT_LT(error, previous) << "alpha " << alpha;
    previous = error;
  }
  EXPECT_LT(previous, 1e-2);
  EXPECT_TRUE(torch::equal(entmax(z, 1.0005), softmax(z)));
  const torch::Tensor alpha = torch::tensor({1.0005, 1.5, 1.0, 2.0}, torch::kDouble).view({4, 1});
  const torch::Tensor mixed = entmax(z, alpha);
  EXPECT_TRUE(torch::allclose(mixed[0], softmax(z[0])));
  EXPECT_TRUE(torch::allclose(mixed[2], softmax(z[2])));
  EXPECT_TRUE(torch::allclose(mixed[3], sparsemax(z[3])));
}

TEST(NormalizerTable, ShiftInvariant) {
  torch::manual_seed(3);
  const torch::Tensor z = torch::randn({5, 40}, torch::kDouble);
  for (const NormalizerVariant& variant : normalizer_variants()) {
    if (!normalizer_factory(variant.spec.name).traits.shift_invariant) continue;  // stick-breaking's gates
    const NormalizerFn normalize = make_normalizer(variant.spec);
    const torch::Tensor alpha = alpha_tensor_of(variant);
    const double error = (normalize(z + 7.5, alpha) - normalize(z, alpha)).abs().max().item<double>();
    EXPECT_LT(error, 1e-10) << variant.label;
  }
}

TEST(NormalizerTable, AppliesAlongAnyDim) {
  torch::manual_seed(4);
  const torch::Tensor z = torch::randn({3, 9, 4}, torch::kDouble);
  EXPECT_TRUE(torch::allclose(entmax15(z, 1), entmax15(z.transpose(1, 2)).transpose(1, 2)));
  EXPECT_TRUE(torch::allclose(lengen::softmax(z, 0), torch::softmax(z, 0)));
  const torch::Tensor alpha = torch::tensor({1.2, 1.6, 2.0}, torch::kDouble).view({3, 1, 1});
  EXPECT_TRUE(torch::allclose(entmax(z, alpha, 1), entmax(z.transpose(1, 2), alpha).transpose(1, 2)));
}

// One case's inputs: scores with the case's mask, a per-row alpha (used by a variant whose alpha
// is a tensor), and the upstream gradient.
struct CaseInputs {
  torch::Tensor z, alpha, weight;
};

CaseInputs case_inputs(const Case& c) {
  const torch::Tensor mask = mask_for(c);
  std::vector<int64_t> alpha_shape = c.shape;
  alpha_shape.back() = 1;
  const auto dtype = c.dtype == torch::kDouble ? torch::kDouble : torch::kFloat;
  return {(torch::randn(c.shape) * 2).masked_fill(mask, -kInfinity).to(dtype),
          c.variant.spec.alpha + 0.3 * torch::rand(alpha_shape, dtype), torch::randn(c.shape, dtype)};
}

// p, the gradient for z and, for a tensor alpha, for alpha: computed from `inputs` cast to `dtype` on
// `device` (the fused CPU kernels, or the composed-ATen path where `aten` or off the CPU), and
// returned on the CPU in double.
std::vector<torch::Tensor> run_case(const Case& c, const CaseInputs& inputs, torch::ScalarType dtype,
                                    const torch::Device& device, bool aten) {
  set_force_aten_normalizers(aten);
  // Copies, so that the gradients of two runs on the same inputs never accumulate together.
  const torch::Tensor z =
      inputs.z.to(device, dtype, /*non_blocking=*/false, /*copy=*/true).requires_grad_(true);
  const torch::Tensor alpha =
      inputs.alpha.to(device, dtype, /*non_blocking=*/false, /*copy=*/true).requires_grad_(true);
  const bool tensor_alpha = c.variant.alpha_as_tensor;
  const torch::Tensor p = make_normalizer(c.variant.spec)(z, tensor_alpha ? alpha : torch::Tensor());
  (p * inputs.weight.to(device, dtype)).sum().backward();
  set_force_aten_normalizers(false);
  std::vector<torch::Tensor> results = {p.detach(), z.grad()};
  if (tensor_alpha) results.push_back(alpha.grad());
  for (auto& result : results) result = result.to(torch::kCPU, torch::kDouble);
  return results;
}

// Largest difference between two run_case results, over each one's scale, with the name of the
// worst output.
void expect_close(const std::vector<torch::Tensor>& actual, const std::vector<torch::Tensor>& expected,
                  double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double scale = 1 + expected[i].abs().max().item<double>();
    const double error = (actual[i] - expected[i]).abs().max().item<double>() / scale;
    EXPECT_LT(error, tolerance) << (i == 0 ? "p" : i == 1 ? "grad z" : "grad alpha");
  }
}

// The fused CPU kernels and the composed-ATen path (what CUDA runs) agree on values and
// gradients, for the scores and for a per-row alpha.
TEST(NormalizerTable, FusedCpuKernelsMatchTheAtenPath) {
  torch::manual_seed(9);
  for (const Case& c : table()) {
    // Rounding to float can tie scores that differ in double, and which tied score top-k keeps
    // is arbitrary.
    if (c.dtype == torch::kBFloat16 || c.traits().picks_among_ties) continue;
    SCOPED_TRACE(c.describe());
    const CaseInputs inputs = case_inputs(c);
    expect_close(run_case(c, inputs, c.dtype, torch::kCPU, true),
                 run_case(c, inputs, c.dtype, torch::kCPU, false), c.dtype == torch::kFloat ? 2e-5 : 1e-10);
  }
}

// On a CUDA device (skipped without one): every case of the table, bf16 included, against the
// fused CPU kernels. bf16 cases compare with the CPU in float32 on the same (bf16-rounded)
// inputs, to bf16's precision.
TEST(NormalizerTable, CudaMatchesTheFusedCpuKernels) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  torch::manual_seed(9);
  int cases = 0;
  for (const Case& c : table()) {
    // bf16 rounding makes ties among the scores, and which of them top-k keeps is arbitrary.
    if (c.dtype == torch::kBFloat16 && c.traits().picks_among_ties) continue;
    SCOPED_TRACE(c.describe() + " on cuda");
    CaseInputs inputs = case_inputs(c);
    const bool bf16 = c.dtype == torch::kBFloat16;
    if (bf16) {
      for (torch::Tensor* input : {&inputs.z, &inputs.alpha, &inputs.weight})
        *input = input->to(torch::kBFloat16).to(torch::kFloat);
    }
    const double tolerance = bf16 ? 3e-2 : c.dtype == torch::kFloat ? 2e-5 : 1e-10;
    expect_close(run_case(c, inputs, c.dtype, torch::kCUDA, false),
                 run_case(c, inputs, bf16 ? torch::kFloat : c.dtype, torch::kCPU, false), tolerance);
    ++cases;
  }
  std::cout << "cuda: " << cases << " normalizer cases match the CPU kernels\n";
}

}  // namespace
}  // namespace lengen
