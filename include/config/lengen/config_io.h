#pragma once
// Config files, `--set` overrides, validation and the schema, all driven by one table of keys
// (src/config/config_fields.cpp). User problems throw a one-line UserError naming the file.
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "lengen/config.h"

namespace lengen {

// Reads the JSON file at `path` (missing keys keep their defaults), applies each "key.path=value"
// override in order, then validates. An override of train.steps below the file's scales the
// schedule's intervals the overrides leave alone; `scaled` gets the line that says so, or "".
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {},
                   std::string* scaled = nullptr);

// A config's description with what changed the config it describes: "DESCRIPTION [CHANGE]".
std::string description_changed_by(const std::string& description, const std::string& change);

// The same from JSON already in memory; `source` names it in error messages.
Config config_from_json(const nlohmann::json& json, const std::string& source = "config");
// config_from_json for a config whose keys `overridden` were set by `lengen sweep --set` over
// `as_written`: their train.steps scales the schedule as load_config's overrides do.
Config config_from_json_with_overrides(const nlohmann::json& json, const nlohmann::json& as_written,
                                       const std::set<std::string>& overridden, const std::string& source,
                                       std::string* scaled = nullptr);
Config config_from_string(const std::string& text, const std::string& source = "config");

// Every key with its value: the resolved config as it is written to a run folder.
nlohmann::json config_to_json(const Config& config);

// The JSON pointer of a dotted config key: "train.lr" -> "/train/lr".
std::string config_key_pointer(const std::string& key);

// The value of a dotted config key in a config's JSON as JSON text; "(none)" where it has none.
std::string config_value_text(const nlohmann::json& sections, const std::string& key);

// The first key ("section.key") of `saved` whose value differs in `current`, or "". Keys named in
// `ignored`, and every key of a section named there, are skipped.
std::string first_config_difference(const nlohmann::json& saved, const nlohmann::json& current,
                                    const std::vector<std::string>& ignored);

// Sets one key from "key.path=value", typed by the key (lists as "64,128", a section as a JSON
// object). Checks the key's own range; validate_config checks the rules across keys.
void apply_override(Config& config, const std::string& assignment);

// The JSON value that `--set key=text` gives `key`, typed as apply_override types it, unchecked.
nlohmann::json override_json(const std::string& key, const std::string& text);

// The keys that setting `key` to `value` sets ("train" = {"steps": 30} sets "train.steps").
std::vector<std::string> keys_set_by(const std::string& key, const nlohmann::json& value);

// Ranges of every key, then the rules across keys (len_min <= len_max, ...); not task parameters.
void validate_config(const Config& config, const std::string& source = "config");

// The model.attention rules that involve other keys: the message, or "" when they hold.
std::string attention_problem(const AttentionConfig& attention, int64_t heads);

// One documented key of the schema; `default_value` is JSON text.
struct ConfigKeyInfo {
  std::string key;
  std::string type;
  std::string default_value;
  std::string allowed;
  std::string meaning;
};

std::vector<ConfigKeyInfo> config_schema();
// The schema as aligned plain text (`lengen config schema`) or as the markdown reference
// docs/config.md (`lengen config schema --markdown`).
std::string config_schema_text();
std::string config_schema_markdown();

}  // namespace lengen
