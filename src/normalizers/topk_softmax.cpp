// top-k softmax: softmax over the k largest scores of each row, the others exactly 0.
#include <torch/torch.h>

#include <limits>

#include "lengen/errors.h"
#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "normalizer_record.h"

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

namespace {

NormalizerFn make_topk(const NormalizerSpec& spec) {
  if (spec.topk < 1) throw UserError("normalizer 'topk' needs topk >= 1, got " + std::to_string(spec.topk));
  const int64_t k = spec.topk;
  return [k](const torch::Tensor& z, const torch::Tensor&) { return topk_softmax(z, k); };
}

}  // namespace

// Its record: topk from the config; the dense path only.
NormalizerFactory topk_normalizer() {
  return {"",
          make_topk,
          {},
          {{"topk k=32", spec_of("topk", 1.5, 32)}, checked_only({"topk k=4", spec_of("topk", 1.5, 4)})},
          {/*rows_sum_to_one=*/true, /*shift_invariant=*/true, /*picks_among_ties=*/true}};
}

}  // namespace lengen
