#pragma once
// Checkpoints: model, optimizer and training progress in one file, written to a temp file
// and renamed, so a crash mid-write never truncates an existing checkpoint.
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>

#include "lengen/decoder.h"
#include "lengen/errors.h"
#include "lengen/run_record.h"

namespace lengen {

// A checkpoint file that cannot be read at all (truncated, not a checkpoint), as opposed to
// one that reads but belongs to another model.
class CheckpointUnreadable : public UserError {
 public:
  using UserError::UserError;
};

// True when every parameter and buffer of `model` is finite.
bool weights_are_finite(Decoder& model);

// Writes the checkpoint; UserError for weights not finite or a failed write (no temp file left).
void save_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer,
                     const TrainingProgress& progress);

// Restores the model (and optimizer). CheckpointUnreadable for an unreadable file; UserError
// naming the first mismatched parameter for another model's.
TrainingProgress load_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer);

// A 64-bit FNV-1a hash of every parameter and buffer as 16 hex digits, equal on every machine.
std::string weights_hash(Decoder& model);

}  // namespace lengen
