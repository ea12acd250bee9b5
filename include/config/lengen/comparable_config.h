#pragma once
// Two configs that train the same model, compared as such. A task parameter left at its default
// and the same value written out are one value, and a model.attention key that the chosen
// normalizer, scaling and positions do not read (alpha under softmax) tells no runs apart. The
// sweep (one config under two names), a resume (a config that changed) and the report (what
// tells its rows apart) compare configs in this form.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/config.h"

namespace lengen {

// The model.attention keys that none of `normalizer`, `scaling` and `positions` reads, of all
// the keys any choice of the three axes reads ("alpha", "topk", ... under softmax, none, nape).
// Names that are not choices read nothing.
std::vector<std::string> unread_attention_keys(const std::string& normalizer, const std::string& scaling,
                                               const std::string& positions);

// config_to_json(config) with the task's parameters as the task resolves them (defaults filled
// in), every unread model.attention key at its default, nape's alibi_heads -1 as the number it
// stands for, and train.min_lr_ratio at its default under a constant schedule (never read). Parameters the
// task refuses are left as they are (training names them).
nlohmann::json comparable_config_json(const Config& config);

// The same of a config.json as read; `saved` itself when it is no valid config.
nlohmann::json comparable_config_json(const nlohmann::json& saved);

// config_to_json(config) with the task's parameters resolved, and every other key as it is: what a
// resume compares, since a checkpoint stores its model section as written (an unread key changed
// is refused there).
nlohmann::json resolved_config_json(const Config& config);
nlohmann::json resolved_config_json(const nlohmann::json& saved);

// The task's parameters as it resolves them (`params` with its defaults filled in), or `params`
// when the task is unknown or refuses them.
TaskParams resolved_task_params(const std::string& task, const TaskParams& params);

}  // namespace lengen
