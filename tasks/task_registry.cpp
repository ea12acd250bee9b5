// The tasks by name: adding a task is one file and one line here.
#include "lengen/named_entries.h"
#include "lengen/task_parameters.h"
#include "task_factories.h"

namespace lengen {

namespace {

const std::vector<TaskDefinition>& registry() {
  static const std::vector<TaskDefinition> tasks = {
      copy_task(),      reverse_task(), sort_task(),        parity_task(),
      flip_flop_task(), n_back_task(),  local_count_task(), mqmtar_task(),
  };
  return tasks;
}

}  // namespace

std::unique_ptr<Task> make_task(const std::string& name, const TaskParams& params, uint64_t seed) {
  const TaskDefinition& task = entry_named(registry(), "task", name);
  return task.make(CheckedParams(task.name, params, task.parameters), seed);
}

std::vector<std::string> task_names() { return entry_names(registry()); }

const std::vector<TaskParameter>& task_parameters(const std::string& name) {
  return entry_named(registry(), "task", name).parameters;
}

}  // namespace lengen
