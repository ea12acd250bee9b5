// sparsemax (entmax with alpha = 2): the Euclidean projection onto the simplex.
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

// Sort-based threshold: the support is the largest k with 1 + k*z_(k) > sum_{j<=k} z_(j).
torch::Tensor sparsemax_forward_aten(const torch::Tensor& z) {
  const torch::Tensor fully_masked = detail::fully_masked_rows(z);
  const torch::Tensor x = detail::shift_by_row_max(z, fully_masked);
  const torch::Tensor sorted = std::get<0>(x.sort(-1, /*descending=*/true));
  const torch::Tensor cumsum = sorted.cumsum(-1);
  const torch::Tensor rank = torch::arange(1, x.size(-1) + 1, x.options());
  const torch::Tensor support = (1 + rank * sorted > cumsum).sum(-1, /*keepdim=*/true).clamp_min(1);
  const torch::Tensor tau = (cumsum.gather(-1, support - 1) - 1) / support.to(x.scalar_type());
  return (x - tau).clamp_min(0).masked_fill(fully_masked, 0.0);
}

// Michelot's algorithm on the entries within 1 of the max (p <= 1 bounds the threshold):
// tau = (sum_S z - 1)/|S| never exceeds the true threshold, so S keeps the support while
// shrinking, and tau is exact once S stops changing.
template <class T>
void sparsemax_row(const T* x, T* y, int64_t n, detail::Candidates& candidates) {
  const T max = detail::row_max(x, n);
  if (max == -std::numeric_limits<T>::infinity()) {
    std::fill(y, y + n, T(0));
    return;
  }
  // Entries after `end` cannot be in the support: the passes below skip them.
  const int64_t end = candidates.collect(x, n, static_cast<T>(max - 1), max, 1.0);
  const double tau = detail::sparsemax_threshold(candidates);
  const T t = static_cast<T>(tau);
  for (int64_t k = 0; k < end; ++k) {
    const T v = (x[k] - max) - t;
    y[k] = v > 0 ? v : T(0);
  }
  std::fill(y + end, y + n, T(0));
}

}  // namespace

namespace detail {

// Multiversioned: at random initialisation most of a row is a candidate.
LENGEN_ROW_KERNEL double sparsemax_threshold(const Candidates& candidates, double lower) {
  return sparsemax_search([&](double t) { return positive_parts(candidates, t); }, lower);
}

// Rows [begin, end) of z into p.
LENGEN_CANDIDATE_ROWS(sparsemax_rows, sparsemax_row)

}  // namespace detail

namespace {

struct SparsemaxRule {
  static torch::Tensor forward_cpu(const torch::Tensor& z) {
    return detail::fused_rows_forward(
        z, [](const auto* z_data, auto* p_data, int64_t n, int64_t begin, int64_t end) {
          detail::sparsemax_rows(z_data, p_data, n, begin, end);
        });
  }
  static torch::Tensor forward_aten(const torch::Tensor& z) { return sparsemax_forward_aten(z); }
  static constexpr double kAlpha = 2.0;
  static torch::Tensor gradient_weights(const torch::Tensor& p) { return (p > 0).to(p.scalar_type()); }
};

}  // namespace

torch::Tensor sparsemax(const torch::Tensor& z, int64_t dim) {
  return detail::apply_row_normalizer<SparsemaxRule>(z, dim);
}

// Its record: no parameters, the fused attention's sparsemax rows.
NormalizerFactory sparsemax_normalizer() {
  return {"", parameterless<sparsemax>, always<FusedRowKernel::kSparsemax>, {}, {}};
}

}  // namespace lengen
