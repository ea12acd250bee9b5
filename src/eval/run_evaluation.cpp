// A run folder's evaluation: model from a checkpoint, results merged into results.json.
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "lengen/attention_on_target.h"
#include "lengen/checkpoint.h"
#include "lengen/compute_threads.h"
#include "lengen/config_io.h"
#include "lengen/device.h"
#include "lengen/errors.h"
#include "lengen/evaluation.h"
#include "lengen/json_file.h"
#include "lengen/json_notes.h"
#include "lengen/progress_line.h"
#include "lengen/run_folder.h"
#include "lengen/run_lock.h"
#include "lengen/sequence.h"
#include "lengen/stop_signals.h"
#include "lengen/task_files.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// A progress line with an ETA on a terminal, once an evaluation has run a few seconds; off a
// terminal (a log file) a log line a minute, so that a long evaluation is not silent. Work is
// counted in attention pairs (tokens x length): at long lengths attention is most of the time.
class EvaluationProgress {
 public:
  explicit EvaluationProgress(const std::vector<EvalSet>& sets) : line_(0, true) {
    for (const EvalSet& set : sets) total_ += work(set, static_cast<int64_t>(set.samples.size()));
  }

  void update(const EvalSet& set, int64_t done) {
    if (total_ <= 0) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < kQuietSeconds) return;
    if (!line_.on_terminal()) {
      if (now - last_logged_ < kLogInterval) return;
      last_logged_ = now;
    }
    const double fraction = (finished_ + work(set, done)) / total_;
    const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0.0;
    line_.show(fmt::format("eval length {}: {}/{} samples  {:.0f}% of the work  {} elapsed  ETA {}",
                           set.length, done, set.samples.size(), 100 * fraction, format_duration(elapsed),
                           format_duration(eta)));
  }

  void finish_set(const EvalSet& set, const std::string& message) {
    finished_ += work(set, static_cast<int64_t>(set.samples.size()));
    line_.note(message);
  }

  void finish() { line_.finish(); }

 private:
  // Seconds before the line appears: short evaluations stay quiet.
  static constexpr double kQuietSeconds = 2.0;
  static constexpr std::chrono::seconds kLogInterval{60};

  static double work(const EvalSet& set, int64_t samples) {
    return static_cast<double>(samples) * static_cast<double>(set.length) *
           static_cast<double>(set.length + 64);
  }

  ProgressLine line_;
  double total_ = 0;
  double finished_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_logged_ = start_;
};

// A checkpoint from another run folder (RUN2/checkpoints/step_N.pt) is that run's model: when
// its task or model differs from this run's, even in a choice without parameters of its own
// (softmax and entmax15 hold the same tensors), its results would be labelled as this run's.
void check_checkpoint_belongs(const Config& config, const std::string& run_dir,
                              const std::string& checkpoint) {
  const fs::path folder = fs::path(checkpoint).parent_path();
  if (folder.filename() != "checkpoints") return;
  const fs::path other_run = folder.parent_path();
  std::error_code error;
  if (fs::equivalent(other_run, run_dir, error)) return;
  const fs::path other_config = other_run / "config.json";
  if (!fs::is_regular_file(other_config)) return;
  const nlohmann::json theirs = read_json_file(other_config.string());
  const nlohmann::json ours = config_to_json(config);
  for (const char* section : {"task", "model"}) {
    if (!theirs.contains(section)) continue;
    const std::string key =
        first_config_difference({{section, theirs[section]}}, {{section, ours[section]}}, {});
    if (key.empty()) continue;
    throw UserError("checkpoint " + checkpoint + " is a model of " + other_run.string() + ", whose " + key +
                    " is " + config_value_text(theirs, key) + " (" + run_dir + ": " +
                    config_value_text(ours, key) + "): its results would be labelled as this run's");
  }
}

// A checkpoint past the run's train.steps is not a model of the run as its config.json describes
// it (a copy of the run folder trained further carries the same run identity).
void check_checkpoint_within_steps(const Config& config, const std::string& checkpoint, int64_t step) {
  if (step <= config.train.steps) return;
  throw UserError("checkpoint " + checkpoint + " is from step " + std::to_string(step) +
                  ", past this run's train.steps (" + std::to_string(config.train.steps) +
                  "): it is not a model of this run as configured (a copy of the run trained further?)");
}

// What trained the evaluated model, as results.json records it: the task and train sections (as
// the checkpoint records them, training_config_of) and the model section.
nlohmann::json trained_with_of(const Config& config) {
  nlohmann::json trained = nlohmann::json::parse(training_config_of(config));
  trained["model"] = config_to_json(config).at("model");
  return trained;
}

// "" when each test file `entry` was measured on is in `data_dir` now with the same content; else
// what is not ("data/test_1_16 is gone", "data/test_0_8 changed since"). `hashes_now` caches the
// hashes of data_dir's files.
std::string files_not_in(const ResultEntry& entry, const std::string& data_dir,
                         std::map<std::string, std::string>& hashes_now) {
  const nlohmann::json files = entry.data.is_object() ? entry.data.value("files", nlohmann::json()) : nullptr;
  if (!files.is_array()) return "";  // read_results_file refuses an entry on files without them
  for (const nlohmann::json& file : files) {
    const std::string name = file.is_object() ? file.value("name", std::string()) : std::string();
    const std::string stem = (fs::path(data_dir) / name).string();
    std::error_code error;
    if (name.empty() || !fs::is_regular_file(stem + ".src", error) ||
        !fs::is_regular_file(stem + ".trg", error))
      return stem + " is gone";
    auto known = hashes_now.find(name);
    if (known == hashes_now.end()) known = hashes_now.emplace(name, split_files_hash(stem)).first;
    if (known->second != file.value("hash", std::string())) {
      return stem + " is not the file measured (hash " + file.value("hash", std::string("?")) + ", now " +
             known->second + ")";
    }
  }
  return "";
}

// results.json holds one run's results: a config.json edited since (another task, seed, training
// lengths or method) would file new results beside old ones under one label, and results on
// files from two data folders would share one table.
void check_results_are_this_runs(const ResultsFile& existing, const Config& config, const std::string& path,
                                 const std::string& data_dir, const std::string& run_id) {
  // Another run's results.json, linked or copied in, is not merged into (nor through a link
  // written over): its entries would pass for this run's.
  if (!existing.run_id.empty() && !run_id.empty() && existing.run_id != run_id) {
    throw UserError(path + " was written by another run (run id " + existing.run_id + "), not by this one (" +
                    run_id + "): a results file linked or copied in from another run; move it aside");
  }
  if (existing.results.empty() && existing.results_on_files.empty()) return;
  // Every evaluation records the run and the training behind its results; a file without them
  // was not written by this run's evaluations (copied in and stripped, or edited), and merging
  // into it would give its entries this run's label.
  const std::string not_ours =
      ": it was not written by this run's evaluations (a results file copied in, "
      "or edited by hand); move it aside to start it anew";
  if (existing.run_id.empty() && !run_id.empty()) throw UserError(path + " records no run id" + not_ours);
  // Results of a model past the run's train.steps are a copy's that trained further.
  if (const ResultEntry* past = entry_past_steps(existing, config.train.steps)) {
    throw UserError(
        path + " holds results of step " + std::to_string(past->step) + " (" + past->decode + ", length " +
        std::to_string(past->length) + "), past this run's train.steps (" +
        std::to_string(config.train.steps) +
        "): results of a copy of the run trained further? move results.json aside to start it anew");
  }

  if (!existing.trained_with.is_object()) {
    throw UserError(path + " records no trained_with (the training behind its results)" + not_ours);
  }
  nlohmann::json trained_now = trained_with_of(config);
  if (!existing.trained_with.contains("model")) trained_now.erase("model");  // written without it
  const std::string changed =
      first_config_difference(existing.trained_with, trained_now, trained_with_keys_free_to_change());
  if (!changed.empty()) {
    throw UserError(path + " holds results of a model trained with " + changed + "=" +
                    config_value_text(existing.trained_with, changed) + ", but the run's config.json has " +
                    config_value_text(trained_now, changed) +
                    ": new results would be filed under the old ones' label; restore config.json, or move "
                    "results.json aside to start it anew");
  }
  // trained_with holds the task and train sections; the method is the model section's.
  const AttentionConfig& attention = config.model.attention;
  const Method method = {attention.normalizer, attention.scaling, attention.positions};
  if (!(existing.method == method)) {
    const auto text = [](const Method& m) { return m.normalizer + " + " + m.scaling + " / " + m.positions; };
    throw UserError(path + " holds results of method " + text(existing.method) +
                    ", but the run's config.json now says " + text(method) +
                    ": new results would be filed under the old ones' label; restore config.json, or move "
                    "results.json aside to start it anew");
  }
  if (data_dir.empty()) return;
  // One table of results on files holds results on one set of files: those in data_dir now, or
  // a copy of them (the folder moved or copied: the same files by content).
  std::map<std::string, std::string> hashes_now;  // per test file name in data_dir
  for (const auto& [decode, by_length] : existing.results_on_files) {
    for (const auto& [length, entry] : by_length) {
      const std::string dir = entry.data.is_object() ? entry.data.value("dir", std::string()) : std::string();
      if (dir.empty()) continue;
      const std::string differs = files_not_in(entry, data_dir, hashes_now);
      if (differs.empty()) continue;
      if (dir == data_dir) {
        throw UserError(path + " holds results at length " + std::to_string(length) + " on the files of " +
                        dir + " as they were then, but " + differs +
                        ": results on its files now would share a table with them; restore the files, or "
                        "move results.json aside first");
      }
      throw UserError(path + " holds results on the files of " + dir + " (length " + std::to_string(length) +
                      "), but " + differs + ": results on " + data_dir +
                      " would share their table; evaluate on " + dir + ", or move results.json aside first");
    }
  }
}

}  // namespace

std::string resolve_checkpoint(const std::string& run_dir, const std::string& which) {
  RunFolder run(run_dir);
  std::string path = which;
  if (which == "last") {
    path = run.latest_checkpoint();
    if (path.empty()) throw UserError(run_dir + " has no step checkpoint in " + run.checkpoint_dir());
  } else if (which == "best") {
    path = run.best_checkpoint_path();
  }
  if (fs::is_directory(path)) throw UserError("checkpoint " + path + " is a folder, not a checkpoint file");
  if (fs::exists(path) && !fs::is_regular_file(path)) {
    throw UserError("checkpoint " + path + " is not a regular file (a folder, FIFO or device)");
  }
  if (!fs::is_regular_file(path)) {
    // A word that is not a path is most likely a misremembered choice ("first", "latest").
    const bool a_word = path.find('/') == std::string::npos && fs::path(path).extension() != ".pt";
    throw UserError("checkpoint " + path + " does not exist" +
                    (a_word ? std::string(" (the checkpoint is last, best or the path of a .pt file)") : ""));
  }
  return path;
}

void check_results_file_accepts(const Config& config, const std::string& run_dir,
                                const std::string& data_dir) {
  const std::string results_path = RunFolder(run_dir).results_path();
  if (!fs::exists(results_path)) return;
  check_results_are_this_runs(read_results_file(results_path), config, results_path,
                              data_dir.empty() ? "" : fs::absolute(data_dir).lexically_normal().string(),
                              RunFolder(run_dir).run_id());
}

RunEvaluation evaluate_run(const Config& config, const std::string& run_dir, const std::string& checkpoint,
                           const std::string& data_dir) {
  auto task = make_task(config.task.name, config.task.params, config.task.seed);
  set_compute_threads(static_cast<int>(config.train.threads));
  const torch::Device device = resolve_device(config.train.device);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  // The run has one writer: a second evaluation (or a training) of it would merge its results
  // into a results.json this one is about to replace.
  const RunLock lock(run_dir);
  RunEvaluation evaluation;
  evaluation.run_id = RunFolder(run_dir).run_id();
  // Provenance in absolute paths: results.json is read from other folders than the one it was
  // written from.
  evaluation.checkpoint = fs::absolute(resolve_checkpoint(run_dir, checkpoint)).lexically_normal().string();
  check_checkpoint_belongs(config, run_dir, evaluation.checkpoint);
  const TrainingProgress trained = load_checkpoint(evaluation.checkpoint, model, nullptr);
  check_checkpoint_is_runs(evaluation.checkpoint, trained, RunFolder(run_dir));
  check_checkpoint_trained_as(evaluation.checkpoint, trained, config);
  check_checkpoint_schedule_is_runs(evaluation.checkpoint, trained, RunFolder(run_dir));
  check_checkpoint_within_steps(config, evaluation.checkpoint, trained.step);
  evaluation.step = trained.step;
  evaluation.weights_hash = weights_hash(model);
  evaluation.schedule = trained.schedule;
  if (!trained.training_data.empty()) {
    evaluation.trained_on = training_data_label(
        nlohmann::json::parse(trained.training_data, nullptr, /*allow_exceptions=*/false));
    // The run's record of its training data must say what the checkpoint says (the report
    // refuses a run whose two disagree, so eval adds no results to one).
    const RunFolder folder(run_dir);
    if (fs::exists(folder.training_data_path())) {
      const std::string recorded = training_data_label(read_json_file(folder.training_data_path()));
      if (recorded != evaluation.trained_on) {
        throw UserError("checkpoint " + evaluation.checkpoint + " was trained on " + evaluation.trained_on +
                        ", but " + folder.training_data_path() + " says " + recorded +
                        " (one of them replaced or edited by hand)");
      }
    }
  }
  evaluation.on_files = !data_dir.empty();
  evaluation.decode_cap = config.eval.decode_cap;
  const std::string absolute_data_dir =
      data_dir.empty() ? "" : fs::absolute(data_dir).lexically_normal().string();
  // Read before the evaluation: a results.json that is not one stops it before minutes of work.
  check_results_file_accepts(config, run_dir, data_dir);
  const std::string results_path = RunFolder(run_dir).results_path();
  model->to(device);
  model->set_query_chunk(config.model.prefill_chunk);
  model->set_attention_kernel(config.eval.attention_kernel);
  std::vector<EvalSet> sets = evaluation_sets(*task, config, absolute_data_dir);
  EvaluationProgress progress(sets);
  const std::string stopped = "evaluation of " + run_dir + " stopped; results.json left as it was";
  // Ctrl-C or SIGTERM: stop between batches, or within one (a sample of 100,000s of tokens takes
  // minutes), results.json left as it was.
  const StopMidComputation stop_within_a_batch;
  try {
    for (EvalSet& set : sets) {
      std::optional<AttentionOnTargetMeter> target_meter;
      if (config.eval.attention_on_target_samples > 0)
        target_meter.emplace(*task, config.model, config.eval.attention_on_target_samples);
      evaluation.results.push_back(evaluate_samples(
          model, set.samples, set.length, config.eval,
          [&](int64_t done) {
            if (stop_signal_received()) throw StopRequested(stopped);
            progress.update(set, done);
          },
          target_meter ? &*target_meter : nullptr));
      if (target_meter) {
        evaluation.results.back().attention_on_target =
            target_attention(target_meter->result(), task->name());
      }
      evaluation.data.push_back(std::move(set.data));
      const LengthResult& result = evaluation.results.back();
      if (!std::isfinite(result.loss)) {
        throw UserError("checkpoint " + evaluation.checkpoint + " gives a non-finite loss at length " +
                        std::to_string(result.length) +
                        ": its weights are unusable (results.json left as it was)");
      }
      progress.finish_set(set, fmt::format("length {}: exact match {:.1f}% over {} samples", result.length,
                                           100 * result.metrics.exact_match(), result.metrics.samples));
    }
  } catch (const StopRequested&) {
    throw StopRequested(stopped);
  }
  progress.finish();
  // Merged into the file as it is now, not as it was read at the start.
  ResultsFile existing = fs::exists(results_path) ? read_results_file(results_path) : ResultsFile{};
  check_results_are_this_runs(existing, config, results_path, absolute_data_dir, evaluation.run_id);
  std::error_code error;
  if (fs::is_symlink(fs::symlink_status(results_path, error))) {
    // The file is written in the link's place (never through it, into a file elsewhere): said, so
    // that the user who kept results.json elsewhere knows where the new results are.
    spdlog::warn(
        "{} is a link to {}: the results are written as a file in the link's place; the file it "
        "leads to is left as it was",
        results_path, fs::read_symlink(results_path, error).string());
  }
  write_results_file(results_path, merge_results(std::move(existing), config, evaluation));
  return evaluation;
}

namespace {

// The results.json entry of one length's result, and what produced it.
ResultEntry result_entry(const LengthResult& result, const RunEvaluation& evaluation,
                         const nlohmann::json& data) {
  const SequenceMetrics& m = result.metrics;
  ResultEntry entry;
  entry.length = result.length;
  entry.decode = name_of(result.decode);
  entry.samples = m.samples;
  entry.exact_match = m.exact_match();
  entry.token_accuracy = m.token_accuracy();
  entry.exact = m.exact;
  entry.tokens = m.tokens;
  entry.correct_tokens = m.correct_tokens;
  entry.loss = result.loss;
  if (!result.attention.empty())
    entry.attention =
        AttentionSummary{result.mean_nonzero_per_query(), result.mean_entropy(), result.attention};
  entry.attention_on_target = result.attention_on_target;
  entry.checkpoint = fs::path(evaluation.checkpoint).filename().string();
  entry.step = evaluation.step;
  entry.model = ModelRecord{evaluation.checkpoint, evaluation.step,       evaluation.weights_hash,
                            evaluation.schedule,   evaluation.trained_on, "",
                            evaluation.run_id};
  entry.data = data;
  if (entry.decode == name_of(DecodeMode::kGreedy)) entry.decode_cap = evaluation.decode_cap;
  return entry;
}

}  // namespace

ResultsFile merge_results(ResultsFile existing, const Config& config, const RunEvaluation& evaluation) {
  const AttentionConfig& attention = config.model.attention;
  existing.task = config.task.name;
  existing.train_len_min = config.task.len_min;
  existing.train_len_max = config.task.len_max;
  existing.seed = config.train.seed;
  if (!evaluation.run_id.empty()) existing.run_id = evaluation.run_id;
  existing.trained_with = trained_with_of(config);
  existing.method = {attention.normalizer, attention.scaling, attention.positions};
  ResultsByDecode& results = evaluation.on_files ? existing.results_on_files : existing.results;
  // Results on a folder since moved or copied (check_results_are_this_runs found the same files
  // here) name the folder their files are in now, as one table names one folder.
  if (evaluation.on_files && !evaluation.data.empty() && evaluation.data.front().is_object()) {
    const nlohmann::json& dir_now = evaluation.data.front().value("dir", nlohmann::json());
    for (auto& [decode, by_length] : results) {
      for (auto& [length, entry] : by_length) {
        if (entry.data.is_object() && entry.data.contains("dir") && dir_now.is_string())
          entry.data["dir"] = dir_now;
      }
    }
  }
  for (size_t i = 0; i < evaluation.results.size(); ++i) {
    const LengthResult& result = evaluation.results[i];
    const nlohmann::json data = i < evaluation.data.size() ? evaluation.data[i] : nlohmann::json{};
    ResultEntry& slot = results[name_of(result.decode)][result.length];
    // A user's keys on the entry (at any depth) outlive its remeasurement.
    nlohmann::json notes = std::move(slot.extra);
    slot = result_entry(result, evaluation, data);
    slot.extra = std::move(notes);
    // They were written about the measurement replaced here: said, so they can be checked, and
    // where one moves (its place is gone from the new measurement), said where to.
    if (slot.extra.is_object() && !slot.extra.empty()) {
      std::vector<std::string> keys;
      for (const auto& [pointer, value] : slot.extra.items()) keys.push_back(note_name(pointer));
      const std::vector<std::string> moved = notes_moved_on_write(slot);
      spdlog::warn(
          "length {} ({}): the entry is measured anew; keys of yours on it ({}) are kept as they were{}",
          result.length, name_of(result.decode), fmt::join(keys, ", "),
          moved.empty()
              ? std::string()
              : fmt::format(" (their place gone, at the entry's top level: {})", fmt::join(moved, ", ")));
    }
  }
  return existing;
}

std::string results_table(const std::vector<LengthResult>& results, int64_t train_len_max) {
  std::ostringstream out;
  out << fmt::format("{:>8}  {:>8}  {:>9}  {:>9}  {:>12}  {:>8}\n", "length", "multiple", "exact %",
                     "token %", "nonzero/q", "entropy");
  for (const LengthResult& result : results) {
    const double multiple = static_cast<double>(result.length) / static_cast<double>(train_len_max);
    const bool stats = !result.attention.empty();
    // Three significant digits, but 1024x rather than 1.02e+03x.
    const std::string times =
        multiple >= 1000 ? fmt::format("{:.0f}", multiple) : fmt::format("{:.3g}", multiple);
    out << fmt::format("{:>8}  {:>7}x  {:>9.1f}  {:>9.1f}  {:>12}  {:>8}\n", result.length, times,
                       100 * result.metrics.exact_match(), 100 * result.metrics.token_accuracy(),
                       stats ? fmt::format("{:.2f}", result.mean_nonzero_per_query()) : "-",
                       stats ? fmt::format("{:.3f}", result.mean_entropy()) : "-");
  }
  return out.str();
}

}  // namespace lengen
