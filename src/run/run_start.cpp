#include "lengen/run_start.h"

#include <filesystem>
#include <string>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/build_info.h"
#include "lengen/comparable_config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/named_entries.h"
#include "lengen/output_files.h"
#include "lengen/run_record.h"
#include "lengen/task_files.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// What a resumed run may change: its length, its evaluation, and the threads of the machine it
// continues on (the sweep divides a machine's threads among its jobs).
const std::vector<std::string> kKeysAResumeMayChange = {"train.steps", "train.threads", "eval",
                                                        "description"};

// A resumed run trains on what it started on: the same --data files (by content), or generated
// data when it started without --data.
void check_resume_data(const RunFolder& run, const std::string& data_dir) {
  const auto record = read_run_record(run.path());
  if (!record) return;
  const nlohmann::json now = training_data_record(data_dir);
  const nlohmann::json& saved = record->training_data;
  const auto text = [](const nlohmann::json& data) {
    return data.is_object() ? "--data " + data.value("dir", std::string("?")) + " (files with hash " +
                                  data.value("hash", std::string("?")) + ")"
                            : std::string("generated data");
  };
  if (saved.is_object() ? now.is_object() && now.value("hash", "") == saved.value("hash", "") : now.is_null())
    return;
  throw UserError("cannot resume " + run.path() + ": it was trained on " + text(saved) + ", not on " + text(now));
}

}  // namespace

nlohmann::json training_data_record(const std::string& data_dir, const std::string& files_hash) {
  if (data_dir.empty()) return nullptr;
  return {{"dir", resolved_path(data_dir)}, {"hash", files_hash}};
}

nlohmann::json training_data_record(const std::string& data_dir) {
  if (data_dir.empty()) return nullptr;
  return training_data_record(data_dir, split_files_hash(data_dir + "/train"));
}

// Steps first: train.steps may grow on a resume, not shrink below the newest checkpoint (the run
// would end at once, its config.json naming fewer steps than it trained); then data and config.
static void check_resume_keeps_inputs(const RunFolder& run, const Config& config,
                                      const std::string& data_dir) {
  if (const int64_t trained = run.latest_step(); trained > config.train.steps) {
    throw UserError("cannot resume " + run.path() + " with train.steps " +
                    std::to_string(config.train.steps) + ": it has trained " + std::to_string(trained) +
                    " steps already (train.steps may grow on a resume, not shrink)");
  }
  check_resume_data(run, data_dir);
  // A task parameter's default written out changes nothing (an unread key changed is refused: the
  // checkpoint's model section is compared as written).
  const nlohmann::json saved = read_json_file(run.config_path());
  const auto differs = first_config_difference(resolved_config_json(saved), resolved_config_json(config),
                                               kKeysAResumeMayChange);
  if (!differs.empty()) {
    throw UserError("cannot resume " + run.path() + ": config key '" + differs +
                    "' differs from the run's config.json (a resumed run keeps its config; only " +
                    joined_names(kKeysAResumeMayChange) + " may change)");
  }
}

std::unique_ptr<FolderLock> check_run_folder_at_start(const RunFolder& run, const Config& config,
                                                     const RunStart& start, bool writer) {
  check_output_folder_path(run.path(), "run folder");
  // Only a folder lengen made is continued or started over, and a user's folder is refused before
  // its lock is taken: the lock file would be written into it. A copied config.json makes no run.
  if (run.has_content() && !run.is_lengen_run()) {
    throw UserError(run.path() + " is not a lengen run folder (no " + kRunRecordName +
                    ") and holds files; lengen trains, resumes or --forces only runs it started: choose "
                    "another --out");
  }
  std::unique_ptr<FolderLock> lock;
  if (start.resume) {
    if (!fs::exists(run.config_path()))
      throw UserError("cannot resume " + run.path() + ": it has no config.json");
    // Checked under the lock: a run another process is training is neither compared nor touched
    // (and is named as in use, even before its first checkpoint).
    if (writer) lock = std::make_unique<FolderLock>(run.path());
    if (run.checkpoints().empty())
      throw UserError("cannot resume " + run.path() + ": it has no checkpoint yet (--force starts it over)");
    check_resume_keeps_inputs(run, config, start.data_dir);
  } else {
    if (writer) {
      fs::create_directories(run.path());
      lock = std::make_unique<FolderLock>(run.path());
    }
    if (run.has_content() && !start.force) {
      // A start that failed before its first checkpoint has nothing to resume (a run evaluated and
      // kept without its checkpoints is no failed start).
      throw UserError("run folder " + run.path() +
                      (run.is_lengen_run() && run.checkpoints().empty() && !fs::exists(run.results_path())
                           ? " was started but holds no checkpoint (a start that failed); use --force to "
                             "start it over"
                           : " already exists; use --resume to continue it or --force to start over"));
    }
    if (run.has_content() && writer) run.remove_for_restart();  // a lengen run: refused above otherwise
  }
  return lock;
}

std::string write_run_start(const RunFolder& run, const Config& config, bool resume,
                            const nlohmann::json& data_record) {
  fs::create_directories(run.checkpoint_dir());
  // A resumed run keeps its id (its checkpoints carry it) and names where its files are now.
  const auto before = resume ? read_run_record(run.path()) : std::nullopt;
  const std::string run_id = before && !before->run_id.empty() ? before->run_id : new_run_id();
  // Another build or machine going on is added to the record; the same one again is not.
  const std::string here = build_and_machine(), earlier = before ? before->trained_by : "";
  const bool same = earlier.size() >= here.size() && earlier.substr(earlier.size() - here.size()) == here;
  const std::string trained_by = earlier.empty() ? here : same ? earlier : earlier + "; resumed by " + here;
  write_run_record(run.path(), {run_id, data_record, trained_by});
  write_file_atomically(run.config_path(), config_to_json(config).dump(2) + "\n");
  return run_id;
}

}  // namespace lengen
