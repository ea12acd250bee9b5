#pragma once
// Reads one task's parameters: fills in defaults and turns unknown names and bad values into
// UserErrors that name the parameter, so a typo in a config never silently uses a default.
#include <cstdint>
#include <string>

#include "lengen/task.h"

namespace lengen {

class ParamReader {
 public:
  // Throws UserError for any name in `given` that is not in `defaults`.
  ParamReader(std::string task, const TaskParams& given, TaskParams defaults);

  // An integer-valued parameter in [min, max].
  int64_t integer(const std::string& name, int64_t min, int64_t max = INT64_MAX) const;
  // A real parameter strictly inside (low, high).
  double open_interval(const std::string& name, double low, double high) const;

  const TaskParams& resolved() const { return resolved_; }

 private:
  std::string task_;
  TaskParams resolved_;
};

// "task 'NAME': parameter 'PARAM' WHAT": the start of every value error.
std::string param_error(const std::string& task, const std::string& param, const std::string& what);

}  // namespace lengen
