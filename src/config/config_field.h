#pragma once
// The table of config keys: parsing, writing, overrides, validation and the schema all come from
// this one list. Defaults come from the structs in config.h.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lengen/config.h"

namespace lengen::config {

enum class ValueType { kInteger, kUnsigned, kNumber, kBoolean, kString, kIntegerList, kNumberMap };

// Numeric limits; `low`/`high` are inclusive unless marked open. Lists are checked per element.
struct Bounds {
  std::optional<double> low;
  bool low_open = false;
  std::optional<double> high;
  bool high_open = false;
};

struct ConfigField {
  std::string key;  // JSON path, "model.attention.normalizer"; also the path in Config
  ValueType type;
  std::string meaning;
  Bounds bounds;
  std::vector<std::string> choices;  // strings only; empty accepts any string
  std::function<nlohmann::json(const Config&)> get;
  // The value must already have passed value_problem().
  std::function<void(Config&, const nlohmann::json&)> set;
};

const std::vector<ConfigField>& config_fields();

// The field with exactly this key, or nullptr.
const ConfigField* find_field(const std::string& key);

// Keys that hold other keys ("task", "model", "model.attention", ...), derived from the table.
const std::vector<std::string>& config_sections();

// Why `value` cannot be stored in `field` (type, bounds, choices), as a message naming the key;
// "" when it can.
std::string value_problem(const ConfigField& field, const nlohmann::json& value);

// JSON numbers that are whole (3000 or 3e3) as integers; nullopt for anything else.
std::optional<int64_t> json_integer(const nlohmann::json& value);
std::optional<uint64_t> json_unsigned(const nlohmann::json& value);

// A value as quoted in messages: compact JSON, cut short so the message stays one line.
std::string shown(const nlohmann::json& value);

// "integer", "number", ... and the allowed values as text (">= 1", "softmax, sparsemax").
std::string type_name(ValueType type);
std::string allowed_text(const ConfigField& field);

}  // namespace lengen::config
