#include "run_setup.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// NAME.unreadable for a checkpoint set aside, or NAME.unreadable.2, .3, ... beside one kept
// there before: an earlier one is never replaced.
std::string set_aside_name(const std::string& checkpoint) {
  std::error_code error;
  std::string name = checkpoint + ".unreadable";
  for (int n = 2; fs::exists(fs::symlink_status(name, error)); ++n)
    name = checkpoint + ".unreadable." + std::to_string(n);
  return name;
}

// best.pt as the stopped process may have left it: written at a validation after the checkpoint
// this run resumes from, it is of steps the resumed run will not take (another train.steps takes
// others), so it goes. One of the run's history (the best as of that checkpoint) stays.
void remove_best_of_steps_not_taken(const RunFolder& run, const TrainingProgress& resumed) {
  if (!fs::exists(run.best_checkpoint_path())) return;
  int64_t step = 0;
  try {
    step = read_checkpoint_record(run.best_checkpoint_path()).step;
  } catch (const CheckpointUnreadable&) {
    return;
  }
  if (step == resumed.best_step) return;
  fs::remove(run.best_checkpoint_path());
  spdlog::info("removed {} (step {}): written after step {}, which the run resumes from",
               run.best_checkpoint_path(), step, resumed.step);
}

}  // namespace

TrainingProgress resume_from_intact_checkpoint(const RunFolder& run, Decoder& model,
                                               torch::optim::Optimizer& optimizer, bool writer) {
  const std::vector<std::string> checkpoints = run.checkpoints();
  if (checkpoints.empty()) throw UserError("cannot resume " + run.path() + ": it has no checkpoint yet");
  // Unreadable newer checkpoints are set aside only once an older one resumes: a refused resume
  // leaves the folder as it was.
  std::vector<std::string> unreadable;
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    try {
      TrainingProgress progress = load_checkpoint(*it, model, &optimizer);
      if (writer) {
        for (const std::string& damaged : unreadable) {
          const std::string aside = set_aside_name(damaged);
          spdlog::warn("{} is unreadable; kept as {}, resuming from {} instead", damaged, aside, *it);
          std::error_code ignored;
          fs::rename(damaged, aside, ignored);
        }
        spdlog::info("resuming {} from step {} ({})", run.path(), progress.step, *it);
        remove_best_of_steps_not_taken(run, progress);
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
