#include "lengen/run_folder.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/folder_lock.h"
#include "lengen/json_file.h"
#include "lengen/output_files.h"
#include "lengen/run_record.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// Names lengen writes, and their temporary files (write_file_atomically's NAME.PID-N.tmp): a step
// checkpoint, best.pt or one set aside as unreadable in checkpoints/; the run's own files beside it.
const std::regex kStepCheckpoint(R"(step_\d{8}\.pt)");
const std::regex kCheckpointFile(R"((step_\d{8}|best)\.pt(\.unreadable(\.\d+)?)?(\.\d+-\d+\.tmp)?)");
const std::regex kRunFile(R"((config\.json|log\.jsonl|results\.json)(\.\d+-\d+\.tmp)?)");

}  // namespace

std::string resolved_path(const std::string& path) {
  std::error_code error;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(path), error);
  return (error ? fs::absolute(path).lexically_normal() : resolved).string();
}

std::string RunFolder::checkpoint_path(int64_t step) const {
  return checkpoint_dir() + fmt::format("/step_{:08d}.pt", step);
}

std::vector<std::string> RunFolder::checkpoints() const {
  std::vector<std::string> paths;
  if (!fs::is_directory(checkpoint_dir())) return paths;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir())) {
    if (std::regex_match(entry.path().filename().string(), kStepCheckpoint) && entry.is_regular_file())
      paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());  // zero-padded steps sort by name
  return paths;
}

std::string RunFolder::latest_checkpoint() const {
  auto paths = checkpoints();
  return paths.empty() ? "" : paths.back();
}

int64_t RunFolder::latest_step() const {
  const std::string latest = latest_checkpoint();
  if (latest.empty()) return 0;
  return std::stoll(fs::path(latest).filename().string().substr(5, 8));
}

void RunFolder::prune_checkpoints(int64_t keep) const {
  const auto paths = checkpoints();
  for (size_t i = 0; i + static_cast<size_t>(std::max<int64_t>(keep, 1)) < paths.size(); ++i) fs::remove(paths[i]);
}

bool RunFolder::has_content() const {
  std::error_code error;
  if (!fs::is_directory(path_, error)) return fs::exists(path_, error);
  // lengen's lock and an empty checkpoints/ are what a start that failed before its record (a
  // full disk) leaves: nothing of anyone's, so the folder may be started again.
  for (const auto& entry : fs::directory_iterator(path_)) {
    if (entry.path().filename() == FolderLock::kFileName) continue;
    if (entry.path().filename() == "checkpoints" && fs::is_directory(entry.path(), error) &&
        !fs::is_symlink(entry.path(), error) && fs::is_empty(entry.path(), error)) {
      continue;
    }
    return true;
  }
  return false;
}

bool RunFolder::is_lengen_run() const {
  std::error_code error;
  return fs::is_directory(path_, error) && read_run_record(path_).has_value();
}

void RunFolder::remove_for_restart() const {
  std::error_code error;
  // A linked checkpoints/ points out of the run folder: what lies behind it is not this run's to delete.
  if (fs::is_symlink(checkpoint_dir(), error)) {
    throw UserError(checkpoint_dir() + " is a link to " + fs::read_symlink(checkpoint_dir(), error).string() +
                    "; --force does not delete through links out of the run folder (remove the link first)");
  }
  // Only the names training and evaluation write; anything else a user put there stays.
  for (const auto& entry : fs::directory_iterator(path_)) {
    if (std::regex_match(entry.path().filename().string(), kRunFile)) fs::remove(entry.path());
  }
  // A report or attention page of the run it was is not one of the new run's.
  remove_listed_output_files(path_);
  if (fs::is_directory(checkpoint_dir(), error)) {
    for (const auto& entry : fs::directory_iterator(checkpoint_dir())) {
      if (std::regex_match(entry.path().filename().string(), kCheckpointFile)) fs::remove(entry.path());
    }
    if (fs::is_empty(checkpoint_dir(), error)) fs::remove(checkpoint_dir());
  }
}

JsonlLog::JsonlLog(const std::string& path, int64_t keep_through_step) {
  if (fs::exists(path)) {
    const std::string text = read_text_file(path, "training log");
    std::istringstream in(text);
    std::string kept;
    for (std::string line; std::getline(in, line);) {
      const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      // A last line cut short by a kill, and the records after the checkpoint's step, go.
      if (record.is_object() && record.value("step", int64_t{0}) <= keep_through_step) kept += line + "\n";
    }
    write_file_atomically(path, kept);
  }
  out_.open(path, std::ios::app);
  if (!out_) throw UserError("cannot write " + path);
}

void JsonlLog::write(const nlohmann::json& record) {
  out_ << record.dump() << "\n";
  out_.flush();
}

}  // namespace lengen
