#include "run_setup.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// What a resumed run may change: its length and its evaluation.
const std::vector<std::string> kKeysAResumeMayChange = {"train.steps", "eval", "description"};

}  // namespace

void prepare_run_folder(const RunFolder& run, const Config& config, const TrainOptions& options, bool writer) {
  const auto resolved = config_to_json(config);
  check_out_folder(run.path(), "run folder");
  if (options.resume) {
    if (!fs::exists(run.config_path())) {
      throw UserError("cannot resume " + run.path() + ": it has no config.json (start it without --resume)");
    }
    auto saved = read_json_file(run.config_path());
    const auto differs = first_config_difference(saved, resolved, kKeysAResumeMayChange);
    if (!differs.empty()) {
      throw UserError("cannot resume " + run.path() + ": config key '" + differs +
                      "' differs from the run's config.json");
    }
  } else {
    if (run.has_content()) {
      if (!options.force) {
        throw UserError("run folder " + run.path() +
                        " already exists; use --resume to continue it or --force to start over");
      }
      if (!run.is_lengen_run()) {
        throw UserError(run.path() + " is not a lengen run folder (no " +
                        fs::path(run.marker_path()).filename().string() +
                        "); --force only replaces run folders lengen wrote");
      }
      if (writer) run.remove_for_restart();
    }
  }
  // Every rank has checked the folder before rank 0 writes into it; otherwise a slower rank
  // would find rank 0's config.json and refuse the folder.
  if (options.group != nullptr) {
    std::vector<torch::Tensor> barrier{torch::zeros({1})};
    options.group->all_reduce_sum(barrier);
  }
  if (!writer) return;
  fs::create_directories(run.checkpoint_dir());
  run.mark();
  write_file_atomically(run.config_path(), resolved.dump(2) + "\n");
}

TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer) {
  const std::vector<std::string> checkpoints = run.checkpoints();
  if (checkpoints.empty()) throw UserError("cannot resume " + run.path() + ": it has no checkpoint yet");
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    try {
      TrainingProgress progress = load_checkpoint(*it, model, &optimizer);
      if (writer) spdlog::info("resuming {} from step {} ({})", run.path(), progress.step, *it);
      return progress;
    } catch (const CheckpointUnreadable& e) {
      if (std::next(it) == checkpoints.rend()) {
        throw UserError("cannot resume " + run.path() + ": no intact checkpoint (" + e.what() + ")");
      }
      if (writer) {
        spdlog::warn("{}; kept as {}.unreadable, resuming from {} instead", e.what(), *it, *std::next(it));
        std::error_code ignored;
        fs::rename(*it, *it + ".unreadable", ignored);
      }
    }
  }
  return {};
}

}  // namespace lengen
