// Golden vectors from the Python entmax library (tests/data/normalizers.json, float64):
// forward, gradient with respect to the scores and, for bisection cases, to alpha.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "lengen/normalizers.h"

namespace lengen {
namespace {

constexpr double kGoldenTolerance = 1e-6;
// Relative error is measured against max(|expected|, kFloor), so exact zeros must stay tiny.
constexpr double kFloor = 1e-9;

torch::Tensor matrix(const nlohmann::json& rows) {
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  const int64_t n = static_cast<int64_t>(rows[0].size());
  torch::Tensor out = torch::empty({n_rows, n}, torch::kDouble);
  auto a = out.accessor<double, 2>();
  for (int64_t i = 0; i < n_rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const auto& v = rows[i][j];
      a[i][j] = v.is_null() ? -std::numeric_limits<double>::infinity() : v.get<double>();
    }
  }
  return out;
}

double elementwise_relative_error(const torch::Tensor& actual, const torch::Tensor& expected) {
  return ((actual - expected).abs() / expected.abs().clamp_min(kFloor)).max().item<double>();
}

// Every golden case on `device`: forward, gradient for the scores and, for alpha-entmax, for alpha.
void expect_golden_match(const torch::Device& device) {
  std::ifstream file(std::string(LENGEN_TEST_DATA_DIR) + "/normalizers.json");
  ASSERT_TRUE(file) << "missing tests/data/normalizers.json";
  const nlohmann::json golden = nlohmann::json::parse(file);
  double worst = 0;
  std::string worst_case;
  int cases = 0;
  for (const auto& c : golden.at("cases")) {
    const std::string kind = c.at("kind");
    SCOPED_TRACE(c.at("name").get<std::string>());
    const torch::Tensor z = matrix(c.at("x")).to(device).requires_grad_(true);
    torch::Tensor alpha;
    torch::Tensor p;
    if (kind == "softmax") {
      p = softmax(z);
    } else if (kind == "sparsemax") {
      p = sparsemax(z);
    } else if (kind == "entmax15") {
      p = entmax15(z);
    } else {
      ASSERT_EQ(kind, "bisect");
      alpha = torch::full({z.size(0), 1}, c.at("alpha").get<double>(), z.options()).requires_grad_(true);
      p = entmax(z, alpha);
    }
    const torch::Tensor grad_out = matrix(c.at("grad_out")).to(device);
    std::vector<torch::Tensor> inputs = {z};
    if (alpha.defined()) inputs.push_back(alpha);
    const auto grads = torch::autograd::grad({(p * grad_out).sum()}, inputs);

    std::vector<std::pair<std::string, double>> errors = {
        {"p", elementwise_relative_error(p.detach().cpu(), matrix(c.at("p")))},
        {"grad_x", elementwise_relative_error(grads[0].cpu(), matrix(c.at("grad_x")))}};
    if (alpha.defined()) {
      const auto expected = torch::tensor(c.at("grad_alpha").get<std::vector<double>>(), torch::kDouble);
      errors.push_back({"grad_alpha", elementwise_relative_error(grads[1].cpu().view(-1), expected)});
    }
    for (const auto& [what, error] : errors) {
      EXPECT_LT(error, kGoldenTolerance) << what;
      if (error > worst) {
        worst = error;
        worst_case = c.at("name").get<std::string>() + " " + what;
      }
    }
    ++cases;
  }
  EXPECT_EQ(cases, 79);
  std::cout << "golden on " << device << ": " << cases << " cases, worst relative error " << worst << " ("
            << worst_case << ")\n";
}

TEST(NormalizerGolden, MatchesTheEntmaxLibrary) { expect_golden_match(torch::kCPU); }

// The composed-ATen path on a CUDA device (skipped without one).
TEST(NormalizerGolden, MatchesTheEntmaxLibraryOnCuda) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  expect_golden_match(torch::kCUDA);
}

}  // namespace
}  // namespace lengen
