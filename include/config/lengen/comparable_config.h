#pragma once
// Two configs that train the same model, compared as such. A task parameter left at its default
// and the same value written out are one value, a key training does not read (alpha under
// softmax) tells no runs apart, and neither do two train.eval_every that both validate at the last
// step only. The
// sweep (one config under two names), a resume (a config that changed) and the report (what
// tells its rows apart) compare configs in this form.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/config.h"

namespace lengen {

// The keys (as "model.attention.alpha") that training under `config` never reads: each
// model.attention key that none of its normalizer, scaling and positions reads, of all the keys
// any choice of the three reads, and train.min_lr_ratio under a constant schedule (it never
// decays).
std::vector<std::string> unread_config_keys(const Config& config);

// What comparable_config_json writes for a train.eval_every that validates at the last step only.
constexpr const char* kLastStepOnly = "at the last step only";

// config_to_json(config) with the task's parameters as the task resolves them (defaults filled
// in), every unread_config_keys key at its default, nape's alibi_heads -1 as the number it stands
// for, and a train.eval_every of train.steps or more (it validates at the last step only) as
// kLastStepOnly. Parameters the task refuses are left as they are (training names them).
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
