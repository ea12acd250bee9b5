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

// Writes the checkpoint; weights that are not finite are refused (UserError) and a failed
// write (full disk) throws UserError "cannot write PATH: reason" and leaves no temp file.
void save_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer,
                     const TrainingProgress& progress);

// Restores the model (and the optimizer when given). A missing or unreadable file throws
// CheckpointUnreadable; one of another model (a parameter missing or of another shape) throws
// UserError naming the first mismatched parameter.
TrainingProgress load_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer);

// What the checkpoint at `path` says of its training, read without loading its tensors into a
// model; CheckpointUnreadable when it cannot be read.
TrainingProgress read_checkpoint_record(const std::string& path);

// A 64-bit FNV-1a hash of every parameter and buffer (names, shapes and float values), as 16
// hex digits: two checkpoints with the same weights have the same hash on every machine.
std::string weights_hash(Decoder& model);

}  // namespace lengen
