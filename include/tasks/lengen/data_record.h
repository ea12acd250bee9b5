#pragma once
// DIR/data.json, written by `lengen data`: the task, its parameters, the seed and any training
// lengths, so a run on DIR under another task is refused. Other tools' folders have no record.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "lengen/task.h"

namespace lengen {

constexpr const char* kDataRecordName = "data.json";

// A task's parameters as JSON, a whole number as an integer ("vocab": 32, not 32.0).
nlohmann::json task_params_json(const TaskParams& params);

// The task lengths a training split was drawn from (both ends included).
struct TrainLengths {
  int64_t min = 0;
  int64_t max = 0;
};

// The record of files generated from `task` with `seed`, as JSON text.
std::string data_record_text(const Task& task, uint64_t seed, std::optional<TrainLengths> train);

// The training lengths DIR/data.json records, if any.
std::optional<TrainLengths> recorded_train_lengths(const std::string& dir);

// UserError naming DIR/data.json when it records another task or parameter than `task`.
void check_data_record(const std::string& dir, const Task& task);

// A log line warning that DIR has no data.json, so only symbols and lengths are checked; or "".
std::string unrecorded_data_note(const std::string& dir, const Task& task);

}  // namespace lengen
