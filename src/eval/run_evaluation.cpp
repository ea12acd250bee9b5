// A run folder's evaluation: model from a checkpoint, results merged into results.json.
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
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
#include "lengen/folder_lock.h"
#include "lengen/progress_line.h"
#include "lengen/run_folder.h"
#include "lengen/run_record.h"
#include "lengen/sequence.h"
#include "lengen/stop_signals.h"
#include "lengen/task_files.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// A progress line with an ETA once an evaluation has run a few seconds; off a terminal (a log
// file) a line a minute. Work is counted in attention pairs (tokens x length): at long lengths
// attention is most of the time.
class EvaluationProgress {
 public:
  explicit EvaluationProgress(const std::vector<EvalSet>& sets) : line_(0, true) {
    for (const EvalSet& set : sets) total_ += work(set, static_cast<int64_t>(set.samples.size()));
  }

  void update(const EvalSet& set, int64_t done) {
    const auto now = std::chrono::steady_clock::now();
    if (total_ <= 0 || now < next_) return;
    next_ = now + std::chrono::seconds(line_.on_terminal() ? 0 : 60);
    const double elapsed = std::chrono::duration<double>(now - start_).count();
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
  static double work(const EvalSet& set, int64_t samples) {
    return static_cast<double>(samples) * static_cast<double>(set.length) *
           static_cast<double>(set.length + 64);
  }

  ProgressLine line_;
  double total_ = 0;
  double finished_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point next_ = start_ + std::chrono::seconds(2);  // short ones stay quiet
};

// "" when each test file `entry` was measured on is in `data_dir` now with the same content; else
// what is not ("data/test_1_16 is gone", "data/test_0_8 changed since").
std::string files_not_in(const ResultEntry& entry, const std::string& data_dir) {
  const nlohmann::json files = entry.data.is_object() ? entry.data.value("files", nlohmann::json()) : nullptr;
  if (!files.is_array()) return "";
  for (const nlohmann::json& file : files) {
    const std::string name = file.is_object() ? file.value("name", std::string()) : std::string();
    const std::string stem = (fs::path(data_dir) / name).string();
    std::error_code error;
    if (name.empty() || !fs::is_regular_file(stem + ".src", error) ||
        !fs::is_regular_file(stem + ".trg", error))
      return stem + " is gone";
    if (split_files_hash(stem) != file.value("hash", std::string())) return stem + " changed since";
  }
  return "";
}

// Results on a folder whose files changed since they were measured are of other samples: they
// are dropped (with a line) rather than mixed with results on the files there now.
void drop_results_on_changed_files(ResultsByDecode& results, const std::string& data_dir) {
  for (auto& [decode, by_length] : results) {
    for (auto it = by_length.begin(); it != by_length.end();) {
      const std::string changed = files_not_in(it->second, data_dir);
      if (changed.empty()) {
        ++it;
        continue;
      }
      spdlog::warn("results at length {} ({}) on {} are dropped: {}", it->first, decode, data_dir, changed);
      it = by_length.erase(it);
    }
  }
}

// Whether `file` holds a result at the set's length from the evaluated weights on the set's samples.
bool measured_already(const ResultsFile& file, const RunEvaluation& evaluation, const EvalSet& set,
                      const std::string& decode) {
  const auto on_files = file.results_on_files.find(evaluation.data_dir);
  if (!evaluation.data_dir.empty() && on_files == file.results_on_files.end()) return false;
  const ResultsByDecode& results = evaluation.data_dir.empty() ? file.results : on_files->second;
  const auto by_length = results.find(decode);
  if (by_length == results.end() || by_length->second.count(set.length) == 0) return false;
  const ResultEntry& entry = by_length->second.at(set.length);
  return entry.model && entry.model->weights_hash == evaluation.weights_hash && entry.data == set.data;
}

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
  entry.answers = m.answers;
  entry.correct_answers = m.correct_answers;
  entry.loss = result.loss;
  if (!result.attention.empty())
    entry.attention =
        AttentionSummary{result.mean_nonzero_per_query(), result.mean_entropy(), result.attention};
  entry.attention_on_target = result.attention_on_target;
  entry.checkpoint = fs::path(evaluation.checkpoint).filename().string();
  entry.step = evaluation.step;
  entry.model = ModelRecord{evaluation.checkpoint, evaluation.step, evaluation.weights_hash,
                            evaluation.schedule, evaluation.trained_on};
  entry.data = data;
  if (entry.decode == name_of(DecodeMode::kGreedy)) entry.decode_cap = evaluation.decode_cap;
  return entry;
}

// Adds the evaluation's newest result to `existing` results, keeping other lengths and modes.
ResultsFile merge_newest_result(ResultsFile existing, const Config& config, const RunEvaluation& evaluation) {
  const AttentionConfig& attention = config.model.attention;
  existing.task = config.task.name;
  existing.train_len_min = config.task.len_min;
  existing.train_len_max = config.task.len_max;
  existing.seed = config.train.seed;
  // What trained the evaluated model: the task, train and model sections.
  const nlohmann::json resolved = config_to_json(config);
  existing.trained_with = {
      {"task", resolved["task"]}, {"train", resolved["train"]}, {"model", resolved["model"]}};
  existing.method = {attention.normalizer, attention.scaling, attention.positions};
  const bool on_files = !evaluation.data_dir.empty();
  ResultsByDecode& results = on_files ? existing.results_on_files[evaluation.data_dir] : existing.results;
  if (on_files) drop_results_on_changed_files(results, evaluation.data_dir);
  ResultEntry entry = result_entry(evaluation.results.back(), evaluation, evaluation.data.back());
  // One result per length: another model's, or one over other samples, replaces it, said.
  auto& by_length = results[entry.decode];
  if (const auto old = by_length.find(entry.length);
      old != by_length.end() && (old->second.step != entry.step || old->second.samples != entry.samples))
    spdlog::warn("length {}: the result of step {} over {} samples is replaced by step {} over {}",
                 entry.length, old->second.step, old->second.samples, entry.step, entry.samples);
  by_length[entry.length] = std::move(entry);
  return existing;
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
  if (!fs::is_regular_file(path)) {
    throw UserError("checkpoint " + path +
                    " is not a file (the checkpoint is last, best or the path of a .pt file)");
  }
  return path;
}

RunEvaluation evaluate_run(const Config& config, const std::string& run_dir, const std::string& checkpoint,
                           const std::string& data_dir, bool keep_measured) {
  auto task = make_task(config.task.name, config.task.params, config.task.seed);
  set_compute_threads(static_cast<int>(config.train.threads));
  const torch::Device device = resolve_device(config.train.device);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  // The run has one writer: a second evaluation (or a training) of it would merge its results
  // into a results.json this one is about to replace.
  const FolderLock lock(run_dir);
  RunEvaluation evaluation;
  const auto record = read_run_record(run_dir);
  // Provenance in absolute paths: results.json is read from other folders than the one it was
  // written from.
  evaluation.checkpoint = fs::absolute(resolve_checkpoint(run_dir, checkpoint)).lexically_normal().string();
  const TrainingProgress trained = load_checkpoint(evaluation.checkpoint, model, nullptr);
  check_checkpoint_belongs(evaluation.checkpoint, trained, RunFolder(run_dir));
  evaluation.step = trained.step;
  evaluation.weights_hash = weights_hash(model);
  evaluation.schedule = trained.schedule;
  if (record) evaluation.trained_on = training_data_label(record->training_data);
  evaluation.decode_cap = config.eval.decode_cap;
  // One key per folder however it is typed: "d", "d/" and a link to d are the same files.
  const std::string absolute_data_dir = data_dir.empty() ? "" : resolved_path(data_dir);
  evaluation.data_dir = absolute_data_dir;
  const std::string results_path = RunFolder(run_dir).results_path();
  model->to(device);
  model->set_query_chunk(config.model.prefill_chunk);
  model->set_attention_kernel(config.eval.attention_kernel);
  std::vector<EvalSet> sets = evaluation_sets(*task, config, absolute_data_dir);
  EvaluationProgress progress(sets);
  const std::string stopped =
      "evaluation of " + run_dir + " stopped; results.json keeps the lengths it finished";
  // Ctrl-C or SIGTERM: stop between batches, or within one (a sample of 100,000s of tokens takes
  // minutes).
  const StopMidComputation stop_within_a_batch;
  const ResultsFile before = fs::exists(results_path) ? read_results_file(results_path) : ResultsFile{};
  try {
    for (EvalSet& set : sets) {
      if (keep_measured && measured_already(before, evaluation, set, name_of(config.eval.decode))) {
        progress.finish_set(set,
                            fmt::format("length {}: kept, measured from these weights before", set.length));
        continue;
      }
      std::optional<AttentionOnTargetMeter> target_meter;
      if (config.eval.attention_on_target_samples > 0)
        target_meter.emplace(*task, config.model, config.eval.attention_on_target_samples);
      evaluation.results.push_back(evaluate_samples(
          model, set.samples, set.length, config.eval,
          [&](int64_t done) {
            if (stop_signal_received()) throw StopRequested(stopped);
            progress.update(set, done);
          },
          target_meter ? &*target_meter : nullptr, task->answer_marker()));
      if (target_meter) {
        evaluation.results.back().attention_on_target =
            target_attention(target_meter->result(), task->name());
      }
      evaluation.data.push_back(std::move(set.data));
      const LengthResult& result = evaluation.results.back();
      if (!std::isfinite(result.loss)) {
        throw UserError("checkpoint " + evaluation.checkpoint + " gives a non-finite loss at length " +
                        std::to_string(result.length) + ": its weights are unusable");
      }
      progress.finish_set(set, fmt::format("length {}: exact match {:.1f}% over {} samples", result.length,
                                           100 * result.metrics.exact_match(), result.metrics.samples));
      // Each length as it is measured (an hour's evaluation stopped at its last length keeps the
      // others), merged into the file as it is now.
      ResultsFile now = fs::exists(results_path) ? read_results_file(results_path) : ResultsFile{};
      write_results_file(results_path, merge_newest_result(std::move(now), config, evaluation));
    }
  } catch (const StopRequested&) {
    throw StopRequested(stopped);
  }
  progress.finish();
  return evaluation;
}

std::string results_table(const std::vector<LengthResult>& results, int64_t train_len_max) {
  std::ostringstream out;
  // Answer accuracy for tasks whose targets hold several answers.
  const bool answers = !results.empty() && results.front().metrics.answers > 0;
  out << fmt::format("{:>8}  {:>8}  {:>9}  {:>9}  {}{:>12}  {:>8}\n", "length", "multiple", "exact %",
                     "token %", answers ? fmt::format("{:>9}  ", "answer %") : "", "nonzero/q", "entropy");
  for (const LengthResult& result : results) {
    const double multiple = static_cast<double>(result.length) / static_cast<double>(train_len_max);
    const bool stats = !result.attention.empty();
    // Three significant digits, but 1024x rather than 1.02e+03x.
    const std::string times =
        multiple >= 1000 ? fmt::format("{:.0f}", multiple) : fmt::format("{:.3g}", multiple);
    out << fmt::format("{:>8}  {:>7}x  {:>9.1f}  {:>9.1f}  {}{:>12}  {:>8}\n", result.length, times,
                       100 * result.metrics.exact_match(), 100 * result.metrics.token_accuracy(),
                       answers ? fmt::format("{:>9.1f}  ", 100 * result.metrics.answer_accuracy()) : "",
                       stats ? fmt::format("{:.2f}", result.mean_nonzero_per_query()) : "-",
                       stats ? fmt::format("{:.3f}", result.mean_entropy()) : "-");
  }
  return out.str();
}

}  // namespace lengen
