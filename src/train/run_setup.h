#pragma once
// The run folder at the start of training: checked against --resume / --force before anything
// is written, and the checkpoint a resumed run continues from.
#include <torch/torch.h>

#include <memory>

#include "lengen/checkpoint.h"
#include "lengen/config.h"
#include "lengen/model.h"
#include "lengen/run_folder.h"
#include "lengen/run_lock.h"
#include "lengen/trainer.h"

namespace lengen {

// A new run: refuses a folder with content unless --force on a lengen run folder, which it
// empties. A resumed run: refuses a config that differs from the folder's config.json in a key
// a resume may not change, train.steps below its newest checkpoint and training data other than the run's (training_data.json). Then
// rank 0 writes the marker, config.json and, with --data, training_data.json. Every rank calls
// it; rank 0 (`writer`) takes the run's lock first and gets it back, to hold while it writes.
std::unique_ptr<RunLock> prepare_run_folder(const RunFolder& run, const Config& config, const TrainOptions& options,
                                            bool writer);

// Loads the newest checkpoint that can be read into `model` and `optimizer`; an unreadable
// newer one (cut short by a full disk, damaged) is renamed to NAME.unreadable, kept but out of
// the way, and the one before it is tried.
TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer);

}  // namespace lengen
