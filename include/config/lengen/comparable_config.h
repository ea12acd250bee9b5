#pragma once
// Configs in a form where two that train the same model compare equal: defaults filled in, keys
// training does not read at their defaults. The sweep, resume and report compare in this form.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/config.h"

namespace lengen {

// The keys (as "model.attention.alpha") that training under `config` never reads.
std::vector<std::string> unread_config_keys(const Config& config);

// What comparable_config_json writes for a train.eval_every that validates at the last step only.
constexpr const char* kLastStepOnly = "at the last step only";

// config_to_json(config) with task parameters resolved, unread keys at their defaults, nape's
// alibi_heads -1 as its number, and an eval_every of train.steps or more as kLastStepOnly.
nlohmann::json comparable_config_json(const Config& config);

// The same of a config.json as read; `saved` itself when it is no valid config.
nlohmann::json comparable_config_json(const nlohmann::json& saved);

// config_to_json(config) with only the task's parameters resolved: what a resume compares.
nlohmann::json resolved_config_json(const Config& config);
nlohmann::json resolved_config_json(const nlohmann::json& saved);

}  // namespace lengen
