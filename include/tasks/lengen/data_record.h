#pragma once
// DIR/data.json, which `lengen data` writes beside the .src/.trg files it generates: the task they
// come from, by name and every parameter, and the seed. A run given `--data DIR` under another
// task (copy's config on reverse's files, say) is refused instead of training on one rule under
// another's name. Folders of files made by other tools have no record and are read as they are.
#include <cstdint>
#include <string>

#include "lengen/task.h"

namespace lengen {

constexpr const char* kDataRecordName = "data.json";

// The record of files generated from `task` with `seed`, as JSON text.
std::string data_record_text(const Task& task, uint64_t seed);

// UserError naming DIR/data.json when it records another task, or a parameter of other value,
// than `task`; nothing when DIR has no record.
void check_data_record(const std::string& dir, const Task& task);

}  // namespace lengen
