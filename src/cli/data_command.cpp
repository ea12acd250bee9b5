// `lengen data`: writes a task's training and evaluation splits as .src/.trg files in the
// reference generator's format, e.g. to train from fixed files or to share data sets.
#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "count_validators.h"
#include "lengen/atomic_write.h"
#include "lengen/data_record.h"
#include "lengen/data_streams.h"
#include "lengen/errors.h"
#include "lengen/output_files.h"
#include "lengen/progress_line.h"
#include "lengen/stop_signals.h"
#include "lengen/task.h"
#include "lengen/task_files.h"
#include "lengen/training_data.h"

namespace lengen::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Below this many samples in all, progress appears only when asked for.
constexpr int64_t kAutoProgressSamples = 100000;
constexpr std::chrono::milliseconds kProgressInterval{500};

struct DataOptions {
  std::string task;
  std::vector<std::string> params;
  uint64_t seed = 0;
  std::string out;
  int64_t train = 0;
  int64_t len_min = 0;
  int64_t len_max = 0;
  std::vector<int64_t> eval_lengths;
  int64_t eval_size = 1000;
  bool progress = false;
  bool force = false;
};

TaskParams parse_params(const std::vector<std::string>& assignments) {
  TaskParams params;
  for (const auto& assignment : assignments) {
    const size_t equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0)
      throw UserError("--param " + assignment + ": expected key=value, e.g. --param vocab=64");
    const std::string name = assignment.substr(0, equals), value = assignment.substr(equals + 1);
    // Decimal only: strtod alone would also take "0x10", "inf", "nan" and leading blanks.
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (value.empty() || value.find_first_not_of("0123456789+-.eE") != std::string::npos || *end != '\0')
      throw UserError("--param " + assignment + ": '" + value + "' is not a number");
    if (!params.emplace(name, number).second) throw UserError("--param " + name + " is given twice");
  }
  return params;
}

void check_options(const Task& task, const DataOptions& options) {
  if (options.train == 0 && options.eval_lengths.empty())
    throw UserError("nothing to write: give --train N and/or --eval-lengths");
  if (options.train > 0) {
    if (options.len_min == 0 || options.len_max == 0)
      throw UserError("--train needs --len-min and --len-max");
    if (options.len_max < options.len_min) {
      throw UserError("--len-max " + std::to_string(options.len_max) + " is below --len-min " +
                      std::to_string(options.len_min));
    }
    check_generated_length(task, options.len_min, "--len-min");
  }
  std::set<int64_t> seen;
  for (int64_t length : options.eval_lengths) {
    check_generated_length(task, length, "evaluation length");
    if (!seen.insert(length).second) {
      throw UserError("--eval-lengths names " + std::to_string(length) +
                      " twice (each length is one test split)");
    }
  }
}

// The files this command writes into --out, and the splits already there. A folder that holds data
// is written anew as a whole (--force), so that its data.json speaks for every split in it.
struct OutputPlan {
  std::vector<std::string> names, replaced;
};

OutputPlan plan_output(const DataOptions& options) {
  const fs::path out(options.out);
  OutputPlan plan;
  const auto split = [](std::vector<std::string>& names, const std::string& stem) {
    for (const char* suffix : {".src", ".trg"}) names.push_back(stem + suffix);
  };
  if (fs::exists(out / "train.src") || fs::exists(out / "train.trg")) split(plan.replaced, "train");
  for (const auto& old : list_eval_splits(options.out))
    split(plan.replaced, fs::path(old.stem).filename().string());
  if (!plan.replaced.empty() && !options.force) {
    throw UserError(options.out + " already holds data (" + plan.replaced.front() +
                    (plan.replaced.size() > 2 ? ", ..." : "") + "); use --force to write it anew");
  }
  plan.names.push_back(kDataRecordName);
  if (options.train > 0) split(plan.names, "train");
  for (size_t i = 0; i < options.eval_lengths.size(); ++i) {
    split(plan.names, fs::path(eval_split_stem(options.out, static_cast<int64_t>(i), options.eval_lengths[i]))
                          .filename()
                          .string());
  }
  return plan;
}

// Claims the files (one lengen did not write stops the command); with --force, removes the old ones
// first, so that stopped halfway the folder never holds an old train split beside new test splits.
void replace_old_files(const DataOptions& options, const OutputPlan& plan) {
  std::vector<std::string> claimed = plan.names;
  claimed.insert(claimed.end(), plan.replaced.begin(), plan.replaced.end());
  claim_output_files(options.out, claimed);
  if (options.force) {
    for (const std::string& name : claimed) fs::remove(fs::path(options.out) / name);
  }
}

// Writes `sample(k)` for k < count as STEM.src/.trg. Ctrl-C or SIGTERM, asked after every sample,
// ends the split being written without its .part files; the splits already written stay whole.
void write_split(const std::string& stem, int64_t count, const std::string& label, const DataOptions& options,
                 const std::function<void(const std::string&)>& advance,
                 const std::function<Sample(int64_t)>& sample) {
  SampleWriter writer(stem);
  for (int64_t k = 0; k < count; ++k) {
    if (stop_signal_received()) {
      throw StopRequested("data stopped; the split it was writing is removed, the finished ones in " +
                          options.out + " are whole" +
                          (options.force ? " (the files it was replacing are removed too)" : ""));
    }
    writer.write(sample(k));
    advance(label);
  }
  writer.commit();
}

void write_splits(const Task& task, const DataOptions& options) {
  const StopSignals stop_signals;
  const auto start = Clock::now();
  const int64_t total = options.train + options.eval_size * static_cast<int64_t>(options.eval_lengths.size());
  // A progress line on stderr, at most every kProgressInterval.
  ProgressLine progress(total,
                        options.progress || (isatty(fileno(stderr)) && total >= kAutoProgressSamples));
  int64_t done = 0;
  auto next = Clock::now() + kProgressInterval;
  const auto advance = [&](const std::string& split) {
    if (++done; Clock::now() < next) return;
    next = Clock::now() + kProgressInterval;
    progress.show(
        fmt::format("lengen data: {}, {}/{} samples ({:.0f}%)", split, done, total, 100.0 * done / total));
  };
  std::cout << "lengen data: " << task.name();
  for (const auto& [name, value] : task.params()) std::cout << fmt::format(" {}={:g}", name, value);
  std::cout << ", seed " << options.seed << ", into " << options.out << "\n";
  if (options.train > 0) {
    // The training split's seed, as training draws it in-process (mqmtar's vocabularies).
    const SplitTask split(task, derive_seed(options.seed, kTrainStream));
    Rng rng(derive_seed(options.seed, kTrainStream));
    write_split(
        (fs::path(options.out) / "train").string(), options.train, "train", options, advance,
        [&](int64_t) { return split->sample(rng, uniform_int(rng, options.len_min, options.len_max)); });
    std::cout << "  train.src/.trg: " << options.train << " samples, lengths " << options.len_min << ".."
              << options.len_max << "\n";
  }
  for (size_t i = 0; i < options.eval_lengths.size(); ++i) {
    const int64_t length = options.eval_lengths[i];
    const std::string stem = eval_split_stem(options.out, static_cast<int64_t>(i), length);
    // Sample k draws from its own rng, seeded as fixed_samples(task, L, M, derive_seed(seed,
    // kEvalStream(L))) seeds it (tasks/training_data.cpp), so these files hold the same samples
    // as evaluation data generated in-process from the same seed.
    const uint64_t eval_seed = derive_seed(options.seed, kEvalStream(length));
    const SplitTask split(task, eval_seed);
    const uint64_t sample_seed = derive_seed(eval_seed, static_cast<uint64_t>(length));
    write_split(stem, options.eval_size, "length " + std::to_string(length), options, advance,
                [&](int64_t k) {
                  Rng rng(derive_seed(sample_seed, static_cast<uint64_t>(k)));
                  return split->sample(rng, length);
                });
    std::cout << "  " << fs::path(stem).filename().string() << ".src/.trg: " << options.eval_size
              << " samples, length " << length << "\n";
  }
  // Last: a folder with a record holds whole splits of the task it names.
  std::optional<TrainLengths> train_lengths;
  if (options.train > 0) train_lengths = TrainLengths{options.len_min, options.len_max};
  write_file_atomically((fs::path(options.out) / kDataRecordName).string(),
                        data_record_text(task, options.seed, train_lengths));
  progress.finish();
  std::cout << "  done in " << std::fixed << std::setprecision(2)
            << std::chrono::duration<double>(Clock::now() - start).count() << " s\n";
}

void run_data(const DataOptions& options) {
  auto task = make_task(options.task, parse_params(options.params), options.seed);
  check_options(*task, options);
  // The output folder has one writer at a time: two `lengen data` writing one folder would mix
  // their splits under one data.json.
  const auto lock = lock_output_folder(options.out);
  const OutputPlan plan = plan_output(options);
  replace_old_files(options, plan);
  write_splits(*task, options);
}

}  // namespace

void add_data_command(CLI::App& app) {
  auto options = std::make_shared<DataOptions>();
  auto* cmd = app.add_subcommand("data", "Write a task's train and test_{i}_{L} splits as .src/.trg files");
  cmd->add_option("--task", options->task, "task name")->required();
  cmd->add_option("--param", options->params, "task parameter, e.g. --param vocab=64 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--seed", options->seed, "seed of the task and of all data")
      ->capture_default_str()
      ->check(seed_value());
  cmd->add_option("--out", options->out, "output directory (created if missing)")->required();
  cmd->add_option("--train", options->train, "number of training samples")
      ->capture_default_str()
      ->check(non_negative_count());
  cmd->add_option("--len-min", options->len_min, "shortest training source length")
      ->check(count_up_to(kMaxLength));
  cmd->add_option("--len-max", options->len_max, "longest training source length")
      ->check(count_up_to(kMaxLength));
  add_count_list_option(cmd, "--eval-lengths", options->eval_lengths,
                        "evaluation source lengths, e.g. 64,128,256", count_up_to(kMaxLength));
  cmd->add_option("--eval-size", options->eval_size, "samples per evaluation length")
      ->capture_default_str()
      ->check(count_up_to(kMaxSamples));
  cmd->add_flag("--progress", options->progress,
                "show progress on stderr (automatic on a terminal for large N)");
  cmd->add_flag("--force", options->force,
                "write --out anew, removing the data files lengen wrote there (train and every test_* "
                "split); files of others stop the command");
  cmd->callback([options] { run_data(*options); });
}

}  // namespace lengen::cli
