#pragma once
// One definition per task file; tasks/task_registry.cpp lists them. A definition names the task,
// lists its parameters (lengen/task.h, TaskParameter) and makes the task from them once they are
// checked (task_params.h). `seed` matters only to tasks that draw something once.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lengen/task.h"
#include "task_params.h"

namespace lengen {

struct TaskDefinition {
  std::string name;
  std::vector<TaskParameter> parameters;
  std::unique_ptr<Task> (*make)(const CheckedParams& params, uint64_t seed);
};

// `length` symbols, each uniform in [low, high].
inline Symbols uniform_symbols(Rng& rng, int64_t length, int32_t low, int32_t high) {
  Symbols symbols(static_cast<size_t>(length));
  for (auto& symbol : symbols) symbol = static_cast<int32_t>(uniform_int(rng, low, high));
  return symbols;
}

// The `make` of a task built from its checked parameters alone.
template <class T>
std::unique_ptr<Task> make_from_params(const CheckedParams& params, uint64_t) {
  return std::make_unique<T>(params);
}

TaskDefinition copy_task();
TaskDefinition reverse_task();
TaskDefinition sort_task();
TaskDefinition parity_task();
TaskDefinition flip_flop_task();
TaskDefinition n_back_task();
TaskDefinition local_count_task();
TaskDefinition mqmtar_task();

}  // namespace lengen
