#include "lengen/fused_layers.h"

#include <ATen/Dispatch.h>
#include <torch/torch.h>

#include <cmath>

#include "lengen/float8.h"
#include "lengen/normalizer_common.h"
#include "lengen/row_kernels.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen {

namespace {

using detail::Floats;
using detail::kFloats;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// gelu(g) = g * sigmoid(z) with z = 2 sqrt(2/pi) (g + 0.044715 g^3): the tanh form, since
// 0.5 (1 + tanh(z / 2)) = sigmoid(z). Its derivative is s + g s (1 - s) dz/dg.
constexpr double kGeluZ = 1.5957691216057308;  // 2 sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;

// The element type of V: V itself, or float for Floats.
template <class V>
struct Element {
  using type = V;
};
template <>
struct Element<Floats> {
  using type = float;
};

template <class V>
V gelu_z(V g) {
  using T = typename Element<V>::type;
  return g * T(kGeluZ) * (T(1) + T(kGeluCubic) * g * g);
}
template <class V>
V gelu_dz(V g) {
  using T = typename Element<V>::type;
  return T(kGeluZ) * (T(1) + T(3 * kGeluCubic) * g * g);
}
template <class T>
T sigmoid(T z) {
  return T(1) / (T(1) + std::exp(-z));
}
// Eight sigmoids from one exp of -|z| (exp_nonpositive never overflows).
Floats sigmoid(const Floats& z) {
  const Floats t = detail::exp_nonpositive(z > 0 ? -z : z);
  const Floats inverse = 1.0f / (1.0f + t);
  return z > 0 ? inverse : t * inverse;
}

// Elements [begin, end), kFloats at a time by `vector_step(i)` on float, the rest (all of them on
// double) one at a time by `step(i)`.
template <class T, class Step, class VectorStep>
void elementwise(int64_t begin, int64_t end, const Step& step, const VectorStep& vector_step) {
  int64_t i = begin;
  if constexpr (std::is_same_v<T, float>) {
    for (; i + kFloats <= end; i += kFloats) vector_step(i);
  }
  for (; i < end; ++i) step(i);
}

template <class T>
void gated_gelu_forward_range(const T* g, const T* u, T* y, int64_t begin, int64_t end) {
  elementwise<T>(
      begin, end, [&](int64_t i) { y[i] = g[i] * sigmoid(gelu_z(g[i])) * u[i]; },
      [&](auto i) {
        const Floats gv = detail::load_floats(g + i);
        detail::store_floats(y + i, gv * sigmoid(gelu_z(gv)) * detail::load_floats(u + i));
      });
}

template <class T>
void gated_gelu_backward_range(const T* g, const T* u, const T* dy, T* dg, T* du, int64_t begin, int64_t end) {
  const auto both = [](auto gv, auto uv, auto dyv, auto& dgv, auto& duv) {
    const auto s = sigmoid(gelu_z(gv));
    dgv = dyv * uv * (s + gv * (s - s * s) * gelu_dz(gv));
    duv = dyv * gv * s;
  };
  elementwise<T>(
      begin, end, [&](int64_t i) { both(g[i], u[i], dy[i], dg[i], du[i]); },
      [&](auto i) {
        Floats dgv, duv;
        both(detail::load_floats(g + i), detail::load_floats(u + i), detail::load_floats(dy + i), dgv, duv);
        detail::store_floats(dg + i, dgv);
        detail::store_floats(du + i, duv);
      });
}

// sum_j a_j b_j (c_j where given) over a row, in T (eight float lanes for float).
template <class T>
T row_dot(const T* a, const T* b, int64_t n, const T* c = nullptr) {
  T sum = 0;
  int64_t j = 0;
  if constexpr (std::is_same_v<T, float>) {
    Floats lanes{};
    for (; j + kFloats <= n; j += kFloats) {
      const Floats ab = detail::load_floats(a + j) * detail::load_floats(b + j);
      lanes += c == nullptr ? ab : ab * detail::load_floats(c + j);
    }
    sum = detail::sum_of_lanes(lanes);
  }
  for (; j < n; ++j) sum += a[j] * b[j] * (c == nullptr ? T(1) : c[j]);
  return sum;
}

// Rows [begin, end) of x (d wide): y = x r (1 + w) with r = 1 / rms, kept per row for the backward.
template <class T>
void rms_norm_forward_rows(const T* x, const T* scale, T* y, T* r, int64_t d, double eps, int64_t begin,
                           int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const T* xr = x + row * d;
    T* yr = y + row * d;
    const T mean_square = row_dot(xr, xr, d) / static_cast<T>(d);
    r[row] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(mean_square) + eps));
    for (int64_t j = 0; j < d; ++j) yr[j] = xr[j] * r[row] * scale[j];
  }
}

// dx = r (1 + w) dy - r^3 x sum_j(dy_j (1 + w_j) x_j) / d; dw's share of each row in dw_rows.
template <class T>
void rms_norm_backward_rows(const T* x, const T* scale, const T* r, const T* dy, T* dx, T* dw_rows, int64_t d,
                            int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const T *xr = x + row * d, *dyr = dy + row * d;
    const T rr = r[row];
    const T k = rr * rr * rr * row_dot(dyr, xr, d, scale) / static_cast<T>(d);
    for (int64_t j = 0; j < d; ++j) {
      dx[row * d + j] = rr * scale[j] * dyr[j] - k * xr[j];
      dw_rows[row * d + j] = dyr[j] * xr[j] * rr;
    }
  }
}

// The float copies multiversioned (row_kernels.h), the double ones plain; overloads, so that
// the dispatch below picks by type.
LENGEN_ROW_KERNEL void gated_gelu_forward(const float* g, const float* u, float* y, int64_t b, int64_t e) {
  gated_gelu_forward_range(g, u, y, b, e);
}
void gated_gelu_forward(const double* g, const double* u, double* y, int64_t b, int64_t e) {
  gated_gelu_forward_range(g, u, y, b, e);
}
LENGEN_ROW_KERNEL void gated_gelu_backward(const float* g, const float* u, const float* dy, float* dg, float* du,
                                           int64_t b, int64_t e) {
  gated_gelu_backward_range(g, u, dy, dg, du, b, e);
}
void gated_gelu_backward(const double* g, const double* u, const double* dy, double* dg, double* du, int64_t b,
                         int64_t e) {
  gated_gelu_backward_range(g, u, dy, dg, du, b, e);
}
LENGEN_ROW_KERNEL void rms_norm_forward(const float* x, const float* s, float* y, float* r, int64_t d, double eps,
                                        int64_t b, int64_t e) {
  rms_norm_forward_rows(x, s, y, r, d, eps, b, e);
}
void rms_norm_forward(const double* x, const double* s, double* y, double* r, int64_t d, double eps, int64_t b,
                      int64_t e) {
  rms_norm_forward_rows(x, s, y, r, d, eps, b, e);
}
LENGEN_ROW_KERNEL void rms_norm_backward(const float* x, const float* s, const float* r, const float* dy, float* dx,
                                         float* dw, int64_t d, int64_t b, int64_t e) {
  rms_norm_backward_rows(x, s, r, dy, dx, dw, d, b, e);
}
void rms_norm_backward(const double* x, const double* s, const double* r, const double* dy, double* dx,
                       double* dw, int64_t d, int64_t b, int64_t e) {
  rms_norm_backward_rows(x, s, r, dy, dx, dw, d, b, e);
}

class GatedGelu : public torch::autograd::Function<GatedGelu> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& gate_in, const torch::Tensor& up_in) {
    const torch::Tensor gate = gate_in.contiguous(), up = up_in.contiguous();
    torch::Tensor y = torch::empty_like(gate);
    AT_DISPATCH_FLOATING_TYPES(gate.scalar_type(), "gated_gelu", [&] {
      const scalar_t *g = gate.data_ptr<scalar_t>(), *u = up.data_ptr<scalar_t>();
      scalar_t* out = y.data_ptr<scalar_t>();
      detail::for_each_row_range(gate.numel(), 1, [&](int64_t b, int64_t e) {
        gated_gelu_forward(g, u, out, b, e);
      });
    });
    ctx->save_for_backward({gate, up});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &gate = saved[0], &up = saved[1], dy = grads[0].contiguous();
    torch::Tensor dgate = torch::empty_like(gate), dup = torch::empty_like(up);
    AT_DISPATCH_FLOATING_TYPES(gate.scalar_type(), "gated_gelu_backward", [&] {
      const scalar_t *g = gate.data_ptr<scalar_t>(), *u = up.data_ptr<scalar_t>(), *d = dy.data_ptr<scalar_t>();
      scalar_t *dg = dgate.data_ptr<scalar_t>(), *du = dup.data_ptr<scalar_t>();
      detail::for_each_row_range(gate.numel(), 1, [&](int64_t b, int64_t e) {
        gated_gelu_backward(g, u, d, dg, du, b, e);
      });
    });
    return {dgate, dup};
  }
};

class RmsNorm : public torch::autograd::Function<RmsNorm> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x_in, const torch::Tensor& weight,
                               double eps) {
    const torch::Tensor x = x_in.contiguous();
    const int64_t d = x.size(-1), rows = d == 0 ? 0 : x.numel() / d;
    const torch::Tensor scale = (1 + weight.detach()).contiguous();
    torch::Tensor y = torch::empty_like(x), r = torch::empty({rows}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rms_norm", [&] {
      const scalar_t *xd = x.data_ptr<scalar_t>(), *s = scale.data_ptr<scalar_t>();
      scalar_t *yd = y.data_ptr<scalar_t>(), *rd = r.data_ptr<scalar_t>();
      detail::for_each_row_range(rows, d, [&](int64_t b, int64_t e) {
        rms_norm_forward(xd, s, yd, rd, d, eps, b, e);
      });
    });
    ctx->save_for_backward({x, scale, r});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &scale = saved[1], &r = saved[2], dy = grads[0].contiguous();
    const int64_t d = x.size(-1), rows = r.numel();
    torch::Tensor dx = torch::empty_like(x), dw_rows = torch::empty({rows, d}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rms_norm_backward", [&] {
      const scalar_t *xd = x.data_ptr<scalar_t>(), *s = scale.data_ptr<scalar_t>(), *rd = r.data_ptr<scalar_t>(),
                     *dyd = dy.data_ptr<scalar_t>();
      scalar_t *dxd = dx.data_ptr<scalar_t>(), *dwd = dw_rows.data_ptr<scalar_t>();
      detail::for_each_row_range(rows, d, [&](int64_t b, int64_t e) {
        rms_norm_backward(xd, s, rd, dyd, dxd, dwd, d, b, e);
      });
    });
    return {dx, dw_rows.sum(0), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor rms_norm_aten(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * (1.0 + weight);
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  if (detail::use_fused_cpu(x) && weight.scalar_type() == x.scalar_type() && x.dim() >= 1)
    return RmsNorm::apply(x, weight, eps);
  return rms_norm_aten(x, weight, eps);
}

torch::Tensor gated_gelu_aten(const torch::Tensor& gate, const torch::Tensor& up) {
  return torch::gelu(gate, "tanh") * up;
}

torch::Tensor gated_gelu(const torch::Tensor& gate, const torch::Tensor& up) {
  if (detail::use_fused_cpu(gate) && up.scalar_type() == gate.scalar_type() && up.sizes() == gate.sizes())
    return GatedGelu::apply(gate, up);
  return gated_gelu_aten(gate, up);
}

}  // namespace lengen
