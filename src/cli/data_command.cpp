// `lengen data`: writes a task's training and evaluation splits as .src/.trg files in the
// reference generator's format, e.g. to train from fixed files or to share data sets.
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "count_validators.h"
#include "lengen/atomic_write.h"
#include "lengen/data_record.h"
#include "lengen/data_streams.h"
#include "lengen/errors.h"
#include "lengen/output_files.h"
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
    size_t equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw UserError("--param " + assignment + ": expected key=value, e.g. --param vocab=64");
    }
    std::string value = assignment.substr(equals + 1);
    // Decimal only: strtod alone would also take "0x10", "inf", "nan" and leading blanks.
    const bool decimal = value.find_first_not_of("0123456789+-.eE") == std::string::npos;
    char* end = nullptr;
    double number = std::strtod(value.c_str(), &end);
    if (value.empty() || !decimal || *end != '\0') {
      throw UserError("--param " + assignment + ": '" + value + "' is not a number");
    }
    const std::string name = assignment.substr(0, equals);
    if (params.count(name) > 0) throw UserError("--param " + name + " is given twice");
    params[name] = number;
  }
  return params;
}

std::string describe(const Task& task) {
  std::string text = task.name();
  for (const auto& [name, value] : task.params()) {
    char number[32];
    std::snprintf(number, sizeof number, "%g", value);
    text += " " + name + "=" + number;
  }
  return text;
}

void check_options(const Task& task, const DataOptions& options) {
  if (options.train < 0) throw UserError("--train " + std::to_string(options.train) + " is negative");
  if (options.eval_size < 1)
    throw UserError("--eval-size " + std::to_string(options.eval_size) + " is below 1");
  if (options.train > 0 && (options.len_min == 0 || options.len_max == 0)) {
    throw UserError("--train needs --len-min and --len-max");
  }
  if (options.train > 0) {
    if (options.len_max < options.len_min) {
      throw UserError("--len-max " + std::to_string(options.len_max) + " is below --len-min " +
                      std::to_string(options.len_min));
    }
    check_generated_length(task, options.len_min, "--len-min");
  }
  for (size_t i = 0; i < options.eval_lengths.size(); ++i) {
    check_generated_length(task, options.eval_lengths[i], "evaluation length");
    for (size_t j = 0; j < i; ++j) {
      if (options.eval_lengths[j] == options.eval_lengths[i]) {
        throw UserError("--eval-lengths names " + std::to_string(options.eval_lengths[i]) +
                        " twice (each length is one test split)");
      }
    }
  }
  if (options.train == 0 && options.eval_lengths.empty()) {
    throw UserError("nothing to write: give --train N and/or --eval-lengths");
  }
}

// The bytes one line of `symbols` takes in a .src or .trg file: each symbol's digits and a
// separator (a space, or the newline after the last).
double line_bytes(const std::vector<int32_t>& symbols) {
  double bytes = 0;
  for (int32_t symbol : symbols) bytes += static_cast<double>(std::to_string(symbol).size()) + 1.0;
  return std::max(bytes, 1.0);
}

// Splits larger than the disk would fill it partway through (for tens of minutes, at the speed
// files are written): refused first, from the bytes of one sample drawn at each length (its
// .src and .trg lines), training splits at the mean of their shortest and longest sample.
void check_fits_on_disk(const Task& task, const DataOptions& options) {
  const SplitTask split(task, 0);
  const auto source_bytes = [&split](int64_t length) {
    Rng rng(0);
    const Sample sample = split->sample(rng, length);
    return line_bytes(sample.src) + line_bytes(sample.trg);
  };
  // Training lengths are uniform in [len_min, len_max]: their mean source, on average.
  double bytes = options.train == 0
                     ? 0.0
                     : static_cast<double>(options.train) *
                           (source_bytes(options.len_min) + source_bytes(options.len_max)) / 2.0;
  for (int64_t length : options.eval_lengths)
    bytes += static_cast<double>(options.eval_size) * source_bytes(length);
  fs::path existing = fs::absolute(options.out);
  while (!existing.empty() && !fs::exists(existing) && existing != existing.parent_path())
    existing = existing.parent_path();
  std::error_code error;
  const fs::space_info space = fs::space(existing, error);
  if (error || bytes <= static_cast<double>(space.available)) return;
  constexpr double kGB = 1e9;
  // Only the options that write something are named.
  std::vector<std::string> parts;
  if (options.train > 0)
    parts.push_back(fmt::format("--train {} at --len-min {} --len-max {}", options.train, options.len_min,
                                options.len_max));
  if (!options.eval_lengths.empty()) {
    parts.push_back(fmt::format("--eval-size {} at --eval-lengths {}", options.eval_size,
                                fmt::join(options.eval_lengths, ",")));
  }
  throw UserError(fmt::format(
      "{} write about {:.3g} GB, more than the {:.3g} GB free at {}; write fewer or "
      "shorter samples",
      fmt::join(parts, " and "), bytes / kGB, static_cast<double>(space.available) / kGB, existing.string()));
}

// Files that writing would replace or mix with: train.* when writing training data, and any
// existing test_* split when writing evaluation splits (old lengths would be evaluated too).
// Without --force they stop the command.
void check_no_data_there(const DataOptions& options) {
  std::vector<std::string> found;
  if (options.train > 0) {
    for (const char* name : {"train.src", "train.trg"}) {
      if (fs::exists(fs::path(options.out) / name)) found.push_back(name);
    }
  }
  if (!options.eval_lengths.empty()) {
    for (const auto& split : list_eval_splits(options.out)) {
      found.push_back(fs::path(split.stem).filename().string() + ".src");
    }
  }
  if (found.empty() || options.force) return;
  std::string list;
  for (size_t i = 0; i < found.size() && i < 4; ++i) list += (i ? ", " : "") + found[i];
  if (found.size() > 4) list += ", ...";
  throw UserError(options.out + " already holds data (" + list + "); use --force to replace it");
}

// What this command does to --out: the files it claims, the old test splits --force replaces,
// and what data.json will say of the folder.
struct OutputPlan {
  bool record = false;  // whether it writes data.json
  std::vector<std::string> names;
  std::vector<std::string> old_splits;
  std::optional<TrainLengths> train_lengths;
};

// data.json, if it is written, then each split.
std::vector<std::string> files_to_write(const DataOptions& options, bool record) {
  std::vector<std::string> names;
  if (record) names.push_back(kDataRecordName);
  const auto add_split = [&names](const std::string& stem) {
    for (const char* suffix : {".src", ".trg"}) names.push_back(stem + suffix);
  };
  if (options.train > 0) add_split("train");
  for (size_t i = 0; i < options.eval_lengths.size(); ++i) {
    add_split(fs::path(eval_split_stem(options.out, static_cast<int64_t>(i), options.eval_lengths[i]))
                  .filename()
                  .string());
  }
  return names;
}

// With --force and evaluation splits to write: the folder's old test splits, which must be lengen's.
std::vector<std::string> old_test_splits(const DataOptions& options) {
  std::vector<std::string> old_splits;
  if (!options.force || options.eval_lengths.empty()) return old_splits;
  for (const auto& split : list_eval_splits(options.out)) {
    const std::string stem = fs::path(split.stem).filename().string();
    for (const std::string& name : {stem + ".src", stem + ".trg"}) {
      if (!listed_output_file(options.out, name)) {
        throw UserError((fs::path(options.out) / name).string() +
                        " exists and lengen did not write it (it is not listed in " +
                        (fs::path(options.out) / kOutputListName).string() +
                        "); --force replaces only lengen's own files: move it or choose another --out");
      }
      old_splits.push_back(name);
    }
  }
  return old_splits;
}

OutputPlan plan_output(const Task& task, const DataOptions& options) {
  // lengen replaces only files it wrote (listed in OUT/.lengen_outputs): a user's test split or
  // train.src stops the command before anything is removed or written.
  // data.json speaks for the folder's training split too: beside a train.src/.trg lengen did not
  // write (written by hand or another tool, kept with --train 0) there is no record.
  const auto foreign = [&](const std::string& name) {
    return fs::exists(fs::path(options.out) / name) && !listed_output_file(options.out, name);
  };
  OutputPlan plan;
  plan.record = options.train > 0 || !(foreign("train.src") || foreign("train.trg"));
  plan.names = files_to_write(options, plan.record);
  plan.old_splits = old_test_splits(options);
  // data.json labels every split of the folder: a split of another task, parameter or seed beside
  // the ones this command leaves in place would label them with its own.
  const bool keeps_train = options.train == 0 && fs::exists(fs::path(options.out) / "train.src");
  const bool keeps_eval = options.eval_lengths.empty() && !list_eval_splits(options.out).empty();
  if (plan.record && (keeps_train || keeps_eval)) {
    const std::string difference = data_record_difference(options.out, task, options.seed);
    if (!difference.empty()) {
      throw UserError(options.out + " holds " + (keeps_train ? "a training split" : "evaluation splits") +
                      " of " + difference + " (" + (fs::path(options.out) / kDataRecordName).string() +
                      "), which splits of " + task.name() + " with seed " + std::to_string(options.seed) +
                      " would relabel; write them into another --out");
    }
  }
  // The training split's lengths: this command's, or (writing evaluation splits only) those the
  // folder's record already keeps for the split it leaves in place.
  if (options.train > 0) {
    plan.train_lengths = TrainLengths{options.len_min, options.len_max};
  } else if (plan.record && fs::exists(fs::path(options.out) / "train.src")) {
    plan.train_lengths = recorded_train_lengths(options.out);
  }
  return plan;
}

void replace_old_files(const DataOptions& options, const OutputPlan& plan) {
  claim_output_files(options.out, plan.names);
  // With --force, every old file this command replaces goes before the first new one is written:
  // stopped halfway, the folder then holds this command's finished splits only, never an old
  // train split beside new test splits (claim_output_files refused any file lengen did not write).
  for (const std::string& name : plan.old_splits) fs::remove(fs::path(options.out) / name);
  // Names removed and not written again are no longer lengen's: a file of the user's put there
  // later is theirs.
  std::vector<std::string> gone;
  for (const std::string& name : plan.old_splits) {
    if (std::find(plan.names.begin(), plan.names.end(), name) == plan.names.end()) gone.push_back(name);
  }
  release_output_files(options.out, gone);
  if (options.force) {
    for (const std::string& name : plan.names) fs::remove(fs::path(options.out) / name);
  }
}

// A progress line on stderr, redrawn in place on a terminal, at most every kProgressInterval.
class Progress {
 public:
  Progress(bool enabled, int64_t total) : enabled_(enabled), total_(total) {}

  // One more sample of `split` written.
  void advance(const std::string& split) {
    ++done_;
    if (!enabled_ || Clock::now() < next_) return;
    next_ = Clock::now() + kProgressInterval;
    shown_ = true;
    std::fprintf(stderr, "%slengen data: %s, %lld/%lld samples (%.0f%%)%s", terminal_ ? "\r" : "",
                 split.c_str(), static_cast<long long>(done_), static_cast<long long>(total_),
                 100.0 * done_ / total_, terminal_ ? "" : "\n");
  }

  void finish() {
    if (enabled_ && terminal_ && shown_) std::fputc('\n', stderr);
  }

 private:
  bool enabled_;
  int64_t total_;
  bool terminal_ = isatty(fileno(stderr));
  Clock::time_point next_ = Clock::now() + kProgressInterval;
  int64_t done_ = 0;
  bool shown_ = false;
};

// Asked after every sample: one of a million symbols takes tens of milliseconds. Ctrl-C or
// SIGTERM ends the split being written without its .part files (the writer removes them); the
// splits already written are whole and stay.
void stop_if_asked(const DataOptions& options) {
  if (stop_signal_received()) {
    throw StopRequested("data stopped; the split it was writing is removed, the finished ones in " +
                        options.out + " are whole" +
                        (options.force ? " (the files it was replacing are removed too)" : ""));
  }
}

void write_train_split(const Task& task, const DataOptions& options, Progress& progress) {
  SampleWriter writer((fs::path(options.out) / "train").string());
  // The training split's seed, as training draws it in-process (mqmtar's vocabularies).
  const SplitTask split(task, derive_seed(options.seed, kTrainStream));
  Rng rng(derive_seed(options.seed, kTrainStream));
  for (int64_t i = 0; i < options.train; ++i) {
    stop_if_asked(options);
    writer.write(split->sample(rng, uniform_int(rng, options.len_min, options.len_max)));
    progress.advance("train");
  }
  writer.commit();
  std::cout << "  train.src/.trg: " << options.train << " samples, lengths " << options.len_min << ".."
            << options.len_max << "\n";
}

// The i-th evaluation split.
void write_test_split(const Task& task, const DataOptions& options, size_t i, Progress& progress) {
  const int64_t length = options.eval_lengths[i];
  const std::string stem = eval_split_stem(options.out, static_cast<int64_t>(i), length);
  SampleWriter writer(stem);
  // Sample k draws from its own rng, seeded as fixed_samples(task, L, M, derive_seed(seed,
  // kEvalStream(L))) seeds it (tasks/training_data.cpp), so these files hold the same samples
  // as evaluation data generated in-process from the same seed.
  const uint64_t eval_seed = derive_seed(options.seed, kEvalStream(length));
  const SplitTask split(task, eval_seed);
  const uint64_t sample_seed = derive_seed(eval_seed, static_cast<uint64_t>(length));
  const std::string label = "length " + std::to_string(length);
  for (int64_t k = 0; k < options.eval_size; ++k) {
    Rng rng(derive_seed(sample_seed, static_cast<uint64_t>(k)));
    stop_if_asked(options);
    writer.write(split->sample(rng, length));
    progress.advance(label);
  }
  writer.commit();
  std::cout << "  " << fs::path(stem).filename().string() << ".src/.trg: " << options.eval_size
            << " samples, length " << length << "\n";
}

void write_splits(const Task& task, const DataOptions& options, const OutputPlan& plan) {
  const StopSignals stop_signals;
  const auto start = Clock::now();
  const int64_t total = options.train + options.eval_size * static_cast<int64_t>(options.eval_lengths.size());
  Progress progress(options.progress || (isatty(fileno(stderr)) && total >= kAutoProgressSamples), total);
  std::cout << "lengen data: " << describe(task) << ", seed " << options.seed << ", into " << options.out
            << "\n";
  if (options.train > 0) write_train_split(task, options, progress);
  for (size_t i = 0; i < options.eval_lengths.size(); ++i)
    write_test_split(task, options, i, progress);
  // Last: a folder with a record holds whole splits of the task it names.
  if (plan.record) {
    write_file_atomically((fs::path(options.out) / kDataRecordName).string(),
                          data_record_text(task, options.seed, plan.train_lengths));
  }
  progress.finish();
  std::cout << "  done in " << std::fixed << std::setprecision(2)
            << std::chrono::duration<double>(Clock::now() - start).count() << " s\n";
}

void run_data(const DataOptions& options) {
  auto task = make_task(options.task, parse_params(options.params), options.seed);
  check_options(*task, options);
  check_fits_on_disk(*task, options);
  // Data files in a run folder (or its checkpoints/) would be taken for the run's.
  check_out_is_not_in_a_run(options.out);
  check_out_is_not_a_sweep_folder(options.out);
  // The output folder has one writer at a time: two `lengen data` writing one folder would mix
  // their splits under one data.json.
  const auto lock = lock_output_folder(options.out);
  check_no_data_there(options);
  OutputPlan plan = plan_output(*task, options);
  replace_old_files(options, plan);
  write_splits(*task, options, plan);
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
                "replace data files lengen wrote in --out (its old test_* splits are removed); files of "
                "others stop the command");
  cmd->callback([options] { run_data(*options); });
}

}  // namespace lengen::cli
