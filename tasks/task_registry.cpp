// Task names to factories: adding a task is one file and one line here.
#include "lengen/registry.h"
#include "task_factories.h"

namespace lengen {

namespace {

struct TaskEntry {
  std::string name;
  std::unique_ptr<Task> (*make)(const TaskParams& params, uint64_t seed);
};

const std::vector<TaskEntry>& registry() {
  static const std::vector<TaskEntry> tasks = {
      {"copy", make_copy_task},
      {"reverse", make_reverse_task},
      {"sort", make_sort_task},
      {"parity", make_parity_task},
      {"flip_flop", make_flip_flop_task},
      {"n_back", make_n_back_task},
      {"local_count", make_local_count_task},
      {"mqmtar", make_mqmtar_task},
  };
  return tasks;
}

}  // namespace

std::unique_ptr<Task> make_task(const std::string& name, const TaskParams& params, uint64_t seed) {
  return entry_named(registry(), "task", name).make(params, seed);
}

std::vector<std::string> task_names() { return entry_names(registry()); }

}  // namespace lengen
