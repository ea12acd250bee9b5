// `lengen eval RUN`: scores a run's checkpoint at a list of lengths into RUN/results.json.
#include <array>
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

// An option that stands for a config key ("--lengths 4,8" is eval.lengths=4,8), as typed.
struct TypedOption {
  std::string name, key, value;
};

struct EvalArgs {
  std::string run_dir;
  std::string checkpoint;
  std::string data_dir;
  std::vector<std::string> overrides;  // --set
  std::vector<TypedOption> typed;      // in the order given
};

// What `--set` may change for an evaluation: how it runs, never what the run is (its task, model
// and method come from its config.json, and results.json is labelled with them).
void check_evaluation_override(const std::string& assignment) {
  const std::string key = assignment.substr(0, assignment.find('='));
  for (const std::string allowed : {"eval", "train.threads", "train.device", "model.prefill_chunk"}) {
    if (key == allowed || key.rfind(allowed + ".", 0) == 0) return;
  }
  throw UserError("--set " + key +
                  ": lengen eval changes only eval.*, train.threads, train.device and "
                  "model.prefill_chunk; the rest is the run's own (its config.json)");
}

// The run's config with the overrides; a bad value of an option is named as the option typed
// ("--lengths 4,,8: ..."), not as a --set the user never wrote.
Config load_run_config(const EvalArgs& args, const std::vector<std::string>& overrides) {
  const RunFolder run(args.run_dir);
  try {
    return load_config(run.config_path(), overrides);
  } catch (const UserError& e) {
    const std::string message = e.what();
    for (const TypedOption& option : args.typed) {
      const std::string as_set = "--set " + option.key + "=" + option.value;
      if (message.rfind(as_set, 0) == 0)
        throw UserError(option.name + " " + option.value + message.substr(as_set.size()));
    }
    // A folder lengen did not train holds someone else's config.json (or none): named as such.
    if (!run.is_lengen_run())
      throw UserError(args.run_dir +
                      " is not a lengen run folder (no run.json): give a folder `lengen train` wrote");
    throw;
  }
}

void run_eval(const EvalArgs& args) {
  std::vector<std::string> overrides = args.overrides;
  for (const TypedOption& option : args.typed) {
    // A data folder's splits name their own lengths; a list beside them would be silently ignored.
    if (option.key == "eval.lengths" && !args.data_dir.empty()) {
      throw UserError("--lengths with --data: the lengths are those of the test_{i}_{L} files in " +
                      args.data_dir);
    }
    overrides.push_back(option.key + "=" + option.value);
    // --samples means every length, the long ones included (a --set of those keys beside it is
    // refused by load_config as a key given twice).
    if (option.key == "eval.samples")
      overrides.insert(overrides.end(), {"eval.long_from=0", "eval.long_samples=0"});
  }
  const Config config = load_run_config(args, overrides);
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
  cmd->add_option("--checkpoint", args->checkpoint,
                  "last, best or a checkpoint path (default: eval.checkpoint)");
  // Each of these is an override of its config key, checked as a --set of it would be.
  for (const auto& [name, key, type, help] : std::vector<std::array<std::string, 4>>{
           {"--lengths", "eval.lengths", "INTS", "Source lengths, e.g. 64,128,256 (default: eval.lengths)"},
           {"--samples", "eval.samples", "INT",
            "Samples at every length (default: eval.samples, and eval.long_samples from eval.long_from on)"},
           {"--batch-size", "eval.batch_size", "INT", "Samples per batch (default: eval.batch_size)"},
           {"--threads", "train.threads", "INT",
            "Threads (default: train.threads); results are the same for every count"},
           {"--decode", "eval.decode", "MODE", "teacher_forced or greedy (default: eval.decode)"}}) {
    cmd->add_option_function<std::string>(
           name,
           [args, name = name, key = key](const std::string& value) {
             args->typed.push_back({name, key, value});
           },
           help)
        ->type_name(type);
  }
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
