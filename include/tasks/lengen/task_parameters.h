#pragma once
// The parameters each task reads from task.params (lengen/task.h), as one list per task.
#include <cstdint>
#include <string>
#include <vector>

namespace lengen {

// One parameter a task reads from task.params: an integer in [min, max], a real in (min, max).
struct TaskParameter {
  std::string name;
  double default_value;
  double min;
  double max;
  bool integer;
  std::string meaning;
};

// The most symbols a task parameter may ask for: at 2^20 symbols and d_model 512 the embedding
// alone holds 2 GiB of fp32, more than a synthetic task needs.
constexpr double kMaxTaskSymbols = double(int64_t{1} << 20);

// The parameters of the task `name` (UserError for an unknown task).
const std::vector<TaskParameter>& task_parameters(const std::string& name);

// The values `parameter` allows, as errors and docs state them: ">= 2", "in [1, 64]", "in (0, 1)".
std::string allowed_range(const TaskParameter& parameter);

}  // namespace lengen
