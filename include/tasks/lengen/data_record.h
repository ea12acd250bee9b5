#pragma once
// DIR/data.json, which `lengen data` writes beside the .src/.trg files it generates: the task they
// come from, by name and every parameter, and the seed. A run given `--data DIR` under another
// task (copy's config on reverse's files, say) is refused instead of training on one rule under
// another's name. Folders of files made by other tools have no record and are read as they are.
// With a training split, the record also keeps the task lengths it was drawn from: a run on it
// must say the same task.len_min and task.len_max, since evaluation multiples count from them.
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

// The record of files generated from `task` with `seed`, as JSON text; `train` when the folder
// holds a training split lengen drew.
std::string data_record_text(const Task& task, uint64_t seed, std::optional<TrainLengths> train);

// How DIR/data.json differs from the record of `task` drawn with `seed` ("task copy", "vocab=8",
// "seed 3": the record's side), or "" when it does not or DIR has no record.
std::string data_record_difference(const std::string& dir, const Task& task, uint64_t seed);

// The training lengths DIR/data.json records; nothing when DIR has no record or the record has
// none (no training split, or files from another tool).
std::optional<TrainLengths> recorded_train_lengths(const std::string& dir);

// UserError naming DIR/data.json when it records another task, or a parameter of other value,
// than `task`; nothing when DIR has no record.
void check_data_record(const std::string& dir, const Task& task);

// A line for the log when DIR has no data.json: its files are read as `task`'s samples with only
// their symbols and lengths checked, so a file of another task would pass. "" with a record.
std::string unrecorded_data_note(const std::string& dir, const Task& task);

}  // namespace lengen
