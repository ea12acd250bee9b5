// `lengen eval RUN`: scores a run's checkpoint at a list of lengths into RUN/results.json.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/evaluation.h"
#include "lengen/run_folder.h"
#include "lengen/stop_signals.h"
#include "lengen/thread_waits.h"

namespace lengen::cli {

namespace {

struct EvalArgs {
  std::string run_dir;
  std::string checkpoint;
  std::string lengths;
  std::string samples;
  std::string batch_size;
  std::string threads;
  std::string decode;
  const CLI::Option* lengths_option = nullptr;
  const CLI::Option* samples_option = nullptr;
  const CLI::Option* batch_size_option = nullptr;
  const CLI::Option* threads_option = nullptr;
  const CLI::Option* decode_option = nullptr;
  const CLI::Option* checkpoint_option = nullptr;
  const CLI::Option* data_option = nullptr;
  std::string data_dir;
  std::vector<std::string> overrides;
};

// What `--set` may change for an evaluation: how it runs, never what the run is (its task, model
// and method come from its config.json, and results.json is labelled with them).
const std::vector<std::string> kKeysAnEvaluationMayChange = {"eval", "train.threads", "train.device",
                                                             "model.prefill_chunk"};

void check_evaluation_override(const std::string& assignment) {
  const std::string key = assignment.substr(0, assignment.find('='));
  for (const std::string& allowed : kKeysAnEvaluationMayChange) {
    if (key == allowed || key.rfind(allowed + ".", 0) == 0) return;
  }
  throw UserError("--set " + key +
                  ": lengen eval changes only eval.*, train.threads, train.device and "
                  "model.prefill_chunk; the rest is the run's own (its config.json)");
}

// The options that stand for a config key, with the key and the value typed. A given option
// becomes that key's override; given empty, it is refused rather than read as "use the default".
struct OptionOverride {
  const CLI::Option* option;
  std::string key;
  std::string value;
};

std::vector<OptionOverride> option_overrides(const EvalArgs& args) {
  return {{args.lengths_option, "eval.lengths", args.lengths},
          {args.samples_option, "eval.samples", args.samples},
          {args.batch_size_option, "eval.batch_size", args.batch_size},
          {args.threads_option, "train.threads", args.threads},
          {args.decode_option, "eval.decode", args.decode}};
}

// The run's config with the overrides; a problem with an override that an option made is named
// as the option that was typed ("--lengths 4,,8: ..."), not as a --set the user never wrote.
Config load_config_naming_options(const std::string& path, const std::vector<std::string>& overrides,
                                  const EvalArgs& args) {
  try {
    return load_config(path, overrides);
  } catch (const UserError& e) {
    const std::string message = e.what();
    for (const OptionOverride& item : option_overrides(args)) {
      const std::string typed = "--set " + item.key + "=" + item.value;
      if (item.option->count() > 0 && message.rfind(typed, 0) == 0) {
        throw UserError(item.option->get_name() + " " + item.value + message.substr(typed.size()));
      }
    }
    // A folder lengen did not train holds someone else's config.json (or none): named as such.
    const std::string run_dir = std::filesystem::path(path).parent_path().string();
    if (!RunFolder(run_dir).is_lengen_run())
      throw UserError(run_dir + " is not a lengen run folder (no run.json): " + message);
    throw;
  }
}

void run_eval(const EvalArgs& args) {
  // The command-line options are overrides of eval.* like any other, so they are checked the
  // same way: --samples 0 is refused as eval.samples=0 would be.
  std::vector<std::string> overrides = args.overrides;
  if (args.checkpoint_option->count() > 0 && args.checkpoint.empty())
    throw UserError("--checkpoint is empty");
  // A data folder's splits name their own lengths; a list beside them would be silently ignored.
  if (args.data_option->count() > 0 && args.lengths_option->count() > 0) {
    throw UserError("--lengths with --data: the lengths are those of the test_{i}_{L} files in " +
                    args.data_dir);
  }
  // An option beside a --set of the key it sets: one of the two would win without a word.
  for (const std::string& assignment : args.overrides) {
    const std::string key = assignment.substr(0, assignment.find('='));
    for (const OptionOverride& item : option_overrides(args)) {
      if (item.option->count() > 0 && key == item.key) {
        throw UserError(item.option->get_name() + " and --set " + assignment + " both set " + item.key +
                        "; give one of them");
      }
    }
    if (args.checkpoint_option->count() > 0 && key == "eval.checkpoint") {
      throw UserError("--checkpoint and --set " + assignment + " both set the checkpoint; give one of them");
    }
  }
  for (const OptionOverride& item : option_overrides(args)) {
    if (item.option->count() == 0) continue;
    if (item.value.empty()) throw UserError(item.option->get_name() + " is empty");
    overrides.push_back(item.key + "=" + item.value);
  }
  // --samples means every length, the long ones included: a --set of those keys beside it is two
  // answers to one question.
  if (args.samples_option->count() > 0) {
    for (const std::string& assignment : args.overrides) {
      const std::string key = assignment.substr(0, assignment.find('='));
      if (key == "eval.long_from" || key == "eval.long_samples")
        throw UserError("--samples (every length, the long ones included) and --set " + assignment +
                        " both set " + key + "; give one of them");
    }
    overrides.insert(overrides.end(), {"eval.long_from=0", "eval.long_samples=0"});
  }
  const Config config = load_config_naming_options(RunFolder(args.run_dir).config_path(), overrides, args);
  sleep_idle_threads_for(static_cast<int>(config.train.threads));
  // After loading, so that an unknown key gets the loader's message with its suggestion.
  for (const std::string& assignment : args.overrides) check_evaluation_override(assignment);
  // eval.checkpoint names last or best; --checkpoint may also be a path.
  const std::string checkpoint = args.checkpoint.empty() ? name_of(config.eval.checkpoint) : args.checkpoint;
  const StopSignals stop_signals;  // Ctrl-C ends the evaluation between batches, results.json untouched
  const RunEvaluation evaluation = evaluate_run(config, args.run_dir, checkpoint, args.data_dir);
  std::cout << "# " << args.run_dir << " @ " << evaluation.checkpoint << " (step " << evaluation.step << "), "
            << name_of(config.eval.decode) << "\n"
            << results_table(evaluation.results, config.task.len_max);
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Evaluate a run at a list of lengths into RUN/results.json");
  cmd->add_option("run", args->run_dir, "Run folder (holds config.json and checkpoints/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  args->checkpoint_option = cmd->add_option("--checkpoint", args->checkpoint,
                                            "last, best or a checkpoint path (default: eval.checkpoint)");
  args->lengths_option =
      cmd->add_option("--lengths", args->lengths, "Source lengths, e.g. 64,128,256 (default: eval.lengths)");
  args->samples_option = cmd->add_option(
      "--samples", args->samples,
      "Samples at every length (default: eval.samples, and eval.long_samples from eval.long_from on)");
  args->batch_size_option =
      cmd->add_option("--batch-size", args->batch_size, "Samples per batch (default: eval.batch_size)");
  args->threads_option = cmd->add_option(
      "--threads", args->threads, "Threads (default: train.threads); results are the same for every count");
  args->decode_option =
      cmd->add_option("--decode", args->decode, "teacher_forced or greedy (default: eval.decode)");
  args->data_option =
      cmd->add_option("--data", args->data_dir,
                      "Evaluate on DIR/test_{i}_{L}.src/.trg instead of generated data (at their lengths)")
          ->check(CLI::ExistingDirectory);
  cmd->add_option(
      "--set", args->overrides,
      "Override an eval.* key, train.threads, train.device or model.prefill_chunk: key.path=value "
      "(repeatable)");
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace lengen::cli
