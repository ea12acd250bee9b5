#pragma once
// Checkpoints: model, optimizer and training progress in one file, written to a temp file
// and renamed, so a crash mid-write never truncates an existing checkpoint.
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>

#include "lengen/model.h"

namespace lengen {

struct TrainingProgress {
  int64_t step = 0;                 // steps completed
  double best_validation = -1.0;    // best in-distribution exact match so far (-1: none yet)
  int64_t best_step = -1;
};

void save_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer,
                     const TrainingProgress& progress);

// Restores the model (and the optimizer when given). A missing file or one that does not
// fit the model throws UserError naming the file.
TrainingProgress load_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer);

}  // namespace lengen
