#pragma once
// Length-generalization evaluation (docs/method.md, "Metrics"): a trained model scored at each of
// a list of source lengths; results merge into RUN/results.json (lengen/results_file.h).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lengen/attention_on_target.h"
#include "lengen/config.h"
#include "lengen/decoder.h"
#include "lengen/evaluation_plan.h"
#include "lengen/metrics.h"
#include "lengen/results_file.h"
#include "lengen/task.h"

namespace lengen {

struct LengthResult {
  int64_t length = 0;  // the task's length parameter L (test_{i}_{L})
  DecodeMode decode = DecodeMode::kTeacherForced;
  SequenceMetrics metrics;  // greedy: exact match and token accuracy of the generated tokens
  double loss = 0.0;        // teacher-forced token-mean cross entropy (both modes)
  std::vector<LayerAttentionSummary> attention;        // empty when statistics are off
  std::optional<TargetAttention> attention_on_target;  // when measured (lengen/attention_on_target.h)

  // Means over all layers and heads (0 without statistics).
  double mean_nonzero_per_query() const;
  double mean_entropy() const;
};

// Generated tokens against trg + EOS, position-wise; exact when identical (running on past the
// EOS is wrong). Answers are counted when `answer_marker` is given.
SequenceMetrics score_generated(const std::vector<std::vector<int32_t>>& generated,
                                const std::vector<Sample>& samples,
                                std::optional<int32_t> answer_marker = std::nullopt);

// Scores `samples` (all of length parameter `length`) in the eval.decode mode, without grad;
// `after_batch` gets the number of samples scored so far.
LengthResult evaluate_samples(Decoder& model, const std::vector<Sample>& samples, int64_t length,
                              const EvalConfig& eval, const std::function<void(int64_t)>& after_batch = {},
                              AttentionOnTargetMeter* target_meter = nullptr,
                              std::optional<int32_t> answer_marker = std::nullopt);

// Evaluation data per length: samples from each length's own seed stream, or the test_{i}_{L}
// splits of `data_dir`; `data` says where they come from.
struct EvalSet {
  int64_t length;
  std::vector<Sample> samples;
  nlohmann::json data;
};
std::vector<EvalSet> evaluation_sets(const Task& task, const Config& config, const std::string& data_dir);

// Sequences per batch: eval.batch_size, or fewer (at least one) within eval.batch_tokens tokens.
int64_t sequences_per_batch(const EvalConfig& eval, const std::vector<Sample>& samples);

// The checkpoint named by `which`: "last", "best" or a path; UserError when there is none.
std::string resolve_checkpoint(const std::string& run_dir, const std::string& which);

struct RunEvaluation {
  std::string checkpoint;
  int64_t step = 0;
  std::string weights_hash;  // of the evaluated model (lengen/checkpoint.h)
  std::string schedule;      // the checkpoint's schedule history (TrainingProgress::schedule)
  std::string trained_on;    // what the checkpoint trained on (ModelRecord::trained_on)
  std::string data_dir;      // absolute --data folder evaluated on; "" for generated data
  double decode_cap = 0;     // eval.decode_cap of greedy decoding (ResultEntry::decode_cap)
  std::vector<LengthResult> results;
  std::vector<nlohmann::json> data;  // per result: where its samples come from (EvalSet::data)
};

// Evaluates the run's `checkpoint` on the config's lengths (or `data_dir`), merging each length's
// result into RUN/results.json as it is measured. With `keep_measured` (a training's evaluation,
// resumed after a stop) a length results.json holds from these weights on these samples is kept.
RunEvaluation evaluate_run(const Config& config, const std::string& run_dir, const std::string& checkpoint,
                           const std::string& data_dir = "", bool keep_measured = false);

// The stdout table: length, multiple of task.len_max, exact %, token %, nonzero/q, entropy.
std::string results_table(const std::vector<LengthResult>& results, int64_t train_len_max);

}  // namespace lengen
