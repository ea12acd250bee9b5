#include "normalizers/row_kernels.h"

#include <ATen/Dispatch.h>

#include "normalizers/normalizer_common.h"

namespace lengen::detail {

RowAlphaStorage row_alpha(const torch::Tensor& alpha, const torch::Tensor& p) {
  RowAlphaStorage out;
  if (alpha.numel() == 1) {
    out.rows.constant = alpha.item<double>();
    return out;
  }
  std::vector<int64_t> row_shape = p.sizes().vec();
  row_shape.back() = 1;
  out.values = alpha.detach().to(torch::kDouble).expand(row_shape).contiguous();
  out.rows.per_row = out.values.data_ptr<double>();
  return out;
}

FamilyGrads entmax_family_backward_cpu(const torch::Tensor& p_in, const torch::Tensor& dy_in, RowAlpha alpha,
                                       bool alpha_grad) {
  const torch::Tensor p = p_in.contiguous();
  const torch::Tensor dy = dy_in.to(p.scalar_type()).contiguous();
  const int64_t n = p.size(-1);
  const int64_t rows = n == 0 ? 0 : p.numel() / n;
  FamilyGrads out;
  out.dz = torch::empty_like(p);
  std::vector<int64_t> row_shape = p.sizes().vec();
  row_shape.back() = 1;
  if (alpha_grad) out.d_alpha = torch::zeros(row_shape, p.options().dtype(torch::kDouble));
  double* d_alpha = alpha_grad ? out.d_alpha.data_ptr<double>() : nullptr;

  AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "entmax_family_backward_cpu", [&] {
    const scalar_t* p_data = p.data_ptr<scalar_t>();
    const scalar_t* dy_data = dy.data_ptr<scalar_t>();
    scalar_t* dz_data = out.dz.data_ptr<scalar_t>();
    for_each_row(rows, n, [&](int64_t row) {
      const scalar_t* pr = p_data + row * n;
      const scalar_t* dyr = dy_data + row * n;
      scalar_t* dzr = dz_data + row * n;
      const double a = alpha[row];
      const bool as_softmax = std::abs(a - 1) < kSoftmaxAlphaTolerance;
      const Power g_of(as_softmax ? 1.0 : 2.0 - a);
      // First pass: g (kept in dz) and the row sums; second pass: dz = g * (dy - q).
      double sum_g = 0, sum_g_dy = 0, sum_p_log_p = 0, sum_dy_p = 0, sum_dy_p_log_p = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double pk = pr[k];
        const double g = pk > 0 ? g_of(pk) : 0.0;
        dzr[k] = static_cast<scalar_t>(g);
        sum_g += g;
        sum_g_dy += g * dyr[k];
      }
      const double q = sum_g > 0 ? sum_g_dy / sum_g : 0.0;
      for (int64_t k = 0; k < n; ++k) dzr[k] = static_cast<scalar_t>(dzr[k] * (dyr[k] - q));
      if (d_alpha == nullptr || as_softmax || sum_g == 0) return;
      for (int64_t k = 0; k < n; ++k) {
        const double pk = pr[k];
        if (pk <= 0) continue;
        const double p_log_p = pk * std::log(pk);
        sum_p_log_p += p_log_p;
        sum_dy_p += dyr[k] * pk;
        sum_dy_p_log_p += dyr[k] * p_log_p;
      }
      const double am1 = a - 1;
      d_alpha[row] = (sum_dy_p - q) / (am1 * am1) - (sum_dy_p_log_p - q * sum_p_log_p) / am1;
    });
  });
  return out;
}

}  // namespace lengen::detail
