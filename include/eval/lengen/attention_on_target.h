#pragma once
// Attention on the target (docs/method.md, "Attention on the target"): for tasks whose source
// names the key that answers each target symbol (Task::answer_sources), the attention weight
// each head puts on those keys at the query that predicts the symbol, averaged over target
// symbols. Measured on the first few evaluation samples during the evaluation's forward pass, the
// target rows on the dense attention path, keeping only their weights on the answering keys.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lengen/decoder.h"
#include "lengen/results_file.h"
#include "lengen/task.h"

namespace lengen {

struct AttentionOnTarget {
  bool known = false;   // false: no measured target symbol has an answering key (or the task names none)
  int64_t samples = 0;  // samples measured
  int64_t queries = 0;  // target symbols with a known answer, over those samples
  std::vector<std::vector<double>> heads;  // [layer][head]: mean weight on the answering keys
};

// Attention on the target summed over samples as their forward passes run: measure() wraps the
// evaluation's own forward pass over a batch and records the first of its samples still wanted,
// up to `max_samples` in all.
class AttentionOnTargetMeter {
 public:
  AttentionOnTargetMeter(const Task& task, const ModelConfig& model, int64_t max_samples);

  // Runs `forward`, a forward pass over the teacher-forced batch of `batch` (right-padded, as
  // lengen/batch.h collates it), recording as many of its first samples as are still wanted.
  void measure(Decoder& model, const std::vector<Sample>& batch, const std::function<void()>& forward);

  // False once max_samples are recorded or a sample showed that the task names no answering key.
  bool wants_more() const { return !unknown_ && remaining_ > 0; }

  AttentionOnTarget result() const;

 private:
  const Task& task_;
  int64_t remaining_;
  bool unknown_ = false;  // a sample without answering keys: the task names none
  int64_t samples_ = 0;
  int64_t queries_ = 0;
  std::vector<torch::Tensor> sums_;  // [layer] of [heads], double: weight on the answers
};

// Measures the first `max_samples` of `samples` (all when it is larger) with `model` as it is,
// one forward pass per sample.
AttentionOnTarget measure_attention_on_target(Decoder& model, const Task& task,
                                              const std::vector<Sample>& samples, int64_t max_samples);

// The record results.json keeps: per layer its heads, best head and mean over heads; for a task
// without a known answering key, a note that says so.
TargetAttention target_attention(const AttentionOnTarget& measured, const std::string& task_name);

}  // namespace lengen
