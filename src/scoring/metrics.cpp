#include "lengen/metrics.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "lengen/loss.h"

namespace lengen {

int64_t greedy_token_cap(int64_t source_size, double decode_cap) {
  const auto total = static_cast<int64_t>(std::ceil(decode_cap * static_cast<double>(source_size)));
  return std::max<int64_t>(total - source_size, 0) + 1;
}

void SequenceMetrics::add(const SequenceMetrics& other) {
  samples += other.samples;
  exact += other.exact;
  tokens += other.tokens;
  correct_tokens += other.correct_tokens;
  loss_sum += other.loss_sum;
}

SequenceMetrics count_matches(const torch::Tensor& predictions, const torch::Tensor& target,
                              const torch::Tensor& loss_mask) {
  auto correct = (predictions == target) & loss_mask;
  auto wrong = (predictions != target) & loss_mask;
  SequenceMetrics metrics;
  metrics.samples = target.size(0);
  metrics.exact = (wrong.sum(1) == 0).sum().item<int64_t>();
  metrics.tokens = loss_mask.sum().item<int64_t>();
  metrics.correct_tokens = correct.sum().item<int64_t>();
  return metrics;
}

SequenceMetrics score_teacher_forced(Decoder& model, const Batch& batch, AttentionStats* stats) {
  torch::NoGradGuard no_grad;
  auto logits = model->forward_selected(batch.input, batch.positions, batch.loss_mask, stats);
  // Only the target positions are predicted; the others keep their target, which
  // count_matches ignores under the mask anyway.
  auto predictions = batch.target.masked_scatter(batch.loss_mask, logits.argmax(-1));
  auto metrics = count_matches(predictions, batch.target, batch.loss_mask);
  metrics.loss_sum =
      target_cross_entropy(logits, batch.target.index({batch.loss_mask})).item<double>() * metrics.tokens;
  return metrics;
}

}  // namespace lengen
