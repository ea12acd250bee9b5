#pragma once
// Building blocks of the fused CPU kernels. Public only because two layers share them: the
// normalizers' row kernels and the fused attention (a layer above) compute the same rows with
// them; nothing outside lengen's kernels is meant to call them. A kernel sees a contiguous
// [rows, n] float/double tensor and handles each row in a few passes on one thread; rows run in
// parallel. Threshold searches work in double on the few entries that can be in the support,
// except entmax's Newton search (integer 1/(alpha-1)), whose support is most of the row: its
// passes run over the row in the row's type, with double sums.
#include <ATen/Parallel.h>
#include <torch/types.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace lengen::detail {

// Elements handled per parallel task: small rows are grouped so that a task is worth a thread.
constexpr int64_t kElementsPerTask = 1 << 15;
// Independent accumulators in the reductions, so that the compiler vectorizes them.
constexpr int kLanes = 16;

// Splits rows [0, rows) into ranges run in parallel; `range_fn(begin, end)` handles one range.
template <class RangeFn>
void for_each_row_range(int64_t rows, int64_t n, const RangeFn& range_fn) {
  const int64_t grain = std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(n, 1));
  at::parallel_for(0, rows, grain, range_fn);
}

// The functions that loop over rows are compiled twice on x86-64 with GCC: for baseline x86-64
// (SSE2) and for x86-64-v3 (AVX2, FMA; Intel Haswell and AMD Zen and later); the dynamic loader
// picks by the CPU's features (row_kernel_clone() names its choice). `flatten` inlines the row
// templates into each copy, so their loops are vectorized for its target. No x86-64-v4 (AVX-512)
// copy: the hot loops are written in 8-float vectors (float8.h), which such a copy runs on the same
// 256-bit registers (BENCHMARKS.md). Not "arch=haswell": GCC dispatches that clone on the CPU
// model (exactly Intel Haswell), so every other CPU would run the baseline copy.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) && __GNUC__ >= 12
#define LENGEN_ROW_CLONES_X86_64_V3
#define LENGEN_ROW_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define LENGEN_ROW_CLONES_AVX2
#define LENGEN_ROW_KERNEL __attribute__((target_clones("avx2", "default"), flatten))
#else
#define LENGEN_ROW_KERNEL
#endif

// alpha of each row: one value for all rows, or one per row (a contiguous double tensor that the
// caller keeps alive).
struct RowAlpha {
  const double* per_row = nullptr;
  double constant = 1.0;
  double operator[](int64_t row) const { return per_row != nullptr ? per_row[row] : constant; }
};

// alpha (broadcastable to [..., 1] of `p`) as a RowAlpha over the rows of p, with its storage.
struct RowAlphaStorage {
  torch::Tensor values;
  RowAlpha rows;
};
RowAlphaStorage row_alpha(const torch::Tensor& alpha, const torch::Tensor& p);

// A 16-byte vector of T (GCC/Clang vector extension: SSE2 on baseline x86-64, wider targets
// combine them), for the loops that the auto-vectorizer leaves scalar.
template <class T>
struct Vector16 {
  typedef T type __attribute__((vector_size(16)));
  static constexpr int kWidth = 16 / sizeof(T);
};

// The V-sized vector at x (an unaligned load). Loading vector by vector, rather than memcpy of a
// block into an array of vectors, keeps GCC from bouncing the block through the stack.
template <class V, class T>
V load_vector(const T* x) {
  V v;
  std::memcpy(&v, x, sizeof(V));
  return v;
}

// The max of row x (-inf for an empty or fully masked row), 4 vectors at a time: written with
// lane arrays, GCC leaves this loop scalar.
template <class T>
T row_max(const T* x, int64_t n) {
  using V = typename Vector16<T>::type;
  constexpr int kWidth = Vector16<T>::kWidth;
  constexpr int kBlock = 4 * kWidth;
  constexpr T kMinusInfinity = -std::numeric_limits<T>::infinity();
  V lanes[4];
  for (V& lane : lanes) lane = V{} + kMinusInfinity;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int k = 0; k < 4; ++k) {
      const V block = load_vector<V>(x + i + k * kWidth);
      lanes[k] = lanes[k] < block ? block : lanes[k];
    }
  }
  T best = kMinusInfinity;
  for (const V& lane : lanes) {
    for (int j = 0; j < kWidth; ++j) best = best < lane[j] ? lane[j] : best;
  }
  for (; i < n; ++i) best = best < x[i] ? x[i] : best;
  return best;
}

// One past the last entry of row x above `floor`: the entries after it cannot be in the support
// (a causal mask's -inf tail, for one), so the passes over the row stop there. Scans back a
// block of 4 vectors at a time.
template <class T>
int64_t support_end(const T* x, int64_t n, T floor) {
  using V = typename Vector16<T>::type;
  constexpr int kWidth = Vector16<T>::kWidth;
  constexpr int kBlock = 4 * kWidth;
  const V floors = V{} + floor;
  int64_t end = n;
  for (; end >= kBlock; end -= kBlock) {
    const T* block = x + end - kBlock;
    const auto above = (load_vector<V>(block) > floors) | (load_vector<V>(block + kWidth) > floors) |
                       (load_vector<V>(block + 2 * kWidth) > floors) |
                       (load_vector<V>(block + 3 * kWidth) > floors);
    bool any_above = false;
    for (int j = 0; j < kWidth; ++j) any_above |= above[j] != 0;
    if (any_above) break;
  }
  while (end > 0 && !(x[end - 1] > floor)) --end;
  return end;
}

// Writes the i in [0, end) with x[i] > floor to keys (room for end + 8) and returns how many:
// a branch-free vector compress on CPUs with AVX2, a scalar loop elsewhere.
int64_t indices_above(const float* x, int64_t end, float floor, int32_t* keys);

// Which copy of the row kernels runs on this CPU: "x86-64-v3 (AVX2)", "avx2", "baseline x86-64"
// or "portable" (no clones built).
const char* row_kernel_clone();

// The entries of a row that can be in the support, in double: a buffer kept per thread that
// only grows, with a count that a search may shrink (entmax's solver drops the entries below its
// bracket as it rises: with alpha near 1 nearly every entry starts as a candidate).
class Candidates {
 public:
  double* begin() { return values_.data(); }
  double* end() { return values_.data() + count_; }
  const double* begin() const { return values_.data(); }
  const double* end() const { return values_.data() + count_; }
  double& operator[](size_t i) { return values_[i]; }
  size_t size() const { return count_; }
  // Keeps the first `count` values (count <= size()).
  void resize(size_t count) { count_ = count; }

  // Sets the candidates to scale * (x_k - max) for the x_k above `floor`, and returns
  // support_end(x, n, floor): the row's passes stop there. Branch-free: every value is written
  // and the count advances only for those kept (a kept/dropped branch would be mispredicted for
  // a good share of attention scores).
  template <class T>
  int64_t collect(const T* x, int64_t n, T floor, double max, double scale) {
    const int64_t end = support_end(x, n, floor);
    if (values_.size() < static_cast<size_t>(end) + 1) values_.resize(end + 1);
    double* out = values_.data();
    size_t count = 0;
    for (int64_t i = 0; i < end; ++i) {
      out[count] = scale * (static_cast<double>(x[i]) - max);
      count += x[i] > floor;
    }
    count_ = count;
    return end;
  }

  // The same candidates from x[0, end) (no -inf tail to find), each with its index in keys
  // (room for end + 8): for the fused attention, which then touches only the candidates.
  void collect_listed(const float* x, int64_t end, float floor, double max, double scale, int32_t* keys) {
    const int64_t count = indices_above(x, end, floor, keys);
    if (values_.size() < static_cast<size_t>(count)) values_.resize(count);
    for (int64_t i = 0; i < count; ++i) values_[i] = scale * (static_cast<double>(x[keys[i]]) - max);
    count_ = count;
  }

 private:
  std::vector<double> values_;
  size_t count_ = 0;
};

// Over the candidates above t: how many, the sums of d = c - t and of d^2, and the smallest d
// (infinity when none).
struct PositiveParts {
  double count = 0;
  double sum = 0;
  double sum_sq = 0;
  double min = std::numeric_limits<double>::infinity();
};

// One pass of a threshold search. Lane-parallel and branch-free, so that it vectorizes (the
// normalizer sources build with -fno-trapping-math, without which GCC keeps the selects as
// branches); the searches pass over all candidates rather than compact them, which is cheaper
// for the few dozen candidates of a row.
inline PositiveParts positive_parts(const Candidates& candidates, double t) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  double count[kLanes] = {}, sum[kLanes] = {}, sum_sq[kLanes] = {}, min[kLanes];
  std::fill(min, min + kLanes, kInfinity);
  const double* c = candidates.begin();
  const size_t m = candidates.size();
  size_t i = 0;
  for (; i + kLanes <= m; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double raw = c[i + j] - t;
      const bool positive = raw > 0;
      const double d = positive ? raw : 0.0;
      count[j] += positive ? 1.0 : 0.0;
      sum[j] += d;
      sum_sq[j] += d * d;
      const double candidate = positive ? raw : kInfinity;
      min[j] = candidate < min[j] ? candidate : min[j];
    }
  }
  PositiveParts out;
  for (; i < m; ++i) {
    const double d = c[i] - t;
    if (!(d > 0)) continue;
    out.count += 1;
    out.sum += d;
    out.sum_sq += d * d;
    out.min = std::min(out.min, d);
  }
  for (int j = 0; j < kLanes; ++j) {
    out.count += count[j];
    out.sum += sum[j];
    out.sum_sq += sum_sq[j];
    out.min = std::min(out.min, min[j]);
  }
  return out;
}

// Writes softmax of row x to y (a fully masked row gives zeros).
template <class T>
void softmax_row(const T* x, T* y, int64_t n) {
  const T max = row_max(x, n);
  if (max == -std::numeric_limits<T>::infinity()) {
    std::fill(y, y + n, T(0));
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - max);
    sum += y[i];
  }
  const T inverse = static_cast<T>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) y[i] *= inverse;
}

// The backward of the entmax family on CPU (see entmax_family_backward_aten): dz for p and dy
// (contiguous, same shape), alpha per row. With `alpha_grad`, also d alpha per row ([..., 1]).
struct FamilyGrads {
  torch::Tensor dz;
  torch::Tensor d_alpha;
};
FamilyGrads entmax_family_backward_cpu(const torch::Tensor& p, const torch::Tensor& dy, RowAlpha alpha,
                                       bool alpha_grad);

}  // namespace lengen::detail
