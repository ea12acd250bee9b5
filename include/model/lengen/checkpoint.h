#pragma once
// Checkpoints: model, optimizer and training progress in one file, written to a temp file
// and renamed, so a crash mid-write never truncates an existing checkpoint.
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>

#include "lengen/decoder.h"
#include "lengen/errors.h"
#include "lengen/run_folder.h"
#include "lengen/schedule_history.h"  // continued_schedule, for TrainingProgress::schedule

namespace lengen {

struct TrainingProgress {
  int64_t step = 0;               // steps completed
  double best_validation = -1.0;  // best in-distribution exact match so far (-1: none yet)
  int64_t best_step = -1;
  // The log window open at `step` (steps since the last log line), so that a resumed run logs
  // the same mean loss as one that never stopped.
  double window_loss = 0.0;
  int64_t window_steps = 0;
  int64_t window_tokens = 0;
  // The identity of the run that wrote the checkpoint (RunFolder::run_id); "" when unknown.
  std::string run_id;
  // What trained it: the task and train sections of its run's config (training_config_of), as
  // JSON; "" when unknown.
  std::string training_config;
  // The train.steps it was trained under, and from which step: "400@0" for a run trained in one
  // go, "400@0,600@200" for one resumed at step 200 with train.steps=600 (its learning-rate
  // schedule changed there). "" when unknown (a checkpoint written without it).
  std::string schedule;
  // What it trained on: the run's training_data.json record as JSON ("null": generated data);
  // "" when unknown.
  std::string training_data;
};

// A checkpoint file that cannot be read at all (truncated, not a checkpoint), as opposed to
// one that reads but belongs to another model.
class CheckpointUnreadable : public UserError {
 public:
  using UserError::UserError;
};

// True when every parameter and buffer of `model` is finite.
bool weights_are_finite(Decoder& model);

// Writes the checkpoint; weights that are not finite are refused (UserError) and a failed
// write (full disk) throws UserError "cannot write PATH: reason" and leaves no temp file.
void save_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer,
                     const TrainingProgress& progress);

// Restores the model (and the optimizer when given). A missing or unreadable file throws
// CheckpointUnreadable; one of another model (a parameter missing or of another shape) throws
// UserError naming the first mismatched parameter.
TrainingProgress load_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer);

// The identity of the run that wrote the checkpoint (its "run_id"), read without its tensors; ""
// when it has none or cannot be read.
std::string checkpoint_run_id(const std::string& path);

// Refuses (UserError) a checkpoint written by another run than `run`: its weights would be filed
// under this run's config (another seed counted as this one). Not checked when either identity
// is unknown (a run folder or checkpoint without one).
void check_checkpoint_is_runs(const std::string& path, const TrainingProgress& progress,
                              const RunFolder& run);

// The task and train sections of `config` as a checkpoint stores them.
std::string training_config_of(const Config& config);

// Refuses (UserError) a checkpoint trained under another task or train section than `config`'s,
// naming the first key that differs; train.steps (which a resume may grow), train.threads and
// train.device are not compared. Not checked for a checkpoint without one.
void check_checkpoint_trained_as(const std::string& path, const TrainingProgress& progress,
                                 const Config& config);

// A 64-bit FNV-1a hash of every parameter and buffer (names, shapes and float values), as 16
// hex digits: two checkpoints with the same weights have the same hash on every machine.
std::string weights_hash(Decoder& model);

}  // namespace lengen
