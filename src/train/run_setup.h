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
#include "lengen/trainer.h"

namespace lengen {

// A new run: refuses a folder with content unless --force on a lengen run folder, which it
// empties. A resumed run: refuses a config that differs from the folder's config.json in a key
// a resume may not change, train.steps below its newest checkpoint and training data other than the run's
// (training_data.json). Then rank 0 writes the marker, config.json and, with --data, training_data.json.
// Every rank calls it; rank 0 (`writer`) takes the run's lock first and gets it back, to hold while it
// writes.
// `data_record` is training_data_record of the data as training read it.
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

// What a run trains on, as training_data.json and checkpoints record it: generated data (null),
// or the --data folder by its absolute path and the hash of its train.src and train.trg.
nlohmann::json training_data_record(const std::string& data_dir);
// The same record with the hash of the files' bytes as read (read_samples' content_hash).
nlohmann::json training_data_record(const std::string& data_dir, const std::string& files_hash);

}  // namespace lengen
