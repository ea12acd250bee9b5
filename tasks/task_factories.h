#pragma once
// One factory per task file; tasks/task_registry.cpp maps names to them. Each validates its
// parameters and throws UserError. `seed` matters only to tasks that draw something once.
#include <cstdint>
#include <memory>

#include "lengen/task.h"

namespace lengen {

std::unique_ptr<Task> make_copy_task(const TaskParams& params, uint64_t seed);
std::unique_ptr<Task> make_reverse_task(const TaskParams& params, uint64_t seed);
std::unique_ptr<Task> make_sort_task(const TaskParams& params, uint64_t seed);
std::unique_ptr<Task> make_parity_task(const TaskParams& params, uint64_t seed);
std::unique_ptr<Task> make_flip_flop_task(const TaskParams& params, uint64_t seed);
std::unique_ptr<Task> make_n_back_task(const TaskParams& params, uint64_t seed);
std::unique_ptr<Task> make_local_count_task(const TaskParams& params, uint64_t seed);
std::unique_ptr<Task> make_mqmtar_task(const TaskParams& params, uint64_t seed);

}  // namespace lengen
