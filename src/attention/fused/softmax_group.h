#pragma once
// Softmax over a group of rows in the fused attention kernel: each row's exponentials from its
// first key within exp's range, then the values of all rows summed in one pass.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "layout.h"
#include "lengen/row_forward.h"
#include "scores.h"
#include "value_sums.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen::fused {

// Softmax over the rows of a group (scores x, rows n apart, keys [0, end) with end a multiple of
// kWidth): the exponentials of each row from its first key within exp's range, then the values
// summed for all rows in one pass (each value row loaded once), each row divided by its sum.
inline void attend_softmax_group(const Layout& in, float* x, int64_t n, int64_t group, int64_t end,
                                 const RowScan* scan, const float* query_position, const float* values,
                                 float* out, ItemStats& stats) {
  // The exponentials overwrite the scores they come from: one buffer of four rows instead of two
  // stays in cache (at 65,536 keys each is 1 MB).
  float* e = x;
  float inverse[kGroup];
  int64_t begin = end;
  for (int64_t r = 0; r < group; ++r) {
    const float max = scan[r].row_max();
    const bool attends = query_position[r] >= 0 && scan[r].all_finite() && max != kMinusInfinity;
    if (!attends) {
      std::fill(e + r * n, e + r * n + end, 0.0f);
      inverse[r] = 0;
      continue;
    }
    const int64_t first = first_above(x + r * n, end, max + (detail::kExpUnderflow - 1));
    begin = std::min(begin, first);
    std::fill(e + r * n, e + r * n + first, 0.0f);
    const detail::ExpSums sums =
        detail::softmax_exponentials(x + r * n + first, e + r * n + first, end - first, max);
    inverse[r] = static_cast<float>(1.0 / sums.sum);
    stats.nonzero += static_cast<double>(sums.nonzero);
    stats.entropy += sums.entropy;
  }
  // Keys from `end` on are padding slots of the key rows: never summed.
  const int64_t count = std::min(end, in.keys);
  if (group == kGroup && in.d_head == kWidth) {
    weighted_values_rows<kGroup, 1>(e, n, begin, count, values, out, in.d_head);
  } else if (group == kGroup && in.d_head == 2 * kWidth) {
    weighted_values_rows<kGroup, 2>(e, n, begin, count, values, out, in.d_head);
  } else {
    for (int64_t r = 0; r < group; ++r) {
      weighted_sum<false>(e + r * n + begin, nullptr, count - begin, values + begin * in.d_head, in.d_head,
                          out + r * in.d_head);
    }
  }
  for (int64_t r = 0; r < group; ++r) {
    float* out_row = out + r * in.d_head;
    const bool nan = query_position[r] >= 0 && !scan[r].all_finite();
    for (int64_t d = 0; d < in.d_head; ++d)
      out_row[d] = nan ? std::numeric_limits<float>::quiet_NaN() : out_row[d] * inverse[r];
  }
}

}  // namespace lengen::fused
