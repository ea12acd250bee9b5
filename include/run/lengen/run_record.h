#pragma once
// RUN/run.json, the run's record: its id, and what it trains on. Its presence is what makes a
// folder a lengen run (--force empties only such a folder); checkpoints carry the id, so that
// another run's checkpoint (another seed of the same model, say) is not taken for this run's.
//   {"run_id": "16 hex digits", "training_data": null | {"dir": RESOLVED PATH, "hash": H}}
// Run folders of older builds hold the marker .lengen_run instead: read as a record without an id.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "lengen/run_folder.h"

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

// What a checkpoint says of its training, read without its tensors (the model layer's
// lengen/checkpoint.h writes and reads checkpoints).
struct TrainingProgress {
  int64_t step = 0;               // steps completed
  double best_validation = -1.0;  // best in-distribution exact match so far (-1: none yet)
  int64_t best_step = -1;
  // The log window open at `step` (steps since the last log line), so that a resumed run logs
  // the same mean loss as one that never stopped.
  double window_loss = 0.0;
  int64_t window_steps = 0;
  int64_t window_tokens = 0;
  // The id of the run that wrote the checkpoint (its run.json's); "" when unknown.
  std::string run_id;
  // The train.steps it was trained under, and from which step: "400@0" for a run trained in one
  // go, "400@0,600@200" for one resumed at step 200 with train.steps=600 (its learning-rate
  // schedule changed there). "" when unknown (a checkpoint written without it).
  std::string schedule;
};

// Refuses (UserError) a checkpoint at `path` written by another run than `run` (by run id): one of
// another seed of the same model (`eval --checkpoint PATH`) fits every tensor. What a checkpoint
// or run does not record is not checked.
void check_checkpoint_belongs(const std::string& path, const TrainingProgress& progress, const RunFolder& run);

}  // namespace lengen
