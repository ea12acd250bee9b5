#pragma once
// RUN/run.json: the run's id, training data and what trained it. It makes a folder a lengen run
// (--force empties only such a folder).
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
  // "lengen 0431c53 on CPU (2 cores)"; "; resumed by ..." where another build or machine went on.
  std::string trained_by;
};

// The record of `run_dir`; nothing when it has none (not a lengen run folder).
std::optional<RunRecord> read_run_record(const std::string& run_dir);

// Writes RUN/run.json atomically.
void write_run_record(const std::string& run_dir, const RunRecord& record);

// 64 random bits as 16 hex digits: unique among the runs a researcher will ever compare.
std::string new_run_id();

// What a checkpoint says of its training, read without its tensors.
struct TrainingProgress {
  int64_t step = 0;               // steps completed
  double best_validation = -1.0;  // best in-distribution exact match so far (-1: none yet)
  int64_t best_step = -1;
  // The log window open at `step`, so a resumed run logs the same mean loss.
  double window_loss = 0.0;
  int64_t window_steps = 0;
  int64_t window_tokens = 0;
  // The id of the run that wrote the checkpoint (its run.json's); "" when unknown.
  std::string run_id;
  // train.steps and from which step: "400@0,600@200" for one resumed at 200 with steps=600.
  std::string schedule;
};

// UserError for a checkpoint at `path` written by another run than `run` (by run id).
void check_checkpoint_belongs(const std::string& path, const TrainingProgress& progress, const RunFolder& run);

}  // namespace lengen
