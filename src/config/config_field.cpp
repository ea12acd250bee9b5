#include "config_field.h"

#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "lengen/errors.h"
#include "lengen/named_entries.h"

namespace lengen::config {

namespace {

constexpr size_t kMaxShownChars = 60;
// Doubles above this are not whole int64 values we could store exactly.
constexpr double kLargestWholeDouble = 9.0e18;

std::string number_text(double x) {
  // Whole numbers in full (1048576, not 1.04858e+06): bounds are quoted in messages and docs.
  if (std::floor(x) == x && std::abs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  std::ostringstream out;
  out << x;
  return out.str();
}

std::string bounds_text(const Bounds& bounds) {
  if (bounds.low && bounds.high) {
    return (bounds.low_open ? "(" : "[") + number_text(*bounds.low) + ", " + number_text(*bounds.high) +
           (bounds.high_open ? ")" : "]");
  }
  if (bounds.low) return (bounds.low_open ? "> " : ">= ") + number_text(*bounds.low);
  if (bounds.high) return (bounds.high_open ? "< " : "<= ") + number_text(*bounds.high);
  return "";
}

bool within(const Bounds& bounds, double x) {
  if (bounds.low && (bounds.low_open ? x <= *bounds.low : x < *bounds.low)) return false;
  if (bounds.high && (bounds.high_open ? x >= *bounds.high : x > *bounds.high)) return false;
  return true;
}

// Numbers become fp32 tensor values and options (a learning rate, an init std): one beyond
// float's range would overflow to infinity deep inside training.
std::string float_range_problem(const std::string& what, const nlohmann::json& number) {
  const double value = number.get<double>();
  if (std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max()) return "";
  return what + " must be a number within float's range (at most 3.4e38 in size), got " + shown(number);
}

std::string bounds_problem(const std::string& what, const Bounds& bounds, const nlohmann::json& number) {
  if (number.is_number_float()) {
    std::string problem = float_range_problem(what, number);
    if (!problem.empty()) return problem;
  }
  if (within(bounds, number.get<double>())) return "";
  std::string text = bounds_text(bounds);
  bool interval = bounds.low && bounds.high;
  return what + " must be " + (interval ? "in " : "") + text + ", got " + shown(number);
}

std::string type_problem(const std::string& key, ValueType type, const nlohmann::json& value) {
  static const char* const kExpected[] = {
      "an integer",         "a non-negative integer", "a number", "true or false", "a string",
      "a list of integers", "an object of numbers"};
  return "config key '" + key + "' must be " + kExpected[static_cast<int>(type)] + ", got " + shown(value);
}

bool has_type(ValueType type, const nlohmann::json& value) {
  switch (type) {
    case ValueType::kInteger:
      return json_integer(value).has_value();
    case ValueType::kUnsigned:
      return json_unsigned(value).has_value();
    case ValueType::kNumber:
      return value.is_number();
    case ValueType::kBoolean:
      return value.is_boolean();
    case ValueType::kString:
      return value.is_string();
    case ValueType::kIntegerList:
      if (!value.is_array()) return false;
      for (const auto& element : value) {
        if (!json_integer(element)) return false;
      }
      return true;
    case ValueType::kNumberMap:
      return value.is_object();
  }
  return false;
}

}  // namespace

std::optional<int64_t> json_integer(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    auto x = value.get<uint64_t>();
    if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(x);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    double x = value.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < kLargestWholeDouble) {
      return static_cast<int64_t>(x);
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> json_unsigned(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  auto x = json_integer(value);
  if (x && *x >= 0) return static_cast<uint64_t>(*x);
  return std::nullopt;
}

std::string shown(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxShownChars) text = text.substr(0, kMaxShownChars) + "...";
  return text;
}

std::string value_problem(const ConfigField& field, const nlohmann::json& value) {
  if (!has_type(field.type, value)) return type_problem(field.key, field.type, value);
  switch (field.type) {
    case ValueType::kInteger:
    case ValueType::kUnsigned:
    case ValueType::kNumber:
      return bounds_problem(field.key, field.bounds, value);
    case ValueType::kIntegerList:
      for (const auto& element : value) {
        std::string problem = bounds_problem(field.key + " entries", field.bounds, element);
        if (!problem.empty()) return problem;
      }
      return "";
    case ValueType::kNumberMap:
      for (const auto& [name, number] : value.items()) {
        if (!number.is_number()) return type_problem(field.key + "." + name, ValueType::kNumber, number);
        if (number.is_number_float()) {
          std::string problem = float_range_problem(field.key + "." + name, number);
          if (!problem.empty()) return problem;
        }
      }
      return "";
    case ValueType::kString: {
      if (field.choices.empty()) return "";
      const auto& text = value.get_ref<const std::string&>();
      for (const auto& choice : field.choices) {
        if (text == choice) return "";
      }
      std::string problem =
          field.key + " must be one of " + joined_names(field.choices) + ", got " + shown(value);
      std::string suggestion = closest_match(text, field.choices);
      return suggestion.empty() ? problem : problem + " (did you mean '" + suggestion + "'?)";
    }
    case ValueType::kBoolean:
      return "";
  }
  return "";
}

std::string type_name(ValueType type) {
  static const char* const kNames[] = {"integer", "unsigned integer", "number",           "boolean",
                                       "string",  "integer list",     "object of numbers"};
  return kNames[static_cast<int>(type)];
}

std::string allowed_text(const ConfigField& field) {
  if (!field.choices.empty()) return joined_names(field.choices);
  std::string text = bounds_text(field.bounds);
  if (field.type == ValueType::kIntegerList && !text.empty()) return "each " + text;
  return text;
}

const ConfigField* find_field(const std::string& key) {
  for (const auto& field : config_fields()) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

const std::vector<std::string>& config_sections() {
  static const std::vector<std::string> sections = [] {
    std::vector<std::string> result;
    std::set<std::string> seen;
    for (const auto& field : config_fields()) {
      for (size_t dot = field.key.find('.'); dot != std::string::npos; dot = field.key.find('.', dot + 1)) {
        std::string section = field.key.substr(0, dot);
        if (seen.insert(section).second) result.push_back(section);
      }
    }
    return result;
  }();
  return sections;
}

}  // namespace lengen::config
