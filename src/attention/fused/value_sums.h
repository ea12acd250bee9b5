#pragma once
// The value sums of the fused attention kernel: weighted sums of value rows over a row's keys,
// its listed keys or a group of rows at once, and the listing of a row's nonzero weights.

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "layout.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen::fused {

// Listed value rows requested this many entries before they are summed.
constexpr int64_t kPrefetchAhead = 16;

// out = sum over entries i < count of w_i v_j, with j = keys[i] (kListed) or j = i: V vectors
// per value row (d_head = 8 V), kUnroll entries at a time into independent sums.
template <int V, bool kListed>
void weighted_values(const float* w, const int32_t* keys, int64_t count, const float* values, float* out) {
  constexpr int kUnroll = V <= 2 ? 4 : (V == 4 ? 2 : 1);
  Floats acc[kUnroll][V] = {};
  int64_t i = 0;
  for (; i + kUnroll <= count; i += kUnroll) {
    if (kListed && i + kPrefetchAhead < count) {
      // The listed rows are scattered over the head's values (MBs at long lengths): ask for
      // them ahead so that their cache misses overlap.
      for (int u = 0; u < kUnroll; ++u)
        __builtin_prefetch(values + static_cast<int64_t>(keys[std::min(i + kPrefetchAhead + u, count - 1)]) *
                                        V * kWidth);
    }
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t j = kListed ? keys[i + u] : i + u;
      const float wj = w[i + u];
      const float* vj = values + j * V * kWidth;
      for (int v = 0; v < V; ++v) acc[u][v] += wj * detail::load_floats(vj + v * kWidth);
    }
  }
  for (; i < count; ++i) {
    const int64_t j = kListed ? keys[i] : i;
    const float wj = w[i];
    const float* vj = values + j * V * kWidth;
    for (int v = 0; v < V; ++v) acc[0][v] += wj * detail::load_floats(vj + v * kWidth);
  }
  for (int v = 0; v < V; ++v) {
    Floats total = acc[0][v];
    for (int u = 1; u < kUnroll; ++u) total += acc[u][v];
    detail::store_floats(out + v * kWidth, total);
  }
}

// out row r (V vectors each, rows out_stride apart) = sum over j < count of w[r * stride + j] v_j
// for the R rows of a group: each value row is loaded once for all of them.
template <int R, int V>
void weighted_values_rows(const float* w, int64_t stride, int64_t begin, int64_t count, const float* values,
                          float* out, int64_t out_stride) {
  Floats acc[R][V] = {};
  for (int64_t j = begin; j < count; ++j) {
    Floats v[V];
    for (int k = 0; k < V; ++k) v[k] = detail::load_floats(values + (j * V + k) * kWidth);
    for (int r = 0; r < R; ++r) {
      const float wj = w[r * stride + j];
      for (int k = 0; k < V; ++k) acc[r][k] += wj * v[k];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int k = 0; k < V; ++k) detail::store_floats(out + r * out_stride + k * kWidth, acc[r][k]);
  }
}

// The same for any d_head, one entry at a time.
template <bool kListed>
void weighted_values_any(const float* w, const int32_t* keys, int64_t count, const float* values,
                         int64_t d_head, float* out) {
  std::fill(out, out + d_head, 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = kListed ? keys[i] : i;
    const float wj = w[i];
    const float* vj = values + j * d_head;
    for (int64_t d = 0; d < d_head; ++d) out[d] += wj * vj[d];
  }
}

// out (d_head floats) = sum of w_i v_i over the first `count` keys, or of w_i v_keys[i] over the
// listed keys.
template <bool kListed>
void weighted_sum(const float* w, const int32_t* keys, int64_t count, const float* values, int64_t d_head,
                  float* out) {
  switch (d_head) {
    case 8:
      return weighted_values<1, kListed>(w, keys, count, values, out);
    case 16:
      return weighted_values<2, kListed>(w, keys, count, values, out);
    case 32:
      return weighted_values<4, kListed>(w, keys, count, values, out);
    case 64:
      return weighted_values<8, kListed>(w, keys, count, values, out);
    default:
      return weighted_values_any<kListed>(w, keys, count, values, d_head, out);
  }
}

// Writes the j in [0, end) with w[j] > 0 to keys and returns their count. The weights are +0 or
// positive, so a block of them is all zero when the OR of its bits is: sparse rows skip most
// of their length a block at a time.
inline int64_t nonzero_keys(const float* w, int64_t end, int32_t* keys) {
  typedef uint32_t Bits __attribute__((vector_size(32)));
  constexpr int64_t kBlock = 4 * kWidth;
  const auto bits_at = [w](int64_t j) {
    Bits v;
    std::memcpy(&v, w + j, sizeof(v));
    return v;
  };
  int64_t count = 0;
  int64_t j = 0;
  for (; j + kBlock <= end; j += kBlock) {
    const Bits any = bits_at(j) | bits_at(j + kWidth) | bits_at(j + 2 * kWidth) | bits_at(j + 3 * kWidth);
    uint32_t set = 0;
    for (int k = 0; k < kWidth; ++k) set |= any[k];
    if (set == 0) continue;
    for (int64_t k = j; k < j + kBlock; ++k) {
      keys[count] = static_cast<int32_t>(k);
      count += w[k] > 0;
    }
  }
  for (; j < end; ++j) {
    keys[count] = static_cast<int32_t>(j);
    count += w[j] > 0;
  }
  return count;
}

}  // namespace lengen::fused
