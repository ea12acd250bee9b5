#include "lengen/run_folder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/file_removal.h"
#include "lengen/folder_lock.h"
#include "lengen/json_file.h"
#include "lengen/output_files.h"
#include "lengen/run_record.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

constexpr const char* kStepPrefix = "step_";
constexpr size_t kStepDigits = 8;

bool all_digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// A temporary file of write_file_atomically beside NAME: NAME.PID-N.tmp.
bool is_temporary_of(const std::string& file, const std::string& name) {
  const std::string suffix = ".tmp";
  if (file.size() <= name.size() + suffix.size() + 1 || file.compare(0, name.size() + 1, name + ".") != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  const std::string middle = file.substr(name.size() + 1, file.size() - name.size() - 1 - suffix.size());
  const size_t dash = middle.find('-');
  return dash != std::string::npos && all_digits(middle.substr(0, dash)) &&
         all_digits(middle.substr(dash + 1));
}

// A name training writes into checkpoints/: a step checkpoint, best.pt, one set aside as
// unreadable, or the temporary file of one of them.
bool is_lengen_checkpoint_file(const std::string& name) {
  if (is_step_checkpoint_name(name) || name == "best.pt") return true;
  const std::string unreadable = ".unreadable";
  if (name.size() > unreadable.size() &&
      name.compare(name.size() - unreadable.size(), unreadable.size(), unreadable) == 0) {
    const std::string kept = name.substr(0, name.size() - unreadable.size());
    return is_step_checkpoint_name(kept) || kept == "best.pt";
  }
  const size_t dot = name.find(".pt.");
  return dot != std::string::npos && is_lengen_checkpoint_file(name.substr(0, dot + 3)) &&
         is_temporary_of(name, name.substr(0, dot + 3));
}

}  // namespace

bool is_step_checkpoint_name(const std::string& name) {
  const size_t prefix = std::string(kStepPrefix).size();
  return name.size() == prefix + kStepDigits + 3 && name.compare(0, prefix, kStepPrefix) == 0 &&
         all_digits(name.substr(prefix, kStepDigits)) && name.compare(prefix + kStepDigits, 3, ".pt") == 0;
}

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
    if (is_step_checkpoint_name(name) && entry.is_regular_file()) paths.push_back(entry.path().string());
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
  return std::stoll(
      fs::path(latest).filename().string().substr(std::string(kStepPrefix).size(), kStepDigits));
}

bool RunFolder::training_completed(int64_t steps) const {
  const std::string latest = latest_checkpoint();
  return !latest.empty() && latest == checkpoint_path(steps);
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

std::string RunFolder::run_id() const {
  const auto record = read_run_record(path_);
  return record ? record->run_id : "";
}

std::filesystem::path run_folder_at_or_above(const std::filesystem::path& folder) {
  for (std::filesystem::path at = folder; !at.empty(); at = at.parent_path()) {
    if (RunFolder(at.string()).is_lengen_run()) return at;
    if (at == at.parent_path()) break;
  }
  return {};
}

void RunFolder::remove_for_restart() const {
  std::error_code error;
  if (fs::exists(path_, error) && !fs::is_directory(path_, error)) {
    throw UserError(path_ + " is a file, not a run folder; --force only replaces run folders lengen wrote");
  }
  if (!is_lengen_run()) {
    throw UserError(path_ + " is not a lengen run folder (no " + kRunRecordName +
                    "); --force only replaces run folders lengen wrote");
  }
  // A linked checkpoints/ points out of the run folder: what lies behind it is not this run's to delete.
  if (fs::is_symlink(checkpoint_dir(), error)) {
    throw UserError(checkpoint_dir() + " is a link to " + fs::read_symlink(checkpoint_dir(), error).string() +
                    "; --force does not delete through links out of the run folder (remove the link first)");
  }
  // A file in checkpoints/'s place would stop the restart after the rest was deleted.
  if (fs::exists(fs::symlink_status(checkpoint_dir(), error)) && !fs::is_directory(checkpoint_dir(), error)) {
    throw UserError(checkpoint_dir() +
                    " is not a folder; --force replaces a run folder whose checkpoints/ is "
                    "one lengen made (move that file away first); nothing was deleted");
  }
  // A folder in the place of a file lengen writes (a user's, or made by hand) would stop the
  // restart halfway: refused before anything is deleted.
  for (const std::string name : {"config.json", "log.jsonl", "results.json"}) {
    const fs::path file = fs::path(path_) / name;
    if (fs::is_directory(fs::symlink_status(file, error))) {
      throw UserError(file.string() +
                      " is a folder; --force replaces only the files lengen writes (move it "
                      "away first); nothing was deleted");
    }
  }
  // Only the names training and evaluation write; anything else a user put there stays. The
  // names lengen writes beside them (a stopped writer's temporary file, a damaged checkpoint set
  // aside) are said as they go: a file of the user's could carry such a name.
  FileRemoval removal("--force");
  const auto remove = [&](const fs::path& file) { removal.remove(file); };
  const auto remove_said = [&](const fs::path& file, const char* what) {
    remove(file);
    spdlog::info("removed {}: {}", file.string(), what);
  };
  for (const std::string name : {"config.json", "log.jsonl", "results.json"}) {
    for (const auto& entry : fs::directory_iterator(path_)) {
      const std::string file = entry.path().filename().string();
      if (file == name) remove(entry.path());
      if (is_temporary_of(file, name))
        remove_said(entry.path(), "the temporary file of a lengen that stopped while writing");
    }
  }
  // A report or attention page of the run it was is not one of the new run's.
  remove_listed_output_files(path_);
  if (fs::is_directory(checkpoint_dir(), error)) {
    for (const auto& entry : fs::directory_iterator(checkpoint_dir())) {
      const std::string file = entry.path().filename().string();
      if (is_step_checkpoint_name(file) || file == "best.pt") {
        remove(entry.path());
      } else if (is_lengen_checkpoint_file(file)) {
        remove_said(entry.path(), file.find(".unreadable") != std::string::npos
                                      ? "a damaged checkpoint lengen set aside"
                                      : "the temporary file of a lengen that stopped while writing");
      }
    }
    if (fs::is_empty(checkpoint_dir(), error)) remove(checkpoint_dir());
  }
}

JsonlLog::JsonlLog(const std::string& path, int64_t keep_through_step, const std::string& run_id) {
  if (!fs::exists(path) && !run_id.empty()) {
    write_file_atomically(path, nlohmann::json{{"run_id", run_id}}.dump() + "\n");
  } else if (fs::exists(path)) {
    // A FIFO or device in the log's place is refused, not waited on.
    const std::string text = read_text_file(path, "training log");
    const bool cut_short = !text.empty() && text.back() != '\n';
    std::istringstream in(text);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::ostringstream kept;
    for (int64_t number = 1; number <= static_cast<int64_t>(lines.size()); ++number) {
      const std::string& line = lines[static_cast<size_t>(number - 1)];
      auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      // The last line cut short by a kill (no newline after it, a record begun: lengen's lines
      // start with '{') goes; another line that is no JSON (a note of the user's, with or without
      // its newline) stays, as the report reads past it.
      if (record.is_discarded() && cut_short && number == static_cast<int64_t>(lines.size()) &&
          line.rfind('{', 0) == 0)
        continue;
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
