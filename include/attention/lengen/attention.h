#pragma once
// Multi-head attention assembled from three independent choices named in the config:
// a normalizer (lengen/normalizers.h), a length scaling (lengen/length_scaling.h) and a
// position encoding (lengen/positions.h). This is the one place they are combined.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lengen/config.h"
#include "lengen/learned_alpha.h"
#include "lengen/length_scaling.h"
#include "lengen/normalizer_registry.h"
#include "lengen/positions.h"

namespace lengen {

// Keys and values seen so far by one layer, for incremental decoding.
struct LayerCache {
  torch::Tensor keys;       // [B, H, S, d_head], already rotated
  torch::Tensor values;     // [B, H, S, d_head]
  torch::Tensor positions;  // [B, S], -1 for padding
};

// Sums over query rows, per head, of how many keys get nonzero weight and of the
// entropy of the weights; `rows` counts the (non-padding) query rows.
struct HeadStats {
  torch::Tensor nonzero_sum;  // [H], double
  torch::Tensor entropy_sum;  // [H], double
  int64_t rows = 0;
};

// Sees each chunk of weights the dense path computes: weights [B, H, queries, keys] with the
// queries' and keys' positions [B, queries], [B, keys]. Inspection only (lengen attention,
// attention on the target); the forward pass does not depend on it.
using WeightObserver = std::function<void(const torch::Tensor& weights, const torch::Tensor& query_positions,
                                          const torch::Tensor& key_positions)>;

class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(const ModelConfig& config);

  // x: normalised block input [B, T, d_model]; positions: absolute positions [B, T], -1 for
  // padding (a padded key is never attended). With a cache, the new keys are appended and
  // the queries attend to everything cached. Queries are processed `query_chunk` at a time
  // so memory grows as chunk x keys, not keys^2. Statistics are added to `stats` if given.
  // Only the rows from `first_query` on are answered (returns [B, T - first_query, d_model]);
  // the rows before it serve as keys and values (without a cache).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& positions, LayerCache* cache = nullptr,
                        HeadStats* stats = nullptr, int64_t first_query = 0);

  void set_query_chunk(int64_t chunk) { query_chunk_ = chunk; }
  void set_kernel(AttentionKernel kernel) { kernel_ = kernel; }
  // True when a forward with q like this one runs the fused kernel.
  bool uses_fused_kernel(const torch::Tensor& q) const;
  // Empty: none. The observer sees the dense weights of the queries from index `first_query` of
  // each forward on: under the fused kernel those rows alone are also computed densely for it.
  void set_weight_observer(WeightObserver observer, int64_t first_query = 0) {
    weight_observer_ = std::move(observer);
    observed_from_ = first_query;
  }
  LengthScaling scaling() const { return scaling_; }
  const PositionEncoding& positions() const { return positions_; }

 private:
  torch::Tensor scores_of(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& query_positions,
                          const torch::Tensor& key_positions) const;
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                       HeadStats* stats);

  // The dense path over the queries from index `first` on, `query_chunk_` queries at a time.
  torch::Tensor attend_chunks(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& positions, const torch::Tensor& key_positions,
                              int64_t first, HeadStats* stats);

  torch::Tensor attend_fused(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                             HeadStats* stats);

  int64_t heads_;
  int64_t d_head_;
  int64_t query_chunk_;
  torch::nn::Linear q_proj_{nullptr}, k_proj_{nullptr}, v_proj_{nullptr}, out_proj_{nullptr};
  LengthScaling scaling_{nullptr};
  PositionEncoding positions_;
  NormalizerFn normalizer_;
  std::optional<FusedRow> fused_kernel_;
  AttentionKernel kernel_ = AttentionKernel::kFused;
  LearnedAlpha learned_alpha_{nullptr};
  WeightObserver weight_observer_;
  int64_t observed_from_ = 0;
};
TORCH_MODULE(Attention);

}  // namespace lengen
