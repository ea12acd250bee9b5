#pragma once
// Exact match and token accuracy over the target positions (docs/method.md, "Metrics").
#include <cstdint>
#include <optional>
#include <vector>

#include "lengen/batch.h"
#include "lengen/decoder.h"

namespace lengen {

struct SequenceMetrics {
  int64_t samples = 0;
  int64_t exact = 0;   // samples whose every target token (and the EOS) is right
  int64_t tokens = 0;  // target tokens scored
  int64_t correct_tokens = 0;
  double loss_sum = 0.0;  // summed over scored tokens
  // Answers of tasks whose targets hold several (Task::answer_marker); 0 for the others.
  int64_t answers = 0;
  int64_t correct_answers = 0;  // answers whose every symbol is right

  void add(const SequenceMetrics& other);
  double exact_match() const { return samples > 0 ? static_cast<double>(exact) / samples : 0.0; }
  double answer_accuracy() const {
    return answers > 0 ? static_cast<double>(correct_answers) / answers : 0.0;
  }
  double token_accuracy() const { return tokens > 0 ? static_cast<double>(correct_tokens) / tokens : 0.0; }
  double loss() const { return tokens > 0 ? loss_sum / tokens : 0.0; }
};

// The most tokens greedy decoding may generate after a source: decode_cap x source, plus the EOS.
int64_t greedy_token_cap(int64_t source_size, double decode_cap);

// Adds the answers of one target to `metrics`: `expected` is its tokens (trg and the EOS), `right`
// whether each was predicted; an answer runs from a `marker_token` to the next one or the EOS.
void count_answers(const std::vector<int32_t>& expected, const std::vector<bool>& right, int32_t marker_token,
                   SequenceMetrics& metrics);

// Counts from argmax predictions against targets on the masked positions; answers too when
// `answer_marker` (a task symbol) is given.
SequenceMetrics count_matches(const torch::Tensor& predictions, const torch::Tensor& target,
                              const torch::Tensor& loss_mask,
                              std::optional<int32_t> answer_marker = std::nullopt);

// One teacher-forced pass (chunked, no grad). Greedy is exact exactly when the teacher-forced argmax
// is right at every target position, so this gives greedy exact match in one pass.
SequenceMetrics score_teacher_forced(Decoder& model, const Batch& batch, AttentionStats* stats = nullptr,
                                     std::optional<int32_t> answer_marker = std::nullopt);

}  // namespace lengen
