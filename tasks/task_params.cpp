#include "task_params.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "lengen/errors.h"
#include "lengen/named_entries.h"

namespace lengen {

namespace {

// Whole numbers in full ("1000000000", not "1e+09"), so the message shows what was typed.
std::string format_value(double value) {
  std::ostringstream out;
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
    out << static_cast<int64_t>(value);
  } else {
    out << value;
  }
  return out.str();
}

bool allowed(const TaskParameter& parameter, double value) {
  if (!parameter.integer) return value > parameter.min && value < parameter.max;
  // Compared as doubles so that a huge value cannot overflow a cast.
  return std::isfinite(value) && value >= parameter.min && value <= parameter.max &&
         value == std::floor(value);
}

}  // namespace

std::string allowed_range(const TaskParameter& parameter) {
  if (!parameter.integer)
    return "in (" + format_value(parameter.min) + ", " + format_value(parameter.max) + ")";
  const auto min = static_cast<int64_t>(parameter.min), max = static_cast<int64_t>(parameter.max);
  if (max >= std::numeric_limits<int32_t>::max()) return ">= " + std::to_string(min);
  return "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string param_error(const std::string& task, const std::string& param, const std::string& what) {
  return "task '" + task + "': parameter '" + param + "' " + what;
}

CheckedParams::CheckedParams(std::string task, const TaskParams& given,
                             const std::vector<TaskParameter>& parameters) {
  for (const auto& [name, value] : given) {
    if (find_entry(parameters, name) != nullptr) continue;
    throw UserError("task '" + task + "': " +
                    (parameters.empty() ? "unknown parameter '" + name + "'; it takes no parameters"
                                        : unknown_name_message("parameter", name, entry_names(parameters))));
  }
  for (const TaskParameter& parameter : parameters) {
    const auto it = given.find(parameter.name);
    const double value = it != given.end() ? it->second : parameter.default_value;
    if (!allowed(parameter, value)) {
      throw UserError(param_error(task, parameter.name,
                                  std::string("must be ") + (parameter.integer ? "an integer " : "") +
                                      allowed_range(parameter) + ", got " + format_value(value)));
    }
    values_[parameter.name] = value;
  }
}

int64_t CheckedParams::integer(const std::string& name) const {
  return static_cast<int64_t>(values_.at(name));
}

double CheckedParams::real(const std::string& name) const { return values_.at(name); }

}  // namespace lengen
