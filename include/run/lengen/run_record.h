#pragma once
// RUN/run.json, the run's record: its id, and what it trains on. Its presence is what makes a
// folder a lengen run (--force empties only such a folder); checkpoints carry the id, so that
// another run's checkpoint (another seed of the same model, say) is not taken for this run's.
//   {"run_id": "16 hex digits", "training_data": null | {"dir": RESOLVED PATH, "hash": H}}
// Run folders of older builds hold the marker .lengen_run instead: read as a record without an id.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace lengen {

constexpr const char* kRunRecordName = "run.json";

struct RunRecord {
  std::string run_id;
  // null: generated data; {"dir", "hash"}: the --data folder and the hash of its training files.
  nlohmann::json training_data;
};

// The record of `run_dir`; nothing when it has none (not a lengen run folder).
std::optional<RunRecord> read_run_record(const std::string& run_dir);

// Writes RUN/run.json atomically.
void write_run_record(const std::string& run_dir, const RunRecord& record);

// 64 random bits as 16 hex digits: unique among the runs a researcher will ever compare.
std::string new_run_id();

}  // namespace lengen
