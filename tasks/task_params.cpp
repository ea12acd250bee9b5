#include "task_params.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "lengen/errors.h"

namespace lengen {

namespace {

std::string format_value(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string param_error(const std::string& task, const std::string& param, const std::string& what) {
  return "task '" + task + "': parameter '" + param + "' " + what;
}

ParamReader::ParamReader(std::string task, const TaskParams& given, TaskParams defaults)
    : task_(std::move(task)), resolved_(std::move(defaults)) {
  std::vector<std::string> valid;
  for (const auto& [name, value] : resolved_) valid.push_back(name);
  for (const auto& [name, value] : given) {
    if (resolved_.count(name)) {
      resolved_[name] = value;
      continue;
    }
    std::string message = "task '" + task_ + "': unknown parameter '" + name + "'";
    std::string suggestion = closest_match(name, valid);
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    if (valid.empty()) {
      message += "; it takes no parameters";
    } else {
      message += "; valid parameters:";
      for (size_t i = 0; i < valid.size(); ++i) message += (i ? ", " : " ") + valid[i];
    }
    throw UserError(message);
  }
}

int64_t ParamReader::integer(const std::string& name, int64_t min, int64_t max) const {
  double value = resolved_.at(name);
  // Compared as doubles first so a huge value cannot overflow the cast.
  bool in_range = std::isfinite(value) && value >= static_cast<double>(min) &&
                  value <= static_cast<double>(max) && value == std::floor(value);
  if (!in_range) {
    // Upper limits that only guard against overflow are not worth mentioning.
    std::string range = max >= std::numeric_limits<int32_t>::max()
                            ? ">= " + std::to_string(min)
                            : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    throw UserError(param_error(task_, name, "must be an integer " + range + ", got " + format_value(value)));
  }
  return static_cast<int64_t>(value);
}

double ParamReader::open_interval(const std::string& name, double low, double high) const {
  double value = resolved_.at(name);
  if (!(value > low && value < high)) {
    throw UserError(param_error(
        task_, name,
        "must be in (" + format_value(low) + ", " + format_value(high) + "), got " + format_value(value)));
  }
  return value;
}

}  // namespace lengen
