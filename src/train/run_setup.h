#pragma once
// The run folder at the start of training: checked against --resume / --force before anything
// is written, and the checkpoint a resumed run continues from.
#include <torch/torch.h>

#include "lengen/checkpoint.h"
#include "lengen/config.h"
#include "lengen/model.h"
#include "lengen/run_folder.h"
#include "lengen/trainer.h"

namespace lengen {

// A new run: refuses a folder with content unless --force on a lengen run folder, which it
// empties. A resumed run: refuses a config that differs from the folder's config.json in a key
// a resume may not change. Then rank 0 writes the marker and config.json. Every rank calls it.
void prepare_run_folder(const RunFolder& run, const Config& config, const TrainOptions& options, bool writer);

// Loads the newest checkpoint that can be read into `model` and `optimizer`; an unreadable
// newer one (cut short by a full disk, damaged) is renamed to NAME.unreadable, kept but out of
// the way, and the one before it is tried.
TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer);

}  // namespace lengen
