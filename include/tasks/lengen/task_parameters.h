#pragma once
// The parameters each task reads from task.params (lengen/task.h), as one list per task.
#include <cstdint>
#include <string>
#include <vector>

namespace lengen {

// One parameter a task reads from task.params. An integer parameter takes whole values in
// [min, max], a real one values strictly inside (min, max). A task's factory receives its
// parameters checked against this list and completed with the defaults; `lengen config schema`
// and docs/config.md list them.
struct TaskParameter {
  std::string name;
  double default_value;
  double min;
  double max;
  bool integer;
  std::string meaning;
};

// The most symbols a task parameter may ask for (a copy task's vocab, mqmtar's alphabet). The
// model's embedding and output layer grow with the symbol count: at 2^20 symbols and d_model
// 512 each holds 2 GiB of fp32, already more than a synthetic task needs.
constexpr double kMaxTaskSymbols = double(int64_t{1} << 20);

// The parameters of the task `name` (UserError for an unknown task).
const std::vector<TaskParameter>& task_parameters(const std::string& name);

// The values `parameter` allows, as its errors and docs/config.md state them: ">= 2" or
// "in [1, 64]" for an integer (an upper bound that only guards against overflow unstated),
// "in (0, 1)" for a real.
std::string allowed_range(const TaskParameter& parameter);

}  // namespace lengen
