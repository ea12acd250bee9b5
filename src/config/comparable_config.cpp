#include "lengen/comparable_config.h"

#include <set>

#include "lengen/attention_choices.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"

namespace lengen {

namespace {

// `form` of a config.json as read, or `saved` itself when it is no valid config.
template <typename Form>
nlohmann::json saved_in_form(const nlohmann::json& saved, Form form) {
  try {
    return form(config_from_json(saved));
  } catch (const UserError&) {
    return saved;
  }
}

}  // namespace

std::vector<std::string> unread_config_keys(const Config& config) {
  const AttentionConfig& attention = config.model.attention;
  std::set<std::string> others, read;
  const auto sort_keys = [&](const auto& choices, const std::string& chosen) {
    for (const auto& choice : choices)
      (choice.name == chosen ? read : others).insert(choice.parameters.begin(), choice.parameters.end());
  };
  sort_keys(normalizer_choices(), attention.normalizer);
  sort_keys(scaling_choices(), attention.scaling);
  sort_keys(position_choices(), attention.positions);
  std::vector<std::string> unread;
  for (const std::string& key : others)
    if (read.count(key) == 0) unread.push_back("model.attention." + key);
  if (config.train.schedule == LrSchedule::kConstant) unread.push_back("train.min_lr_ratio");
  return unread;
}

// `params` with the task's defaults filled in; `params` when the task is unknown or refuses them.
static TaskParams resolved_task_params(const std::string& task, const TaskParams& params) {
  try {
    return make_task(task, params, /*seed=*/1)->params();
  } catch (const UserError&) {
    return params;
  }
}

nlohmann::json resolved_config_json(const Config& config) {
  nlohmann::json json = config_to_json(config);
  json["task"]["params"] = resolved_task_params(config.task.name, config.task.params);
  return json;
}

nlohmann::json resolved_config_json(const nlohmann::json& saved) {
  return saved_in_form(saved, [](const Config& config) { return resolved_config_json(config); });
}

nlohmann::json comparable_config_json(const Config& config) {
  nlohmann::json json = resolved_config_json(config);
  const nlohmann::json defaults = config_to_json(Config{});
  for (const std::string& key : unread_config_keys(config)) {
    const nlohmann::json::json_pointer at(config_key_pointer(key));
    if (defaults.contains(at)) json[at] = defaults[at];
  }
  // -1 ALiBi heads is half the heads: the same model as that number written out.
  const AttentionConfig& attention = config.model.attention;
  if (attention.positions == "nape")
    json["model"]["attention"]["alibi_heads"] = nape_alibi_heads(attention.alibi_heads, config.model.heads);
  // Every eval_every of train.steps or more validates at the last step only: said in words.
  if (config.train.eval_every >= config.train.steps) json["train"]["eval_every"] = kLastStepOnly;
  return json;
}

nlohmann::json comparable_config_json(const nlohmann::json& saved) {
  return saved_in_form(saved, [](const Config& config) { return comparable_config_json(config); });
}

}  // namespace lengen
