#pragma once
// Attention on the target (docs/method.md, "Attention on the target"): for tasks whose source
// names the key that answers each target symbol (Task::answer_sources), the attention weight
// each head puts on those keys at the query that predicts the symbol, averaged over target
// symbols. Measured in its own pass over a few evaluation samples on the dense attention path,
// keeping only the target rows' weights on their answering keys.
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/model.h"
#include "lengen/results_file.h"
#include "lengen/task.h"

namespace lengen {

struct AttentionOnTarget {
  bool known = false;   // false: the task names no answering key, so there is nothing to measure
  int64_t samples = 0;  // samples measured
  int64_t queries = 0;  // target symbols with a known answer, over those samples
  std::vector<std::vector<double>> heads;  // [layer][head]: mean weight on the answering keys
};

// Measures the first `max_samples` of `samples` (all when it is larger) with `model` as it is.
AttentionOnTarget measure_attention_on_target(Decoder& model, const Task& task,
                                              const std::vector<Sample>& samples, int64_t max_samples);

// The record results.json keeps: per layer its heads, best head and mean over heads; for a task
// without a known answering key, a note that says so.
TargetAttention target_attention(const AttentionOnTarget& measured, const std::string& task_name);

}  // namespace lengen
