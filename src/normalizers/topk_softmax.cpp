// top-k softmax: softmax over the k largest scores of each row, the others exactly 0.
#include <torch/torch.h>

#include <limits>

#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"

namespace lengen {

torch::Tensor topk_softmax(const torch::Tensor& z, int64_t k, int64_t dim) {
  TORCH_CHECK(k >= 1, "topk_softmax: k must be >= 1, got ", k);
  return detail::along_last_dim(z, dim, [k](const torch::Tensor& x) {
    if (k >= x.size(-1)) return softmax(x);
    // Keep exactly k entries even under ties, by index rather than by a value threshold.
    const torch::Tensor kept_index = std::get<1>(x.detach().topk(k, -1));
    const torch::Tensor kept = torch::zeros_like(x, torch::kBool).scatter(-1, kept_index, true);
    return softmax(x.masked_fill(kept.logical_not(), -std::numeric_limits<double>::infinity()));
  });
}

}  // namespace lengen
