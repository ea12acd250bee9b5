#pragma once
// A run folder (run.json, config.json, log.jsonl, checkpoints/, results.json, .lengen_lock). Only
// names of exactly these forms are read, pruned or deleted; a user's files are left alone.
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lengen/json_file.h"

namespace lengen {

// `path` absolute with links resolved, so "d", "d/" and a link to d name one folder.
std::string resolved_path(const std::string& path);

class RunFolder {
 public:
  explicit RunFolder(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  std::string config_path() const { return path_ + "/config.json"; }
  std::string log_path() const { return path_ + "/log.jsonl"; }
  std::string results_path() const { return path_ + "/results.json"; }
  std::string checkpoint_dir() const { return path_ + "/checkpoints"; }
  std::string checkpoint_path(int64_t step) const;
  std::string best_checkpoint_path() const { return checkpoint_dir() + "/best.pt"; }

  // Step checkpoints (step_NNNNNNNN.pt exactly), oldest first.
  std::vector<std::string> checkpoints() const;
  // The newest checkpoint, or "" when there is none.
  std::string latest_checkpoint() const;
  // The step of the newest checkpoint (from its name), or 0 when there is none.
  int64_t latest_step() const;
  // Deletes all but the newest `keep` step checkpoints (best.pt is kept).
  void prune_checkpoints(int64_t keep) const;

  // True when the folder exists and holds anything but its lock file.
  bool has_content() const;

  // True when lengen made this folder as a run folder: it holds a run record.
  bool is_lengen_run() const;
  // Empties the run for `--force`: deletes the files training and evaluation write and the pages
  // in .lengen_outputs, keeping the record, the lock and anything else. Call it on a lengen run only.
  void remove_for_restart() const;

 private:
  std::string path_;
};

// Appends JSON lines; on resume, lines logged after the checkpoint's step are dropped first
// so the log tells one consistent history.
class JsonlLog {
 public:
  JsonlLog(const std::string& path, int64_t keep_through_step);
  void write(const nlohmann::json& record);

 private:
  std::ofstream out_;
};

}  // namespace lengen
