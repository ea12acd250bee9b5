// Validation of a whole Config: each key on its own (also for configs built in code, e.g.
// by sweeps), then the rules that relate several keys. Task parameters are the task's job.
#include <algorithm>
#include <string>

#include "config_field.h"
#include "lengen/attention_choices.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/named_entries.h"

namespace lengen {

namespace {

// Learned alpha is 1 + sigmoid(a), so its initial value must lie strictly between 1 and 2.
constexpr double kLearnedAlphaLow = 1.0;
constexpr double kLearnedAlphaHigh = 2.0;

std::string cross_field_problem(const Config& config) {
  const auto& task = config.task;
  const auto& train = config.train;
  if (task.len_min > task.len_max) {
    return "task.len_min (" + std::to_string(task.len_min) + ") must be <= task.len_max (" +
           std::to_string(task.len_max) + ")";
  }
  if (train.warmup > train.steps) {
    return "train.warmup (" + std::to_string(train.warmup) + ") must be <= train.steps (" +
           std::to_string(train.steps) + ")";
  }
  if ((config.eval.long_from > 0) != (config.eval.long_samples > 0)) {
    return "eval.long_from (" + std::to_string(config.eval.long_from) + ") and eval.long_samples (" +
           std::to_string(config.eval.long_samples) + ") go together: set both or neither";
  }
  return attention_problem(config.model.attention, config.model.heads);
}

}  // namespace

std::string attention_problem(const AttentionConfig& attention, int64_t heads) {
  if (attention.positions == "nape" && attention.alibi_heads > heads) {
    return "model.attention.alibi_heads (" + std::to_string(attention.alibi_heads) +
           ") must be <= model.heads (" + std::to_string(heads) + ") with nape positions";
  }
  const std::vector<std::string> learners = normalizers_reading("learn_alpha");
  if (attention.learn_alpha &&
      std::find(learners.begin(), learners.end(), attention.normalizer) == learners.end()) {
    return "model.attention.learn_alpha needs model.attention.normalizer \"" + joined_names(learners) +
           "\", got \"" + attention.normalizer + "\"";
  }
  if (attention.learn_alpha && !(attention.alpha > kLearnedAlphaLow && attention.alpha < kLearnedAlphaHigh)) {
    return "model.attention.alpha must be in (1, 2) when learned, got " + config::shown(attention.alpha);
  }
  return "";
}

void validate_config(const Config& config, const std::string& source) {
  for (const auto& field : config::config_fields()) {
    std::string problem = config::value_problem(field, field.get(config));
    if (!problem.empty()) throw UserError(source + ": " + problem);
  }
  std::string problem = cross_field_problem(config);
  if (!problem.empty()) throw UserError(source + ": " + problem);
}

}  // namespace lengen
