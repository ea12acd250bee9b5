// Adaptive-temperature softmax ("Softmax is not enough", Velickovic et al. 2024): sharpen
// high-entropy rows by beta = max(1, poly(H)), as the original (gradient flows through beta).
#include <torch/torch.h>

#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "normalizer_record.h"

namespace lengen {
namespace {

// The fitted polynomial of the paper, highest power first (the reference repo reverses it).
constexpr double kPolynomial[] = {-0.037, 0.481, -2.3, 4.917, -1.791};
// Rows with entropy at or below this keep beta = 1 (no over-correction of sharp heads).
constexpr double kEntropyThreshold = 0.5;

torch::Tensor polynomial(const torch::Tensor& h) {
  torch::Tensor value = torch::full_like(h, kPolynomial[0]);
  for (size_t i = 1; i < std::size(kPolynomial); ++i) value = value * h + kPolynomial[i];
  return value;
}

}  // namespace

torch::Tensor adaptive_softmax(const torch::Tensor& z, int64_t dim) {
  return detail::along_last_dim(z, dim, [](const torch::Tensor& x) {
    const torch::Tensor p = softmax(x);
    // 0 log 0 = 0, with a log argument that keeps the gradient finite at p = 0.
    const torch::Tensor safe_p = torch::where(p > 0, p, torch::ones_like(p));
    const torch::Tensor entropy = -(p * safe_p.log()).sum(-1, /*keepdim=*/true);
    const torch::Tensor beta = torch::where(entropy > kEntropyThreshold, polynomial(entropy).clamp_min(1.0),
                                            torch::ones_like(entropy));
    // Masked scores stay -inf without a -inf * 0 = NaN in beta's gradient.
    const torch::Tensor visible = torch::isfinite(x);
    const torch::Tensor safe_x = torch::where(visible, x, torch::zeros_like(x));
    return softmax(torch::where(visible, safe_x * beta, x));
  });
}

// Its record: no parameters; the dense path only.
NormalizerFactory adaptive_softmax_normalizer() { return {"", parameterless<adaptive_softmax>, {}, {}, {}}; }

}  // namespace lengen
