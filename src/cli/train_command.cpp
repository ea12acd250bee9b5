// `lengen train CONFIG --out runs/NAME`: trains one model into a run folder.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "lengen/config_io.h"
#include "lengen/device.h"
#include "lengen/errors.h"
#include "lengen/evaluation.h"
#include "lengen/process_group.h"
#include "lengen/rank_agreement.h"
#include "lengen/run_folder.h"
#include "lengen/stop_signals.h"
#include "lengen/task_files.h"
#include "lengen/thread_waits.h"
#include "lengen/trainer.h"

namespace lengen::cli {

namespace {

struct TrainArgs {
  std::string config_path;
  std::string out;
  std::vector<std::string> overrides;
  std::string data_dir;
  bool resume = false;
  bool force = false;
};

// A resumed run keeps its config.json's steps and intervals unless the command line sets them (a
// resume that forgot a short start's --set train.steps would train on); returns the line saying so.
std::string keep_the_runs_schedule(const RunFolder& run, const std::vector<std::string>& overrides,
                                   Config& config) {
  const Config started = load_config(run.config_path());
  const auto set_here = [&](const std::string& key) {
    return std::any_of(overrides.begin(), overrides.end(),
                       [&](const std::string& assignment) { return assignment.rfind(key + "=", 0) == 0; });
  };
  std::string note;
  if (!set_here("train.steps") && config.train.steps != started.train.steps) {
    note = fmt::format("resuming {} to its config.json's {} steps (--set train.steps={} for the file's)",
                       run.path(), started.train.steps, config.train.steps);
    config.train.steps = started.train.steps;
  }
  if (!set_here("train.warmup")) config.train.warmup = started.train.warmup;
  if (!set_here("train.eval_every")) config.train.eval_every = started.train.eval_every;
  if (!set_here("train.checkpoint_every")) config.train.checkpoint_every = started.train.checkpoint_every;
  if (!set_here("train.log_every")) config.train.log_every = started.train.log_every;
  // A run stopped early and resumed to fewer steps than its warmup is refused, as at a start.
  validate_config(config, "resuming " + run.path() + " with its config.json's schedule");
  return note;
}

void run_train(const TrainArgs& args) {
  std::string scaled;
  Config config = load_config(args.config_path, args.overrides, &scaled);
  sleep_idle_threads_for(static_cast<int>(config.train.threads));
  const RunFolder run(args.out);
  // (A folder lengen did not start is refused as such when training prepares it.)
  const bool resumes_a_run =
      args.resume && run.is_lengen_run() && std::filesystem::is_regular_file(run.config_path());
  // From here to the end of the final evaluation a stop signal is a request to stop (the
  // trainer checkpoints, the evaluation gives up), never a kill mid-write.
  const StopSignals stop_signals;
  TrainOptions options;
  options.run_dir = args.out;
  options.resume = args.resume;
  options.force = args.force;
  options.data_dir = args.data_dir;
  options.start_note = resumes_a_run ? keep_the_runs_schedule(run, args.overrides, config) : scaled;
  // Launched by `lengen launch`, torchrun or srun: one rank of a data-parallel group.
  std::unique_ptr<DataParallel> group;
  TrainResult result;
  try {
    if (auto group_options = process_group_options_from_env(resolve_device(config.train.device).type())) {
      check_batch_splits_over(config.train, group_options->world_size);
      group_options->agreement = rank_agreement(config, args.data_dir, args.resume);
      group_options->difference = rank_agreement_difference;
      group = join_process_group(*group_options);
    }
    options.group = group.get();
    if (group != nullptr && group->rank() != 0) spdlog::set_level(spdlog::level::warn);
    result = train(config, options);
  } catch (const DataParallelError& error) {
    std::cerr << "lengen: data-parallel error: " << error.what() << "\n";
    throw ExitWith{1};
  }
  if (result.interrupted) {
    // The command to go on, as typed: one without the --set train.steps of its start would train on
    // to the config file's steps.
    std::string again = "lengen train " + shell_word(args.config_path) + " --out " + shell_word(args.out);
    if (!args.data_dir.empty()) again += " --data " + shell_word(args.data_dir);
    for (const std::string& set : args.overrides) again += " --set " + shell_word(set);
    spdlog::info("resume with: {} --resume", again);
    throw ExitWith{kInterruptedExitCode};
  }
  // Rank 0 holds the run folder; the other ranks' work ends with training.
  if (group != nullptr && group->rank() != 0) return;
  spdlog::info("{} trained to step {}", args.out, result.steps_done);
  // A finished run is evaluated at once; results.json also marks it finished for sweeps. A resumed
  // one keeps the lengths its stopped evaluation measured.
  const bool data_has_tests = !args.data_dir.empty() && !list_eval_splits(args.data_dir).empty();
  const RunEvaluation evaluation = evaluate_run(config, args.out, name_of(config.eval.checkpoint),
                                                data_has_tests ? args.data_dir : "", args.resume);
  std::cout << results_table(evaluation.results, config.task.len_max);
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "Train a model from a JSON config into a run folder");
  cmd->add_option("config", args->config_path, "Config file (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "Run folder, e.g. runs/copy_asentmax")->required();
  cmd->add_option("--set", args->overrides, "Override a config key: key.path=value (repeatable)");
  cmd->add_option("--data", args->data_dir, "Train on DIR/train.src/.trg instead of generated data");
  auto* resume = cmd->add_flag("--resume", args->resume, "Continue the run from its latest checkpoint");
  cmd->add_flag("--force", args->force, "Delete an existing run folder and start over")->excludes(resume);
  cmd->callback([args] { run_train(*args); });
}

}  // namespace lengen::cli
