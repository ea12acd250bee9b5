#pragma once
// Attention on the target (docs/method.md): the weight each head puts on the keys answering a
// target symbol, averaged over target symbols of the first few evaluation samples.
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

// Attention on the target summed over up to `max_samples` samples of the evaluation's batches.
class AttentionOnTargetMeter {
 public:
  AttentionOnTargetMeter(const Task& task, const ModelConfig& model, int64_t max_samples);

  // Runs `forward` over the teacher-forced `batch`, recording its first samples still wanted.
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

// The record results.json keeps: per layer its heads, best head and mean over heads; for a task
// without a known answering key, a note that says so.
TargetAttention target_attention(const AttentionOnTarget& measured, const std::string& task_name);

}  // namespace lengen
