#pragma once
// The score pass of the fused attention kernel: the scores of a group of queries against their
// visible keys, bias, scaling and mask applied as they are computed, and the scan that finds a
// row's first key within reach of its max.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "layout.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen::fused {

// Scores of R consecutive queries against kKeys vectors of keys from j: q.k * scale - slope *
// (query position - key position), or -inf where the key is padding or in the query's future.
// R x kKeys independent sums, so that the multiply-adds pipeline. An edge step (kEdge) applies
// the mask and checks finiteness; a step of keys that every row sees, with bounded scores, needs
// neither. Without a bias (kBiased false, slope 0) the same values as with it.
template <int R, int kKeys, bool kEdge, bool kBiased>
void score_step(int64_t d_head, const float* key_tile, const float* q, const float* key_position,
                const float* query_position, float slope, float scale, int64_t j, float* x, int64_t stride,
                RowScan* scan) {
  Floats acc[R][kKeys] = {};
  for (int64_t d = 0; d < d_head; ++d) {
    Floats key[kKeys];
    for (int k = 0; k < kKeys; ++k) key[k] = detail::load_floats(key_tile + d * kTile + k * kWidth);
    for (int r = 0; r < R; ++r) {
      const float qd = q[r * d_head + d];
      for (int k = 0; k < kKeys; ++k) acc[r][k] += qd * key[k];
    }
  }
  const Floats minus_infinity = Floats{} + kMinusInfinity;
  const Floats infinity = Floats{} + std::numeric_limits<float>::infinity();
  for (int k = 0; k < kKeys; ++k) {
    const Floats kp = detail::load_floats(key_position + j + k * kWidth);
    for (int r = 0; r < R; ++r) {
      const Floats qp = Floats{} + query_position[r];
      Floats score;
      if constexpr (kBiased) {
        score = acc[r][k] * scale + (-slope) * (qp - kp);
      } else {
        score = acc[r][k] * scale;
      }
      if constexpr (kEdge) {
        score = (kp >= 0.0f) & (kp <= qp) ? score : minus_infinity;
        scan[r].finite &= score < infinity;
      }
      detail::store_floats(x + r * stride + j + k * kWidth, score);
      scan[r].max = scan[r].max < score ? score : scan[r].max;
    }
  }
}

// The scores of R queries against the keys [0, end) (end a multiple of kWidth) into rows of x.
template <int R, bool kBiased>
void score_group(const Layout& in, int64_t b, const float* q, const float* key_tiles,
                 const float* key_position, const float* query_position, float slope, float scale,
                 int64_t end, float* x, int64_t stride, RowScan* scan) {
  constexpr int kKeys = kTile / kWidth;
  // Key j's column in its tile.
  const auto tile_of = [&](int64_t j) { return key_tiles + (j - j % kTile) * in.d_head + j % kTile; };
  const float* tile_min = in.tile_min_position + b * (in.padded_keys / kTile);
  const float* tile_max = in.tile_max_position + b * (in.padded_keys / kTile);
  const float first_query = *std::min_element(query_position, query_position + R);
  int64_t j = 0;
  for (; j + kTile <= end; j += kTile) {
    const bool seen_whole =
        in.bounded_scores && tile_min[j / kTile] >= 0 && tile_max[j / kTile] <= first_query;
    if (seen_whole) {
      score_step<R, kKeys, false, kBiased>(in.d_head, tile_of(j), q, key_position, query_position, slope,
                                           scale, j, x, stride, scan);
    } else {
      score_step<R, kKeys, true, kBiased>(in.d_head, tile_of(j), q, key_position, query_position, slope,
                                          scale, j, x, stride, scan);
    }
  }
  for (; j < end; j += kWidth) {
    score_step<R, 1, true, kBiased>(in.d_head, tile_of(j), q, key_position, query_position, slope, scale, j,
                                    x, stride, scan);
  }
}

// The first entry of x[0, end) above `floor`, in steps of 32 (or end): keys before it have
// weight 0 (under ALiBi, all but the nearest few hundred keys of a long row).
inline int64_t first_above(const float* x, int64_t end, float floor) {
  constexpr int64_t kStep = 4 * kWidth;
  const Floats floors = Floats{} + floor;
  int64_t i = 0;
  for (; i + kStep <= end; i += kStep) {
    const Ints above = (detail::load_floats(x + i) > floors) |
                       (detail::load_floats(x + i + kWidth) > floors) |
                       (detail::load_floats(x + i + 2 * kWidth) > floors) |
                       (detail::load_floats(x + i + 3 * kWidth) > floors);
    bool any = false;
    for (int j = 0; j < kWidth; ++j) any |= above[j] != 0;
    if (any) break;
  }
  return i;
}

}  // namespace lengen::fused
