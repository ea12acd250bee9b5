#pragma once
// Finite-difference gradient check (double precision), in the spirit of ggml's
// test-backend-ops: compares autograd's gradient of sum(f(x) * w), for a fixed random w, with
// central differences, and returns the largest absolute error. Non-finite entries of x
// (masked scores) are not perturbed; their analytic gradient must be 0.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace lengen::testing {

inline double gradcheck_error(const std::function<torch::Tensor(const torch::Tensor&)>& f,
                              const torch::Tensor& x, double step = 1e-6) {
  torch::manual_seed(1234);
  const torch::Tensor input = x.to(torch::kDouble).detach().requires_grad_(true);
  const torch::Tensor weight = torch::randn(f(input).sizes(), torch::kDouble);
  const torch::Tensor analytic = torch::autograd::grad({(f(input) * weight).sum()}, {input})[0].contiguous();

  torch::NoGradGuard no_grad;
  const torch::Tensor flat = input.detach().clone().contiguous().view(-1);
  const auto* grad = analytic.data_ptr<double>();
  double worst = 0;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const double original = flat[i].item<double>();
    double numeric = 0;
    if (std::isfinite(original)) {
      flat[i] = original + step;
      const double up = (f(flat.view(input.sizes())) * weight).sum().item<double>();
      flat[i] = original - step;
      const double down = (f(flat.view(input.sizes())) * weight).sum().item<double>();
      flat[i] = original;
      numeric = (up - down) / (2 * step);
    }
    const double error = std::isfinite(grad[i]) ? std::abs(grad[i] - numeric) : INFINITY;
    worst = std::max(worst, error);
  }
  return worst;
}

}  // namespace lengen::testing
