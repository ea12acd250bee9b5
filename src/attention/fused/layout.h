#pragma once
// The fused attention kernel's shared pieces (docs/attention_kernels.md): its constants, the
// inputs laid out as flat fp32 arrays, the per-row scan of the score pass, the statistics of a
// work item and the per-thread buffers. Included by the kernel's translation unit only, so that
// every pass inlines into its per-CPU clones.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "lengen/float8.h"
#include "lengen/row_forward.h"
#include "lengen/threshold_search.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen::fused {

using detail::Floats;
using detail::Ints;
constexpr int64_t kWidth = detail::kFloats;
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
// The position of the key slots past the last key (the key rows are padded to kWidth): above
// every query position, so never visible.
constexpr float kNoKey = std::numeric_limits<float>::max();
// Keys whose d_head coordinates are stored together (d_head x kTile floats): a score step reads
// one contiguous tile rather than d_head rows of a transposed key matrix a whole row apart.
constexpr int64_t kTile = 2 * kWidth;
// Queries whose scores are computed together, sharing each load of the keys.
constexpr int64_t kGroup = 4;

inline int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// The inputs as flat fp32 arrays, laid out for the passes: keys in tiles of kTile keys, each
// stored [d_head, kTile] (so that eight keys' scores are one vector), keys and their positions
// padded to a whole tile.
struct Layout {
  int64_t batch, heads, queries, keys, padded_keys, d_head, cached, block, blocks;
  const float* q;               // [B, H, Tq, d_head]
  const float* key_tiles;       // [B, H, padded_keys / kTile, d_head, kTile]
  const float* values;          // [B, H, S, d_head]
  const float* query_position;  // [B, Tq]
  const float* key_position;    // [B, padded_keys]
  // The smallest and largest key position of each tile of kTile keys (padding slots count as
  // kNoKey), and whether no score can be NaN or infinite: a tile that every row of a group sees
  // whole is then scored without the mask and the finiteness check.
  const float* tile_min_position;  // [B, padded_keys / kTile]
  const float* tile_max_position;  // [B, padded_keys / kTile]
  bool bounded_scores;
  float* out;  // [B, H, Tq, d_head]
};

struct ItemStats {
  double nonzero = 0;
  double entropy = 0;
};

// The running max of a row's scores and whether all of them are finite (+inf or NaN makes the
// row's weights undefined; masked keys are -inf, which is fine), kept by the score pass so that
// no later pass over the row is needed for them.
struct RowScan {
  Floats max = Floats{} + kMinusInfinity;
  Ints finite = Ints{} - 1;  // all bits set: no score seen yet is NaN or +inf

  float row_max() const {
    float best = kMinusInfinity;
    for (int j = 0; j < kWidth; ++j) best = best < max[j] ? max[j] : best;
    return best;
  }
  bool all_finite() const {
    bool all = true;
    for (int j = 0; j < kWidth; ++j) all &= finite[j] != 0;
    return all;
  }
};

// The first `size` entries of a per-thread buffer that only grows: items come in no particular
// order of size, and shrinking then regrowing would clear the memory again each time.
template <class T>
T* at_least(std::vector<T>& buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(size);
  return buffer.data();
}

// The per-thread buffers of one group of queries: scores (which the weights of whole rows and
// softmax's exponentials then overwrite), weights of single rows, keys with their weights, and
// the candidates of the sparse normalizers' thresholds.
struct Buffers {
  std::vector<float> scores;
  std::vector<float> weights;
  std::vector<int32_t> keys;
  std::vector<int32_t> support;
  detail::Candidates candidates;
};

}  // namespace lengen::fused
