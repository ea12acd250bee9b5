#pragma once
// The run folder at the start of training: checked against --resume / --force before anything
// is written, and the checkpoint a resumed run continues from.
#include <torch/torch.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "lengen/checkpoint.h"
#include "lengen/config.h"
#include "lengen/decoder.h"
#include "lengen/folder_lock.h"
#include "lengen/run_folder.h"
#include "lengen/run_start.h"
#include "lengen/trainer.h"

namespace lengen {

// check_run_folder_at_start on every rank, then write_run_start on rank 0 (`writer`), which
// holds the run's lock it returns while training writes.
std::unique_ptr<FolderLock> prepare_run_folder(const RunFolder& run, const Config& config,
                                               const TrainOptions& options, const nlohmann::json& data_record,
                                               bool writer);

// Loads the newest checkpoint that can be read into `model` and `optimizer`; an unreadable
// newer one (cut short by a full disk, damaged) is renamed to NAME.unreadable, kept but out of
// the way, and the one before it is tried. A checkpoint trained under another task or train
// section than `config` (config.json edited to match a --set), or on other data than
// `data_record` (training_data_record of the data read now; by the checkpoint's own record), is
// refused.
TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, const Config& config,
                                               const nlohmann::json& data_record, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer);

}  // namespace lengen
