#pragma once
// The fused, memory-bounded attention of evaluation (no grad, CPU, fp32). Work is split into
// items of (sequence, head, block of queries); each item computes the scores of the keys its
// queries can see, with the position bias, the length scaling and the mask in the same pass,
// normalizes them in a per-thread buffer, accumulates the attention statistics and sums the
// values of the keys with nonzero weight. Memory is O(tokens x d_head) plus per-thread buffers
// of one block's scores, never [queries, keys] per head. Items are independent and the
// statistics are reduced in item order, so the result is the same for every thread count.
#include <torch/types.h>

#include <vector>

#include "lengen/attention.h"

namespace lengen {

struct FusedAttentionPlan {
  FusedRowKernel row_kernel = FusedRowKernel::kSoftmax;
  std::vector<double> alphas;  // per head, for kEntmax
  std::vector<double> slopes;  // per head ALiBi slope, 0 for a head without a bias
  double score_scale = 1.0;    // 1/sqrt(d_head)
};

// q [B, H, Tq, d_head] rotated and multiplied by the length scaling; k, v [B, H, S, d_head] with
// k rotated; query positions [B, Tq] and key positions [B, S] (int64, -1 for padding). The
// queries are the last Tq of the S entries by index and positions grow with the index, so query t
// sees keys [0, S - Tq + t] by index, of which those with 0 <= key position <= query position.
// Returns the attention output [B, H, Tq, d_head] in fp32 and adds to `stats` when given.
torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                              const FusedAttentionPlan& plan, HeadStats* stats);

}  // namespace lengen
