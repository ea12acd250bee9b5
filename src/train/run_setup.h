#pragma once
// The checkpoint a resumed run continues from.
#include <torch/torch.h>

#include "lengen/checkpoint.h"
#include "lengen/decoder.h"
#include "lengen/run_folder.h"

namespace lengen {

// Loads the newest checkpoint that can be read into `model` and `optimizer`; an unreadable
// newer one (cut short by a full disk, damaged) is renamed to NAME.unreadable by the `writer`,
// kept but out of the way, and the one before it is tried.
TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer);

}  // namespace lengen
