// `lengen eval RUN`: scores a run's checkpoint at a list of lengths into RUN/results.json.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "lengen/config_io.h"
#include "lengen/evaluation.h"
#include "lengen/run_folder.h"

namespace lengen::cli {

namespace {

struct EvalArgs {
  std::string run_dir;
  std::string checkpoint;
  std::string lengths;
  int64_t samples = 0;
  int64_t batch_size = 0;
  int64_t threads = 0;
  std::string decode;
  std::string data_dir;
  std::vector<std::string> overrides;
};

void run_eval(const EvalArgs& args) {
  // The command-line options are overrides of eval.* like any other, so they are checked the same way.
  std::vector<std::string> overrides = args.overrides;
  if (!args.lengths.empty()) overrides.push_back("eval.lengths=" + args.lengths);
  if (args.samples > 0) overrides.push_back("eval.samples=" + std::to_string(args.samples));
  if (args.batch_size > 0) overrides.push_back("eval.batch_size=" + std::to_string(args.batch_size));
  if (args.threads > 0) overrides.push_back("train.threads=" + std::to_string(args.threads));
  if (!args.decode.empty()) overrides.push_back("eval.decode=" + args.decode);
  const Config config = load_config(RunFolder(args.run_dir).config_path(), overrides);
  // eval.checkpoint names last or best; --checkpoint may also be a path.
  const std::string checkpoint = args.checkpoint.empty() ? config.eval.checkpoint : args.checkpoint;
  const RunEvaluation evaluation = evaluate_run(config, args.run_dir, checkpoint, args.data_dir);
  std::cout << "# " << args.run_dir << " @ " << evaluation.checkpoint << " (step " << evaluation.step << "), "
            << config.eval.decode << "\n"
            << results_table(evaluation.results, config.task.len_max);
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Evaluate a run at a list of lengths into RUN/results.json");
  cmd->add_option("run", args->run_dir, "Run folder (holds config.json and checkpoints/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--checkpoint", args->checkpoint, "last, best or a checkpoint path (default: eval.checkpoint)");
  cmd->add_option("--lengths", args->lengths, "Source lengths, e.g. 64,128,256 (default: eval.lengths)");
  cmd->add_option("--samples", args->samples, "Samples per length (default: eval.samples)");
  cmd->add_option("--batch-size", args->batch_size, "Samples per batch (default: eval.batch_size)");
  cmd->add_option("--threads", args->threads,
                  "Threads (default: train.threads); results are the same for every count");
  cmd->add_option("--decode", args->decode, "teacher_forced or greedy (default: eval.decode)");
  cmd->add_option("--data", args->data_dir, "Evaluate on DIR/test_{i}_{L}.src/.trg instead of generated data")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--set", args->overrides, "Override a config key: key.path=value (repeatable)");
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace lengen::cli
