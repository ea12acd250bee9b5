#pragma once
// Reports across runs: results.json of a sweep's runs (or one run) grouped by method and any other
// config difference, as mean ± std over each group's seeds per length, in report.md, CSV and plots.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lengen/results_file.h"

namespace lengen {

// "ASEntmax (entmax15 + asentmax) / nape"; combinations without a common name read
// "sparsemax + learned / rope".
std::string method_label(const Method& method);

// What a report averages over: the runs of one method whose configs differ only in their seeds
// and in settings that leave the trained model alone (threads, device, evaluation, description).
struct RunGroup {
  Method method;
  // The other config keys on which its runs differ from the rest, "train.lr=0.002"; "" if none.
  std::string variant;
  bool operator==(const RunGroup& other) const { return method == other.method && variant == other.variant; }
};

// method_label, then the variant: "Softmax (softmax + none) / nape, train.lr=0.002".
std::string group_label(const RunGroup& group);

struct RunResults {
  std::string name;
  std::string dir;   // the run folder (its log.jsonl has the training curves)
  std::string task;  // task.name
  RunGroup group;
  int64_t train_len_max = 0;
  std::map<int64_t, ResultEntry> results;  // of the decode mode reported, by length
  // Set when its entries were measured with more than one checkpoint, "step 200 at 64, 128; step
  // 400 at 256": a row mixing models is marked, never averaged silently.
  std::string mixed_checkpoints;
};

struct CollectedRuns {
  std::vector<RunResults> runs;
  std::string decode;  // the decode mode reported
  // Runs not in the tables, each as "NAME (why)": without results of this kind, a repeat of an
  // earlier run (same config and seeds: one measurement, not another seed), a sweep's run that
  // failed or is not evaluated yet, a run folder the sweep does not list.
  std::vector<std::string> left_out;
};

// The runs DIR/sweep.json lists, or DIR when it holds a results.json, or else every DIR/*/results.json:
// their results on generated data, or with `on_files` on --data files. `decode` "" is teacher_forced
// when any run has it. Groups come from each run's config and what its results say of the model
// (training data, checkpoint, schedule, decode cap). No run to show throws UserError.
CollectedRuns collect_runs(const std::string& dir, bool on_files = false, const std::string& decode = "");

struct Summary {
  double mean = 0.0;
  double std = 0.0;  // sample standard deviation (n - 1); 0 for a single value
  int64_t n = 0;
};
Summary summarize_values(const std::vector<double>& values);

// One metric per group and x (a length, or a step for the training curves).
struct MetricTable {
  std::string metric;
  std::vector<RunGroup> groups;                            // in order of first appearance
  std::vector<int64_t> lengths;                            // ascending
  std::vector<std::vector<std::optional<Summary>>> cells;  // [group][length]
};
// `metric`: a name ResultEntry::metric knows, such as exact_match or "attention_on_target/0/best";
// exact_match, token_accuracy and answer_accuracy as %.
MetricTable metric_table(const std::vector<RunResults>& runs, const std::string& metric);

// The training length every run shares, or 0 when they differ (multiples are then not shown).
int64_t common_train_len_max(const std::vector<RunResults>& runs);

// `train_len_max` 0: lengths without their multiples.
std::string markdown_table(const MetricTable& table, int64_t train_len_max);
// Long format: one line per method and length, with the length's multiple of train_len_max; with
// another `x_column` (a table over steps, say) one line per method and x, without a multiple.
std::string csv_table(const MetricTable& table, int64_t train_len_max,
                      const std::string& x_column = "length");

// gnuplot on PATH, or "" when there is none.
std::string find_gnuplot();

struct ReportOptions {
  std::string out_dir;           // default: DIR
  std::string decode;            // default: teacher_forced where a run has it, else greedy
  std::string gnuplot = "auto";  // "auto": find_gnuplot(); "": no plots
  bool on_files = false;         // report the results on --data files, not on generated data
};

// Writes report.md, a CSV table and a plot per metric (exact match, token accuracy, answer
// accuracy, nonzero keys per query, attention on the target per layer), and the training curves
// (training_loss, validation_exact_match) where the runs have a log.jsonl. Returns report.md's text.
std::string write_report(const std::string& dir, const ReportOptions& options);

}  // namespace lengen
