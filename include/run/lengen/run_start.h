#pragma once
// A run folder at the start of training: checked against --resume / --force before anything is
// written, then its run.json and config.json written (every rank checks; rank 0 locks and writes).
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
// empties. A resume: refuses fewer train.steps than its newest checkpoint, other data, or a config
// that differs in a key a resume may not change. The `writer` gets the run's lock back.
std::unique_ptr<FolderLock> check_run_folder_at_start(const RunFolder& run, const Config& config,
                                                   const RunStart& start, bool writer);

// Writes run.json (a new run id, or the resumed run's) and config.json. `data_record` is
// training_data_record of the data as training read it. Returns the run id it recorded.
std::string write_run_start(const RunFolder& run, const Config& config, bool resume,
                            const nlohmann::json& data_record);

// What a run trains on, as run.json records it: generated data (null), or the --data folder
// (resolved_path) and the hash of its train.src and train.trg; or of `files_hash`, the bytes read.
nlohmann::json training_data_record(const std::string& data_dir);
nlohmann::json training_data_record(const std::string& data_dir, const std::string& files_hash);

}  // namespace lengen
