#pragma once
// A task's parameters checked against its list (lengen/task.h, TaskParameter): unknown names and
// values out of bounds are UserErrors that name the parameter, so a typo in a config never
// silently uses a default; the names left out take their defaults.
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/task.h"
#include "lengen/task_parameters.h"

namespace lengen {

class CheckedParams {
 public:
  // Throws UserError for a name in `given` that is not in `parameters` or a value outside its
  // bounds, checking the parameters in the order of the list.
  CheckedParams(std::string task, const TaskParams& given, const std::vector<TaskParameter>& parameters);

  // The value of an integer parameter of the list.
  int64_t integer(const std::string& name) const;
  // The value of a real parameter of the list.
  double real(const std::string& name) const;
  // Every parameter with its value: what the task's params() reports.
  const TaskParams& values() const { return values_; }

 private:
  TaskParams values_;
};

// "task 'NAME': parameter 'PARAM' WHAT": the start of every value error.
std::string param_error(const std::string& task, const std::string& param, const std::string& what);

}  // namespace lengen
