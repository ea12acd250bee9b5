// Task names to factories: adding a task is one file and one line here.
#include <utility>

#include "lengen/errors.h"
#include "task_factories.h"

namespace lengen {

namespace {

using Factory = std::unique_ptr<Task> (*)(const TaskParams&, uint64_t);

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> tasks = {
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
  for (const auto& [task, factory] : registry()) {
    if (task == name) return factory(params, seed);
  }
  std::string message = "unknown task '" + name + "'";
  std::string suggestion = closest_match(name, task_names());
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  message += "; tasks:";
  for (const auto& task : task_names()) message += " " + task;
  throw UserError(message);
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& [task, factory] : registry()) names.push_back(task);
  return names;
}

}  // namespace lengen
