// JSON config files and `--set` overrides into Config, and Config back into JSON.
#include "lengen/config_io.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "config_field.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

namespace {

using config::ConfigField;
using config::ValueType;
using nlohmann::json;

// A short run still validates (and checkpoints) about this many times.
constexpr int64_t kPointsPerShortRun = 10;

// "train.warmup 1000 -> 12" appended to `note` when `value` changed from `before`.
void note_change(std::string& note, const char* key, int64_t before, int64_t value) {
  if (before == value) return;
  note += std::string(note.empty() ? "" : ", ") + key + " " + std::to_string(before) + " -> " +
          std::to_string(value);
}

// When the command line set train.steps below the config's, scales the warmup, eval_every,
// checkpoint_every and log_every it left alone and that no longer fit; returns the line that says
// so, or "".
std::string scale_schedule_to_steps(TrainConfig& train, const TrainConfig& as_written,
                                    const std::set<std::string>& keys_set) {
  const int64_t steps = train.steps;
  if (!keys_set.count("train.steps") || steps >= as_written.steps || as_written.steps < 1) return "";
  const auto left_alone = [&](const char* key) { return keys_set.count(key) == 0; };
  std::string note;
  if (left_alone("train.warmup") && train.warmup > steps) {
    const double fraction = static_cast<double>(train.warmup) / static_cast<double>(as_written.steps);
    const int64_t warmup = std::min(steps, static_cast<int64_t>(std::llround(fraction * steps)));
    note_change(note, "train.warmup", train.warmup, warmup);
    train.warmup = warmup;
  }
  const int64_t every = std::max<int64_t>(1, steps / kPointsPerShortRun);
  for (auto [key, value] : {std::pair<const char*, int64_t*>{"train.eval_every", &train.eval_every},
                            {"train.checkpoint_every", &train.checkpoint_every},
                            {"train.log_every", &train.log_every}}) {
    if (!left_alone(key) || *value <= every) continue;
    note_change(note, key, *value, every);
    *value = every;
  }
  if (note.empty()) return "";
  return "train.steps=" + std::to_string(steps) + " is below the config's " +
         std::to_string(as_written.steps) + ": scaled " + note + " (--set any of them to choose it yourself)";
}

bool is_section(const std::string& key) {
  const auto& sections = config::config_sections();
  return std::find(sections.begin(), sections.end(), key) != sections.end();
}

std::string leaf_of(const std::string& key) { return key.substr(key.rfind('.') + 1); }

// A known key put in the wrong section ("lr" at the top level) is named by its one full key.
std::string key_with_same_leaf(const std::string& key) {
  std::string found;
  for (const auto& field : config::config_fields()) {
    if (leaf_of(field.key) != leaf_of(key)) continue;
    if (!found.empty()) return "";
    found = field.key;
  }
  return found;
}

std::string unknown_key_message(const std::string& key) {
  std::vector<std::string> candidates = config::config_sections();
  for (const auto& field : config::config_fields()) candidates.push_back(field.key);
  std::string message = "unknown config key '" + key + "'";
  std::string suggestion = key_with_same_leaf(key);
  if (suggestion.empty()) suggestion = closest_match(key, candidates);
  return suggestion.empty() ? message : message + " (did you mean '" + suggestion + "'?)";
}

// task.params.NAME: one entry of an object-of-numbers key, or nullptr when `key` is not one.
const ConfigField* map_field_of_entry(const std::string& key) {
  for (const auto& field : config::config_fields()) {
    if (field.type == ValueType::kNumberMap && key.size() > field.key.size() + 1 &&
        key.compare(0, field.key.size() + 1, field.key + ".") == 0) {
      return &field;
    }
  }
  return nullptr;
}

void set_field(Config& config, const ConfigField& field, const json& value, const std::string& source) {
  std::string problem = config::value_problem(field, value);
  if (!problem.empty()) throw UserError(source + ": " + problem);
  field.set(config, value);
}

void set_config_value(Config& config, const std::string& key, const json& value, const std::string& source);

// Sets every key of a JSON object whose keys live under `prefix` ("" for the top level).
void set_section(Config& config, const std::string& prefix, const json& object, const std::string& source) {
  if (!object.is_object()) {
    std::string what = prefix.empty() ? "the config" : "config key '" + prefix + "'";
    throw UserError(source + ": " + what + " must be an object, got " + config::shown(object));
  }
  // A sweep file given where a config is expected: said as such, not as an unknown key "base".
  if (prefix.empty() && object.contains("base") && (object.contains("grid") || object.contains("list"))) {
    throw UserError(source + " is a sweep file (it has \"base\" and \"" +
                    (object.contains("grid") ? "grid" : "list") +
                    "\"), not a config: run it with `lengen sweep " + source + " --out DIR`");
  }
  for (const auto& [name, value] : object.items()) {
    set_config_value(config, prefix.empty() ? name : prefix + "." + name, value, source);
  }
}

// Sets one key (e.g. "train.lr") from a JSON value, with the same checks as a config file.
void set_config_value(Config& config, const std::string& key, const json& value, const std::string& source) {
  if (const ConfigField* field = config::find_field(key)) {
    set_field(config, *field, value, source);
  } else if (const ConfigField* map_field = map_field_of_entry(key)) {
    json entries = map_field->get(config);
    entries[key.substr(map_field->key.size() + 1)] = value;
    set_field(config, *map_field, entries, source);
  } else if (is_section(key)) {
    set_section(config, key, value, source);
  } else {
    throw UserError(source + ": " + unknown_key_message(key));
  }
}

// The value text of an override as JSON: strings raw (or as a quoted JSON string), lists without
// their brackets if need be, anything else as JSON.
json override_value(ValueType type, const std::string& text, const std::string& source) {
  if (type == ValueType::kString) {
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
      const json quoted = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (quoted.is_string()) return quoted;
    }
    return text;
  }
  std::string json_text = text;
  if (type == ValueType::kIntegerList && (text.empty() || text.front() != '[')) json_text = "[" + text + "]";
  json value = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  // Text that is not JSON at all stays a string, so the type error quotes what was typed.
  if (value.is_discarded()) return json(text);
  // An object is read as a config file is: a key given twice in it is refused, not taken last.
  if (value.is_structured()) value = parse_json_text(json_text, source, "key");
  return value;
}

}  // namespace

json override_json(const std::string& key, const std::string& text) {
  const ConfigField* field = config::find_field(key);
  return override_value(field ? field->type : ValueType::kNumber, text, "--set " + key + "=" + text);
}

std::vector<std::string> keys_set_by(const std::string& key, const json& value) {
  if (!value.is_object()) return {key};
  std::vector<std::string> keys;
  for (const auto& [name, inner] : value.items()) {
    for (const std::string& leaf : keys_set_by(key + "." + name, inner)) keys.push_back(leaf);
  }
  return keys;
}

void apply_override(Config& config, const std::string& assignment) {
  std::string source = "--set " + assignment;
  size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw UserError(source + ": an override must look like key.path=value");
  }
  std::string key = assignment.substr(0, equals);
  std::string text = assignment.substr(equals + 1);
  // An empty value (an unset variable in a script) would set an empty list or string, or fall
  // back to a default, where the user meant a value.
  if (text.empty()) throw UserError(source + ": no value after '=' (no option takes an empty value)");
  // Sections and task.params entries take JSON, like a number does.
  const ConfigField* field = config::find_field(key);
  ValueType type = field ? field->type : ValueType::kNumber;
  json value = override_value(type, text, source);
  // An object given for task.params changes the entries it names and keeps the others, as for
  // a section.
  if (field != nullptr && field->type == ValueType::kNumberMap && value.is_object()) {
    json entries = field->get(config);
    if (entries.is_object()) {
      for (const auto& [name, entry] : value.items()) entries[name] = entry;
      value = entries;
    }
  }
  set_config_value(config, key, value, source);
}

Config config_from_json(const json& json_config, const std::string& source) {
  Config config;
  set_section(config, "", json_config, source);
  validate_config(config, source);
  return config;
}

Config config_from_json_with_overrides(const json& json_config, const json& as_written,
                                       const std::set<std::string>& overridden, const std::string& source,
                                       std::string* scaled) {
  Config config, written;
  set_section(config, "", json_config, source);
  try {
    set_section(written, "", as_written, source);
  } catch (const UserError&) {
    written = config;  // its problem is the whole config's, named below
  }
  const std::string note = scale_schedule_to_steps(config.train, written.train, overridden);
  if (scaled != nullptr) *scaled = note;
  validate_config(config, source);
  return config;
}

Config config_from_string(const std::string& text, const std::string& source) {
  return config_from_json(parse_json_text(text, source, "config key"), source);
}

std::string description_changed_by(const std::string& description, const std::string& change) {
  return description + (description.empty() ? "[" : " [") + change + "]";
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides, std::string* scaled) {
  Config config;
  set_section(config, "", parse_json_text(read_text_file(path, "config file"), path, "config key"), path);
  const TrainConfig as_written = config.train;
  // A key set twice would take its last value without a word: which one was meant is not known.
  // So would one set by its path and again inside a section's object (train.steps, train={...}).
  std::map<std::string, std::string> set_by;  // key -> the override that sets it
  for (const std::string& assignment : overrides) {
    const size_t equals = assignment.find('=');
    const std::string key = assignment.substr(0, equals);
    std::vector<std::string> keys = {key};
    if (equals != std::string::npos) {
      const ConfigField* field = config::find_field(key);
      keys = keys_set_by(key, override_value(field ? field->type : ValueType::kNumber,
                                             assignment.substr(equals + 1), "--set " + assignment));
      if (keys.empty()) keys = {key};
    }
    for (const std::string& one : keys) {
      const auto [earlier, fresh] = set_by.emplace(one, assignment);
      if (!fresh)
        throw UserError("--set " + one + " is given twice (--set " + earlier->second + ", --set " +
                        assignment + "); give it once");
    }
  }
  std::string sets;  // "--set a=1 --set b=2"
  for (const auto& assignment : overrides) {
    apply_override(config, assignment);
    sets += (sets.empty() ? "--set " : " --set ") + assignment;
  }
  // The file's description speaks of the file: a config changed by --set says how beside it.
  if (!sets.empty() && set_by.count("description") == 0)
    config.description = description_changed_by(config.description, sets);
  std::set<std::string> keys_set;
  for (const auto& entry : set_by) keys_set.insert(entry.first);
  const std::string note = scale_schedule_to_steps(config.train, as_written, keys_set);
  if (scaled != nullptr) *scaled = note;
  // A rule across keys may be broken by an override: the message names the overrides with the file.
  validate_config(config, sets.empty() ? path : path + " with " + sets);
  return config;
}

std::string config_key_pointer(const std::string& key) {
  std::string pointer = "/" + key;
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  return pointer;
}

std::string config_value_text(const json& sections, const std::string& key) {
  const json::json_pointer pointer(config_key_pointer(key));
  return sections.contains(pointer) ? sections.at(pointer).dump() : std::string("(none)");
}

json config_to_json(const Config& config) {
  json result = json::object();
  for (const auto& field : config::config_fields()) {
    result[json::json_pointer(config_key_pointer(field.key))] = field.get(config);
  }
  return result;
}

namespace {

std::string difference_under(const std::string& prefix, const json& saved, const json& current,
                             const std::vector<std::string>& ignored) {
  for (auto it = saved.begin(); it != saved.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (std::find(ignored.begin(), ignored.end(), key) != ignored.end()) continue;
    if (!current.contains(it.key())) return key;
    const json& other = current[it.key()];
    if (it->is_object() && other.is_object()) {
      std::string inner = difference_under(key, *it, other, ignored);
      if (!inner.empty()) return inner;
    } else if (*it != other) {
      return key;
    }
  }
  return "";
}

}  // namespace

std::string first_config_difference(const json& saved, const json& current,
                                    const std::vector<std::string>& ignored) {
  return difference_under("", saved, current, ignored);
}

}  // namespace lengen
