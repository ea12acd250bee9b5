#pragma once
// A run is a folder: config.json (resolved), log.jsonl (one JSON object per line),
// checkpoints/step_NNNNNNNN.pt (the latest few) and best.pt, results.json after eval.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace lengen {

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

  // Checkpoints by step, oldest first.
  std::vector<std::string> checkpoints() const;
  // The newest checkpoint, or "" when there is none.
  std::string latest_checkpoint() const;
  // Deletes all but the newest `keep` step checkpoints (best.pt is kept).
  void prune_checkpoints(int64_t keep) const;

  // True when the folder exists and holds anything.
  bool has_content() const;

 private:
  std::string path_;
};

// Writes `text` to `path` through a temp file and a rename.
void write_file_atomically(const std::string& path, const std::string& text);

nlohmann::json read_json_file(const std::string& path);

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
