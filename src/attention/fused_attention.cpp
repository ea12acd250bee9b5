#include "fused_attention.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "lengen/float8.h"
#include "lengen/normalizer_common.h"
#include "lengen/row_forward.h"
#include "lengen/row_kernels.h"
#include "lengen/threshold_search.h"

namespace lengen {

std::optional<FusedNormalizer> fused_normalizer(const NormalizerSpec& spec, bool learned) {
  if (spec.name == "softmax") return FusedNormalizer::kSoftmax;
  if (spec.name == "sparsemax") return FusedNormalizer::kSparsemax;
  if (spec.name == "entmax15") return FusedNormalizer::kEntmax15;
  if (spec.name != "entmax") return std::nullopt;
  if (learned) return FusedNormalizer::kEntmax;
  if (std::abs(spec.alpha - 1) < detail::kSoftmaxAlphaTolerance) return FusedNormalizer::kSoftmax;
  if (spec.alpha == 1.5) return FusedNormalizer::kEntmax15;
  if (spec.alpha == 2.0) return FusedNormalizer::kSparsemax;
  return FusedNormalizer::kEntmax;
}

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h
using detail::Floats;
using detail::Ints;
constexpr int64_t kWidth = detail::kFloats;
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
// The position of the key slots past the last key (the key rows are padded to kWidth): above
// every query position, so never visible.
constexpr float kNoKey = std::numeric_limits<float>::max();
// Scores per work item (1 Mi): an item holds this many / keys queries, so that items cost about
// the same and are many enough to share among threads.
constexpr int64_t kBlockScores = int64_t{1} << 20;
constexpr int64_t kMaxBlockQueries = 64;
// A sparse row with more than 1 / this of its keys as candidates takes the dense summation.
constexpr int64_t kDenseRowShare = 4;
// Listed value rows requested this many entries before they are summed.
constexpr int64_t kPrefetchAhead = 16;
// Keys whose d_head coordinates are stored together (d_head x kTile floats): a score step reads
// one contiguous tile rather than d_head rows of a transposed key matrix a whole row apart.
constexpr int64_t kTile = 2 * kWidth;
// Queries whose scores are computed together, sharing each load of the keys.
constexpr int64_t kGroup = 4;

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Queries per work item: depends on the key count only, never on the thread count. A whole
// number of groups, so that only a sequence's last block can hold a partial group: the rows of
// a partial group are scored one at a time, each loading all the keys itself.
int64_t queries_per_block(int64_t keys) {
  const int64_t queries = std::clamp<int64_t>(kBlockScores / std::max<int64_t>(keys, 1), 1, kMaxBlockQueries);
  return std::max(kGroup, queries / kGroup * kGroup);
}

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
int64_t nonzero_keys(const float* w, int64_t end, int32_t* keys) {
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

// Adds the statistics of a sparse row whose `count` nonzero weights w (of keys `keys`) are known,
// and writes its output.
void sum_support(const Layout& in, const float* w, const int32_t* keys, int64_t count, const float* values,
                 float* out_row, ItemStats& stats) {
  detail::Floats terms{};  // sums of w log2 w
  int64_t i = 0;
  for (; i + kWidth <= count; i += kWidth) {
    const Floats wi = detail::load_floats(w + i);
    terms += wi * detail::log2_of_weight(wi);
  }
  double w_log2_w = detail::sum_of_lanes(terms);
  for (; i < count; ++i) w_log2_w += w[i] * std::log2(static_cast<double>(w[i]));  // w[i] > 0
  weighted_sum<true>(w, keys, count, values, in.d_head, out_row);
  stats.nonzero += static_cast<double>(count);
  stats.entropy -= detail::kLn2 * w_log2_w;
}

// The first entry of x[0, end) above `floor`, in steps of 32 (or end): keys before it have
// weight 0 (under ALiBi, all but the nearest few hundred keys of a long row).
int64_t first_above(const float* x, int64_t end, float floor) {
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

// A lower bound on the threshold of a sparsemax (power 1) or 1.5-entmax (power 2) row whose
// candidates are c = scale (x - max): with N entries above a level a, sum [c - tau]_+^power = 1
// gives tau >= a - N^(-1/power). One vector pass counts the entries above a few levels; a row
// whose weight is spread over many keys has many of them near the max, and the bound then keeps
// the threshold search and the collection to the keys near its support.
struct ThresholdBound {
  double lower = -1;
  double near_max = 0;  // entries above the first level, (max - 1/2) in candidate units
};
ThresholdBound threshold_lower_bound(const float* x, int64_t padded_end, float max, double scale,
                                     bool squared) {
  constexpr int kLevels = 8;
  constexpr double kLevelAt[kLevels] = {-1.0 / 2, -3.0 / 8,  -1.0 / 4,  -3.0 / 16,
                                        -1.0 / 8, -1.0 / 16, -1.0 / 32, -1.0 / 64};
  Floats level[kLevels];
  double level_c[kLevels];
  for (int m = 0; m < kLevels; ++m) {
    const auto at = static_cast<float>(max + kLevelAt[m] / scale);
    level[m] = Floats{} + at;
    level_c[m] = scale * (static_cast<double>(at) - max);  // as the candidates are computed
  }
  Ints above[kLevels] = {};
  for (int64_t i = 0; i < padded_end; i += kWidth) {
    const Floats v = detail::load_floats(x + i);
    for (int m = 0; m < kLevels; ++m) above[m] -= v > level[m];  // a true lane is -1
  }
  ThresholdBound bound;
  for (int m = 0; m < kLevels; ++m) {
    double count = 0;
    for (int j = 0; j < kWidth; ++j) count += above[m][j];
    if (m == 0) bound.near_max = count;
    if (count > 0)
      bound.lower = std::max(bound.lower, level_c[m] - (squared ? 1 / std::sqrt(count) : 1 / count));
  }
  return bound;
}

// The positive parts at t of a whole row's candidates c = scale (x - max), in float vectors
// (sums in float over blocks of kFlushEvery vectors, in double across them): the threshold search
// of a row most of whose keys are candidates, without collecting them. t is taken in float, which
// moves the threshold by at most float's resolution at t.
detail::PositiveParts row_positive_parts(const float* x, int64_t padded_end, float max, float scale,
                                         double t) {
  constexpr int64_t kFlushEvery = 64;
  const Floats ts = Floats{} + static_cast<float>(t);
  const Floats ones = Floats{} + 1.0f;
  const Floats infinity = Floats{} + std::numeric_limits<float>::infinity();
  Floats min = infinity;
  detail::PositiveParts out;
  for (int64_t j = 0; j < padded_end;) {
    Floats count{}, sum{}, sum_sq{};
    const int64_t block_end = std::min(padded_end, j + kFlushEvery * kWidth);
    for (; j < block_end; j += kWidth) {
      const Floats d = (detail::load_floats(x + j) - max) * scale - ts;
      const auto positive = d > 0.0f;
      const Floats kept = positive ? d : Floats{};
      count += positive ? ones : Floats{};
      sum += kept;
      sum_sq += kept * kept;
      min = positive ? (d < min ? d : min) : min;
    }
    out.count += detail::sum_of_lanes(count);
    out.sum += detail::sum_of_lanes(sum);
    out.sum_sq += detail::sum_of_lanes(sum_sq);
  }
  for (int j = 0; j < kWidth; ++j) out.min = std::min(out.min, static_cast<double>(min[j]));
  return out;
}

// A sparse row most of whose keys are candidates (near uniform, as at random initialisation):
// the weights of the whole row in one vector pass with their statistics, and the values summed
// in key order, which beats gathering them by index. Float arithmetic of the dense row kernels.
// With a group slot the weights are left there for the group's joint value pass (out_row is then
// not written).
void attend_dense_sparse_row(const Layout& in, bool entmax15, const float* x, int64_t end, float max,
                             double tau, const float* values, Buffers& buffers, float* group_slot,
                             float* out_row, ItemStats& stats) {
  constexpr int64_t kFlushEvery = 64;  // vectors summed in float before a double
  const auto t = static_cast<float>(tau);
  const float scale = entmax15 ? 0.5f : 1.0f;
  const int64_t padded_end = round_up(end, kWidth);
  float* w = group_slot != nullptr ? group_slot : at_least(buffers.weights, padded_end);
  Ints nonzero{};
  // The weight is v or v^2 with v = [c - t]_+, so -w ln w = -power ln 2 w log2 v: the log of v,
  // which is there before the square.
  double w_log2_v = 0;
  for (int64_t j = 0; j < padded_end;) {
    Floats terms{};
    const int64_t block_end = std::min(padded_end, j + kFlushEvery * kWidth);
    for (; j < block_end; j += kWidth) {
      Floats v = (detail::load_floats(x + j) - max) * scale - t;
      v = v > 0.0f ? v : Floats{};
      const Floats weight = entmax15 ? v * v : v;
      detail::store_floats(w + j, weight);
      terms += weight * detail::log2_of_weight(v);
      nonzero -= weight > 0.0f;  // a true lane is -1
    }
    w_log2_v += detail::sum_of_lanes(terms);
  }
  if (group_slot == nullptr) weighted_sum<false>(w, nullptr, end, values, in.d_head, out_row);
  for (int j = 0; j < kWidth; ++j) stats.nonzero += nonzero[j];
  stats.entropy -= (entmax15 ? 2 : 1) * detail::kLn2 * w_log2_v;
}

// A sparsemax or 1.5-entmax row: its threshold from the keys within reach of the max (the
// normalizer's own search, so the threshold of the dense path up to rounding), then weights,
// values and statistics over those keys only. A row most of whose keys are candidates leaves its
// weights in group_slot when there is one, and returns true: its values are summed with the
// group's. previous_tau is the threshold of the block's previous row (NaN before the first), a
// starting point that saves the count at several levels and, for whole rows, most of the search.
bool attend_sparse_row(const Layout& in, bool entmax15, const float* x, int64_t end, float max,
                       const float* values, Buffers& buffers, float* group_slot, float* out_row,
                       double& previous_tau, ItemStats& stats) {
  const double scale = entmax15 ? 0.5 : 1.0;
  const int64_t padded_end = round_up(end, kWidth);
  const auto whole_row = [&](double tau) {
    attend_dense_sparse_row(in, entmax15, x, end, max, tau, values, buffers, group_slot, out_row, stats);
    return group_slot != nullptr;
  };
  const auto dense_row = [&](double lower, const detail::PositiveParts* parts_at_lower) {
    // The search passes over the row itself, in float vectors.
    const auto parts_at = [&](double t) {
      if (parts_at_lower != nullptr && t == lower) return *parts_at_lower;
      return row_positive_parts(x, padded_end, max, static_cast<float>(scale), t);
    };
    previous_tau =
        entmax15 ? detail::entmax15_search(parts_at, lower) : detail::sparsemax_search(parts_at, lower);
    return whole_row(previous_tau);
  };
  // A few entries below a level in candidate units are kept that rounding might otherwise drop
  // (they add nothing: the search drops what lies below its bracket).
  const auto floor_at = [&](double level) {
    return static_cast<float>(max + level / scale) - 1e-6f * (std::abs(max) + 1);
  };
  // Keys up to candidate -1 lie below every threshold (-1 bounds it from below): under ALiBi all
  // but the nearest few hundred keys of a long row. The passes below start at the first block of
  // keys above them, and every lower bound is taken at -1 or above.
  const int64_t skip = first_above(x, end, floor_at(-1));
  double lower;  // a lower bound on the threshold, -1 or above
  if (!std::isnan(previous_tau)) {
    // Neighbouring rows of a block have about the same threshold relative to their max. It is a
    // lower bound on this row's when the weight above it is at least 1 (the weight falls as the
    // threshold rises), and then the search starts there. Otherwise it lies above this row's
    // threshold, and one Newton step down gives a lower bound: the weight above t, sum [c -
    // t]_+^power, is convex in t, so its tangent at the hint lies below it and reaches 1 at or
    // below the threshold. One pass of positive parts, cheaper than the count at several levels.
    const detail::PositiveParts parts =
        row_positive_parts(x + skip, padded_end - skip, max, static_cast<float>(scale), previous_tau);
    const double mass = entmax15 ? parts.sum_sq : parts.sum;
    const double falls_by = entmax15 ? 2 * parts.sum : parts.count;  // minus the tangent's slope
    const bool hint_below = mass >= 1;
    lower = hint_below ? previous_tau : std::max(-1.0, previous_tau - (1 - mass) / falls_by);
    if (parts.count > static_cast<double>(end / kDenseRowShare))
      return dense_row(lower, hint_below ? &parts : nullptr);
  } else {
    const ThresholdBound bound = threshold_lower_bound(x + skip, padded_end - skip, max, scale, entmax15);
    lower = bound.lower;
    if (bound.near_max > static_cast<double>(end / kDenseRowShare)) return dense_row(lower, nullptr);
  }
  int32_t* keys = at_least(buffers.keys, end + kWidth);
  detail::Candidates& candidates = buffers.candidates;
  candidates.collect_listed(x + skip, end - skip, floor_at(lower), max, scale, keys);
  const auto count = static_cast<int64_t>(candidates.size());
  for (int64_t i = 0; i < count; ++i) keys[i] += static_cast<int32_t>(skip);
  const double tau = entmax15 ? detail::entmax15_threshold(candidates, lower)
                              : detail::sparsemax_threshold(candidates, lower);
  previous_tau = tau;
  if (count > end / kDenseRowShare) return whole_row(tau);
  // The weights of the candidates (in a loop of their own, so that it vectorizes), then those
  // that are nonzero packed to the front with their keys. In float as on the dense path (a
  // candidate in float is x - max, or (x - max)/2, exactly as the row kernels compute it), so
  // that an entry at the threshold gets the same zero.
  const double* c = candidates.begin();
  const auto t = static_cast<float>(tau);
  float* w = at_least(buffers.weights, count);
  for (int64_t i = 0; i < count; ++i) {
    const float v = static_cast<float>(c[i]) - t;
    w[i] = v > 0 ? v : 0.0f;
  }
  if (entmax15) {
    for (int64_t i = 0; i < count; ++i) w[i] *= w[i];
  }
  int32_t* support = at_least(buffers.support, count);
  int64_t nonzero = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float weight = w[i];
    support[nonzero] = keys[i];
    w[nonzero] = weight;
    nonzero += weight > 0;
  }
  sum_support(in, w, support, nonzero, values, out_row, stats);
  return false;
}

// Softmax over the rows of a group (scores x, rows n apart, keys [0, end) with end a multiple of
// kWidth): the exponentials of each row from its first key within exp's range, then the values
// summed for all rows in one pass (each value row loaded once), each row divided by its sum.
void attend_softmax_group(const Layout& in, float* x, int64_t n, int64_t group, int64_t end,
                          const RowScan* scan, const float* query_position, const float* values, float* out,
                          ItemStats& stats) {
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

// One query's row of scores x (keys [0, end), -inf after them up to a multiple of kWidth):
// normalizer, statistics and output, or (returning true) its weights left in group_slot for the
// group's joint value pass (see attend_sparse_row).
bool attend_row(const Layout& in, const FusedAttentionPlan& plan, int64_t h, const float* x, int64_t end,
                const RowScan& scan, const float* values, Buffers& buffers, float* group_slot,
                double& previous_tau, float* out_row, ItemStats& stats) {
  if (!scan.all_finite()) {
    // Weights of a row with a NaN or +inf score are undefined: NaN, as on the dense path, so
    // that blown-up weights show as a non-finite loss instead of dropping those keys.
    std::fill(out_row, out_row + in.d_head, std::numeric_limits<float>::quiet_NaN());
    return false;
  }
  const float max = scan.row_max();
  if (max == kMinusInfinity) {  // no visible key: weights and output 0
    std::fill(out_row, out_row + in.d_head, 0.0f);
    return false;
  }
  switch (plan.normalizer) {
    case FusedNormalizer::kSoftmax:  // never here: softmax takes a group at a time (attend_softmax_group)
      return false;
    case FusedNormalizer::kSparsemax:
    case FusedNormalizer::kEntmax15:
      return attend_sparse_row(in, plan.normalizer == FusedNormalizer::kEntmax15, x, end, max, values,
                               buffers, group_slot, out_row, previous_tau, stats);
    case FusedNormalizer::kEntmax: {
      // A learned or unusual alpha: the general solver writes the whole row, then its support.
      const int64_t padded_end = round_up(end, kWidth);
      float* w = at_least(buffers.weights, padded_end);
      detail::entmax_rows(x, w, padded_end, detail::RowAlpha{nullptr, plan.alphas[h]}, 0, 1);
      int32_t* keys = at_least(buffers.keys, padded_end);
      const int64_t count = nonzero_keys(w, end, keys);
      for (int64_t i = 0; i < count; ++i) w[i] = w[keys[i]];  // in place: keys[i] >= i
      sum_support(in, w, keys, count, values, out_row, stats);
      return false;
    }
  }
  return false;
}

// The outputs of a whole group's rows whose weights are in their slots of w (rows n apart, keys
// [0, end)), in one pass over the values that loads each value row once for all of them; the
// outputs of the other rows are left as they are.
void sum_group_slots(const Layout& in, float* w, int64_t n, int64_t end, int64_t first_query,
                     const bool* in_slot, const float* values, float* out) {
  if (std::none_of(in_slot, in_slot + kGroup, [](bool slot) { return slot; })) return;
  const int64_t count = std::min(end, in.keys);
  for (int64_t r = 0; r < kGroup; ++r) {
    // A row's weights stop at its own last key rounded up to kWidth, which is the group's last
    // unless the KV cache holds a number of keys that is not a multiple of kGroup: zeros after
    // it. The slots of the rows not in the pass hold their scores (-inf among them) or stale
    // weights; their sums, each in its own accumulators, are dropped.
    const int64_t filled = round_up(std::min(in.keys, in.cached + first_query + r + 1), kWidth);
    if (in_slot[r] && filled < count) std::fill(w + r * n + filled, w + r * n + count, 0.0f);
  }
  float sums[kGroup * 2 * kWidth];
  if (in.d_head == kWidth) {
    weighted_values_rows<kGroup, 1>(w, n, 0, count, values, sums, in.d_head);
  } else {
    weighted_values_rows<kGroup, 2>(w, n, 0, count, values, sums, in.d_head);
  }
  for (int64_t r = 0; r < kGroup; ++r) {
    if (in_slot[r]) std::copy(sums + r * in.d_head, sums + (r + 1) * in.d_head, out + r * in.d_head);
  }
}

// One item: the queries [first, first + rows) of sequence b, head h, kGroup queries at a time:
// their scores in one pass over the keys, then each row to its output while its scores are still
// in cache.
void attend_block(const Layout& in, const FusedAttentionPlan& plan, int64_t b, int64_t h, int64_t first,
                  int64_t rows, Buffers& buffers, ItemStats& stats) {
  const int64_t bh = b * in.heads + h;
  // Keys past the last query's own index are in every query's future: never computed.
  const int64_t n = round_up(std::min(in.keys, in.cached + first + rows), kWidth);
  float* x = at_least(buffers.scores, kGroup * n);
  const float* q = in.q + (bh * in.queries + first) * in.d_head;
  const float* key_tiles = in.key_tiles + bh * in.d_head * in.padded_keys;
  const float* key_position = in.key_position + b * in.padded_keys;
  const float* query_position = in.query_position + b * in.queries + first;
  const float* values = in.values + bh * in.keys * in.d_head;
  float* out = in.out + (bh * in.queries + first) * in.d_head;
  const auto slope = static_cast<float>(plan.slopes[h]);
  const auto scale = static_cast<float>(plan.score_scale);
  // Per block, so that an item's results never depend on which items a thread ran before it.
  double previous_tau = std::numeric_limits<double>::quiet_NaN();
  for (int64_t g = 0; g < rows; g += kGroup) {
    const int64_t group = std::min(kGroup, rows - g);
    const int64_t end = round_up(std::min(in.keys, in.cached + first + g + group), kWidth);
    const float* qg = q + g * in.d_head;
    RowScan scan[kGroup];
    if (group == kGroup && slope != 0) {
      score_group<kGroup, true>(in, b, qg, key_tiles, key_position, query_position + g, slope, scale, end, x,
                                n, scan);
    } else if (group == kGroup) {
      score_group<kGroup, false>(in, b, qg, key_tiles, key_position, query_position + g, slope, scale, end, x,
                                 n, scan);
    } else {
      for (int64_t r = 0; r < group; ++r) {
        score_group<1, true>(in, b, qg + r * in.d_head, key_tiles, key_position, query_position + g + r,
                             slope, scale, end, x + r * n, n, scan + r);
      }
    }
    if (plan.normalizer == FusedNormalizer::kSoftmax) {
      attend_softmax_group(in, x, n, group, end, scan, query_position + g, values, out + g * in.d_head,
                           stats);
      continue;
    }
    // Rows of a whole group that leave their weights in a slot are summed together afterwards
    // (head sizes 8 and 16, those of the models lengen trains; others sum row by row). A row's
    // slot is its own row of scores, which it no longer needs once its weights are taken: one
    // buffer of four rows stays in cache rather than two.
    const bool joint = group == kGroup && (in.d_head == kWidth || in.d_head == 2 * kWidth);
    float* slots = joint ? x : nullptr;
    bool in_slot[kGroup] = {};
    for (int64_t r = 0; r < group; ++r) {
      float* out_row = out + (g + r) * in.d_head;
      if (query_position[g + r] < 0) {  // padding: no key is visible, the output is 0
        std::fill(out_row, out_row + in.d_head, 0.0f);
        continue;
      }
      const int64_t row_end = std::min(in.keys, in.cached + first + g + r + 1);
      in_slot[r] = attend_row(in, plan, h, x + r * n, row_end, scan[r], values, buffers,
                              joint ? slots + r * n : nullptr, previous_tau, out_row, stats);
    }
    if (joint) sum_group_slots(in, slots, n, end, first + g, in_slot, values, out + g * in.d_head);
  }
}

// Runs items until none is left, taking the next one from `next`. Items are taken in decreasing
// order of cost (a late query block sees the most keys), so that whichever thread is free takes
// the next and the threads finish together: the short items come last and fill the gaps. An
// item's results never depend on the thread that ran it. item = block + blocks * (head + heads *
// sequence).
LENGEN_ROW_KERNEL void attend_items(const Layout& in, const FusedAttentionPlan& plan,
                                    std::atomic<int64_t>& next, ItemStats* stats) {
  thread_local Buffers buffers;
  const int64_t per_block = in.batch * in.heads;
  const int64_t items = per_block * in.blocks;
  for (int64_t i = next++; i < items; i = next++) {
    const int64_t block = in.blocks - 1 - i / per_block;
    const int64_t h = i % in.heads;
    const int64_t b = (i / in.heads) % in.batch;
    const int64_t first = block * in.block;
    attend_block(in, plan, b, h, first, std::min(in.block, in.queries - first), buffers,
                 stats[block + in.blocks * (h + in.heads * b)]);
  }
}

// max |t| from its max and min (no copy of t as abs would make): NaN when t holds one.
double largest_magnitude(const torch::Tensor& t) {
  const double high = t.max().item<double>();
  const double low = t.min().item<double>();
  return std::isnan(high) || std::isnan(low) ? std::numeric_limits<double>::quiet_NaN()
                                             : std::max(high, -low);
}

// True when no score can be NaN or infinite: finite inputs whose dot products and biases stay
// far inside float's range (|q.k| <= d_head max|q| max|k|).
bool scores_are_bounded(const torch::Tensor& q, const torch::Tensor& k, const FusedAttentionPlan& plan,
                        const torch::Tensor& query_position, const torch::Tensor& key_position) {
  if (q.numel() == 0 || k.numel() == 0) return true;
  const double q_max = largest_magnitude(q);
  const double k_max = largest_magnitude(k);
  double slope_max = 0;
  for (double slope : plan.slopes) slope_max = std::max(slope_max, std::abs(slope));
  // Key slots past the last key hold kNoKey and are always masked: only real positions count.
  const double position_max =
      std::max(largest_magnitude(query_position), largest_magnitude(key_position.narrow(1, 0, k.size(2))));
  const double bound = static_cast<double>(q.size(3)) * q_max * k_max * std::abs(plan.score_scale) +
                       2 * slope_max * position_max;
  return std::isfinite(bound) && bound < 1e30;  // false for NaN too
}

}  // namespace

torch::Tensor fused_attention(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                              const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                              const FusedAttentionPlan& plan, HeadStats* stats) {
  TORCH_CHECK(q_in.device().is_cpu(), "fused attention runs on the CPU");
  const torch::Tensor q = q_in.to(torch::kFloat).contiguous();
  const torch::Tensor v = v_in.to(torch::kFloat).contiguous();
  Layout in{};
  in.batch = q.size(0);
  in.heads = q.size(1);
  in.queries = q.size(2);
  in.d_head = q.size(3);
  in.keys = k_in.size(2);
  in.padded_keys = round_up(std::max<int64_t>(in.keys, 1), kTile);
  in.cached = in.keys - in.queries;
  in.block = queries_per_block(in.keys);
  in.blocks = (in.queries + in.block - 1) / in.block;
  TORCH_CHECK(static_cast<int64_t>(plan.slopes.size()) == in.heads, "fused attention: one slope per head");

  torch::Tensor padded_k = torch::zeros({in.batch, in.heads, in.padded_keys, in.d_head}, q.options());
  padded_k.narrow(2, 0, in.keys).copy_(k_in);
  const torch::Tensor key_tiles =
      padded_k.view({in.batch, in.heads, in.padded_keys / kTile, kTile, in.d_head})
          .transpose(3, 4)
          .contiguous();
  torch::Tensor key_position = torch::full({in.batch, in.padded_keys}, kNoKey, q.options());
  key_position.narrow(1, 0, in.keys).copy_(key_positions.to(torch::kFloat));
  const torch::Tensor position_tiles = key_position.view({in.batch, in.padded_keys / kTile, kTile});
  const torch::Tensor tile_min_position = position_tiles.amin(2).contiguous();
  const torch::Tensor tile_max_position = position_tiles.amax(2).contiguous();
  const torch::Tensor query_position = query_positions.to(torch::kFloat).contiguous();
  torch::Tensor out = torch::empty_like(q);

  in.q = q.data_ptr<float>();
  in.key_tiles = key_tiles.data_ptr<float>();
  in.values = v.data_ptr<float>();
  in.query_position = query_position.data_ptr<float>();
  in.key_position = key_position.data_ptr<float>();
  in.tile_min_position = tile_min_position.data_ptr<float>();
  in.tile_max_position = tile_max_position.data_ptr<float>();
  in.bounded_scores = scores_are_bounded(q, k_in, plan, query_position, key_position);
  in.out = out.data_ptr<float>();

  const int64_t items = in.batch * in.heads * in.blocks;
  std::vector<ItemStats> item_stats(items);
  std::atomic<int64_t> next{0};
  at::parallel_for(0, std::min<int64_t>(at::get_num_threads(), items), 1,
                   [&](int64_t, int64_t) { attend_items(in, plan, next, item_stats.data()); });

  if (stats != nullptr) {
    // Summed in item order: the same sums for every thread count.
    std::vector<double> nonzero(in.heads, 0.0), entropy(in.heads, 0.0);
    for (int64_t item = 0; item < items; ++item) {
      const int64_t h = (item / in.blocks) % in.heads;
      nonzero[h] += item_stats[item].nonzero;
      entropy[h] += item_stats[item].entropy;
    }
    const auto as_tensor = [](const std::vector<double>& values) {
      return torch::tensor(values, torch::TensorOptions().dtype(torch::kDouble));
    };
    stats->nonzero_sum =
        stats->nonzero_sum.defined() ? stats->nonzero_sum + as_tensor(nonzero) : as_tensor(nonzero);
    stats->entropy_sum =
        stats->entropy_sum.defined() ? stats->entropy_sum + as_tensor(entropy) : as_tensor(entropy);
    stats->rows += (query_positions >= 0).sum().item<int64_t>();
  }
  return out;
}

}  // namespace lengen
