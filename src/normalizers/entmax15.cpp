// 1.5-entmax, exact: p = [z/2 - tau]_+^2 with tau from the sorted running mean and mean of
// squares (Peters et al. 2019).
#include <torch/torch.h>

#include "lengen/normalizer_common.h"
#include "lengen/normalizers.h"
#include "lengen/row_forward.h"
#include "lengen/row_kernels.h"
#include "lengen/threshold_search.h"
#include "normalizer_record.h"
#include "row_normalizer.h"

namespace lengen {
namespace {

torch::Tensor entmax15_forward_aten(const torch::Tensor& z) {
  const torch::Tensor fully_masked = detail::fully_masked_rows(z);
  const torch::Tensor x = detail::shift_by_row_max(z, fully_masked) / 2;
  const torch::Tensor sorted = std::get<0>(x.sort(-1, /*descending=*/true));
  // Masked entries sort last; zeroing them keeps the running sums finite (their own
  // comparison below uses the -inf value and so never enters the support).
  const torch::Tensor finite = torch::where(torch::isfinite(sorted), sorted, torch::zeros_like(sorted));
  const torch::Tensor rank = torch::arange(1, x.size(-1) + 1, x.options());
  const torch::Tensor mean = finite.cumsum(-1) / rank;
  const torch::Tensor mean_sq = (finite * finite).cumsum(-1) / rank;
  const torch::Tensor delta = ((1 - rank * (mean_sq - mean * mean)) / rank).clamp_min(0);
  const torch::Tensor tau = mean - delta.sqrt();
  const torch::Tensor support = (tau <= sorted).sum(-1, /*keepdim=*/true).clamp_min(1);
  const torch::Tensor tau_star = tau.gather(-1, support - 1);
  return (x - tau_star).clamp_min(0).square().masked_fill(fully_masked, 0.0);
}

// 1.5-entmax of row x into y, with the threshold found on the entries that can be in the
// support (X = (z - max)/2 > -1).
template <class T>
void entmax15_row(const T* x, T* y, int64_t n, detail::Candidates& candidates) {
  const T max = detail::row_max(x, n);
  if (max == -std::numeric_limits<T>::infinity()) {
    std::fill(y, y + n, T(0));
    return;
  }
  // Entries after `end` cannot be in the support: the passes below skip them.
  const int64_t end = candidates.collect(x, n, static_cast<T>(max - 2), max, 0.5);
  const double tau = detail::entmax15_threshold(candidates);
  const T t = static_cast<T>(tau);
  for (int64_t k = 0; k < end; ++k) {
    const T v = (x[k] - max) * T(0.5) - t;
    y[k] = v > 0 ? v : T(0);
  }
  // A separate loop: fused with the clamp, GCC turns the square into a branch and stops vectorizing.
  for (int64_t k = 0; k < end; ++k) y[k] *= y[k];
  std::fill(y + end, y + n, T(0));
}

}  // namespace

namespace detail {

// Multiversioned: at random initialisation most of a row is a candidate.
LENGEN_ROW_KERNEL double entmax15_threshold(const Candidates& candidates, double lower) {
  return entmax15_search([&](double t) { return positive_parts(candidates, t); }, lower);
}

// Rows [begin, end) of z into p.
LENGEN_CANDIDATE_ROWS(entmax15_rows, entmax15_row)

}  // namespace detail

namespace {

struct Entmax15Rule {
  static torch::Tensor forward_cpu(const torch::Tensor& z) {
    return detail::fused_rows_forward(
        z, [](const auto* z_data, auto* p_data, int64_t n, int64_t begin, int64_t end) {
          detail::entmax15_rows(z_data, p_data, n, begin, end);
        });
  }
  static torch::Tensor forward_aten(const torch::Tensor& z) { return entmax15_forward_aten(z); }
  static constexpr double kAlpha = 1.5;
  static torch::Tensor gradient_weights(const torch::Tensor& p) { return p.sqrt(); }
};

}  // namespace

torch::Tensor entmax15(const torch::Tensor& z, int64_t dim) {
  return detail::apply_row_normalizer<Entmax15Rule>(z, dim);
}

// Its record: no parameters, the fused attention's 1.5-entmax rows.
NormalizerFactory entmax15_normalizer() {
  return {"", parameterless<entmax15>, always<FusedRowKernel::kEntmax15>, {}, {}};
}

}  // namespace lengen
