// softmax with masked rows handled: a fully masked row gives zeros instead of NaN.
#include <torch/torch.h>

#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "normalizer_record.h"
#include "row_normalizer.h"

namespace lengen {
namespace {

struct SoftmaxRule {
  // LibTorch's CPU softmax is already a fused kernel; only its NaN rows (every score -inf) need
  // fixing, and they are rare, so the mask is computed only when one is there.
  static torch::Tensor forward_cpu(const torch::Tensor& z) {
    torch::Tensor p = torch::softmax(z, -1);
    if (p.numel() > 0 && p.select(-1, 0).isnan().any().item<bool>()) {
      p.masked_fill_(detail::fully_masked_rows(z), 0.0);
    }
    return p;
  }

  static torch::Tensor forward_aten(const torch::Tensor& z) {
    return torch::softmax(z, -1).masked_fill(detail::fully_masked_rows(z), 0.0);
  }

  // Softmax's Jacobian is the entmax family's with g = p (alpha = 1).
  static constexpr double kAlpha = 1.0;
  static torch::Tensor gradient_weights(const torch::Tensor& p) { return p; }
};

}  // namespace

torch::Tensor softmax(const torch::Tensor& z, int64_t dim) {
  return detail::apply_row_normalizer<SoftmaxRule>(z, dim);
}

// Its record: no parameters, the fused attention's softmax rows.
NormalizerFactory softmax_normalizer() {
  return {"", parameterless<softmax>, always<FusedRowKernel::kSoftmax>, {}, {}};
}

}  // namespace lengen
