#include "lengen/metrics.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "lengen/loss.h"
#include "lengen/sequence.h"

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
  answers += other.answers;
  correct_answers += other.correct_answers;
}

void count_answers(const std::vector<int32_t>& expected, const std::vector<bool>& right, int32_t marker_token,
                   SequenceMetrics& metrics) {
  bool open = false;  // inside an answer
  bool all_right = true;
  const auto close = [&] {
    if (open) {
      metrics.answers += 1;
      metrics.correct_answers += all_right;
    }
  };
  for (size_t t = 0; t < expected.size(); ++t) {
    if (expected[t] == marker_token || expected[t] == kEos) {
      close();
      open = expected[t] == marker_token;
      all_right = true;
    }
    all_right = all_right && t < right.size() && right[t];
  }
  close();
}

SequenceMetrics count_matches(const torch::Tensor& predictions, const torch::Tensor& target,
                              const torch::Tensor& loss_mask, std::optional<int32_t> answer_marker) {
  auto correct = (predictions == target) & loss_mask;
  auto wrong = (predictions != target) & loss_mask;
  SequenceMetrics metrics;
  metrics.samples = target.size(0);
  metrics.exact = (wrong.sum(1) == 0).sum().item<int64_t>();
  metrics.tokens = loss_mask.sum().item<int64_t>();
  metrics.correct_tokens = correct.sum().item<int64_t>();
  if (answer_marker) {
    const torch::Tensor mask = loss_mask.to(torch::kCPU);
    const torch::Tensor expected = target.to(torch::kCPU).to(torch::kInt32);
    const torch::Tensor hit = correct.to(torch::kCPU);
    for (int64_t row = 0; row < target.size(0); ++row) {
      const torch::Tensor scored = mask[row];
      const torch::Tensor tokens = expected[row].masked_select(scored).contiguous();
      const torch::Tensor flags = hit[row].masked_select(scored).contiguous();
      const std::vector<int32_t> row_tokens(tokens.data_ptr<int32_t>(), tokens.data_ptr<int32_t>() + tokens.numel());
      const std::vector<bool> row_right(flags.data_ptr<bool>(), flags.data_ptr<bool>() + flags.numel());
      count_answers(row_tokens, row_right, symbol_to_token(*answer_marker), metrics);
    }
  }
  return metrics;
}

SequenceMetrics score_teacher_forced(Decoder& model, const Batch& batch, AttentionStats* stats,
                                     std::optional<int32_t> answer_marker) {
  torch::NoGradGuard no_grad;
  auto logits = model->forward_selected(batch.input, batch.positions, batch.loss_mask, stats);
  // Only the target positions are predicted; the others keep their target, which
  // count_matches ignores under the mask anyway.
  auto predictions = batch.target.masked_scatter(batch.loss_mask, logits.argmax(-1));
  auto metrics = count_matches(predictions, batch.target, batch.loss_mask, answer_marker);
  metrics.loss_sum =
      target_cross_entropy(logits, batch.target.index({batch.loss_mask})).item<double>() * metrics.tokens;
  return metrics;
}

}  // namespace lengen
