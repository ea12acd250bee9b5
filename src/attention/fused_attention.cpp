#include "fused_attention.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "fused/layout.h"
#include "fused/scores.h"
#include "fused/softmax_group.h"
#include "fused/sparse_rows.h"
#include "fused/value_sums.h"
#include "lengen/normalizer_common.h"
#include "lengen/row_forward.h"
#include "lengen/row_kernels.h"
#include "lengen/stop_signals.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // see float8.h

namespace lengen {

namespace {

using namespace fused;  // NOLINT: the kernel's own pieces (fused/)

// Scores per work item (1 Mi): an item holds this many / keys queries, so that items cost about
// the same and are many enough to share among threads.
constexpr int64_t kBlockScores = int64_t{1} << 20;
constexpr int64_t kMaxBlockQueries = 64;

// Queries per work item: depends on the key count only, never on the thread count. A whole
// number of groups, so that only a sequence's last block can hold a partial group: the rows of
// a partial group are scored one at a time, each loading all the keys itself.
int64_t queries_per_block(int64_t keys) {
  const int64_t queries = std::clamp<int64_t>(kBlockScores / std::max<int64_t>(keys, 1), 1, kMaxBlockQueries);
  return std::max(kGroup, queries / kGroup * kGroup);
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
  switch (plan.row_kernel) {
    case FusedRowKernel::kSoftmax:  // never here: softmax takes a group at a time (attend_softmax_group)
      return false;
    case FusedRowKernel::kSparsemax:
    case FusedRowKernel::kEntmax15:
      return attend_sparse_row(in, plan.row_kernel == FusedRowKernel::kEntmax15, x, end, max, values, buffers,
                               group_slot, out_row, previous_tau, stats);
    case FusedRowKernel::kEntmax: {
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
    if (plan.row_kernel == FusedRowKernel::kSoftmax) {
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
    if (stop_requested_here()) return;  // fused_attention throws once every thread is back
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
  if (stop_requested_here()) throw StopRequested("stopped by a signal in the middle of attention");

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
