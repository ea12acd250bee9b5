#pragma once
// What a checkpoint says of its training, read without its tensors, and the one decision on it:
// whether it is this run's model of this config. Checkpoints themselves (tensors and files) are
// the model layer's (lengen/checkpoint.h).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "lengen/config.h"
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
  // What trained it: the task and train sections of its run's config (training_config_of), as
  // JSON; "" when unknown.
  std::string training_config;
  // The train.steps it was trained under, and from which step: "400@0" for a run trained in one
  // go, "400@0,600@200" for one resumed at step 200 with train.steps=600 (its learning-rate
  // schedule changed there). "" when unknown (a checkpoint written without it).
  std::string schedule;
  // What it trained on: the training_data of its run's run.json, as JSON ("null": generated
  // data); "" when unknown.
  std::string training_data;
};

// The task and train sections of `config` as a checkpoint stores them.
std::string training_config_of(const Config& config);

// Refuses (UserError) a checkpoint at `path` that is not `run`'s model of `config`: one written by
// another run (by run id), trained under another task or train section (naming the first key
// that differs; train.steps, which a resume may grow, train.threads and train.device aside) or,
// when `data_record` is given, on other data. What a checkpoint does not record is not checked.
void check_checkpoint_belongs(const std::string& path, const TrainingProgress& progress, const RunFolder& run,
                              const Config& config, const nlohmann::json* data_record = nullptr);

// Whether two training data records name the same data: the same files by hash, or both generated.
bool same_training_data(const nlohmann::json& saved, const nlohmann::json& now);
// "--data DIR (files with hash H)" or "generated data".
std::string training_data_text(const nlohmann::json& record);

}  // namespace lengen
