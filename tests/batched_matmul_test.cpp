// The attention's batched products against torch::matmul, which they replace in training: the
// same bits (the same BLAS calls on the same layouts), values and gradients, in float and double,
// for rows-contiguous, transposed and strided operands and the shapes left to ATen; and the
// gradient against finite differences in double.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "attention/batched_matmul.h"
#include "gradcheck.h"

namespace lengen {
namespace {

using Product = torch::Tensor (*)(const torch::Tensor&, const torch::Tensor&, bool);

torch::Tensor aten_product(const torch::Tensor& a, const torch::Tensor& b, bool transpose_b) {
  return torch::matmul(a, transpose_b ? b.transpose(-2, -1) : b);
}

// The output and both gradients of sum(product(a, b) * w) for a fixed random w.
std::vector<torch::Tensor> run(Product product, const torch::Tensor& a_in, const torch::Tensor& b_in,
                               bool transpose_b) {
  torch::Tensor a = a_in.detach().clone().requires_grad_(true);
  torch::Tensor b = b_in.detach().clone().requires_grad_(true);
  // The layouts the model hands over: a head-split view (not contiguous) of [B, T, H, d].
  const torch::Tensor a_view = a.transpose(1, 2), b_view = b.transpose(1, 2);
  const torch::Tensor y = product(a_view, b_view, transpose_b);
  torch::manual_seed(5);
  (y * torch::randn_like(y)).sum().backward();
  return {y.detach(), a.grad(), b.grad()};
}

void expect_same_bits(torch::ScalarType dtype, int64_t queries, int64_t keys, int64_t d, bool transpose_b) {
  SCOPED_TRACE("queries " + std::to_string(queries) + ", keys " + std::to_string(keys) + ", d " +
               std::to_string(d) + (transpose_b ? ", a . b^T" : ", a . b"));
  torch::manual_seed(3);
  const auto options = torch::TensorOptions().dtype(dtype);
  // [B, T, H, d] storage, viewed as [B, H, T, d]; for a . b the left operand is [B, T, H, keys].
  const torch::Tensor a = torch::randn({2, queries, 3, transpose_b ? d : keys}, options);
  const torch::Tensor b = torch::randn({2, keys, 3, d}, options);
  const auto got = run(batched_matmul, a, b, transpose_b), want = run(aten_product, a, b, transpose_b);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(torch::equal(got[i], want[i])) << "tensor " << i;
}

TEST(BatchedMatmul, SameBitsAsTorchMatmulForTheAttentionsProducts) {
  for (torch::ScalarType dtype : {torch::kFloat, torch::kDouble}) {
    for (bool transpose_b : {true, false}) {
      expect_same_bits(dtype, 34, 34, 16, transpose_b);  // the BLAS calls
      expect_same_bits(dtype, 7, 40, 8, transpose_b);
      expect_same_bits(dtype, 1, 30, 16, transpose_b);   // one query: left to ATen
      expect_same_bits(dtype, 3, 3, 4, transpose_b);     // ATen's own loop
      expect_same_bits(dtype, 300, 300, 16, transpose_b);  // large: ATen and the BLAS's threads
    }
  }
}

TEST(BatchedMatmul, ContiguousAndTransposedOperandsGiveTorchMatmulsValues) {
  torch::manual_seed(4);
  const torch::Tensor q = torch::randn({2, 3, 20, 16}), k = torch::randn({2, 3, 24, 16});
  const torch::Tensor k_transposed_storage = torch::randn({2, 3, 16, 24}).transpose(-2, -1);
  for (const torch::Tensor& keys : {k, k_transposed_storage}) {
    EXPECT_TRUE(torch::equal(batched_matmul(q, keys, true), torch::matmul(q, keys.transpose(-2, -1))));
    EXPECT_TRUE(torch::equal(batched_matmul(q.transpose(-2, -1).contiguous().transpose(-2, -1), keys, true),
                             torch::matmul(q, keys.transpose(-2, -1))));
  }
}

TEST(BatchedMatmul, GradientMatchesFiniteDifferences) {
  torch::manual_seed(6);
  const torch::Tensor b = torch::randn({2, 2, 9, 5}, torch::kDouble);
  const torch::Tensor a = torch::randn({2, 2, 8, 5}, torch::kDouble);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& x) { return batched_matmul(x, b, true); }, a), 1e-7);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& x) { return batched_matmul(a, x, true); }, b), 1e-7);
  const torch::Tensor v = torch::randn({2, 2, 9, 5}, torch::kDouble);
  const torch::Tensor w = torch::randn({2, 2, 8, 9}, torch::kDouble);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& x) { return batched_matmul(x, v, false); }, w), 1e-7);
  EXPECT_LT(testing::gradcheck_error([&](const torch::Tensor& x) { return batched_matmul(w, x, false); }, v), 1e-7);
}

}  // namespace
}  // namespace lengen
