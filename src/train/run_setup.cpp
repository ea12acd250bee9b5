#include "run_setup.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/comparable_config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/named_entries.h"
#include "lengen/output_files.h"
#include "lengen/task_files.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// What a resumed run may change: its length, its evaluation, and the threads of the machine it
// continues on (the sweep divides a machine's threads among its jobs).
const std::vector<std::string> kKeysAResumeMayChange = {"train.steps", "train.threads", "eval",
                                                        "description"};

}  // namespace

nlohmann::json training_data_record(const std::string& data_dir, const std::string& files_hash) {
  if (data_dir.empty()) return nullptr;
  return {{"dir", fs::absolute(data_dir).lexically_normal().string()}, {"hash", files_hash}};
}

nlohmann::json training_data_record(const std::string& data_dir) {
  if (data_dir.empty()) return nullptr;
  return training_data_record(data_dir, split_files_hash(data_dir + "/train"));
}

namespace {

std::string described_data(const nlohmann::json& record) {
  return record.is_object() ? "--data " + record.value("dir", std::string("?")) + " (files with hash " +
                                  record.value("hash", std::string("?")) + ")"
                            : std::string("generated data");
}

bool same_data(const nlohmann::json& saved, const nlohmann::json& now) {
  return saved.is_object() ? now.is_object() && now.value("hash", "") == saved.value("hash", "")
                           : now.is_null();
}

// The folder a resumed run's record names when --data now brings the same files (by hash) from
// another folder (moved or copied), so that the record names where they are; "" otherwise.
std::string data_moved_from(const RunFolder& run, const nlohmann::json& now) {
  if (!now.is_object() || !fs::exists(run.training_data_path())) return "";
  const nlohmann::json saved = read_json_file(run.training_data_path());
  if (!saved.is_object() || !same_data(saved, now) || !saved.contains("dir") || !saved["dir"].is_string())
    return "";
  const std::string dir = saved["dir"].get<std::string>();
  return dir != now.value("dir", "") ? dir : "";
}

// NAME.unreadable for a checkpoint set aside, or NAME.unreadable.2, .3, ... beside one kept
// there before: an earlier one is never replaced.
std::string set_aside_name(const std::string& checkpoint) {
  std::error_code error;
  std::string name = checkpoint + ".unreadable";
  for (int n = 2; fs::exists(fs::symlink_status(name, error)); ++n)
    name = checkpoint + ".unreadable." + std::to_string(n);
  return name;
}

// A resumed run trains on what it started on: the same --data files (by content), or generated
// data when it started without --data.
void check_resume_data(const RunFolder& run, const std::string& data_dir) {
  // Without the record (deleted), the checkpoint's own says what the run trained on.
  if (!fs::exists(run.training_data_path())) return;
  const nlohmann::json now = training_data_record(data_dir);
  const nlohmann::json saved = read_json_file(run.training_data_path());
  if (same_data(saved, now)) return;
  if (saved.is_object() && now.is_object() && saved.value("dir", "") == now.value("dir", "")) {
    throw UserError(
        "cannot resume " + run.path() + ": the files in --data " + now.value("dir", std::string("?")) +
        " changed since it started (train.src and train.trg had hash " +
        saved.value("hash", std::string("?")) + ", now " + now.value("hash", std::string("?")) + ")");
  }
  throw UserError("cannot resume " + run.path() + ": it was trained on " + described_data(saved) +
                  ", not on " + described_data(now));
}

// train.steps may grow on a resume, not shrink below the newest checkpoint: the run would end
// at once and its config.json would name fewer steps than it trained.
void check_resume_steps(const RunFolder& run, int64_t steps) {
  const std::string latest = fs::path(run.latest_checkpoint()).filename().string();
  if (latest.empty()) return;  // resume_from_intact_checkpoint names the missing checkpoint
  const int64_t trained = std::stoll(latest.substr(latest.find('_') + 1));
  if (trained > steps) {
    throw UserError("cannot resume " + run.path() + " with train.steps " + std::to_string(steps) +
                    ": it has trained " + std::to_string(trained) +
                    " steps already (train.steps may grow on a resume, not shrink)");
  }
}

}  // namespace

void check_resume_keeps_inputs(const std::string& run_dir, const Config& config,
                               const std::string& data_dir) {
  // Steps first: a resume that shortens the run is named as such, before what else it would change.
  check_resume_steps(RunFolder(run_dir), config.train.steps);
  const RunFolder run(run_dir);
  check_resume_data(run, data_dir);
  // A task parameter's default written out changes nothing (an unread key changed is refused: the
  // checkpoint's model section is compared as written).
  const auto differs = first_config_difference(resolved_config_json(read_json_file(run.config_path())),
                                               resolved_config_json(config), kKeysAResumeMayChange);
  if (!differs.empty()) {
    throw UserError("cannot resume " + run.path() + ": config key '" + differs +
                    "' differs from the run's config.json (a resumed run keeps its config; only " +
                    joined_names(kKeysAResumeMayChange) + " may change)");
  }
}

std::unique_ptr<FolderLock> prepare_run_folder(const RunFolder& run, const Config& config,
                                               const TrainOptions& options, const nlohmann::json& data_record,
                                               bool writer) {
  const auto resolved = config_to_json(config);
  check_out_folder(run.path(), "run folder");
  // A run inside another run's folder (its checkpoints/) would pass for part of that run.
  check_out_is_not_in_a_run(run.path(), {run.path()});
  std::unique_ptr<FolderLock> lock;
  if (options.resume) {
    // Only a run lengen started is continued, and nothing is written into a folder that turns
    // out not to be one: a copied config.json does not make a user's folder a run.
    if (run.has_content() && !run.is_lengen_run()) {
      throw UserError("cannot resume " + run.path() + ": it is not a lengen run folder (no " +
                      fs::path(run.marker_path()).filename().string() +
                      "); lengen resumes only runs it started: choose another --out");
    }
    if (!fs::exists(run.config_path())) {
      // --force would delete checkpoints a lost config.json leaves behind: not the advice then.
      throw UserError(
          "cannot resume " + run.path() + ": it has no config.json " +
          (run.checkpoints().empty()
               ? std::string("(start it without --resume)")
               : "but has checkpoints: put its config.json back (the config it was started with, as "
                 "`lengen config show CONFIG --set ...` prints it) to resume them"));
    }
    // Checked under the lock: a run another process is training is neither compared nor touched
    // (and is named as in use, even before its first checkpoint).
    if (writer) lock = std::make_unique<FolderLock>(run.path());
    std::error_code error;
    if (fs::exists(run.checkpoint_dir(), error) && !fs::is_directory(run.checkpoint_dir(), error))
      throw UserError("cannot resume " + run.path() + ": " + run.checkpoint_dir() + " is not a folder");
    if (run.checkpoints().empty())
      throw UserError("cannot resume " + run.path() + ": it has no checkpoint yet");
    check_resume_steps(run, config.train.steps);
    check_resume_keeps_inputs(run.path(), config, options.data_dir);
  } else {
    // A folder of the user's is refused before its lock is taken: the lock file would be written
    // into it (over a file of that name).
    if (run.has_content() && !run.not_replaceable_reason().empty()) {
      // Neither --resume nor --force takes a folder lengen did not make: the way out is another --out.
      throw UserError(run.path() + " is not a lengen run folder (" + run.not_replaceable_reason() + ")" +
                      (options.force
                           ? "; --force only replaces run folders lengen wrote"
                           : " and holds files; lengen trains into a new folder or a run of its own") +
                      ": choose another --out");
    }
    if (writer) {
      fs::create_directories(run.path());
      lock = std::make_unique<FolderLock>(run.path());
    }
    if (run.has_content()) {
      if (!options.force && run.is_lengen_run() && run.checkpoints().empty()) {
        // A start that failed before its first checkpoint: nothing to resume.
        throw UserError(
            "run folder " + run.path() +
            " was started but holds no checkpoint (a start that failed); use --force to start it over");
      }
      if (!options.force) {
        throw UserError("run folder " + run.path() +
                        " already exists; use --resume to continue it or --force to start over");
      }
      if (writer) run.remove_for_restart();  // refuses a folder without lengen's marker
    }
  }
  // Every rank has checked the folder before rank 0 writes into it; otherwise a slower rank
  // would find rank 0's config.json and refuse the folder.
  if (options.group != nullptr) {
    std::vector<torch::Tensor> barrier{torch::zeros({1})};
    options.group->all_reduce_sum(barrier);
  }
  if (!writer) return lock;
  fs::create_directories(run.checkpoint_dir());
  run.mark(/*fresh=*/!options.resume);
  // A resume may change the description (the config given says it); the one it replaces is said.
  if (options.resume) {
    const nlohmann::json before = read_json_file(run.config_path());
    const nlohmann::json said =
        before.is_object() ? before.value("description", nlohmann::json("")) : nlohmann::json("");
    if (said != resolved.value("description", nlohmann::json("")))
      spdlog::info("{}: description {} replaced by the config's {}", run.config_path(), said.dump(),
                   resolved.value("description", nlohmann::json("")).dump());
  }
  write_file_atomically(run.config_path(), resolved.dump(2) + "\n");
  if (!options.resume && !options.data_dir.empty()) {
    write_file_atomically(run.training_data_path(), data_record.dump(2) + "\n");
  } else if (const std::string moved_from = data_moved_from(run, data_record); !moved_from.empty()) {
    write_file_atomically(run.training_data_path(), data_record.dump(2) + "\n");
    spdlog::info("{}: its training files, in {} when it started, are now read from {}; {} names that folder",
                 run.path(), moved_from, data_record.value("dir", ""), run.training_data_path());
  }
  return lock;
}

TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, const Config& config,
                                               const nlohmann::json& data_record, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer) {
  const std::vector<std::string> checkpoints = run.checkpoints();
  if (checkpoints.empty()) throw UserError("cannot resume " + run.path() + ": it has no checkpoint yet");
  // Unreadable newer checkpoints are set aside only once an older one resumes: a refused resume
  // leaves the folder as it was.
  std::vector<std::string> unreadable;
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    try {
      TrainingProgress progress = load_checkpoint(*it, model, &optimizer);
      check_checkpoint_is_runs(*it, progress, run);
      if (!progress.training_data.empty()) {
        const auto saved = nlohmann::json::parse(progress.training_data, nullptr, /*allow_exceptions=*/false);
        const nlohmann::json& now = data_record;
        if (!saved.is_discarded() && !same_data(saved, now)) {
          throw UserError("cannot resume " + run.path() + ": its checkpoint " + *it + " was trained on " +
                          described_data(saved) + ", not on " + described_data(now));
        }
      }
      // config.json edited to match a --set (another lr, another seed) passes the config check
      // above; the checkpoint says what it was trained with.
      try {
        check_checkpoint_trained_as(*it, progress, config);
      } catch (const UserError& e) {
        throw UserError("cannot resume " + run.path() + ": " + e.what());
      }
      if (writer) {
        for (const std::string& damaged : unreadable) {
          const std::string aside = set_aside_name(damaged);
          spdlog::warn("{} is unreadable; kept as {}, resuming from {} instead", damaged, aside, *it);
          std::error_code ignored;
          fs::rename(damaged, aside, ignored);
        }
        spdlog::info("resuming {} from step {} ({})", run.path(), progress.step, *it);
      }
      return progress;
    } catch (const CheckpointUnreadable& e) {
      if (std::next(it) == checkpoints.rend()) {
        throw UserError("cannot resume " + run.path() + ": no intact checkpoint (" + e.what() + ")");
      }
      unreadable.push_back(*it);
    }
  }
  return {};
}

}  // namespace lengen
