#include "lengen/run_folder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

constexpr const char* kStepPrefix = "step_";

}  // namespace

void check_out_folder(const std::string& path, const std::string& what) {
  std::error_code error;
  if (fs::exists(path, error) && !fs::is_directory(path, error)) {
    throw UserError("--out " + path + " is a file, not a " + what);
  }
  for (fs::path above = fs::path(path).parent_path(); !above.empty() && above != above.parent_path();
       above = above.parent_path()) {
    if (fs::exists(above, error) && !fs::is_directory(above, error)) {
      throw UserError("--out " + path + ": " + above.string() + " is a file, not a folder");
    }
  }
}

std::string RunFolder::checkpoint_path(int64_t step) const {
  char name[32];
  std::snprintf(name, sizeof(name), "%s%08lld.pt", kStepPrefix, static_cast<long long>(step));
  return checkpoint_dir() + "/" + name;
}

std::vector<std::string> RunFolder::checkpoints() const {
  std::vector<std::string> paths;
  if (!fs::is_directory(checkpoint_dir())) return paths;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kStepPrefix, 0) == 0 && entry.path().extension() == ".pt") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());  // zero-padded steps sort by name
  return paths;
}

std::string RunFolder::latest_checkpoint() const {
  auto paths = checkpoints();
  return paths.empty() ? "" : paths.back();
}

void RunFolder::prune_checkpoints(int64_t keep) const {
  auto paths = checkpoints();
  for (size_t i = 0; i + static_cast<size_t>(std::max<int64_t>(keep, 1)) < paths.size(); ++i) fs::remove(paths[i]);
}

bool RunFolder::has_content() const { return fs::exists(path_) && !fs::is_empty(path_); }

bool RunFolder::is_lengen_run() const {
  std::error_code error;
  if (!fs::is_directory(path_, error)) return false;
  if (fs::is_regular_file(marker_path(), error)) return true;
  if (!fs::is_regular_file(config_path(), error) || !fs::is_regular_file(log_path(), error)) return false;
  try {
    const nlohmann::json config = read_json_file(config_path());
    return config.is_object() && config.contains("task") && config.contains("model") && config.contains("train");
  } catch (const UserError&) {
    return false;
  }
}

void RunFolder::mark() const { write_file_atomically(marker_path(), "lengen run folder\n"); }

void RunFolder::remove_for_restart() const {
  std::error_code error;
  if (fs::exists(path_, error) && !fs::is_directory(path_, error)) {
    throw UserError(path_ + " is a file, not a run folder; --force only replaces run folders lengen wrote");
  }
  if (!is_lengen_run()) {
    throw UserError(path_ + " is not a lengen run folder (no " + fs::path(marker_path()).filename().string() +
                    " or config.json + log.jsonl); --force only replaces run folders lengen wrote");
  }
  fs::remove_all(path_, error);
  if (error) throw UserError("cannot remove " + path_ + ": " + error.message());
}

JsonlLog::JsonlLog(const std::string& path, int64_t keep_through_step) {
  if (fs::exists(path)) {
    std::ifstream in(path);
    std::ostringstream kept;
    std::string line;
    for (int64_t number = 1; std::getline(in, line); ++number) {
      auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (record.is_discarded()) continue;  // a line cut short by a kill
      if (record.is_object() && record.contains("step")) {
        if (!record["step"].is_number_integer()) {
          throw UserError(path + ":" + std::to_string(number) + ": \"step\" must be an integer, got " +
                          record["step"].dump());
        }
        if (record["step"].get<int64_t>() > keep_through_step) continue;
      }
      kept << line << "\n";
    }
    write_file_atomically(path, kept.str());
  }
  out_.open(path, std::ios::app);
  if (!out_) throw UserError("cannot write " + path);
}

void JsonlLog::write(const nlohmann::json& record) {
  out_ << record.dump() << "\n";
  out_.flush();
}

}  // namespace lengen
