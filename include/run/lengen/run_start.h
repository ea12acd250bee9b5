#pragma once
// A run folder at the start of training: checked against --resume / --force before anything is
// written, then its run.json and config.json written. Training (lengen/trainer.h) calls these;
// the data-parallel ranks all check, and rank 0 alone takes the lock and writes.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "lengen/config.h"
#include "lengen/run_folder.h"
#include "lengen/folder_lock.h"

namespace lengen {

// How training was asked to start: `lengen train --resume / --force / --data`.
struct RunStart {
  bool resume = false;
  bool force = false;
  std::string data_dir;
};

// A new run: refuses a folder with content unless --force on a lengen run folder, which it
// empties. A resumed run: refuses a config that differs from the folder's config.json in a key a
// resume may not change, train.steps below its newest checkpoint and training data other than the
// run's. The `writer` takes the run's lock first and gets it back, to hold while it writes.
std::unique_ptr<FolderLock> check_run_folder_at_start(const RunFolder& run, const Config& config,
                                                   const RunStart& start, bool writer);

// Writes run.json (a new run id, or the resumed run's) and config.json. `data_record` is
// training_data_record of the data as training read it.
void write_run_start(const RunFolder& run, const Config& config, bool resume, const nlohmann::json& data_record);

// For `--resume` of the lengen run at run_dir: UserError when `config` differs from its config.json
// in a key a resume may not change, `data_dir` is not the training data it started on, or
// train.steps is below its newest checkpoint. Training checks the same under the run's lock;
// called first, it gives the real reason before any check of what the resumed run would write.
void check_resume_keeps_inputs(const std::string& run_dir, const Config& config, const std::string& data_dir);

// What a run trains on, as run.json and checkpoints record it: generated data (null), or the
// --data folder by its absolute path and the hash of its train.src and train.trg.
nlohmann::json training_data_record(const std::string& data_dir);
// The same record with the hash of the files' bytes as read (read_samples' content_hash).
nlohmann::json training_data_record(const std::string& data_dir, const std::string& files_hash);

}  // namespace lengen
