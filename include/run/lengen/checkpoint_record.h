#pragma once
// What a checkpoint says of its training, read without its tensors, and the one decision on it:
// whether it is this run's. Checkpoints themselves (tensors and files) are the model layer's
// (lengen/checkpoint.h).
#include <cstdint>
#include <string>

#include "lengen/run_folder.h"

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
