#include "lengen/attention.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "batched_matmul.h"
#include "fused_attention.h"
#include "lengen/attention_choices.h"
#include "lengen/autocast.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/named_entries.h"
#include "lengen/precision.h"
#include "lengen/stop_signals.h"

namespace lengen {

namespace {

NormalizerSpec normalizer_spec(const AttentionConfig& config) {
  NormalizerSpec spec;
  spec.name = config.normalizer;
  spec.alpha = config.alpha;
  spec.topk = config.topk;
  return spec;
}

// The fused kernel computes the configured attention when it has a row kernel for the normalizer
// and each other term is one it computes (FusedTerm); otherwise the dense path serves every forward.
std::optional<FusedRow> fused_kernel_for(const AttentionConfig& config) {
  if (scaling_choice(config.scaling).fused == FusedTerm::kDenseOnly) return std::nullopt;
  if (position_choice(config.positions).fused == FusedTerm::kDenseOnly) return std::nullopt;
  return fused_row_kernel(normalizer_spec(config), config.learn_alpha);
}

torch::nn::Linear projection(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

void add_stats(const torch::Tensor& weights, const torch::Tensor& query_valid, HeadStats* stats) {
  torch::NoGradGuard no_grad;
  // Row reductions in the weights' fp32, sums over rows in double: no full-size double copy of the
  // [B, H, Tq, Tk] weights, which at evaluation lengths of 16k tokens would dominate memory.
  auto w = weights.to(torch::kFloat);                        // [B, H, Tq, Tk]
  auto valid = query_valid.to(torch::kDouble).unsqueeze(1);  // [B, 1, Tq]
  auto nonzero = (w > 0).sum(-1, /*keepdim=*/false, torch::kDouble) * valid;
  auto entropy = torch::special::entr(w).sum(-1).to(torch::kDouble) * valid;
  auto nonzero_sum = nonzero.sum(std::vector<int64_t>{0, 2}).cpu();
  auto entropy_sum = entropy.sum(std::vector<int64_t>{0, 2}).cpu();
  stats->nonzero_sum = stats->nonzero_sum.defined() ? stats->nonzero_sum + nonzero_sum : nonzero_sum;
  stats->entropy_sum = stats->entropy_sum.defined() ? stats->entropy_sum + entropy_sum : entropy_sum;
  stats->rows += query_valid.sum().item<int64_t>();
}

// Most entries of one chunk's [B, H, queries, keys] score tensor when running without grad
// (64 MiB in fp32); several such temporaries live at once.
constexpr int64_t kInferenceScoreBudget = int64_t{1} << 24;

// Queries per chunk: the configured count (0 = all), and without grad also the score budget.
int64_t query_chunk(int64_t configured, int64_t batch, int64_t heads, int64_t keys, int64_t queries) {
  // Training attends all queries at once: the backward pass keeps every chunk's scores anyway, so
  // chunks would save no memory, and model.prefill_chunk (an evaluation setting) would change the
  // trained model's float rounding.
  if (torch::GradMode::is_enabled()) return std::max<int64_t>(1, queries);
  int64_t chunk = configured > 0 ? configured : queries;
  // Evaluation at long lengths: also bound the chunk by the score budget (a 512-query chunk of
  // 4 sequences of 16k tokens holds 6 GiB).
  return std::min(chunk, std::max<int64_t>(1, kInferenceScoreBudget / (batch * heads * keys)));
}

// model.attention's rules across keys (config_io.h), checked before any part is built: a model
// may come from a Config that no file was read into (tests, benchmarks).
int64_t checked_heads(const ModelConfig& config) {
  const std::string problem = attention_problem(config.attention, config.heads);
  if (!problem.empty()) throw UserError(problem);
  return config.heads;
}

}  // namespace

AttentionImpl::AttentionImpl(const ModelConfig& config)
    : heads_(checked_heads(config)),
      d_head_(config.d_head),
      query_chunk_(config.prefill_chunk),
      positions_(config.attention, config.heads, config.d_head),
      normalizer_(make_normalizer(normalizer_spec(config.attention))),
      fused_kernel_(fused_kernel_for(config.attention)) {
  const int64_t inner = config.heads * config.d_head;
  q_proj_ = register_module("q_proj", projection(config.d_model, inner));
  k_proj_ = register_module("k_proj", projection(config.d_model, inner));
  v_proj_ = register_module("v_proj", projection(config.d_model, inner));
  out_proj_ = register_module("out_proj", projection(inner, config.d_model));
  scaling_ = register_module("scaling", LengthScaling(config.attention, config.d_model, config.heads,
                                                      positions_.first_scaled_head()));
  if (config.attention.learn_alpha) {
    learned_alpha_ = register_module("alpha", LearnedAlpha(config.heads, config.attention.alpha));
  }
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& positions,
                                     LayerCache* cache, HeadStats* stats, int64_t first_query) {
  TORCH_CHECK(cache == nullptr || first_query == 0, "a forward with a cache answers every row");
  const int64_t batch = x.size(0), queries = x.size(1) - first_query;
  auto split_heads = [&](const torch::Tensor& t) {
    return t.view({batch, t.size(1), heads_, d_head_}).transpose(1, 2);  // [B, H, T, d_head]
  };
  // Rows before first_query give keys and values only, like a cache's.
  const torch::Tensor query_x = x.narrow(1, first_query, queries);
  const torch::Tensor query_positions = positions.narrow(1, first_query, queries);
  auto q = positions_.rotate(split_heads(q_proj_(query_x)), query_positions);
  auto k = positions_.rotate(split_heads(k_proj_(x)), positions);
  auto v = split_heads(v_proj_(x));
  auto factor = scaling_(query_x, query_positions);
  if (factor.defined()) q = q * factor.to(q.dtype());

  auto key_positions = positions;
  if (cache != nullptr) {
    if (cache->keys.defined()) {
      k = torch::cat({cache->keys, k}, 2);
      v = torch::cat({cache->values, v}, 2);
      key_positions = torch::cat({cache->positions, positions}, 1);
    }
    cache->keys = k;
    cache->values = v;
    cache->positions = key_positions;
  }

  const bool fused = uses_fused_kernel(q);
  torch::Tensor out;  // [B, H, queries, d_head]
  if (fused) out = attend_fused(q, k, v, query_positions, key_positions, stats).to(v.dtype());
  if (!fused || weight_observer_) {
    // The dense path: the output, or under the fused kernel only the rows an observer asked for
    // (their output is discarded and their statistics already counted).
    const int64_t first = fused ? std::clamp<int64_t>(observed_from_ - first_query, 0, queries) : 0;
    auto dense = attend_chunks(q, k, v, query_positions, key_positions, first, fused ? nullptr : stats);
    if (!fused) out = dense;
  }
  return out_proj_(out.transpose(1, 2).reshape({batch, queries, heads_ * d_head_}));
}

torch::Tensor AttentionImpl::attend_chunks(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v, const torch::Tensor& positions,
                                           const torch::Tensor& key_positions, int64_t first,
                                           HeadStats* stats) {
  const int64_t length = q.size(2);
  const int64_t cached = k.size(2) - length;
  const int64_t chunk = query_chunk(query_chunk_, q.size(0), heads_, k.size(2), length - first);
  std::vector<torch::Tensor> outputs;
  for (int64_t start = first; start < length; start += chunk) {
    if (stop_requested_here()) throw StopRequested("stopped by a signal in the middle of attention");
    const int64_t size = std::min(chunk, length - start);
    // Keys past the chunk's last query are all in its future (positions increase along T).
    const int64_t visible = cached + start + size;
    outputs.push_back(attend(q.narrow(2, start, size), k.narrow(2, 0, visible), v.narrow(2, 0, visible),
                             positions.narrow(1, start, size), key_positions.narrow(1, 0, visible), stats));
  }
  if (outputs.empty()) return torch::Tensor();
  return outputs.size() == 1 ? outputs[0] : torch::cat(outputs, 2);  // [B, H, T - first, d_head]
}

bool AttentionImpl::uses_fused_kernel(const torch::Tensor& q) const {
  return kernel_ == AttentionKernel::kFused && fused_kernel_.has_value() && !torch::GradMode::is_enabled() &&
         q.device().is_cpu() && q.scalar_type() == torch::kFloat;
}

torch::Tensor AttentionImpl::attend_fused(const torch::Tensor& q, const torch::Tensor& k,
                                          const torch::Tensor& v, const torch::Tensor& query_positions,
                                          const torch::Tensor& key_positions, HeadStats* stats) {
  FusedAttentionPlan plan;
  plan.row_kernel = fused_kernel_->kernel;
  plan.slopes = positions_.slopes();
  plan.score_scale = 1.0 / std::sqrt(static_cast<double>(d_head_));
  if (learned_alpha_) {
    const torch::Tensor alphas = learned_alpha_->forward().to(torch::kDouble).contiguous();
    plan.alphas.assign(alphas.data_ptr<double>(), alphas.data_ptr<double>() + alphas.numel());
  } else {
    plan.alphas.assign(heads_, fused_kernel_->alpha);
  }
  return fused_attention(q, k, v, query_positions, key_positions, plan, stats);
}

// q.k^T / sqrt(d_head) plus the position bias, -inf where a key is not visible: the scale applied
// to q, and the bias and the mask as one term added in place, so that only one pass over the
// [B, H, Tq, Tk] scores runs before the normalizer and none in the backward. With d_head a power
// of 4 (16, the shipped models') the scale is a power of 2: the same bits as the product scaled,
// biased and masked in turn.
torch::Tensor AttentionImpl::scores_of(const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& query_positions,
                                       const torch::Tensor& key_positions) const {
  const AutocastScope fp32_scores(q.device().type(), false);
  const torch::Tensor q_scaled = to_at_least_fp32(q) * (1.0 / std::sqrt(double(d_head_)));
  torch::Tensor scores = batched_matmul(q_scaled, to_at_least_fp32(k), /*transpose_b=*/true);
  const auto visible =
      ((key_positions.unsqueeze(1) <= query_positions.unsqueeze(2)) & (key_positions.unsqueeze(1) >= 0))
          .unsqueeze(1);  // [B, 1, Tq, Tk]
  const torch::Tensor bias = positions_.bias(query_positions, key_positions, scores.scalar_type());
  const torch::Tensor hidden = torch::full({}, -std::numeric_limits<double>::infinity(), scores.options());
  return scores.add_(torch::where(visible, bias.defined() ? bias : torch::zeros({}, scores.options()), hidden));
}

torch::Tensor AttentionImpl::attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                    const torch::Tensor& query_positions, const torch::Tensor& key_positions,
                                    HeadStats* stats) {
  // Scores and weights in fp32 or better whatever the activations' dtype (docs/method.md, "The
  // decoder"): fp32 under bf16 autocast too, which would otherwise run this product in bf16, and
  // double for a double model.
  const torch::Tensor scores = scores_of(q, k, query_positions, key_positions);
  torch::Tensor alpha;
  if (learned_alpha_) alpha = learned_alpha_->forward().view({1, -1, 1, 1});
  auto weights = normalizer_(scores, alpha);
  if (stats != nullptr) add_stats(weights, query_positions >= 0, stats);
  if (weight_observer_) weight_observer_(weights, query_positions, key_positions);
  return batched_matmul(weights.to(v.dtype()), v, /*transpose_b=*/false);
}

}  // namespace lengen
