#include "lengen/normalizer_common.h"

#include <atomic>
#include <limits>

#include "lengen/normalizers.h"

namespace lengen {

namespace {
std::atomic<bool> force_aten{false};
}  // namespace

void set_force_aten_normalizers(bool force) { force_aten = force; }

namespace detail {

bool use_fused_cpu(const torch::Tensor& z) {
  return !force_aten && z.device().is_cpu() && z.layout() == torch::kStrided &&
         (z.scalar_type() == torch::kFloat || z.scalar_type() == torch::kDouble);
}

torch::Tensor fully_masked_rows(const torch::Tensor& z) {
  return std::get<0>(z.max(-1, /*keepdim=*/true)) == -std::numeric_limits<double>::infinity();
}

torch::Tensor shift_by_row_max(const torch::Tensor& z, const torch::Tensor& fully_masked) {
  torch::Tensor safe = z.masked_fill(fully_masked, 0.0);
  return safe - std::get<0>(safe.max(-1, /*keepdim=*/true));
}

torch::Tensor entmax_family_backward_aten(const torch::Tensor& g, const torch::Tensor& dy) {
  torch::Tensor sum_g = g.sum(-1, /*keepdim=*/true);
  torch::Tensor safe_sum_g = torch::where(sum_g > 0, sum_g, torch::ones_like(sum_g));
  torch::Tensor q = (g * dy).sum(-1, /*keepdim=*/true) / safe_sum_g;
  return g * (dy - q);
}

}  // namespace detail
}  // namespace lengen
