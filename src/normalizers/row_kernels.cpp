#include "lengen/row_kernels.h"

#include <ATen/Dispatch.h>

#include <array>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LENGEN_HAS_AVX2_COMPRESS 1
#endif

#include "lengen/normalizer_common.h"

namespace lengen::detail {

namespace {

// The indices in [begin, end) with x[i] > floor, written from keys[count]; returns the new count.
int64_t indices_above_scalar(const float* x, int64_t begin, int64_t end, float floor, int32_t* keys,
                             int64_t count) {
  for (int64_t i = begin; i < end; ++i) {
    keys[count] = static_cast<int32_t>(i);
    count += x[i] > floor;
  }
  return count;
}

#ifdef LENGEN_HAS_AVX2_COMPRESS
// For each 8-bit mask, the lanes whose bit is set, in order, packed to the front (4 bits each).
constexpr std::array<uint32_t, 256> packed_lanes() {
  std::array<uint32_t, 256> table{};
  for (uint32_t mask = 0; mask < 256; ++mask) {
    uint32_t packed = 0;
    int slot = 0;
    for (uint32_t lane = 0; lane < 8; ++lane) {
      if (mask & (1u << lane)) packed |= lane << (4 * slot++);
    }
    table[mask] = packed;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kPackedLanes = packed_lanes();

// Eight entries at a time: compare, the mask's lanes from the table, a permute of the indices
// and one store, whatever the mask (a branch on it would be mispredicted on rows whose
// candidates are a few percent of the keys).
__attribute__((target("avx2,popcnt"))) int64_t indices_above_avx2(const float* x, int64_t end, float floor,
                                                                  int32_t* keys) {
  const __m256 floors = _mm256_set1_ps(floor);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i nibble_shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  int64_t count = 0;
  int64_t i = 0;
  for (; i + 8 <= end; i += 8) {
    const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), floors, _CMP_GT_OQ));
    const __m256i packed = _mm256_set1_epi32(static_cast<int>(kPackedLanes[mask]));
    const __m256i order = _mm256_and_si256(_mm256_srlv_epi32(packed, nibble_shifts), _mm256_set1_epi32(15));
    const __m256i index =
        _mm256_add_epi32(_mm256_permutevar8x32_epi32(lanes, order), _mm256_set1_epi32(static_cast<int>(i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(keys + count), index);
    count += __builtin_popcount(static_cast<unsigned>(mask));
  }
  return indices_above_scalar(x, i, end, floor, keys, count);
}
#endif

}  // namespace

int64_t indices_above(const float* x, int64_t end, float floor, int32_t* keys) {
#ifdef LENGEN_HAS_AVX2_COMPRESS
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  if (avx2) return indices_above_avx2(x, end, floor, keys);
#endif
  return indices_above_scalar(x, 0, end, floor, keys, 0);
}

// The loader's choice among LENGEN_ROW_KERNEL's clones, asked the way GCC's resolver asks.
const char* row_kernel_clone() {
#if defined(LENGEN_ROW_CLONES_X86_64_V3)
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3 (AVX2)";
  return "baseline x86-64";
#elif defined(LENGEN_ROW_CLONES_AVX2)
  return __builtin_cpu_supports("avx2") ? "avx2" : "baseline x86-64";
#else
  return "portable";
#endif
}

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

namespace {

// g = p^(2 - alpha) on the support, as functors so that each row loop is branch-free and
// vectorizes: softmax (g = p), sparsemax (g = 1[p > 0]), 1.5-entmax (sqrt p), 1.25-entmax.
struct GradWeightSoftmax {
  template <class T>
  T operator()(T p) const {
    return p;
  }
};
struct GradWeightSparsemax {
  template <class T>
  T operator()(T p) const {
    return p > 0 ? T(1) : T(0);
  }
};
struct GradWeightSqrt {
  template <class T>
  T operator()(T p) const {
    return std::sqrt(p);
  }
};
struct GradWeightThreeQuarters {
  template <class T>
  T operator()(T p) const {
    const T r = std::sqrt(p);
    return r * std::sqrt(r);
  }
};
struct GradWeightPower {
  double exponent;
  template <class T>
  T operator()(T p) const {
    return p > 0 ? static_cast<T>(std::pow(static_cast<double>(p), exponent)) : T(0);
  }
};

template <class Fn>
void with_grad_weight(double exponent, const Fn& fn) {
  const auto near = [exponent](double v) { return std::abs(exponent - v) < 1e-12; };
  if (near(1)) return fn(GradWeightSoftmax{});
  if (near(0)) return fn(GradWeightSparsemax{});
  if (near(0.5)) return fn(GradWeightSqrt{});
  if (near(0.75)) return fn(GradWeightThreeQuarters{});
  fn(GradWeightPower{exponent});
}

// dz = g*(dy - q), q = sum(g*dy)/sum(g): g is parked in dz between the two passes. Returns q.
template <class T, class G>
double family_backward_row(const T* p, const T* dy, T* dz, int64_t n, const G& g_of) {
  T sum_g[kLanes] = {};
  T sum_g_dy[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const T g = g_of(p[k + j]);
      dz[k + j] = g;
      sum_g[j] += g;
      sum_g_dy[j] += g * dy[k + j];
    }
  }
  double total_g = 0, total_g_dy = 0;
  for (; k < n; ++k) {
    const T g = g_of(p[k]);
    dz[k] = g;
    total_g += g;
    total_g_dy += g * dy[k];
  }
  for (int j = 0; j < kLanes; ++j) {
    total_g += sum_g[j];
    total_g_dy += sum_g_dy[j];
  }
  const double q = total_g > 0 ? total_g_dy / total_g : 0.0;
  const T q_t = static_cast<T>(q);
  for (k = 0; k < n; ++k) dz[k] = dz[k] * (dy[k] - q_t);
  return q;
}

// d alpha of one row (docs/method.md, "Learned alpha"), from p, dy and q = sum(g*dy)/sum(g).
template <class T>
double alpha_grad_row(const T* p, const T* dy, int64_t n, double alpha, double q) {
  double sum_p_log_p = 0, sum_dy_p = 0, sum_dy_p_log_p = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double pk = p[k];
    if (pk <= 0) continue;
    const double p_log_p = pk * std::log(pk);
    sum_p_log_p += p_log_p;
    sum_dy_p += dy[k] * pk;
    sum_dy_p_log_p += dy[k] * p_log_p;
  }
  const double am1 = alpha - 1;
  return (sum_dy_p - q) / (am1 * am1) - (sum_dy_p_log_p - q * sum_p_log_p) / am1;
}

// dz (and d alpha when `d_alpha` is set) of rows [begin, end); multiversioned for float (see
// LENGEN_ROW_KERNEL).
template <class T>
void backward_rows_of(const T* p, const T* dy, T* dz, double* d_alpha, int64_t n, RowAlpha alpha,
                      int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const T* pr = p + row * n;
    const T* dyr = dy + row * n;
    const double a = alpha[row];
    const bool as_softmax = std::abs(a - 1) < kSoftmaxAlphaTolerance;
    // g(0) = 0 for every alpha, so the entries after the last p > 0 (a causal mask's tail, or
    // beyond a sparse support) get dz = 0 and add nothing to the sums.
    const int64_t end = support_end(pr, n, T(0));
    T* dzr = dz + row * n;
    double q = 0;
    with_grad_weight(as_softmax ? 1.0 : 2.0 - a,
                     [&](const auto& g_of) { q = family_backward_row(pr, dyr, dzr, end, g_of); });
    std::fill(dzr + end, dzr + n, T(0));
    // At alpha = 1 the alpha gradient is indeterminate; learned alpha is kept away from it.
    if (d_alpha != nullptr && !as_softmax) d_alpha[row] = alpha_grad_row(pr, dyr, end, a, q);
  }
}
LENGEN_ROW_KERNEL void backward_rows(const float* p, const float* dy, float* dz, double* d_alpha, int64_t n,
                                     RowAlpha alpha, int64_t begin, int64_t end) {
  backward_rows_of(p, dy, dz, d_alpha, n, alpha, begin, end);
}
void backward_rows(const double* p, const double* dy, double* dz, double* d_alpha, int64_t n, RowAlpha alpha,
                   int64_t begin, int64_t end) {
  backward_rows_of(p, dy, dz, d_alpha, n, alpha, begin, end);
}

}  // namespace

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
    for_each_row_range(rows, n, [&](int64_t begin, int64_t end) {
      backward_rows(p_data, dy_data, dz_data, d_alpha, n, alpha, begin, end);
    });
  });
  return out;
}

}  // namespace lengen::detail
